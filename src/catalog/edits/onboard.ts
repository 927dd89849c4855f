// `catalog-bot onboard <package>`: a package that the old bundle index serves, moved to
// file-based catalogs from its bundle directories alone (docs/legacy-index.md): the graph
// each OpenShift index gave it, written as basic templates (one per distinct content), the
// catalogs rendered from them with the bundle blobs `release` makes, and ci.yaml switched
// to FBC with its comments kept. Pure: files come from a tree, edits go back as texts.
import { parseDocument } from 'yaml';
import {
  BundleError,
  bundleImageReference,
  renderParsedBundle,
  parseBundle,
  bundleFilesFromMap,
  type ParsedBundle,
} from '../bundle.js';
import {
  DEFAULT_BUNDLE_SETTINGS,
  migratesCsvMetadata,
  pathPattern,
  type BundleSettings,
  type ReleaseTree,
} from './release.js';
import {
  addPair,
  applySplices,
  contentEnd,
  detectStyle,
  parseNodes,
  type Splice,
  type TMap,
} from './promote-edit.js';
import {
  compareLegacyBundles,
  entryHeads,
  legacyIndexGraph,
  UPDATE_GRAPH_MODES,
  type LegacyBundle,
  type LegacyEntry,
  type LegacyPackageGraph,
  type UpdateGraphMode,
} from '../legacy/index-graph.js';
import { admitsCatalog } from '../legacy/openshift-versions.js';
import { legacyBundle, LegacyBundleError, readAnnotations } from '../legacy/bundle-annotations.js';
import {
  bundleResolverFromCatalog,
  renderTemplateText,
  TemplateError,
  type BundleResolver,
} from '../templates/index.js';
import { goYamlMarshal, type JsonObject } from '../templates/write.js';
import { ocpCatalogVersion, rankOcp } from '../olm/ocp-continuity.js';
import { SCHEMA_BASIC_TEMPLATE, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE } from '../property.js';

/** Why a package cannot be onboarded as asked; nothing is written. */
export class OnboardRefusal extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
    this.name = 'OnboardRefusal';
  }
}

export interface OnboardInput {
  tree: ReleaseTree;
  package: string;
  settings?: Partial<BundleSettings>;
  /** The repository's catalog directories (`catalogs/v4.12`, ...). */
  catalogRoots: string[];
  /** `--catalogs`: the catalog names to write (default: every OpenShift-version root). */
  catalogs?: string[];
  /** `--bundle-images`: bundle name -> image reference. */
  bundleImages?: Map<string, string>;
  /** `--index <v>=<root>`: the package's blobs as that index serves them ([] = not served). */
  index?: Map<string, JsonObject[]>;
}

export interface OnboardCatalog {
  defaultChannel: string;
  bundles: string[];
  channels: Record<
    string,
    { name: string; replaces: string | null; skips: string[]; skipRange: string | null }[]
  >;
  /** Where the graph came from. */
  source: 'directories' | 'index';
}

export interface OnboardDifference {
  catalog: string;
  kind: 'only-in-index' | 'only-in-directories' | 'default-channel' | 'channel' | 'edge' | 'not-in-index';
  message: string;
}

export interface OnboardResult {
  package: string;
  mode: UpdateGraphMode;
  catalogs: Record<string, OnboardCatalog>;
  /** Every file written, templates first, then catalogs, then ci.yaml. */
  edits: { path: string; before: string | undefined; after: string }[];
  differences: OnboardDifference[];
  notes: string[];
}

const MAX_BUNDLE_BYTES = 64 * 2 ** 20;
const PACKAGE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface DirectoryBundle {
  dir: string;
  version: string;
  legacy: LegacyBundle;
  parsed: ParsedBundle;
  csv: JsonObject;
}

