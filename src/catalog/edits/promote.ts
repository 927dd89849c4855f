// `/promote <bundle> <channel> [<root>]`: add a bundle that a catalog already has to a
// channel, with edges that keep the channel single-headed and every existing user
// upgradeable. Pure: it reads a virtual file tree and returns the edited files. Each
// candidate edit is checked with the real validation and upgrade-graph checks before it
// is chosen. Where a package is rendered from a template, the template is edited and the
// outputs are re-rendered (bundles come from the committed outputs).
import { upgradeGraphCheck } from '../../checks/upgrade-graph/index.js';
import type { Diagnostic } from '../diagnostics.js';
import { validateCatalog, type CatalogReport } from '../index.js';
import type { ModelBundle, ModelChannel, ModelPackage } from '../fbc/model.js';
import { compareVersions, formatVersion, parseVersion, type Version } from '../versions/semver.js';
import type { CatalogSource, SourceEntry } from '../fbc/source.js';
import {
  addPair,
  applySplices,
  detectStyle,
  EditError,
  formatOfPath,
  insertDocument,
  insertSeqItem,
  parseNodes,
  pairOf,
  scalarOf,
  setScalar,
  valueOf,
  type Splice,
  type TMap,
  type TNode,
  type TSeq,
} from './promote-edit.js';
import {
  bundleResolverFromCatalog,
  parseTemplate,
  renderTemplateText,
  semverOptionsForOpm,
  TemplateError,
  type SemverOptions,
  templateKind,
  type TemplateKind,
} from '../templates/index.js';
import { readSemverTemplate, type Archetype } from '../templates/semver.js';

/** Read access to a repository's files (a working tree or a git tree). */
export interface FileTree {
  read(path: string): string | undefined;
  /** Every file path, with forward slashes, relative to the repository root. */
  list(): string[];
}

export interface TemplateMapping {
  /** Path of the template file. */
  template: string;
  kind: TemplateKind;
  /** Paths of the rendered catalog files made from it. */
  outputs: string[];
}

export interface FileEdit {
  path: string;
  before: string;
  after: string;
}

export interface PromoteResult {
  edits: FileEdit[];
  notes: string[];
}

export interface PromoteRequest {
  bundle: string;
  channel: string;
  /** Only this catalog root; otherwise every root that has the bundle. */
  root?: string;
}

export interface PromoteInput {
  tree: FileTree;
  /** Catalog roots (directories), relative to the repository root. */
  roots: string[];
  templates?: TemplateMapping[];
}

/** Why a promotion was refused; the message says what to do. */
export class PromoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PromoteError';
  }
}

// ---- catalog loading from the tree

