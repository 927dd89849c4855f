// `catalog-bot remove <package>[/<bundle>]` (docs/remove.md): everything the repository keeps
// for a package, or for one of its bundles, planned as one change. For a package on
// file-based catalogs (ci.yaml `fbc.enabled`): its directory in every catalog root, its
// templates and bundle directories; for one bundle, its entries in every template (channel
// entries, `olm.bundle` images, semver `Bundles` items, bundle deprecations), spliced out so
// comments and layout stay, the catalogs those templates map to re-rendered, and its
// directory. For a package still on the bundle index (`updateGraph`), its directories; the
// OpenShift catalogs that served it follow from `com.redhat.openshift.versions`. The result
// says, per catalog, what clusters lose. Pure: files come from a tree, the change goes back
// as paths to delete and before/after texts; the CLI and the App apply it.
import { parseDocument } from 'yaml';
import { BundleError, bundleImageReference, loadBundleDirectory } from '../bundle.js';
import { decodeFile } from '../fbc/decode.js';
import { ocpCatalogVersion } from '../olm/ocp-continuity.js';
import {
  PROPERTY_PACKAGE,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  SCHEMA_SEMVER_TEMPLATE,
  packageVersion,
  type PropertyLike,
} from '../property.js';
import type { ModelBundle, ModelChannel } from '../fbc/model.js';
import { channelImpact } from '../olm/impact.js';
import { formatVersion } from '../versions/semver.js';
import { CiYamlError, templateMappingsFromCiYaml, type TemplateMapping } from '../templates/ci-yaml.js';
import { parseTemplate, templateKind, TemplateError, type TemplateKind } from '../templates/index.js';
import {
  entryHeads,
  legacyIndexGraph,
  type LegacyBundle,
  type UpdateGraphMode,
} from '../legacy/index-graph.js';
import { legacyBundle, LegacyBundleError } from '../legacy/bundle-annotations.js';
import { removeDeprecationText, removeSeqItem } from './deprecate.js';
import {
  applySplices,
  contentEnd,
  EditError,
  formatOfPath,
  pairOf,
  parseNodes,
  scalarOf,
  valueOf,
  type TMap,
  type TNode,
} from './promote-edit.js';
import {
  bundlesFromDirectories,
  DEFAULT_BUNDLE_SETTINGS,
  pathPattern,
  type BundleSettings,
  type ReleaseTree,
} from './release.js';
import { report, rootFiles } from './promote.js';
import { renderMappedOutputs, type EditedTemplate, type OutputEdit } from './render-outputs.js';

export type RemovalMode = 'fbc' | 'replaces-mode' | 'semver-mode';

export interface RemoveRequest {
  package: string;
  /** The bundle's directory name (`1.0.2` of `operators/<pkg>/1.0.2`); absent: the whole package. */
  bundle?: string;
}

export interface RemoveInput {
  tree: ReleaseTree;
  /** The catalog roots the repository config lists (directories matching `catalogs`). */
  catalogRoots: readonly string[];
  settings?: Partial<BundleSettings>;
  /**
   * Paths of the tree that are symbolic links (a git tree's 120000 entries): a removal that
   * would delete or write at, through or along one is refused (docs/security.md). The CLI
   * checks the file system itself as well.
   */
  links?: readonly string[];
}

export interface DanglingEdge {
  channel: string;
  entry: string;
  replaces?: string;
  skips?: string;
}

/** What the clusters using one catalog lose. */
export interface CatalogLoss {
  bundlesRemoved: string[];
  channelsRemoved: string[];
  /** Channels that stay but whose head was removed, and the head(s) they have now. */
  headsRemoved: { channel: string; head: string; newHeads: string[] }[];
  defaultChannelRemoved: string | null;
  /** Entries left pointing (replaces, skips) at a bundle the removal took out of their channel. */
  dangling: DanglingEdge[];
  /**
   * Per channel, the installed versions that reached the channel's head before and do not
   * after (the impact engine's `stranded`, src/catalog/olm/impact.ts; docs/impact.md): a
   * cluster running one stays there.
   */
  stranded: { channel: string; bundles: string[] }[];
}

export interface RemovalResult {
  package: string;
  /** The bundle's name in the catalogs (its CSV name), or null for the whole package. */
  bundle: string | null;
  /** The bundle directory, or null for the whole package. */
  directory: string | null;
  mode: RemovalMode;
  /** Directories deleted whole, as the repository keeps them. */
  removed: string[];
  /** Every file under them. */
  deletedFiles: string[];
  /** Templates first, then re-rendered catalogs. */
  edits: OutputEdit[];
  catalogs: Record<string, CatalogLoss>;
  /** `/allow-prune` comments that cover what the catalogs lose (docs/publishing.md). */
  allowPrune: string[];
  notes: string[];
}

/** Why a removal is refused; nothing is written. */
export class RemovalRefusal extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
    this.name = 'RemovalRefusal';
  }
}