/** Every bundle directory of the package, read and checked; refuses the first bad one. */
function readBundles(tree: ReleaseTree, pkg: string, settings: BundleSettings): DirectoryBundle[] {
  const pattern = pathPattern(settings.path);
  const dirs = new Map<string, string>();
  for (const p of tree.list()) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const m = pattern.exec(dir);
      if (m?.groups?.package === pkg) dirs.set(dir, m.groups.version!);
    }
  }
  const out: DirectoryBundle[] = [];
  for (const [dir, version] of [...dirs].sort(([a], [b]) => byName(a, b))) {
    const prefix = `${dir}/`;
    const files = new Map<string, Buffer>();
    let size = 0;
    for (const p of tree.list()) {
      if (!p.startsWith(prefix)) continue;
      const data = tree.readBytes(p)!;
      size += data.length;
      if (size > MAX_BUNDLE_BYTES)
        throw new OnboardRefusal(
          `${dir} holds more than ${MAX_BUNDLE_BYTES / 2 ** 20} MiB of files, far more than a bundle`,
          dir,
        );
      files.set(p.slice(prefix.length), data);
    }
    const annotationsFile = files.get('metadata/annotations.yaml') ?? files.get('metadata/annotations.yml');
    const hasManifests = [...files.keys()].some((f) => f.startsWith('manifests/'));
    if (!hasManifests || !annotationsFile) {
      if ([...files.keys()].some((f) => f.endsWith('.package.yaml') || f.endsWith('.package.yml')))
        throw new OnboardRefusal(
          `${dir} is in the old package-manifest format (a *.package.yaml), which the bundle index no longer takes; convert it to a bundle (manifests/ and metadata/annotations.yaml) first`,
          dir,
        );
      throw new OnboardRefusal(
        `${dir} is not a bundle: it has no ${hasManifests ? 'metadata/annotations.yaml' : 'manifests/ (the CSV and CRDs)'}`,
        dir,
      );
    }
    let parsed;
    try {
      parsed = parseBundle(bundleFilesFromMap(files));
    } catch (err) {
      if (!(err instanceof BundleError)) throw err;
      throw new OnboardRefusal(`${dir} cannot be read as opm reads a bundle: ${err.message}`, dir);
    }
    if (parsed.package !== pkg)
      throw new OnboardRefusal(
        `${dir}/metadata/annotations.yaml names package "${parsed.package}", but the directory belongs to ${pkg}`,
        `${dir}/metadata/annotations.yaml`,
      );
    let legacy: LegacyBundle;
    try {
      const annotations = readAnnotations(
        `${dir}/metadata/annotations.yaml`,
        annotationsFile.toString('utf8'),
      );
      legacy = legacyBundle(dir, annotations, parsed.csv, parsed.name);
    } catch (err) {
      if (err instanceof LegacyBundleError) throw new OnboardRefusal(err.message, err.file);
      throw err;
    }
    out.push({ dir, version, legacy, parsed, csv: parsed.csv });
  }
  return out;
}

/** ci.yaml's update mode; refuses a package already on FBC and modes the index never had. */
function readMode(ciPath: string, text: string | undefined): UpdateGraphMode {
  if (text === undefined) return 'replaces-mode';
  const doc = parseDocument(text);
  if (doc.errors.length > 0)
    throw new OnboardRefusal(`${ciPath} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`, ciPath);
  const ci = (doc.toJS() ?? {}) as JsonObject;
  if (typeof ci !== 'object' || Array.isArray(ci))
    throw new OnboardRefusal(`${ciPath} must be a mapping of keys`, ciPath);
  const fbc = ci.fbc as JsonObject | undefined;
  if (fbc && typeof fbc === 'object' && fbc.enabled === true)
    throw new OnboardRefusal(
      `${ciPath} says fbc.enabled: true: the package is on file-based catalogs already; release its bundles with \`catalog-bot release\``,
      ciPath,
    );
  const mode = ci.updateGraph ?? 'replaces-mode';
  if (typeof mode !== 'string' || !(UPDATE_GRAPH_MODES as readonly string[]).includes(mode))
    throw new OnboardRefusal(
      `${ciPath} has updateGraph: ${JSON.stringify(mode)}, which is none of ${UPDATE_GRAPH_MODES.join(', ')}; fix it to the mode the index used for this package`,
      ciPath,
    );
  return mode as UpdateGraphMode;
}