function treeSource(files: Map<string, string>, label: string): CatalogSource {
  const sorted = [...files.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return {
    label,
    list: async (): Promise<SourceEntry[]> =>
      sorted.map((path) => ({ path, kind: 'file', size: Buffer.byteLength(files.get(path)!) })),
    read: async (paths) => new Map(paths.map((p) => [p, Buffer.from(files.get(p) ?? '')])),
  };
}

/** The files of a root, keyed by their path inside the root. */
export function rootFiles(tree: FileTree, root: string, override?: Map<string, string>): Map<string, string> {
  const prefix = root.replace(/\/+$/, '') + '/';
  const out = new Map<string, string>();
  for (const path of tree.list()) {
    if (!path.startsWith(prefix)) continue;
    const text = override?.get(path) ?? tree.read(path);
    if (text !== undefined) out.set(path.slice(prefix.length), text);
  }
  return out;
}

export async function report(files: Map<string, string>, label: string): Promise<CatalogReport> {
  return validateCatalog(treeSource(files, label));
}

/** The files (inside a root) that hold objects of a package. */
export function packageFiles(r: CatalogReport, pkg: string): Set<string> {
  const out = new Set<string>();
  const c = r.config;
  for (const p of c.packages) if (p.name === pkg) out.add(p.pos.file);
  for (const list of [c.channels, c.bundles, c.deprecations, c.others]) {
    for (const o of list) if (o.package === pkg) out.add(o.pos.file);
  }
  return out;
}

/**
 * What the promotion broke: validation errors and upgrade-graph errors of the package
 * that the old files did not have.
 */
export async function promotionProblems(
  root: string,
  oldFiles: Map<string, string>,
  newFiles: Map<string, string>,
  pkg: string,
): Promise<Diagnostic[]> {
  const before = await report(oldFiles, root);
  const after = await report(newFiles, root);
  const known = new Set(
    before.diagnostics.filter((d) => d.level === 'error').map((d) => `${d.rule}\0${d.message}`),
  );
  const validation = after.diagnostics.filter(
    (d) => d.level === 'error' && !known.has(`${d.rule}\0${d.message}`),
  );
  const graph = upgradeGraphCheck([{ path: root, base: before, head: after, packages: new Set([pkg]) }]);
  return [...validation, ...graph.findings.filter((d) => d.level === 'error')];
}

// ---- planning a channel edit from the graph

interface NewEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

interface EntryChange {
  entry: string;
  replaces?: string;
  addSkips?: string[];
}

export interface ChannelEdit {
  package: string;
  channel: string;
  create: boolean;
  entry: NewEntry;
  changes: EntryChange[];
  note: string;
}

class AlreadyThere extends PromoteError {}

const versionText = (v: Version | undefined): string => (v ? formatVersion(v) : 'no version');

/** The heads of a channel as opm counts them (replaces and skips are the only edges). */
function heads(ch: ModelChannel): ModelBundle[] {
  const incoming = new Set<string>();
  for (const b of ch.bundles.values()) {
    if (b.replaces) incoming.add(b.replaces);
    for (const s of b.skips) incoming.add(s);
  }
  return [...ch.bundles.values()].filter((b) => !incoming.has(b.name));
}

/** Candidate edits, best first; each is verified before it is used. */
export function planChannelEdits(
  pkg: ModelPackage,
  channel: string,
  bundle: string,
  version: Version,
): ChannelEdit[] {
  const base = { package: pkg.name, channel };
  const ch = pkg.channels.get(channel);
  if (!ch) {
    return [
      {
        ...base,
        create: true,
        entry: { name: bundle },
        changes: [],
        note: `channel "${channel}" of package "${pkg.name}" did not exist: it is created with ${bundle} as its only entry (nobody is subscribed to it yet, so no one needs a way forward in it)`,
      },
    ];
  }
  if (ch.bundles.has(bundle)) {
    throw new AlreadyThere(`bundle ${bundle} is already in channel "${channel}" of package "${pkg.name}"`);
  }
  const entries = [...ch.bundles.values()];
  const same = entries.find((e) => e.version && compareVersions(e.version, version) === 0);
  if (same) {
    throw new PromoteError(
      `channel "${channel}" already has ${same.name} with version ${versionText(same.version)}, the version of ${bundle}; two bundles of a package cannot share a version`,
    );
  }
  const hs = heads(ch);
  if (hs.length !== 1) {
    throw new PromoteError(
      `channel "${channel}" of package "${pkg.name}" has ${hs.length === 0 ? 'no head' : `${hs.length} heads (${hs.map((h) => h.name).join(', ')})`}; fix the channel before promoting into it`,
    );
  }
  const head = hs[0]!;
  const lower = entries.filter((e) => e.version && compareVersions(e.version, version) < 0);
  const higher = entries.filter((e) => e.version && compareVersions(e.version, version) > 0);
  const v = formatVersion(version);
  // The channel's skipRange convention, `>=A <own version`, taken from a neighbour.
  const conventionFrom = (ref: ModelBundle | undefined): string | undefined => {
    const m = /^>=(\S+) <(\S+)$/.exec(ref?.skipRange ?? '');
    return m && ref?.version && m[2] === formatVersion(ref.version) ? `>=${m[1]} <${v}` : undefined;
  };
  /** Each plan, first with the skipRange convention (when the channel has one), then without. */
  const withConvention = (plans: ChannelEdit[], ref: ModelBundle | undefined): ChannelEdit[] => {
    const range = conventionFrom(ref);
    if (!range) return plans;
    return [
      ...plans.map((p) => ({
        ...p,
        entry: { ...p.entry, skipRange: range },
        note: `${p.note}; its skipRange '${range}' follows ${ref!.name}'s '${ref!.skipRange}'`,
      })),
      ...plans,
    ];
  };
  if (higher.length === 0) {
    return withConvention(
      [
        {
          ...base,
          create: false,
          entry: { name: bundle, replaces: head.name },
          changes: [],
          note: `${bundle} (${v}) becomes the head of "${channel}": it replaces the current head ${head.name}, so every existing upgrade path now continues to it`,
        },
      ],
      head,
    );
  }
  const byVersion = (a: ModelBundle, b: ModelBundle): number => compareVersions(a.version!, b.version!);
  const prev = lower.sort(byVersion).at(-1);
  const next = higher.sort(byVersion)[0]!;
  const where = `between ${prev ? `${prev.name} (${versionText(prev.version)})` : 'nothing'} and ${next.name} (${versionText(next.version)})`;
  const own = prev ? { replaces: prev.name } : {};
  const plans: ChannelEdit[] = [];
  const referrer = entries.find((e) => e.replaces === bundle || e.skips.includes(bundle));
  if (referrer) {
    // An entry already points at it (a replaces or skips of a bundle not yet in the channel).
    plans.push({
      ...base,
      create: false,
      entry: { name: bundle, ...own },
      changes: [],
      note: `${bundle} (${v}) goes ${where}: ${referrer.name} already ${referrer.replaces === bundle ? 'replaces' : 'skips'} it, so no other entry changes${prev ? `; it replaces ${prev.name}` : ''}`,
    });
  }
  if (next.replaces === (prev?.name ?? '')) {
    plans.push({
      ...base,
      create: false,
      entry: { name: bundle, ...own },
      changes: [{ entry: next.name, replaces: bundle }],
      note: `${bundle} (${v}) goes ${where}: ${prev ? `it replaces ${prev.name}, and ` : ''}${next.name} now replaces ${bundle}${prev ? ` instead of ${prev.name}` : ''}, so the replaces chain runs through it`,
    });
  }
  plans.push({
    ...base,
    create: false,
    entry: { name: bundle, ...own },
    changes: [{ entry: next.name, addSkips: [bundle] }],
    note: `${bundle} (${v}) goes ${where}: ${next.name} skips it (so it is not a second head)${prev ? `, and it replaces ${prev.name}` : ''}; users of older versions keep upgrading to ${next.name}`,
  });
  if (prev) {
    plans.push({
      ...base,
      create: false,
      entry: { name: bundle },
      changes: [{ entry: next.name, addSkips: [bundle] }],
      note: `${bundle} (${v}) goes ${where}: ${next.name} skips it (so it is not a second head); it has no edges of its own`,
    });
  }
  if (next !== head) {
    // Channels that collect skips on the head (and neighbours that are off the chain) take it there.
    plans.push({
      ...base,
      create: false,
      entry: { name: bundle },
      changes: [{ entry: head.name, addSkips: [bundle] }],
      note: `${bundle} (${v}) goes ${where}: the head ${head.name} skips it, so whoever installs it upgrades straight to the head`,
    });
  }
  return withConvention(plans, next);
}

// ---- applying a channel edit to a file (plain FBC or a basic template)

interface ChannelSite {
  map: TMap;
  /** The list it sits in: the template's entries, or undefined for a top-level object. */
  parent?: TSeq;
  top: TNode;
}

function channelSites(nodes: TNode[]): ChannelSite[] {
  const out: ChannelSite[] = [];
  for (const top of nodes) {
    if (top.kind !== 'map') continue;
    const schema = scalarOf(top, 'schema');
    if (schema === 'olm.channel') out.push({ map: top, top });
    if (schema === 'olm.template.basic') {
      const list = valueOf(top, 'entries');
      if (list?.kind !== 'seq') continue;
      for (const item of list.items) {
        if (item.kind === 'map' && scalarOf(item, 'schema') === 'olm.channel')
          out.push({ map: item, parent: list, top });
      }
    }
  }
  return out;
}

export function packageSite(
  nodes: TNode[],
  pkg: string,
): { map: TMap; parent?: TSeq; top: TNode } | undefined {
  for (const top of nodes) {
    if (top.kind !== 'map') continue;
    if (scalarOf(top, 'schema') === 'olm.package' && scalarOf(top, 'name') === pkg) return { map: top, top };
    if (scalarOf(top, 'schema') === 'olm.template.basic') {
      const list = valueOf(top, 'entries');
      if (list?.kind !== 'seq') continue;
      for (const item of list.items) {
        if (
          item.kind === 'map' &&
          scalarOf(item, 'schema') === 'olm.package' &&
          scalarOf(item, 'name') === pkg
        ) {
          return { map: item, parent: list, top };
        }
      }
    }
  }
  return undefined;
}

/** Go's field order (what opm writes as JSON and what most hand-written files follow). */
const ENTRY_KEYS = ['name', 'replaces', 'skips', 'skipRange'];
const CHANNEL_KEYS = ['schema', 'name', 'package', 'entries', 'properties'];

/** Keys in the order the file's objects use: sorted (as opm writes YAML), else Go's order. */
function ordered(
  obj: Record<string, unknown>,
  like: TMap | undefined,
  canonical: string[],
): Record<string, unknown> {
  const existing = like?.pairs.map((p) => p.key) ?? [];
  const sorted = existing.length >= 2 && existing.every((k, i) => i === 0 || existing[i - 1]! <= k);
  const rank = (k: string): number => (canonical.includes(k) ? canonical.indexOf(k) : canonical.length);
  const keys = Object.keys(obj).sort(sorted ? undefined : (a, b) => rank(a) - rank(b));
  return Object.fromEntries(keys.map((k) => [k, obj[k]]));
}

/** Where to insert an entry so that a list sorted by version stays sorted. */
function insertionIndex(
  items: TNode[],
  versionOf: (name: string) => Version | undefined,
  version: Version,
): number {
  const versions = items.map((i) => (i.kind === 'map' ? versionOf(String(scalarOf(i, 'name'))) : undefined));
  if (versions.some((v) => !v) || versions.length < 2) return items.length;
  const vs = versions as Version[];
  const asc = vs.every((v, i) => i === 0 || compareVersions(vs[i - 1]!, v) <= 0);
  const desc = vs.every((v, i) => i === 0 || compareVersions(vs[i - 1]!, v) >= 0);
  if (asc) {
    const i = vs.findIndex((v) => compareVersions(v, version) > 0);
    return i < 0 ? vs.length : i;
  }
  if (desc) {
    const i = vs.findIndex((v) => compareVersions(v, version) < 0);
    return i < 0 ? vs.length : i;
  }
  return items.length;
}

export function applyChannelEdit(
  path: string,
  text: string,
  edit: ChannelEdit,
  versionOf: (name: string) => Version | undefined,
): string {
  const format = formatOfPath(path, text);
  const style = detectStyle(text, format);
  const nodes = parseNodes(text, format);
  const sites = channelSites(nodes);
  const splices: Splice[] = [];
  const entryObject = (like: TMap | undefined): Record<string, unknown> =>
    ordered(
      {
        name: edit.entry.name,
        ...(edit.entry.replaces ? { replaces: edit.entry.replaces } : {}),
        ...(edit.entry.skips ? { skips: edit.entry.skips } : {}),
        ...(edit.entry.skipRange ? { skipRange: edit.entry.skipRange } : {}),
      },
      like,
      ENTRY_KEYS,
    );
  if (edit.create) {
    const sameKind = sites.find((s) => s.map.pairs.length > 0);
    const firstEntry = sameKind && valueOf(sameKind.map, 'entries');
    const likeEntry =
      firstEntry?.kind === 'seq' ? (firstEntry.items.find((i) => i.kind === 'map') as TMap) : undefined;
    const channel = ordered(
      { schema: 'olm.channel', package: edit.package, name: edit.channel, entries: [entryObject(likeEntry)] },
      sameKind?.map,
      CHANNEL_KEYS,
    );
    const mine = sites.filter((s) => scalarOf(s.map, 'package') === edit.package);
    const anchor = mine.at(-1) ?? packageSite(nodes, edit.package);
    if (!anchor)
      throw new EditError(`${path} has neither a channel nor the package blob of "${edit.package}"`);
    if (anchor.parent) {
      const index = anchor.parent.items.indexOf(anchor.map) + 1;
      splices.push(insertSeqItem(text, anchor.parent, channel, style, index));
    } else splices.push(insertDocument(text, channel, style, anchor.top));
    return applySplices(text, splices);
  }
  const site = sites.find(
    (s) => scalarOf(s.map, 'package') === edit.package && scalarOf(s.map, 'name') === edit.channel,
  );
  const entries = site && valueOf(site.map, 'entries');
  if (!site || entries?.kind !== 'seq') {
    throw new EditError(`${path} has no channel "${edit.channel}" of package "${edit.package}" to edit`);
  }
  const maps = entries.items.filter((i): i is TMap => i.kind === 'map');
  const like = maps.find((m) => m.pairs.length > 1) ?? maps[0];
  const v = versionOf(edit.entry.name);
  const index = v ? insertionIndex(entries.items, versionOf, v) : entries.items.length;
  splices.push(insertSeqItem(text, entries, entryObject(like), style, index));
  for (const change of edit.changes) {
    const entry = maps.find((m) => scalarOf(m, 'name') === change.entry);
    if (!entry) throw new EditError(`${path}: channel "${edit.channel}" has no entry ${change.entry}`);
    if (change.replaces !== undefined) {
      const pair = pairOf(entry, 'replaces');
      if (pair?.value) splices.push(setScalar(pair.value, change.replaces, style));
      else splices.push(addPair(text, entry, 'replaces', change.replaces, style, 'name'));
    }
    if (change.addSkips) {
      const skips = valueOf(entry, 'skips');
      if (skips?.kind === 'seq' && skips.items.length > 0) {
        for (const s of change.addSkips) splices.push(insertSeqItem(text, skips, s, style));
      } else {
        splices.push(addPair(text, entry, 'skips', change.addSkips, style, 'replaces'));
      }
    }
  }
  return applySplices(text, splices);
}

// ---- the semver template edit

const SEMVER_CHANNEL = /^(candidate|fast|stable)-v(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?$/;

/** Keys spelled as the template spells its other keys (`Stable`/`stable`). */
function spelled(top: TMap, key: string): string {
  const capital = top.pairs.some((p) => /^[A-Z]/.test(p.key));
  return capital ? key[0]!.toUpperCase() + key.slice(1) : key;
}

export function applySemverPromotion(
  path: string,
  text: string,
  channel: string,
  image: string,
  version: Version,
  versionOfImage: (image: string) => Version | undefined,
): { text: string; note: string } {
  const m = SEMVER_CHANNEL.exec(channel);
  if (!m) {
    throw new PromoteError(
      `channel name "${channel}" does not fit the semver template's naming: it makes <candidate|fast|stable>-v<major> and <candidate|fast|stable>-v<major>.<minor> channels`,
    );
  }
  const arch = m[1] as Archetype;
  const minorChannel = m[3] !== undefined;
  if (BigInt(m[2]!) !== version.major || (minorChannel && BigInt(m[3]!) !== version.minor)) {
    throw new PromoteError(
      `the semver template puts version ${formatVersion(version)} in ${minorChannel ? `${arch}-v${version.major}.${version.minor}` : `${arch}-v${version.major}`}, not in "${channel}"`,
    );
  }
  const template = readSemverTemplate(parseTemplate(text));
  if (minorChannel ? !template.generateMinorChannels : !template.generateMajorChannels) {
    throw new PromoteError(
      `${path} does not generate ${minorChannel ? 'minor' : 'major'}-version channels, so it has no channel "${channel}" (set ${minorChannel ? 'GenerateMinorChannels' : 'GenerateMajorChannels'} to true to have it)`,
    );
  }
  if (template.bundles[arch].includes(image)) {
    throw new AlreadyThere(
      `bundle image ${image} is already in the ${arch} bundles of ${path}, so it is in "${channel}"`,
    );
  }
  const format = formatOfPath(path, text);
  const style = detectStyle(text, format);
  const top = parseNodes(text, format)[0];
  if (top?.kind !== 'map') throw new EditError(`${path}: the template is not a mapping`);
  const archPair = pairOf(top, arch);
  let splice: Splice;
  const bundles = archPair?.value?.kind === 'map' ? pairOf(archPair.value, 'bundles') : undefined;
  if (bundles?.value?.kind === 'seq') {
    const first = bundles.value.items[0];
    const imageKey = first?.kind === 'map' ? (pairOf(first, 'image')?.key ?? 'image') : spelled(top, 'image');
    const items = bundles.value.items;
    const versions = items.map((i) =>
      i.kind === 'map' ? versionOfImage(String(scalarOf(i, 'image'))) : undefined,
    );
    const vs = versions.filter((v): v is Version => v !== undefined);
    const ascending =
      vs.length === versions.length && vs.every((v, i) => i === 0 || compareVersions(vs[i - 1]!, v) <= 0);
    const at = ascending ? vs.findIndex((v) => compareVersions(v, version) > 0) : -1;
    splice = insertSeqItem(text, bundles.value, { [imageKey]: image }, style, at < 0 ? items.length : at);
  } else if (archPair?.value?.kind === 'map') {
    splice = addPair(
      text,
      archPair.value,
      spelled(top, 'bundles'),
      [{ [spelled(top, 'image')]: image }],
      style,
    );
  } else if (!archPair) {
    splice = addPair(
      text,
      top,
      spelled(top, arch),
      { [spelled(top, 'bundles')]: [{ [spelled(top, 'image')]: image }] },
      style,
    );
  } else {
    throw new EditError(`${path}: "${archPair.key}" is not a mapping`);
  }
  return {
    text: applySplices(text, [splice]),
    note: `added ${image} to the ${arch} bundles of ${path}; the template puts it in "${channel}" and generates its edges`,
  };
}

// ---- the promotion

function bundleVersion(r: CatalogReport, name: string): Version | undefined {
  const blob = r.config.bundles.find((b) => b.name === name);
  const prop = blob?.properties.find((p) => p.type === 'olm.package');
  const v = (prop?.value as { version?: unknown } | undefined)?.version;
  if (typeof v !== 'string') return undefined;
  try {
    return parseVersion(v);
  } catch {
    return undefined;
  }
}

const OPM_BEHAVIOURS = ['v1.73.0', 'v1.64.0', 'v1.60.0', 'v1.46.0'];

/**
 * Render a template as its committed output was rendered: the opm behaviour (semver edge
 * rule, package metadata) that reproduces the committed bytes from the unedited template.
 */
export async function outputBehaviour(
  mapping: TemplateMapping,
  templateText: string,
  output: string,
  committed: string,
): Promise<SemverOptions> {
  const format = /\.json$/.test(output) ? 'json' : 'yaml';
  const resolveBundle = bundleResolverFromCatalog([committed]);
  for (const opm of mapping.kind === 'olm.semver' ? OPM_BEHAVIOURS : OPM_BEHAVIOURS.slice(0, 1)) {
    const options = semverOptionsForOpm(opm);
    try {
      if ((await renderTemplateText(templateText, format, { resolveBundle, ...options })) === committed)
        return options;
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      throw new PromoteError(`${mapping.template} does not render (${err.message}); fix it before promoting`);
    }
  }
  throw new PromoteError(
    `${output} is not the render of ${mapping.template} at this commit (opm alpha render-template gives other bytes); render the template and commit its output first`,
  );
}

export function rootOf(path: string, roots: string[]): string | undefined {
  return roots.find((r) => path.startsWith(r.replace(/\/+$/, '') + '/'));
}

interface Found {
  root: string;
  report: CatalogReport;
  file: string;
  pkg: string;
  version: Version;
  image: string;
}

export async function promote(request: PromoteRequest, input: PromoteInput): Promise<PromoteResult> {
  const { tree } = input;
  const roots = input.roots.map((r) => r.replace(/\/+$/, ''));
  const wanted = request.root?.replace(/\/+$/, '');
  if (wanted !== undefined && !roots.includes(wanted)) {
    throw new PromoteError(`${wanted} is not a catalog root (the roots are: ${roots.join(', ') || 'none'})`);
  }
  const found: Found[] = [];
  for (const root of wanted !== undefined ? [wanted] : roots) {
    const files = rootFiles(tree, root);
    // Only roots whose text mentions the bundle are loaded.
    if (![...files.values()].some((text) => text.includes(request.bundle))) continue;
    const r = await report(files, root);
    const blob = r.config.bundles.find((b) => b.name === request.bundle);
    if (!blob) continue;
    const version = bundleVersion(r, request.bundle);
    if (!version)
      throw new PromoteError(`bundle ${request.bundle} in ${root} has no valid olm.package version`);
    found.push({ root, report: r, file: blob.pos.file, pkg: blob.package, version, image: blob.image });
  }
  if (found.length === 0) {
    throw new PromoteError(
      wanted !== undefined
        ? `bundle ${request.bundle} is not in catalog root ${wanted}`
        : `bundle ${request.bundle} is in no catalog root (searched ${roots.join(', ') || 'nothing'})`,
    );
  }

  const edits: FileEdit[] = [];
  const notes: string[] = [];
  const already: string[] = [];
  const doneTemplates = new Set<string>();
  for (const f of found) {
    const mapping = input.templates?.find((m) => m.outputs.includes(`${f.root}/${f.file}`));
    try {
      if (!mapping) {
        const result = await promotePlain(tree, f, request);
        edits.push(result.edit);
        notes.push(`${f.root}: ${result.note}`);
      } else if (!doneTemplates.has(mapping.template)) {
        doneTemplates.add(mapping.template);
        const result = await promoteTemplate(tree, roots, f, mapping, request);
        edits.push(...result.edits);
        notes.push(...result.notes);
      }
    } catch (err) {
      if (err instanceof AlreadyThere) already.push(`${f.root}: ${err.message}`);
      else if (err instanceof EditError || err instanceof TemplateError) {
        throw new PromoteError(`cannot edit the files of ${f.root}: ${err.message}`);
      } else throw err;
    }
  }
  if (edits.length === 0) throw new PromoteError(already.join('; '));
  notes.push(...already.map((a) => `${a} (left as it is)`));
  return { edits, notes };
}

function describe(problems: Diagnostic[]): string {
  return problems
    .slice(0, 3)
    .map((d) => `${d.rule}: ${d.message}`)
    .join('; ');
}

async function promotePlain(
  tree: FileTree,
  f: Found,
  request: PromoteRequest,
): Promise<{ edit: FileEdit; note: string }> {
  const pkg = f.report.model.get(f.pkg);
  if (!pkg) throw new PromoteError(`package "${f.pkg}" of ${request.bundle} does not load in ${f.root}`);
  const candidates = planChannelEdits(pkg, request.channel, request.bundle, f.version);
  const files = rootFiles(tree, f.root);
  const mine = packageFiles(f.report, f.pkg);
  const subset = new Map([...files].filter(([p]) => mine.has(p)));
  const channelFile = pkg.channels.get(request.channel)?.pos?.file ?? pkg.pos.file;
  const versionOf = (name: string): Version | undefined => bundleVersion(f.report, name);
  const rejected: string[] = [];
  for (const edit of candidates) {
    const before = files.get(channelFile)!;
    const after = applyChannelEdit(`${f.root}/${channelFile}`, before, edit, versionOf);
    const problems = await promotionProblems(
      f.root,
      subset,
      new Map([...subset, [channelFile, after]]),
      f.pkg,
    );
    if (problems.length === 0)
      return { edit: { path: `${f.root}/${channelFile}`, before, after }, note: edit.note };
    rejected.push(`${edit.note} — rejected: ${describe(problems)}`);
  }
  throw new PromoteError(
    `no safe way to add ${request.bundle} to "${request.channel}" in ${f.root}: ${rejected.join(' | ')}`,
  );
}

async function promoteTemplate(
  tree: FileTree,
  roots: string[],
  f: Found,
  mapping: TemplateMapping,
  request: PromoteRequest,
): Promise<{ edits: FileEdit[]; notes: string[] }> {
  const templateText = tree.read(mapping.template);
  if (templateText === undefined) throw new PromoteError(`template ${mapping.template} is missing`);
  // The template says what it is (a ci.yaml `type` can be missing or stale).
  mapping = { ...mapping, kind: templateKind(parseTemplate(templateText)) };
  const outputs = mapping.outputs.filter((o) => tree.read(o) !== undefined);
  // Each output renders as it was rendered before (its opm behaviour, its own bundles).
  const behaviours = new Map<string, SemverOptions>();
  for (const o of outputs) behaviours.set(o, await outputBehaviour(mapping, templateText, o, tree.read(o)!));

  let candidates: { text: string; note: string }[];
  if (mapping.kind === 'olm.semver') {
    const versionOfImage = (image: string): Version | undefined => {
      const b = f.report.config.bundles.find((x) => x.image === image);
      return b ? bundleVersion(f.report, b.name) : undefined;
    };
    candidates = [
      applySemverPromotion(
        mapping.template,
        templateText,
        request.channel,
        f.image,
        f.version,
        versionOfImage,
      ),
    ];
  } else {
    const pkg = f.report.model.get(f.pkg);
    if (!pkg) throw new PromoteError(`package "${f.pkg}" does not load in ${f.root}`);
    const versionOf = (name: string): Version | undefined => bundleVersion(f.report, name);
    candidates = planChannelEdits(pkg, request.channel, request.bundle, f.version).map((edit) => ({
      text: applyChannelEdit(mapping.template, templateText, edit, versionOf),
      note: `${edit.note} (in ${mapping.template})`,
    }));
  }
  const rejected: string[] = [];
  for (const candidate of candidates) {
    const edits: FileEdit[] = [{ path: mapping.template, before: templateText, after: candidate.text }];
    const problems: Diagnostic[] = [];
    for (const o of outputs) {
      const before = tree.read(o)!;
      let after: string;
      try {
        after = await renderTemplateText(candidate.text, /\.json$/.test(o) ? 'json' : 'yaml', {
          resolveBundle: bundleResolverFromCatalog([before]),
          ...behaviours.get(o),
        });
      } catch (err) {
        if (err instanceof TemplateError) {
          problems.push({ rule: 'TEMPLATE', level: 'error', message: `${o}: ${err.message}` });
          continue;
        }
        throw err;
      }
      edits.push({ path: o, before, after });
      const root = rootOf(o, roots) ?? o.slice(0, o.lastIndexOf('/', o.lastIndexOf('/') - 1));
      const inRoot = o.slice(root.length + 1);
      problems.push(
        ...(await promotionProblems(root, new Map([[inRoot, before]]), new Map([[inRoot, after]]), f.pkg)),
      );
    }
    if (problems.length === 0) {
      return {
        edits,
        notes: [candidate.note, `re-rendered ${outputs.join(', ')} from ${mapping.template}`],
      };
    }
    rejected.push(`${candidate.note} — rejected: ${describe(problems)}`);
  }
  throw new PromoteError(
    `no safe way to promote ${request.bundle} via ${mapping.template}: ${rejected.join(' | ')}`,
  );
}

// ---- template mappings of community-operators style repositories

/**
 * `operators/<package>/ci.yaml` `fbc.catalog_mapping`: each template under
 * `operators/<package>/catalog-templates/` renders to `catalogs/<name>/<package>/catalog.yaml`.
 */
export function templateMappingsFromCiYaml(ciPath: string, text: string): TemplateMapping[] {
  const dir = ciPath.slice(0, ciPath.lastIndexOf('/'));
  const pkg = dir.slice(dir.lastIndexOf('/') + 1);
  let nodes: TNode[];
  try {
    nodes = parseNodes(text, 'yaml');
  } catch (err) {
    throw new PromoteError(`${ciPath}: ${(err as Error).message}`);
  }
  const top = nodes[0];
  const fbc = top?.kind === 'map' ? valueOf(top, 'fbc') : undefined;
  const list = fbc?.kind === 'map' ? valueOf(fbc, 'catalog_mapping') : undefined;
  if (list?.kind !== 'seq') return [];
  const out: TemplateMapping[] = [];
  for (const item of list.items) {
    if (item.kind !== 'map') continue;
    const name = scalarOf(item, 'template_name');
    const names = valueOf(item, 'catalog_names');
    const type = scalarOf(item, 'type');
    if (typeof name !== 'string' || names?.kind !== 'seq') continue;
    out.push({
      template: `${dir}/catalog-templates/${name}`,
      kind: type === 'olm.semver' ? 'olm.semver' : 'olm.template.basic',
      outputs: names.items.flatMap((n) =>
        n.kind === 'scalar' ? [`catalogs/${String(n.value)}/${pkg}/catalog.yaml`] : [],
      ),
    });
  }
  return out;
}

/** Every `operators/*\/ci.yaml` mapping of a tree. */
export function templateMappingsFromTree(tree: FileTree): TemplateMapping[] {
  return tree
    .list()
    .filter((p) => /^operators\/[^/]+\/ci\.yaml$/.test(p))
    .flatMap((p) => templateMappingsFromCiYaml(p, tree.read(p) ?? ''));
}

export { lineDiff, changedLines, unifiedDiff } from './promote-diff.js';