/** A package or bundle directory name: one path segment, never `.` or `..`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;

/** `<package>` or `<package>/<bundle>`, checked to be names and nothing that walks the tree. */
export function parseRemovalTarget(arg: string): RemoveRequest {
  const parts = arg.split('/');
  if (parts.length > 2 || !parts.every((p) => NAME.test(p)))
    throw new RemovalRefusal(
      `"${arg}" is not <package> or <package>/<bundle>: each is one name of letters, digits, ".", "_", "+" and "-" (no path)`,
    );
  return parts.length === 2 ? { package: parts[0]!, bundle: parts[1]! } : { package: parts[0]! };
}

/** Where the package's directory is: `bundles.path` up to its version segment. */
export function packageDirOf(bundlesPath: string, pkg: string): string {
  const segments = bundlesPath.split('/');
  const last = segments.length - 1;
  if (!segments[last]!.includes('{version}') || segments.slice(0, last).some((s) => s.includes('{version}')))
    throw new RemovalRefusal(
      `bundles.path "${bundlesPath}" does not end in the version's directory, so the package's directory is unknown`,
    );
  const dir = segments.slice(0, last).join('/').replaceAll('{package}', pkg);
  // Only ever a directory inside the repository.
  if (dir.split('/').some((part) => part === '' || part === '.' || part === '..'))
    throw new RemovalRefusal(`bundles.path "${bundlesPath}" does not name a directory inside the repository`);
  return dir;
}

// ---- reading what the package has

interface ChannelView {
  entries: { name: string; replaces?: string; skips: string[]; skipRange?: string }[];
}

/** A package as a catalog (or the index) serves it. */
interface PackageView {
  defaultChannel: string | null;
  channels: Map<string, ChannelView>;
  bundles: Set<string>;
  /** Bundle name -> its images. */
  images: Map<string, Set<string>>;
  /** Bundle name -> its version (`olm.package`, or the CSV's for the index): what skipRange matches. */
  versions: Map<string, string>;
}

const emptyView = (): PackageView => ({
  defaultChannel: null,
  channels: new Map(),
  bundles: new Set(),
  images: new Map(),
  versions: new Map(),
});

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The package's objects in catalog files (YAML or JSON streams). */
function catalogView(texts: readonly string[], pkg: string): PackageView {
  const view = emptyView();
  for (const text of texts) {
    for (const { value } of decodeFile(Buffer.from(text)).values) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
      const blob = value as Record<string, unknown>;
      if (blob.schema === SCHEMA_PACKAGE && blob.name === pkg)
        view.defaultChannel = str(blob.defaultChannel) ?? null;
      if (blob.package !== pkg) continue;
      if (blob.schema === SCHEMA_CHANNEL && typeof blob.name === 'string') {
        const entries = (Array.isArray(blob.entries) ? blob.entries : []).flatMap((e) => {
          const entry = e as Record<string, unknown>;
          const name = str(entry?.name);
          if (name === undefined) return [];
          const replaces = str(entry.replaces);
          const skips = Array.isArray(entry.skips) ? entry.skips.flatMap((s) => str(s) ?? []) : [];
          const skipRange = str(entry.skipRange);
          return [{ name, ...(replaces ? { replaces } : {}), skips, ...(skipRange ? { skipRange } : {}) }];
        });
        view.channels.set(blob.name, { entries });
      }
      if (blob.schema === SCHEMA_BUNDLE && typeof blob.name === 'string') {
        view.bundles.add(blob.name);
        const version = packageVersionOf(blob.properties);
        if (version !== undefined) view.versions.set(blob.name, version);
        const image = str(blob.image);
        if (image) {
          const set = view.images.get(blob.name) ?? new Set<string>();
          set.add(image);
          view.images.set(blob.name, set);
        }
      }
    }
  }
  return view;
}

/** The version of an `olm.package` property. */
function packageVersionOf(properties: unknown): string | undefined {
  return Array.isArray(properties) ? packageVersion(properties as PropertyLike[]) : undefined;
}

/** A bundle directory as the index pipeline reads it. */
interface DirectoryBundle {
  directory: string;
  name: string;
  version: string | undefined;
  channels: string[];
  defaultChannel: string | undefined;
  openShiftVersions: string | undefined;
  replaces: string | undefined;
  skips: string[];
  /** The bundle as the index reads it; undefined when its annotations cannot be read so. */
  legacy: LegacyBundle | undefined;
  legacyError?: string;
}

function filesUnder(tree: ReleaseTree, dir: string): Map<string, Buffer> {
  const prefix = `${dir}/`;
  const files = new Map<string, Buffer>();
  for (const p of tree.list())
    if (p.startsWith(prefix)) files.set(p.slice(prefix.length), tree.readBytes(p)!);
  return files;
}