/** The icon opm put on the package: the default channel head's first CSV icon, re-encoded. */
function packageIcon(csv: JsonObject | undefined): JsonObject | undefined {
  const spec = csv?.spec as JsonObject | undefined;
  const icons = Array.isArray(spec?.icon) ? (spec!.icon as JsonObject[]) : [];
  const first = icons[0];
  if (!first || typeof first !== 'object') return undefined;
  const data = typeof first.base64data === 'string' ? first.base64data : '';
  const mediatype = typeof first.mediatype === 'string' ? first.mediatype : '';
  // Go's decoder skips line breaks; opm retries once without spaces.
  const decode = (s: string): Buffer | undefined => {
    const clean = s.replace(/[\r\n]/g, '');
    return /^[A-Za-z0-9+/]*={0,2}$/.test(clean) && clean.length % 4 === 0
      ? Buffer.from(clean, 'base64')
      : undefined;
  };
  const bytes = decode(data) ?? decode(data.replaceAll(' ', ''));
  if (!bytes || bytes.length === 0) return undefined;
  return { base64data: bytes.toString('base64'), mediatype };
}

/** The basic template of one catalog, as the pipeline's converter wrote them. */
function templateText(
  pkg: string,
  graph: { defaultChannel: string; channels: Map<string, LegacyEntry[]> },
  icon: JsonObject | undefined,
  images: string[],
): string {
  const entries: JsonObject[] = [
    { defaultChannel: graph.defaultChannel, ...(icon ? { icon } : {}), name: pkg, schema: SCHEMA_PACKAGE },
  ];
  for (const [name, list] of [...graph.channels].sort(([a], [b]) => byName(a, b)))
    entries.push({
      entries: list.map((e) => ({
        name: e.name,
        ...(e.replaces ? { replaces: e.replaces } : {}),
        ...(e.skipRange ? { skipRange: e.skipRange } : {}),
        ...(e.skips && e.skips.length > 0 ? { skips: e.skips } : {}),
      })),
      name,
      package: pkg,
      schema: SCHEMA_CHANNEL,
    });
  for (const image of images) entries.push({ image, schema: SCHEMA_BUNDLE });
  return `---\n${goYamlMarshal({ entries, schema: SCHEMA_BASIC_TEMPLATE })}`;
}

/** The index's blobs of the package as a template: package, channels, deprecations as served, bundles by image. */
function indexTemplateText(blobs: JsonObject[]): string {
  const entries = blobs.map((b) =>
    b.schema === SCHEMA_BUNDLE ? { image: b.image, schema: SCHEMA_BUNDLE } : b,
  );
  return `---\n${goYamlMarshal({ entries, schema: SCHEMA_BASIC_TEMPLATE })}`;
}

function graphOfIndex(blobs: JsonObject[]): {
  defaultChannel: string;
  channels: Map<string, LegacyEntry[]>;
  bundles: string[];
} {
  const pkg = blobs.find((b) => b.schema === SCHEMA_PACKAGE);
  const channels = new Map<string, LegacyEntry[]>();
  for (const c of blobs.filter((b) => b.schema === SCHEMA_CHANNEL)) {
    const list = Array.isArray(c.entries) ? (c.entries as JsonObject[]) : [];
    channels.set(
      String(c.name),
      list.map((e) => ({
        name: String(e.name),
        ...(typeof e.replaces === 'string' && e.replaces ? { replaces: e.replaces } : {}),
        ...(Array.isArray(e.skips) && e.skips.length > 0 ? { skips: e.skips.map(String) } : {}),
        ...(typeof e.skipRange === 'string' && e.skipRange ? { skipRange: e.skipRange } : {}),
      })),
    );
  }
  const bundles = blobs.filter((b) => b.schema === SCHEMA_BUNDLE).map((b) => String(b.name));
  return {
    defaultChannel: typeof pkg?.defaultChannel === 'string' ? pkg.defaultChannel : '',
    channels,
    bundles: bundles.sort(),
  };
}

