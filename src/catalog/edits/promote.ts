// `/promote <bundle> <channel> [<root>]`, the core's part: plan the edits that add a bundle
// a catalog already has to a channel, with edges that keep the channel single-headed and
// every existing user upgradeable, and apply them to files (or to a template, whose
// outputs are then re-rendered). Pure: it reads a virtual file tree and returns edited
// text. Choosing among the candidates with the validation and upgrade-graph checks is
// src/flows/promote/plan.ts.
import { validateCatalog, type CatalogReport } from '../index.js';
import type { ModelBundle, ModelChannel, ModelPackage } from '../fbc/model.js';
import { goStringCompare } from '../go/gostrings.js';
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
  semverOptionsForOpm,
  TemplateError,
  type SemverOptions,
} from '../templates/index.js';
import { readSemverTemplate, type Archetype } from '../templates/semver.js';
import { opmBehavioursFor, renderAsCommitted } from '../templates/behaviours.js';
import { CiYamlError, templateMappingsFromCiYaml, type TemplateMapping } from '../templates/ci-yaml.js';
import { SCHEMA_BASIC_TEMPLATE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, packageVersion } from '../property.js';

/** Read access to a repository's files (a working tree or a git tree). */
export interface FileTree {
  read(path: string): string | undefined;
  /** Every file path, with forward slashes, relative to the repository root. */
  list(): string[];
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
  /**
   * How files of a catalog root (a whole root, or a package's files in it) are validated
   * (default: `report`). The App validates as its checks do and keeps each report by the
   * files' content, so the checks of the edit reuse them (docs/architecture.md, the
   * `/promote` walk).
   */
  validateFiles?: ValidateFiles;
}

/** Validates files of a catalog root (paths inside it). */
export type ValidateFiles = (files: Map<string, string>, label: string) => Promise<CatalogReport>;

/** Why a promotion was refused; the message says what to do. */
export class PromoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PromoteError';
  }
}

/** Every place already is as asked: a refusal to the App (nothing to commit), success to the CLI. */
export class AlreadyDone extends PromoteError {}

// ---- catalog loading from the tree

export function treeSource(files: Map<string, string>, label: string): CatalogSource {
  const sorted = [...files.keys()].sort(goStringCompare);
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

/** The report of catalog root `root` of the input, whose files are `files`. */
export function rootReport(
  input: PromoteInput,
  files: Map<string, string>,
  root: string,
): Promise<CatalogReport> {
  return (input.validateFiles ?? report)(files, root);
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

/** The bundle is already where a promotion would put it. */
export class AlreadyThere extends PromoteError {}

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
    if (schema === SCHEMA_CHANNEL) out.push({ map: top, top });
    if (schema === SCHEMA_BASIC_TEMPLATE) {
      const list = valueOf(top, 'entries');
      if (list?.kind !== 'seq') continue;
      for (const item of list.items) {
        if (item.kind === 'map' && scalarOf(item, 'schema') === SCHEMA_CHANNEL)
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
    if (scalarOf(top, 'schema') === SCHEMA_PACKAGE && scalarOf(top, 'name') === pkg) return { map: top, top };
    if (scalarOf(top, 'schema') === SCHEMA_BASIC_TEMPLATE) {
      const list = valueOf(top, 'entries');
      if (list?.kind !== 'seq') continue;
      for (const item of list.items) {
        if (
          item.kind === 'map' &&
          scalarOf(item, 'schema') === SCHEMA_PACKAGE &&
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
      {
        schema: SCHEMA_CHANNEL,
        package: edit.package,
        name: edit.channel,
        entries: [entryObject(likeEntry)],
      },
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

/** A bundle's `olm.package` version, when it has a valid one. */
export function bundleVersion(r: CatalogReport, name: string): Version | undefined {
  const blob = r.config.bundles.find((b) => b.name === name);
  const v = blob && packageVersion(blob.properties);
  if (v === undefined) return undefined;
  try {
    return parseVersion(v);
  } catch {
    return undefined;
  }
}

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
  let match;
  try {
    match = await renderAsCommitted(
      templateText,
      format,
      committed,
      { resolveBundle },
      opmBehavioursFor(mapping.kind),
    );
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    throw new PromoteError(`${mapping.template} does not render (${err.message}); fix it before promoting`);
  }
  if (match) return semverOptionsForOpm(match.opm);
  throw new PromoteError(
    `${output} is not the render of ${mapping.template} at this commit (opm alpha render-template gives other bytes); render the template and commit its output first`,
  );
}

export function rootOf(path: string, roots: string[]): string | undefined {
  return roots.find((r) => path.startsWith(r.replace(/\/+$/, '') + '/'));
}

/** Every `operators/*\/ci.yaml` mapping of a tree; a ci.yaml that is not YAML refuses the edit. */
export function templateMappingsFromTree(tree: FileTree): TemplateMapping[] {
  try {
    return tree
      .list()
      .filter((p) => /^operators\/[^/]+\/ci\.yaml$/.test(p))
      .flatMap((p) => templateMappingsFromCiYaml(p, tree.read(p) ?? ''));
  } catch (err) {
    if (err instanceof CiYamlError) throw new PromoteError(err.message);
    throw err;
  }
}

export { lineDiff, changedLines, unifiedDiff } from './promote-diff.js';