/** The first file of metadata/ with an annotations mapping (as opm reads it). */
function annotationsOf(files: ReadonlyMap<string, Buffer>): Record<string, unknown> {
  const names = [...files.keys()].filter((p) => /^metadata\/[^/]+\.ya?ml$/.test(p)).sort();
  for (const name of names) {
    try {
      const value = parseDocument(files.get(name)!.toString('utf8')).toJS() as unknown;
      const annotations = (value as { annotations?: unknown } | null)?.annotations;
      if (annotations && typeof annotations === 'object') return annotations as Record<string, unknown>;
    } catch {
      // not YAML: the next file
    }
  }
  return {};
}

/** The bundle in a directory: its CSV name and edges, and its annotations; undefined when it cannot be read. */
function readDirectoryBundle(
  tree: ReleaseTree,
  directory: string,
  image: string,
): DirectoryBundle | { directory: string; error: string } {
  let files = filesUnder(tree, directory);
  // A bundle kept one level down (`<dir>/bundle/manifests`) is read from there.
  if (![...files.keys()].some((p) => p.startsWith('manifests/'))) {
    const nested = [...files.keys()].find((p) => /^[^/]+\/manifests\//.test(p))?.split('/')[0];
    if (nested !== undefined) files = filesUnder(tree, `${directory}/${nested}`);
  }
  let loaded;
  try {
    loaded = loadBundleDirectory(files, { image });
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    return { directory, error: err.message };
  }
  const spec = (loaded.csv.spec ?? {}) as Record<string, unknown>;
  const annotations = annotationsOf(files);
  const channels = (str(annotations['operators.operatorframework.io.bundle.channels.v1']) ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  let legacy: LegacyBundle | undefined;
  let legacyError: string | undefined;
  try {
    const texts = Object.fromEntries(
      Object.entries(annotations).map(([k, v]) => [k, str(v) ?? String(v ?? '')]),
    );
    legacy = legacyBundle(directory, texts, loaded.csv, loaded.name);
  } catch (err) {
    if (!(err instanceof LegacyBundleError)) throw err;
    legacyError = err.message;
  }
  return {
    directory,
    legacy,
    ...(legacyError ? { legacyError } : {}),
    name: loaded.name,
    version: str(spec.version),
    channels,
    defaultChannel: str(annotations['operators.operatorframework.io.bundle.channel.default.v1']),
    openShiftVersions: str(annotations['com.redhat.openshift.versions']),
    replaces: str(spec.replaces),
    skips: Array.isArray(spec.skips) ? spec.skips.flatMap((s) => str(s) ?? []) : [],
  };
}

// ---- what clusters lose

const heads = (channel: ChannelView): string[] => entryHeads(channel.entries);

/** What a catalog's users lose between two views of the package (after undefined: all of it). */
export function lossBetween(before: PackageView, after: PackageView | undefined): CatalogLoss {
  const next = after ?? emptyView();
  const bundlesRemoved = [...before.bundles].filter((b) => !next.bundles.has(b)).sort();
  const channelsRemoved = [...before.channels.keys()].filter((c) => !next.channels.has(c)).sort();
  const headsRemoved: CatalogLoss['headsRemoved'] = [];
  const dangling: DanglingEdge[] = [];
  for (const [name, channel] of [...next.channels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const was = before.channels.get(name);
    if (!was) continue;
    const kept = new Set(channel.entries.map((e) => e.name));
    const had = new Set(was.entries.map((e) => e.name));
    const gone = (n: string): boolean => had.has(n) && !kept.has(n);
    for (const head of heads(was))
      if (gone(head)) headsRemoved.push({ channel: name, head, newHeads: heads(channel).sort() });
    for (const e of channel.entries) {
      if (e.replaces && gone(e.replaces))
        dangling.push({ channel: name, entry: e.name, replaces: e.replaces });
      for (const s of e.skips) if (gone(s)) dangling.push({ channel: name, entry: e.name, skips: s });
    }
  }
  const defaultChannelRemoved =
    before.defaultChannel !== null && !next.channels.has(before.defaultChannel)
      ? before.defaultChannel
      : null;
  const stranded: CatalogLoss['stranded'] = [];
  for (const name of [...before.channels.keys()].sort()) {
    const after = next.channels.get(name);
    const impact = channelImpact(
      modelChannelOf(before, name)!,
      after ? modelChannelOf(next, name) : undefined,
    );
    if (impact && impact.stranded.length > 0) stranded.push({ channel: name, bundles: impact.stranded });
  }
  return { bundlesRemoved, channelsRemoved, headsRemoved, defaultChannelRemoved, dangling, stranded };
}

/** A channel of the view as the impact engine reads it (its entries, edges and versions). */
function modelChannelOf(view: PackageView, name: string): ModelChannel | undefined {
  const channel = view.channels.get(name);
  if (!channel) return undefined;
  const pkg = '';
  const bundles = new Map<string, ModelBundle>();
  for (const e of channel.entries) {
    const version = view.versions.get(e.name);
    const entry = { name: e.name, replaces: e.replaces ?? '', skips: e.skips, skipRange: e.skipRange ?? '' };
    bundles.set(e.name, {
      ...entry,
      package: pkg,
      channel: name,
      entry,
      image: '',
      properties: version === undefined ? [] : [{ type: PROPERTY_PACKAGE, value: { version } }],
      relatedImages: [],
      release: [],
    });
  }
  return { name, package: pkg, bundles };
}

// ---- template edits

/** The template with the bundle's entries spliced out; a channel left with none goes whole. */
function removeFromBasic(
  path: string,
  text: string,
  pkg: string,
  bundle: string,
  images: Set<string>,
): string {
  const format = formatOfPath(path, text);
  let out = text;
  // One removal at a time, parsing again after each, so that every splice sees true offsets.
  for (;;) {
    const top = parseNodes(out, format)[0];
    const entries = top?.kind === 'map' ? valueOf(top, 'entries') : undefined;
    if (entries?.kind !== 'seq') break;
    const maps = entries.items.filter((i): i is TMap => i.kind === 'map');
    let splice;
    for (const m of maps) {
      const schema = scalarOf(m, 'schema');
      if (schema === SCHEMA_BUNDLE && images.has(String(scalarOf(m, 'image')))) {
        splice = removeSeqItem(out, entries, m, format);
        break;
      }
      if (schema !== SCHEMA_CHANNEL || (scalarOf(m, 'package') ?? pkg) !== pkg) continue;
      const list = valueOf(m, 'entries');
      if (list?.kind !== 'seq') continue;
      const item = list.items.find((e) => e.kind === 'map' && scalarOf(e, 'name') === bundle);
      if (!item) continue;
      const others = list.items.filter((e) => !(e.kind === 'map' && scalarOf(e, 'name') === bundle));
      if (others.length > 0) splice = removeSeqItem(out, list, item, format);
      else {
        const channel = String(scalarOf(m, 'name'));
        const pkgBlob = maps.find(
          (p) => scalarOf(p, 'schema') === SCHEMA_PACKAGE && scalarOf(p, 'name') === pkg,
        );
        if (pkgBlob && scalarOf(pkgBlob, 'defaultChannel') === channel)
          throw new RemovalRefusal(
            `${bundle} is the only bundle of channel "${channel}" in ${path}, the package's default channel: make another channel the default first (catalog-bot default-channel ${pkg} <channel>), or remove the package`,
            path,
          );
        splice = removeSeqItem(out, entries, m, format);
      }
      break;
    }
    if (!splice) break;
    out = applySplices(out, [splice]);
  }
  // A deprecation of the bundle would name a bundle the catalog no longer has (opm refuses that).
  for (;;) {
    try {
      out = removeDeprecationText(path, out, pkg, { schema: SCHEMA_BUNDLE, name: bundle });
    } catch (err) {
      if (err instanceof EditError) break;
      throw err;
    }
  }
  const left = catalogViewOfTemplate(out, path, pkg);
  if (left.channels.size === 0 && out !== text)
    throw new RemovalRefusal(
      `${bundle} is the last bundle of ${path}: the catalogs it renders would have no bundle of ${pkg}; remove the package (catalog-bot remove ${pkg}) or change ci.yaml's catalog_mapping first`,
      path,
    );
  return out;
}

/** The channels a basic template still declares, for the last-bundle refusal. */
function catalogViewOfTemplate(text: string, path: string, pkg: string): PackageView {
  const top = parseNodes(text, formatOfPath(path, text))[0];
  const entries = top?.kind === 'map' ? valueOf(top, 'entries') : undefined;
  const view = emptyView();
  if (entries?.kind !== 'seq') return view;
  for (const m of entries.items)
    if (
      m.kind === 'map' &&
      scalarOf(m, 'schema') === SCHEMA_CHANNEL &&
      (scalarOf(m, 'package') ?? pkg) === pkg
    )
      view.channels.set(String(scalarOf(m, 'name')), { entries: [] });
  return view;
}

const SEMVER_CHANNELS = ['Candidate', 'Fast', 'Stable'];

/** The semver template without the bundle's `Bundles` items; a list left empty becomes `[]`. */
function removeFromSemver(path: string, text: string, images: Set<string>): string {
  const format = formatOfPath(path, text);
  let out = text;
  for (;;) {
    const top = parseNodes(out, format)[0];
    if (top?.kind !== 'map') break;
    let splice;
    for (const arch of SEMVER_CHANNELS) {
      const value = pairOf(top, arch)?.value;
      const pair = value?.kind === 'map' ? pairOf(value, 'bundles') : undefined;
      const list = pair?.value;
      if (list?.kind !== 'seq') continue;
      const item = list.items.find((i) => i.kind === 'map' && images.has(String(scalarOf(i, 'image'))));
      if (!item) continue;
      if (list.items.length > 1 || list.flow || format === 'json')
        splice = removeSeqItem(out, list, item, format);
      else {
        // The only item of a block list: `Bundles: []`, a list the template can still read.
        const colon = out.indexOf(':', pair!.keyStart);
        const end = lineEndOf(out, contentEnd(list));
        splice = { at: colon + 1, del: end - colon - 1, ins: ' []' };
      }
      break;
    }
    if (!splice) break;
    out = applySplices(out, [splice]);
  }
  if (out !== text && !SEMVER_CHANNELS.some((arch) => semverListLength(out, format, arch) > 0))
    throw new RemovalRefusal(
      `the bundle is the last one of ${path}: the catalogs it renders would have no bundle; remove the package, or change ci.yaml's catalog_mapping first`,
      path,
    );
  return out;
}

function semverListLength(text: string, format: 'yaml' | 'json', arch: string): number {
  const top = parseNodes(text, format)[0];
  const value = top?.kind === 'map' ? pairOf(top, arch)?.value : undefined;
  const list: TNode | undefined = value?.kind === 'map' ? valueOf(value, 'bundles') : undefined;
  return list?.kind === 'seq' ? list.items.length : 0;
}

const lineEndOf = (text: string, at: number): number => {
  const i = text.indexOf('\n', at);
  return i < 0 ? text.length : i;
};

// ---- the plan

function modeOf(ciPath: string, ciText: string | undefined, notes: string[]): RemovalMode {
  if (ciText === undefined) {
    notes.push(`${ciPath} is missing: the package is taken as on the bundle index (replaces-mode)`);
    return 'replaces-mode';
  }
  let ci: Record<string, unknown> = {};
  try {
    const value = parseDocument(ciText).toJS() as unknown;
    if (value && typeof value === 'object') ci = value as Record<string, unknown>;
  } catch {
    notes.push(`${ciPath} is not YAML: the package is taken as on the bundle index (replaces-mode)`);
  }
  const fbc = ci.fbc as Record<string, unknown> | undefined;
  if (fbc?.enabled === true) return 'fbc';
  if (ci.updateGraph === 'semver-mode') return 'semver-mode';
  if (ci.updateGraph !== undefined && ci.updateGraph !== 'replaces-mode')
    notes.push(`${ciPath} updateGraph "${String(ci.updateGraph)}" is unknown: taken as replaces-mode`);
  return 'replaces-mode';
}

const catalogName = (root: string): string => root.slice(root.lastIndexOf('/') + 1);

/** Plan the removal of a package or one of its bundles. Throws RemovalRefusal. */
export async function planRemoval(request: RemoveRequest, input: RemoveInput): Promise<RemovalResult> {
  const links = input.links ?? [];
  const linkAt = (path: string, whole: boolean): string | undefined =>
    links.find((l) => l === path || path.startsWith(`${l}/`) || (whole && l.startsWith(`${path}/`)));
  const settings = { ...DEFAULT_BUNDLE_SETTINGS, ...input.settings };
  const packageDir = packageDirOf(settings.path, request.package);
  const asked = request.bundle === undefined ? packageDir : `${packageDir}/${request.bundle}`;
  const early = linkAt(asked, false);
  if (early)
    throw new RemovalRefusal(`${early} is a symbolic link; nothing is deleted through a link`, early);
  const result = await planWithoutLinks(request, input);
  for (const path of [...result.removed, ...result.edits.map((e) => e.path)]) {
    const link = linkAt(path, result.removed.includes(path));
    if (link)
      throw new RemovalRefusal(
        `${link} is a symbolic link; nothing is deleted or written through or along a link`,
        link,
      );
  }
  return result;
}

async function planWithoutLinks(request: RemoveRequest, input: RemoveInput): Promise<RemovalResult> {
  const settings = { ...DEFAULT_BUNDLE_SETTINGS, ...input.settings };
  const { tree } = input;
  const pkg = request.package;
  for (const name of [pkg, ...(request.bundle !== undefined ? [request.bundle] : [])])
    if (!NAME.test(name)) throw new RemovalRefusal(`"${name}" is not a package or bundle directory name`);
  const all = tree.list();
  const packageDir = packageDirOf(settings.path, pkg);
  const packageFiles = all.filter((p) => p.startsWith(`${packageDir}/`));
  const catalogDirs = input.catalogRoots
    .map((root) => ({ root, dir: `${root}/${pkg}` }))
    .filter(({ dir }) => all.some((p) => p.startsWith(`${dir}/`)));
  if (packageFiles.length === 0 && catalogDirs.length === 0)
    throw new RemovalRefusal(
      `there is no package ${pkg}: no ${packageDir}/ and no catalog holds a ${pkg}/ directory`,
    );

  const notes: string[] = [];
  const ciPath = `${packageDir}/ci.yaml`;
  const mode = modeOf(ciPath, tree.read(ciPath), notes);
  // Bundle directories: manifests/ or metadata/ in them, or one level down (`<dir>/bundle/`,
  // a layout some packages keep; docs/bundles.md).
  const isBundlePart = (part: string | undefined): boolean => part === 'manifests' || part === 'metadata';
  const bundleDirs = [
    ...new Set(
      packageFiles
        .map((p) => p.slice(packageDir.length + 1).split('/'))
        .filter(
          (parts) =>
            parts[0] !== 'catalog-templates' &&
            ((parts.length > 2 && isBundlePart(parts[1])) || (parts.length > 3 && isBundlePart(parts[2]))),
        )
        .map((parts) => parts[0]!),
    ),
  ].sort();

  // A bundle directory's name -> its image: the version is what bundles.path puts there.
  const pattern = pathPattern(settings.path);
  const imageOf = (dirName: string): string =>
    bundleImageReference(
      settings.imageTemplate,
      pkg,
      pattern.exec(`${packageDir}/${dirName}`)?.groups?.version ?? dirName,
    );
  const filesOf = (dirs: string[]): string[] =>
    all.filter((p) => dirs.some((d) => p.startsWith(`${d}/`))).sort();

  // Objects of the package in a catalog file outside <root>/<package>/ (a root kept as one
  // file, say) would stay after the removal: refused, naming the file, rather than half done.
  for (const root of input.catalogRoots) {
    const own = `${root}/${pkg}/`;
    for (const path of all) {
      if (!path.startsWith(`${root}/`) || path.startsWith(own) || !/\.(ya?ml|json)$/i.test(path)) continue;
      const text = tree.read(path);
      if (text === undefined || !text.includes(pkg)) continue;
      const view = catalogView([text], pkg);
      if (view.bundles.size + view.channels.size > 0 || view.defaultChannel !== null)
        throw new RemovalRefusal(
          `${path} holds objects of ${pkg} outside ${own}, where remove does not edit: move them into ${own} (or remove them by hand) first`,
          path,
        );
    }
  }

  // ---- the whole package
  if (request.bundle === undefined) {
    const removed = [...catalogDirs.map((c) => c.dir), ...(packageFiles.length > 0 ? [packageDir] : [])];
    const catalogs: Record<string, CatalogLoss> = {};
    if (mode === 'fbc' || catalogDirs.length > 0) {
      for (const { root, dir } of catalogDirs) {
        const texts = filesOf([dir]).flatMap((p) => tree.read(p) ?? []);
        catalogs[catalogName(root)] = lossBetween(catalogView(texts, pkg), undefined);
      }
    }
    if (mode !== 'fbc') {
      const bundles = bundleDirs.map((v) => readDirectoryBundle(tree, `${packageDir}/${v}`, imageOf(v)));
      for (const [name, loss] of Object.entries(indexLosses(bundles, input.catalogRoots, [], notes, mode)))
        catalogs[name] ??= loss;
    }
    return finish({
      pkg,
      bundle: null,
      directory: null,
      mode,
      removed,
      deletedFiles: filesOf(removed),
      edits: [],
      catalogs,
      notes,
      guarded: catalogDirs.length > 0,
    });
  }

  // ---- one bundle
  // The bundle by its directory (`0.8.0`) or by its name in the catalogs (`pkg.v0.8.0`).
  let version = request.bundle;
  if (!all.some((p) => p.startsWith(`${packageDir}/${version}/`))) {
    const named = bundleDirs.find((v) => {
      const read = readDirectoryBundle(tree, `${packageDir}/${v}`, imageOf(v));
      return 'name' in read && read.name === request.bundle;
    });
    if (named !== undefined) version = named;
  }
  const directory = `${packageDir}/${version}`;
  if (!all.some((p) => p.startsWith(`${directory}/`)))
    throw new RemovalRefusal(
      `${pkg} has no bundle directory ${directory} (it has: ${bundleDirs.join(', ') || 'none'})`,
    );
  if (!bundleDirs.includes(version))
    throw new RemovalRefusal(`${directory} is not a bundle directory: it has no manifests/ or metadata/`);
  const read = readDirectoryBundle(tree, directory, imageOf(version));
  const holding = catalogDirs.map(({ root, dir }) => ({
    root,
    dir,
    files: filesOf([dir]),
    view: catalogView(
      filesOf([dir]).flatMap((p) => tree.read(p) ?? []),
      pkg,
    ),
  }));
  let name: string;
  if ('name' in read) name = read.name;
  else {
    // A directory opm cannot read: its name is the one the catalogs give its image.
    const found = holding.flatMap((h) => [...h.view.images].filter(([, imgs]) => imgs.has(imageOf(version))));
    if (found.length === 0)
      throw new RemovalRefusal(
        `${directory} cannot be read (${read.error}) and no catalog lists its image ${imageOf(version)}, so its name in the catalogs is unknown`,
        directory,
      );
    name = found[0]![0];
  }

  if (mode !== 'fbc') {
    const others = bundleDirs
      .filter((v) => v !== version)
      .map((v) => readDirectoryBundle(tree, `${packageDir}/${v}`, imageOf(v)));
    const catalogs = indexLosses([read, ...others], input.catalogRoots, [name], notes, mode);
    return finish({
      pkg,
      bundle: name,
      directory,
      mode,
      removed: [directory],
      deletedFiles: filesOf([directory]),
      edits: [],
      catalogs,
      notes,
      guarded: catalogDirs.length > 0,
    });
  }

  // FBC: the templates, then the catalogs they map to.
  const images = new Set([imageOf(version)]);
  for (const h of holding) for (const image of h.view.images.get(name) ?? []) images.add(image);
  let mappings: TemplateMapping[];
  try {
    mappings = templateMappingsFromCiYaml(ciPath, tree.read(ciPath) ?? '');
  } catch (err) {
    if (!(err instanceof CiYamlError)) throw err;
    throw new RemovalRefusal(err.message, ciPath);
  }
  const templateDir = `${packageDir}/catalog-templates/`;
  const templates = all.filter((p) => p.startsWith(templateDir) && /\.(ya?ml|json)$/i.test(p)).sort();
  const edited = new Map<string, EditedTemplate>();
  const edits: OutputEdit[] = [];
  for (const path of templates) {
    const before = tree.read(path)!;
    let kind: TemplateKind;
    try {
      kind = templateKind(parseTemplate(before));
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      notes.push(`${path} is not a template opm can read: left as it is`);
      continue;
    }
    let after: string;
    try {
      after =
        kind === SCHEMA_SEMVER_TEMPLATE
          ? removeFromSemver(path, before, images)
          : removeFromBasic(path, before, pkg, name, images);
    } catch (err) {
      if (err instanceof EditError) throw new RemovalRefusal(`${path}: ${err.message}`, path);
      throw err;
    }
    if (after === before) continue;
    edits.push({ path, before, after });
    const mapping = mappings.find((m) => m.template === path);
    if (mapping) edited.set(path, { before, after, kind, mapping });
    else
      notes.push(
        `${path} lost ${name}; no catalog is rendered from it (not in ${ciPath} fbc.catalog_mapping)`,
      );
  }
  const rendered = await renderMappedOutputs(
    tree,
    edited,
    settings,
    bundlesFromDirectories(tree, all, settings, pkg, packageDir),
    (template, output, message) =>
      new RemovalRefusal(
        `${template} without ${name} cannot be rendered for ${output}: ${message}`,
        template,
      ),
  );
  edits.push(...rendered.edits);
  notes.push(...rendered.notes);
  const afterText = new Map(rendered.edits.map((e) => [e.path, e.after]));
  const catalogs: Record<string, CatalogLoss> = {};
  for (const h of holding) {
    if (!h.view.bundles.has(name)) continue;
    const after = catalogView(
      h.files.flatMap((p) => afterText.get(p) ?? tree.read(p) ?? []),
      pkg,
    );
    if (after.bundles.has(name))
      throw new RemovalRefusal(
        `${h.dir} would still hold ${name}: no template in ${ciPath} fbc.catalog_mapping renders it; map its template or remove the package`,
        h.dir,
      );
    catalogs[catalogName(h.root)] = lossBetween(h.view, after);
  }
  // A catalog that was valid must stay valid: an invalid catalog breaks every package in it.
  for (const { root } of catalogDirs) {
    const override = new Map([...afterText].filter(([p]) => p.startsWith(`${root}/`)));
    if (override.size === 0) continue;
    const before = await report(rootFiles(tree, root), root);
    if (!before.valid) {
      notes.push(`${root} was not valid before the removal: it is not checked after it`);
      continue;
    }
    const after = await report(rootFiles(tree, root, override), root);
    const error = after.diagnostics.find((d) => d.level === 'error');
    if (error)
      throw new RemovalRefusal(
        `${root} would not be valid after removing ${name}: ${error.file ? `${root}/${error.file}${error.line ? `:${error.line}` : ''}: ` : ''}${error.message}${
          [...rendered.edits].some((e) => e.path.startsWith(`${root}/`))
            ? ` (the catalog is re-rendered from its template: when the template and the committed catalog already differed, re-render the catalog first and check that change on its own)`
            : ''
        }`,
        root,
      );
  }
  return finish({
    pkg,
    bundle: name,
    directory,
    mode,
    removed: [directory],
    deletedFiles: filesOf([directory]),
    edits,
    catalogs,
    notes,
    guarded: true,
  });
}

/**
 * What each OpenShift catalog of the bundle index loses: the package as the index serves it
 * there (docs/legacy-index.md: the bundles `com.redhat.openshift.versions` admits, channels
 * and edges as `opm index add` built them), before and after (`removing` empty: the whole
 * package).
 */
function indexLosses(
  bundles: ReturnType<typeof readDirectoryBundle>[],
  roots: readonly string[],
  removing: string[],
  notes: string[],
  mode: UpdateGraphMode,
): Record<string, CatalogLoss> {
  const readable: LegacyBundle[] = [];
  for (const b of bundles) {
    if (!('name' in b))
      notes.push(`${b.directory} cannot be read (${b.error}): it is left out of what clusters lose`);
    else if (!b.legacy) notes.push(`${b.legacyError}: ${b.directory} is left out of what clusters lose`);
    else readable.push(b.legacy);
  }
  const view = (list: LegacyBundle[], catalog: string): PackageView => {
    const v = emptyView();
    const graph = legacyIndexGraph(list, mode, catalog);
    if (!graph) return v;
    for (const b of graph.bundles) v.bundles.add(b);
    for (const [name, entries] of graph.channels)
      v.channels.set(name, {
        entries: entries.map((e) => ({
          name: e.name,
          ...(e.replaces ? { replaces: e.replaces } : {}),
          skips: e.skips ?? [],
          ...(e.skipRange ? { skipRange: e.skipRange } : {}),
        })),
      });
    for (const b of list) v.versions.set(b.name, formatVersion(b.version));
    v.defaultChannel = graph.defaultChannel || null;
    return v;
  };
  const out: Record<string, CatalogLoss> = {};
  for (const root of roots) {
    const name = catalogName(root);
    if (!ocpCatalogVersion(name)) continue;
    const before = view(readable, name);
    if (before.bundles.size === 0) continue;
    if (removing.length > 0 && !removing.some((r) => before.bundles.has(r))) continue;
    out[name] = lossBetween(
      before,
      removing.length === 0
        ? undefined
        : view(
            readable.filter((b) => !removing.includes(b.name)),
            name,
          ),
    );
  }
  return out;
}

function finish(r: {
  pkg: string;
  bundle: string | null;
  directory: string | null;
  mode: RemovalMode;
  removed: string[];
  deletedFiles: string[];
  edits: OutputEdit[];
  catalogs: Record<string, CatalogLoss>;
  notes: string[];
  guarded: boolean;
}): RemovalResult {
  const bundles = new Set<string>();
  const channels = new Set<string>();
  for (const loss of Object.values(r.catalogs)) {
    loss.bundlesRemoved.forEach((b) => bundles.add(b));
    loss.channelsRemoved.forEach((c) => channels.add(c));
  }
  // Only catalogs built from catalog roots are published and guarded; the index is the pipeline's.
  const guarded = r.guarded;
  const allowPrune = guarded
    ? [
        ...[...bundles].sort().map((b) => `/allow-prune ${b}`),
        ...[...channels].sort().map((c) => `/allow-prune ${r.pkg}/${c}`),
      ]
    : [];
  return {
    package: r.pkg,
    bundle: r.bundle,
    directory: r.directory,
    mode: r.mode,
    removed: r.removed,
    deletedFiles: r.deletedFiles,
    edits: r.edits,
    catalogs: r.catalogs,
    allowPrune,
    notes: r.notes,
  };
}

// ---- the report, in words: the CLI prints it, a pull request's description can carry it

function lossLines(name: string, loss: CatalogLoss): string[] {
  const out = [`  ${name}: loses ${loss.bundlesRemoved.join(', ') || 'no bundle'}`];
  if (loss.channelsRemoved.length > 0) out.push(`    channels removed: ${loss.channelsRemoved.join(', ')}`);
  if (loss.defaultChannelRemoved !== null)
    out.push(`    the default channel ${loss.defaultChannelRemoved} is gone`);
  for (const h of loss.headsRemoved)
    out.push(
      `    channel ${h.channel} loses its head ${h.head}; new head${h.newHeads.length === 1 ? '' : 's'}: ${h.newHeads.join(', ') || 'none'}`,
    );
  for (const d of loss.dangling)
    out.push(
      `    ${d.entry} in channel ${d.channel} ${d.replaces !== undefined ? `replaces ${d.replaces}` : `skips ${d.skips}`}, which is gone`,
    );
  for (const s of loss.stranded)
    out.push(`    installed versions stranded in channel ${s.channel}: ${s.bundles.join(', ')}`);
  return out;
}

/** What clusters lose, per catalog, and what the pruning guard will ask for (docs/remove.md). */
export function clusterLosses(result: RemovalResult): string[] {
  const names = Object.keys(result.catalogs);
  if (names.length === 0) return ['no catalog served it: clusters lose nothing'];
  const lines = [
    result.mode === 'fbc' ? 'what clusters lose, per catalog:' : 'what clusters lose, per OpenShift index:',
  ];
  for (const name of names) lines.push(...lossLines(name, result.catalogs[name]!));
  lines.push(
    result.allowPrune.length > 0
      ? `where the catalogs are published (publish in .github/catalog-bot.yml), the catalog-bot/prune check holds the pull request until an owner of the package allows what the published images serve: ${result.allowPrune.join(' ; ')}`
      : 'the bundle index is built by the pipeline, not from the catalog roots: the catalog-bot/prune check does not see this removal',
  );
  return lines;
}