function reportOf(
  graph: { defaultChannel: string; channels: Map<string, LegacyEntry[]>; bundles: string[] },
  source: OnboardCatalog['source'],
): OnboardCatalog {
  const channels: OnboardCatalog['channels'] = {};
  for (const [name, list] of [...graph.channels].sort(([a], [b]) => byName(a, b)))
    channels[name] = list.map((e) => ({
      name: e.name,
      replaces: e.replaces ?? null,
      skips: e.skips ?? [],
      skipRange: e.skipRange ?? null,
    }));
  return { defaultChannel: graph.defaultChannel, bundles: graph.bundles, channels, source };
}

/** Every way the index differs from what the directories give for one catalog. */
function indexDifferences(
  catalog: string,
  fromIndex: ReturnType<typeof graphOfIndex>,
  fromDirs: LegacyPackageGraph | undefined,
  admitted: string[],
): OnboardDifference[] {
  const out: OnboardDifference[] = [];
  const inIndex = new Set(fromIndex.bundles);
  const inDirs = new Set(admitted);
  for (const b of [...inIndex].filter((n) => !inDirs.has(n)).sort())
    out.push({
      catalog,
      kind: 'only-in-index',
      message: `${catalog}: ${b} is in the index but no bundle directory for this version holds it`,
    });
  for (const b of [...inDirs].filter((n) => !inIndex.has(n)).sort())
    out.push({
      catalog,
      kind: 'only-in-directories',
      message: `${catalog}: ${b} has a bundle directory for this version but the index does not serve it`,
    });
  if (!fromDirs) return out;
  if (fromIndex.defaultChannel !== fromDirs.defaultChannel)
    out.push({
      catalog,
      kind: 'default-channel',
      message: `${catalog}: the index's default channel is ${fromIndex.defaultChannel || '(none)'}, the directories give ${fromDirs.defaultChannel || '(none)'}`,
    });
  const names = new Set([...fromIndex.channels.keys(), ...fromDirs.channels.keys()]);
  for (const ch of [...names].sort()) {
    const a = fromIndex.channels.get(ch);
    const b = fromDirs.channels.get(ch);
    if (!a || !b) {
      out.push({
        catalog,
        kind: 'channel',
        message: `${catalog}: channel ${ch} is only in the ${a ? 'index' : 'directories'}`,
      });
      continue;
    }
    const other = new Map(b.map((e) => [e.name, e]));
    for (const e of a) {
      const d = other.get(e.name);
      if (!d) continue;
      const key = (x: LegacyEntry): string =>
        JSON.stringify([x.replaces ?? '', [...(x.skips ?? [])].sort(), x.skipRange ?? '']);
      if (key(e) !== key(d))
        out.push({
          catalog,
          kind: 'edge',
          message: `${catalog}: channel ${ch}, ${e.name}: the index has ${describe(e)}, the directories give ${describe(d)}`,
        });
    }
  }
  return out;
}

const describe = (e: LegacyEntry): string =>
  [
    e.replaces ? `replaces ${e.replaces}` : 'no replaces',
    ...(e.skips?.length ? [`skips ${e.skips.join(', ')}`] : []),
    ...(e.skipRange ? [`skipRange ${e.skipRange}`] : []),
  ].join(', ');

/** ci.yaml switched to FBC: updateGraph (and the comment above it) out, fbc in; the rest as it was. */
export function fbcCiYaml(
  ciPath: string,
  text: string | undefined,
  mapping: { template: string; catalogs: string[] }[],
): string {
  const fbc = {
    enabled: true,
    catalog_mapping: mapping.map((m) => ({
      template_name: m.template,
      type: SCHEMA_BASIC_TEMPLATE,
      catalog_names: m.catalogs,
    })),
  };
  if (text === undefined || text.trim() === '' || text.trim() === '---')
    return `---\n${goYamlMarshal({ fbc })}`;
  const top = parseNodes(text, 'yaml')[0];
  if (top?.kind !== 'map' || top.flow)
    throw new OnboardRefusal(
      `${ciPath} is not a block mapping of keys, so it cannot be edited in place`,
      ciPath,
    );
  const splices: Splice[] = [];
  const graphPair = top.pairs.find((p) => p.key === 'updateGraph');
  let out = text;
  if (graphPair) {
    const lineStart = text.lastIndexOf('\n', graphPair.keyStart - 1) + 1;
    let start = lineStart;
    // The stock comment above updateGraph is about it and goes with it.
    for (;;) {
      const prevEnd = start - 1;
      if (prevEnd <= 0) break;
      const prevStart = text.lastIndexOf('\n', prevEnd - 1) + 1;
      const line = text.slice(prevStart, prevEnd);
      if (!/^\s*#.*(replaces-mode|semver-mode|updateGraph)/.test(line)) break;
      start = prevStart;
    }
    const valueEnd = graphPair.value ? contentEnd(graphPair.value) : graphPair.keyStart;
    const lineEnd = text.indexOf('\n', valueEnd);
    splices.push({ at: start, del: (lineEnd < 0 ? text.length : lineEnd + 1) - start, ins: '' });
    out = applySplices(text, splices);
  }
  const again = parseNodes(out, 'yaml')[0] as TMap | undefined;
  if (!again || again.kind !== 'map' || again.pairs.length === 0)
    return `${out.replace(/\s*$/, '\n')}${goYamlMarshal({ fbc })}`;
  const existing = again.pairs.find((p) => p.key === 'fbc');
  if (existing) {
    // An fbc key with enabled: false (or nothing useful) is replaced whole.
    const lineStart = out.lastIndexOf('\n', existing.keyStart - 1) + 1;
    const end = existing.value ? contentEnd(existing.value) : existing.keyStart;
    const lineEnd = out.indexOf('\n', end);
    out = out.slice(0, lineStart) + out.slice(lineEnd < 0 ? out.length : lineEnd + 1);
    const third = parseNodes(out, 'yaml')[0] as TMap | undefined;
    if (!third || third.kind !== 'map' || third.pairs.length === 0)
      return `${out.replace(/\s*$/, '\n')}${goYamlMarshal({ fbc })}`;
    return applySplices(out, [addPair(out, third, 'fbc', fbc, detectStyle(out, 'yaml'))]);
  }
  return applySplices(out, [addPair(out, again, 'fbc', fbc, detectStyle(out, 'yaml'))]);
}

const catalogNameOf = (root: string): string => root.slice(root.lastIndexOf('/') + 1);
const ocpOrder = (a: string, b: string): number =>
  rankOcp(ocpCatalogVersion(a)!) - rankOcp(ocpCatalogVersion(b)!) || byName(a, b);

/** Onboard the package; throws OnboardRefusal (nothing to write) when it cannot be done faithfully. */
export async function onboardPackage(input: OnboardInput): Promise<OnboardResult> {
  const settings = { ...DEFAULT_BUNDLE_SETTINGS, ...input.settings };
  const { tree } = input;
  const pkg = input.package;
  if (!PACKAGE_NAME.test(pkg))
    throw new OnboardRefusal(`"${pkg}" is not a package name (lowercase letters, digits, '-' and '.')`);
  const packageDir = settings.path.split('{version}')[0]!.replaceAll('{package}', pkg).replace(/\/$/, '');
  if (packageDir.includes('{') || packageDir === '')
    throw new OnboardRefusal(
      `bundles.path "${settings.path}" does not name a package directory before {version}`,
    );
  const ciPath = `${packageDir}/ci.yaml`;
  const ciText = tree.read(ciPath);
  // ci.yaml first: a package on FBC already has directories (catalog-templates/) that are no bundles.
  const mode = readMode(ciPath, ciText);
  const bundles = readBundles(tree, pkg, settings);
  if (bundles.length === 0)
    throw new OnboardRefusal(
      `${packageDir} holds no bundle directory of ${pkg} (${settings.path}); nothing to onboard`,
    );

  // ---- the catalogs
  const roots = new Map<string, string>();
  for (const r of input.catalogRoots) if (ocpCatalogVersion(catalogNameOf(r))) roots.set(catalogNameOf(r), r);
  let names = [...roots.keys()];
  if (input.catalogs) {
    const unknown = input.catalogs.filter((c) => !roots.has(c));
    if (unknown.length > 0)
      throw new OnboardRefusal(
        `--catalogs names ${unknown.join(', ')}, which the repository has no catalog directory for (it has: ${names.sort(ocpOrder).join(', ') || 'none'})`,
      );
    names = [...new Set(input.catalogs)];
  }
  if (names.length === 0)
    throw new OnboardRefusal(
      'the repository has no catalog directory named after an OpenShift version (catalogs/v4.12, ...); give --catalogs or add the directories',
    );
  names.sort(ocpOrder);
  for (const name of names) {
    const existing = `${roots.get(name)}/${pkg}/`;
    if (tree.list().some((p) => p.startsWith(existing)))
      throw new OnboardRefusal(
        `${existing} exists already: the package is (partly) on file-based catalogs; remove it or finish by hand`,
        existing,
      );
  }
  if (tree.list().some((p) => p.startsWith(`${packageDir}/catalog-templates/`)))
    throw new OnboardRefusal(
      `${packageDir}/catalog-templates/ exists already: the package is (partly) on file-based catalogs`,
      `${packageDir}/catalog-templates/`,
    );
  for (const v of input.index?.keys() ?? [])
    if (!names.includes(v))
      throw new OnboardRefusal(
        `--index names ${v}, which is not one of the catalogs onboarded (${names.join(', ')})`,
      );

  // ---- graphs, per catalog
  const legacy = bundles.map((b) => b.legacy);
  const byBundle = new Map(bundles.map((b) => [b.legacy.name, b]));
  const notes: string[] = [];
  const differences: OnboardDifference[] = [];
  const catalogs: Record<string, OnboardCatalog> = {};
  const planned: { catalog: string; template: string; resolver?: BundleResolver }[] = [];
  const imageOf = (name: string): string => {
    const listed = input.bundleImages?.get(name);
    if (listed) return listed;
    if (input.bundleImages)
      throw new OnboardRefusal(
        `--bundle-images has no line for ${name} (from ${byBundle.get(name)?.dir ?? 'the index'}); add "${name} <image-ref>"`,
      );
    const b = byBundle.get(name)!;
    return bundleImageReference(settings.imageTemplate, pkg, b.version);
  };
  for (const catalog of names) {
    const fromDirs = legacyIndexGraph(legacy, mode, catalog);
    for (const n of fromDirs?.notes ?? []) notes.push(`${catalog}: ${n}`);
    const indexBlobs = input.index?.get(catalog);
    if (indexBlobs !== undefined) {
      // By the annotation alone: a bundle olm.maxOpenShiftVersion keeps out is still one the index differs on.
      const admitted = legacy.filter((b) => admitsCatalog(b.openshift, catalog)).map((b) => b.name);
      const fromIndex = graphOfIndex(indexBlobs);
      if (indexBlobs.length === 0) {
        for (const b of admitted.sort())
          differences.push({
            catalog,
            kind: 'not-in-index',
            message: `${catalog}: the index does not serve ${pkg} at all, though ${b} has a bundle directory for this version; nothing is written for ${catalog}`,
          });
        continue;
      }
      differences.push(...indexDifferences(catalog, fromIndex, fromDirs, admitted));
      catalogs[catalog] = reportOf(fromIndex, 'index');
      planned.push({
        catalog,
        template: indexTemplateText(indexBlobs),
        resolver: bundleResolverFromCatalog([indexBlobs.map((b) => JSON.stringify(b)).join('\n')]),
      });
      continue;
    }
    if (!fromDirs) {
      notes.push(
        `${catalog}: no bundle of ${pkg} goes into this version's index (com.redhat.openshift.versions), so nothing is written for it`,
      );
      continue;
    }
    catalogs[catalog] = reportOf(fromDirs, 'directories');
    const head = fromDirs.channels.get(fromDirs.defaultChannel);
    const heads = head ? entryHeads(head) : [];
    const headName = heads.length === 1 ? heads[0] : undefined;
    const icon = packageIcon(headName ? byBundle.get(headName)?.csv : undefined);
    const ordered = fromDirs.bundles
      .map((n) => byBundle.get(n)!)
      .sort((a, b) => compareLegacyBundles(a.legacy, b.legacy));
    planned.push({
      catalog,
      template: templateText(
        pkg,
        fromDirs,
        icon,
        ordered.map((b) => imageOf(b.legacy.name)),
      ),
    });
  }
  if (planned.length === 0)
    throw new OnboardRefusal(
      `no catalog would hold ${pkg}: ${notes.join('; ') || 'no bundle admits any of them'}`,
    );

  // ---- templates: one per distinct content, named after the first catalog it serves
  const groups = new Map<string, string[]>();
  for (const p of planned) groups.set(p.template, [...(groups.get(p.template) ?? []), p.catalog]);
  const templateName = (list: string[]): string => (groups.size === 1 ? 'basic.yaml' : `${list[0]}.yaml`);
  const edits: OnboardResult['edits'] = [];
  const mapping: { template: string; catalogs: string[] }[] = [];
  for (const [text, list] of groups) {
    const name = templateName(list);
    edits.push({ path: `${packageDir}/catalog-templates/${name}`, before: undefined, after: text });
    mapping.push({ template: name, catalogs: list });
  }

  // ---- catalogs, rendered as release renders them
  // Each directory was parsed once above; its blob is made per image reference.
  const byImage = new Map<string, DirectoryBundle>();
  for (const b of bundles) {
    try {
      byImage.set(imageOf(b.legacy.name), b);
    } catch (err) {
      if (!(err instanceof OnboardRefusal)) throw err;
    }
  }
  const fromDirectories: BundleResolver = async (image) => {
    const b = byImage.get(image);
    return b ? renderParsedBundle(b.parsed, image) : undefined;
  };
  const renders = new Map<string, string>();
  for (const p of planned) {
    const migrate = migratesCsvMetadata(p.catalog, settings.csvMetadataFrom);
    const key = `${migrate}\0${p.resolver ? p.catalog : ''}\0${p.template}`;
    let rendered = renders.get(key);
    if (rendered === undefined) {
      const resolver = p.resolver;
      const resolveBundle: BundleResolver = resolver
        ? async (image) => (await resolver(image)) ?? fromDirectories(image)
        : fromDirectories;
      try {
        rendered = await renderTemplateText(p.template, 'yaml', {
          resolveBundle,
          ...(migrate ? { migrateLevel: 'bundle-object-to-csv-metadata' as const } : {}),
        });
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        throw new OnboardRefusal(`the template for ${p.catalog} cannot be rendered: ${err.message}`);
      }
      renders.set(key, rendered);
    }
    edits.push({ path: `${roots.get(p.catalog)}/${pkg}/catalog.yaml`, before: undefined, after: rendered });
  }
  edits.push({ path: ciPath, before: ciText, after: fbcCiYaml(ciPath, ciText, mapping) });
  return { package: pkg, mode, catalogs, edits, differences, notes };
}
