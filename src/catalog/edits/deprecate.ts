// `deprecate` / `undeprecate`, the core's part (docs/deprecate.md): which `olm.deprecations`
// entry a request means, whether the package's users keep a non-deprecated way forward
// afterwards, the default message that names that way, and the format-preserving text edit
// that adds or removes the entry (in a plain catalog file or an olm.template.basic
// template). Pure: models and text in, text and reasons out. Running the result past the
// validation and upgrade-graph checks is src/flows/deprecate/plan.ts.
import type { DeclarativeConfig } from '../fbc/declcfg.js';
import type { ModelBundle, ModelPackage } from '../fbc/model.js';
import { classicChannel } from '../olm/classic.js';
import { v1LegacySuccessors } from '../olm/v1.js';
import { compareVersions, formatVersion } from '../versions/semver.js';
import { PromoteError } from './promote.js';
import {
  applySplices,
  contentEnd,
  detectStyle,
  EditError,
  formatOfPath,
  insertDocument,
  insertSeqItem,
  parseNodes,
  scalarOf,
  valueOf,
  type Splice,
  type TMap,
  type TNode,
  type TSeq,
} from './promote-edit.js';

export type DeprecationKind = 'bundle' | 'channel' | 'package';

export const DEPRECATION_KINDS: readonly DeprecationKind[] = ['bundle', 'channel', 'package'];

const SCHEMA_OF: Record<DeprecationKind, string> = {
  bundle: 'olm.bundle',
  channel: 'olm.channel',
  package: 'olm.package',
};

/** One thing to deprecate, its package known. */
export interface DeprecationTarget {
  kind: DeprecationKind;
  /** The bundle or channel name; the package name for a package. */
  name: string;
  package: string;
}

/** An `olm.deprecations` entry's reference, as opm compares them (schema and name). */
export interface Reference {
  schema: string;
  /** Empty for a package: opm requires it so (DEP-PACKAGE-NAME-SET). */
  name: string;
}

export function referenceOf(target: DeprecationTarget): Reference {
  return { schema: SCHEMA_OF[target.kind], name: target.kind === 'package' ? '' : target.name };
}

/** Why a deprecation is refused; the message says what is wrong and what would work. */
export class DeprecationRefused extends PromoteError {
  constructor(
    message: string,
    /** `unknown` target, `already` as asked, or `unsafe` for the package's users. */
    readonly reason: 'unknown' | 'already' | 'unsafe' = 'unsafe',
  ) {
    super(message);
    this.name = 'DeprecationRefused';
  }
}

const describeTarget = (t: DeprecationTarget): string =>
  t.kind === 'package' ? `package ${t.name}` : `${t.kind} ${t.name} of package ${t.package}`;

// ---- what is deprecated

/** What the package's `olm.deprecations` entries deprecate. */
export interface DeprecatedSet {
  package: boolean;
  channels: Set<string>;
  bundles: Set<string>;
}

/** The deprecations of a package as its config states them (entries that reference nothing count too). */
export function deprecatedSet(config: DeclarativeConfig, pkg: string): DeprecatedSet {
  const out: DeprecatedSet = { package: false, channels: new Set(), bundles: new Set() };
  for (const d of config.deprecations) {
    if (d.package !== pkg) continue;
    for (const e of d.entries) {
      if (e.reference.schema === 'olm.package') out.package = true;
      else if (e.reference.schema === 'olm.channel') out.channels.add(e.reference.name);
      else if (e.reference.schema === 'olm.bundle') out.bundles.add(e.reference.name);
    }
  }
  return out;
}

function isDeprecated(set: DeprecatedSet, target: DeprecationTarget): boolean {
  if (target.kind === 'package') return set.package;
  return (target.kind === 'channel' ? set.channels : set.bundles).has(target.name);
}

function changed(set: DeprecatedSet, target: DeprecationTarget, undo: boolean): DeprecatedSet {
  const out: DeprecatedSet = {
    package: set.package,
    channels: new Set(set.channels),
    bundles: new Set(set.bundles),
  };
  if (target.kind === 'package') out.package = !undo;
  else {
    const names = target.kind === 'channel' ? out.channels : out.bundles;
    if (undo) names.delete(target.name);
    else names.add(target.name);
  }
  return out;
}

// ---- ways forward

/** Every bundle of the package, once (the first channel entry that has it). */
function bundlesOf(pkg: ModelPackage): Map<string, ModelBundle> {
  const out = new Map<string, ModelBundle>();
  for (const ch of pkg.channels.values())
    for (const b of ch.bundles.values()) if (!out.has(b.name)) out.set(b.name, b);
  return out;
}

/**
 * A bundle users can stay on without a deprecation warning: not deprecated itself, in at
 * least one channel that is not, of a package that is not.
 */
function isGood(pkg: ModelPackage, set: DeprecatedSet, name: string): boolean {
  if (set.package || set.bundles.has(name)) return false;
  for (const ch of pkg.channels.values()) if (ch.bundles.has(name) && !set.channels.has(ch.name)) return true;
  return false;
}

/**
 * Upgrade edges as OLM v1 reads them: from a bundle to every entry of any channel that
 * replaces it, skips it, or whose skipRange holds its version. Classic OLM's edges within
 * one channel are a subset, and a classic user may switch channels, so this is the widest
 * honest reading of "a way forward".
 */
function successorGraph(pkg: ModelPackage): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const b of bundlesOf(pkg).values()) {
    out.set(b.name, b.version ? v1LegacySuccessors(pkg, { name: b.name, version: b.version }) : []);
  }
  return out;
}

/** The good bundles reachable from `start` (itself included), nearest first. */
function reachableGood(
  pkg: ModelPackage,
  graph: Map<string, string[]>,
  set: DeprecatedSet,
  start: string,
): string[] {
  const seen = new Set([start]);
  const queue = [start];
  const good: string[] = [];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (isGood(pkg, set, at)) good.push(at);
    for (const next of graph.get(at) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return good;
}

/** Bundles whose every upgrade path (staying included) ends on deprecated bundles. */
function stranded(pkg: ModelPackage, graph: Map<string, string[]>, set: DeprecatedSet): Set<string> {
  // Backwards from every good bundle, once: linear in the edges however many bundles the
  // package has (skipRanges can give a large package a quadratic number of edges).
  const before = new Map<string, string[]>();
  for (const [from, tos] of graph)
    for (const to of tos) {
      const list = before.get(to);
      if (list) list.push(from);
      else before.set(to, [from]);
    }
  const reaches = new Set([...graph.keys()].filter((n) => isGood(pkg, set, n)));
  const queue = [...reaches];
  while (queue.length > 0) {
    for (const from of before.get(queue.pop()!) ?? []) {
      if (reaches.has(from)) continue;
      reaches.add(from);
      queue.push(from);
    }
  }
  return new Set([...graph.keys()].filter((n) => !reaches.has(n)));
}

/** The channel heads as opm counts them (no entry of the channel replaces or skips them). */
function headsOf(pkg: ModelPackage, channel: string): string[] {
  const ch = pkg.channels.get(channel);
  return ch ? classicChannel(ch).heads : [];
}

function highest(pkg: ModelPackage, names: string[]): string | undefined {
  const all = bundlesOf(pkg);
  return [...names].sort((a, b) => {
    const va = all.get(a)?.version;
    const vb = all.get(b)?.version;
    if (va && vb) return compareVersions(vb, va);
    return va ? -1 : vb ? 1 : 0;
  })[0];
}

const versionOf = (pkg: ModelPackage, name: string): string => {
  const v = bundlesOf(pkg).get(name)?.version;
  return v ? ` (${formatVersion(v)})` : '';
};

/** Where a bundle sits as a head, for messages: `, the head of channel "x"`. */
function headNote(pkg: ModelPackage, name: string): string {
  const channels = [...pkg.channels.keys()].filter((c) => headsOf(pkg, c).includes(name));
  return channels.length > 0
    ? `, the head of channel${channels.length > 1 ? 's' : ''} ${channels.join(', ')}`
    : '';
}

/** The channel users of `from` should move to: the default channel, else the one with the highest good head. */
function channelToMoveTo(pkg: ModelPackage, set: DeprecatedSet, from: string): string | undefined {
  const open = [...pkg.channels.keys()].filter((c) => c !== from && !set.channels.has(c));
  const def = pkg.defaultChannel?.name;
  if (def !== undefined && open.includes(def)) return def;
  let best: { channel: string; head: string } | undefined;
  for (const c of open) {
    const head = highest(
      pkg,
      headsOf(pkg, c).filter((h) => isGood(pkg, set, h)),
    );
    if (!head) continue;
    if (!best || highest(pkg, [best.head, head]) === head) best = { channel: c, head };
  }
  return best?.channel;
}

export interface DeprecationPlan {
  target: DeprecationTarget;
  reference: Reference;
  /** The message the entry gets (the request's, else one naming the way forward). */
  message: string;
  /** For people: what the deprecation means for installs and upgrades. */
  note: string;
}

/**
 * Decide a deprecation (or, with `undo`, its removal) on one catalog's package: refuses
 * an unknown target, one already (not) deprecated, a deprecation that strands installed
 * users or leaves new installs of the default channel on a deprecated bundle or channel.
 */
export function planDeprecation(
  config: DeclarativeConfig,
  pkg: ModelPackage,
  target: DeprecationTarget,
  options: { undo?: boolean; message?: string; where?: string } = {},
): DeprecationPlan {
  const undo = options.undo === true;
  const where = options.where ? ` in ${options.where}` : '';
  if (
    target.kind === 'bundle' &&
    !config.bundles.some((b) => b.package === pkg.name && b.name === target.name)
  ) {
    const names = config.bundles.filter((b) => b.package === pkg.name).map((b) => b.name);
    throw new DeprecationRefused(
      `package ${pkg.name} has no bundle ${target.name}${where}; its bundles: ${names.sort().join(', ') || 'none'}`,
      'unknown',
    );
  }
  if (target.kind === 'channel' && !pkg.channels.has(target.name)) {
    throw new DeprecationRefused(
      `package ${pkg.name} has no channel "${target.name}"${where}; its channels: ${[...pkg.channels.keys()].sort().join(', ')}`,
      'unknown',
    );
  }
  const before = deprecatedSet(config, pkg.name);
  const reference = referenceOf(target);
  if (undo) {
    if (!isDeprecated(before, target))
      throw new DeprecationRefused(
        `${describeTarget(target)} is not deprecated${where}: there is no olm.deprecations entry to remove`,
        'already',
      );
    return {
      target,
      reference,
      message: '',
      note: `${describeTarget(target)}${where} is no longer deprecated: consoles stop warning about it${target.kind === 'bundle' ? ', and OLM v1 ranks it with the other bundles again' : ''}`,
    };
  }
  if (isDeprecated(before, target)) {
    throw new DeprecationRefused(
      `${describeTarget(target)} is already deprecated${where} (remove the entry with undeprecate to change its message)`,
      'already',
    );
  }
  const after = changed(before, target, false);
  const def = pkg.defaultChannel?.name;
  if (target.kind === 'channel' && target.name === def && pkg.channels.size > 1) {
    const instead = channelToMoveTo(pkg, before, target.name);
    throw new DeprecationRefused(
      `channel "${target.name}" is the default channel of ${pkg.name}${where}: every new Subscription without a channel would start on a deprecated channel. Change the default channel first${instead ? ` (e.g. \`default-channel ${pkg.name} ${instead}\`)` : ''}, then deprecate "${target.name}"`,
    );
  }
  if (target.kind === 'bundle' && def !== undefined) {
    const heads = headsOf(pkg, def);
    if (heads.length === 1 && heads[0] === target.name) {
      throw new DeprecationRefused(
        `${target.name} is the only head of ${pkg.name}'s default channel "${def}"${where}: classic OLM installs it on every new Subscription without a channel, so new users would start on a deprecated bundle. Publish a newer bundle that replaces it first, or change the default channel to one whose head is not deprecated`,
      );
    }
  }
  const graph = successorGraph(pkg);
  if (target.kind !== 'package') {
    // Deprecating a package is the end of the line on purpose; anything else must leave
    // every installed bundle that had a non-deprecated way forward with one.
    const was = stranded(pkg, graph, before);
    const lost = [...stranded(pkg, graph, after)].filter((n) => !was.has(n)).sort();
    if (lost.length > 0) {
      const shown = lost.slice(0, 5).join(', ') + (lost.length > 5 ? ` and ${lost.length - 5} more` : '');
      const fix =
        target.kind === 'bundle'
          ? `publish a bundle that replaces or skips ${target.name} (or whose skipRange holds its version) first`
          : `give those bundles an upgrade edge into another channel that is not deprecated first (an entry there that replaces, skips or skipRanges them)`;
      throw new DeprecationRefused(
        `deprecating ${describeTarget(target)}${where} would leave users of ${shown} no way forward that is not deprecated: every upgrade they can take (replaces, skips, skipRange, in any channel) ends on deprecated bundles. To do it, ${fix}; to retire the whole package, deprecate the package instead`,
      );
    }
  }
  const message = options.message ?? defaultMessage(pkg, graph, after, target);
  return { target, reference, message, note: noteFor(pkg, target, where) };
}

function defaultMessage(
  pkg: ModelPackage,
  graph: Map<string, string[]>,
  after: DeprecatedSet,
  target: DeprecationTarget,
): string {
  if (target.kind === 'package') {
    return `${pkg.name} is deprecated and gets no further updates. Plan to uninstall it or move to a replacement.`;
  }
  if (target.kind === 'bundle') {
    const next = highest(pkg, reachableGood(pkg, graph, after, target.name));
    return next
      ? `${target.name} is deprecated. Upgrade to ${next}${versionOf(pkg, next)}${headNote(pkg, next)}.`
      : `${target.name} is deprecated.`;
  }
  const to = channelToMoveTo(pkg, after, target.name);
  if (!to) return `Channel ${target.name} is deprecated.`;
  const head = highest(
    pkg,
    headsOf(pkg, to).filter((h) => isGood(pkg, after, h)),
  );
  return `Channel ${target.name} is deprecated. Switch your subscription to channel ${to}${to === pkg.defaultChannel?.name ? ' (the default channel)' : ''}${head ? `, whose head is ${head}${versionOf(pkg, head)}` : ''}.`;
}

function noteFor(pkg: ModelPackage, target: DeprecationTarget, where: string): string {
  const what = `${describeTarget(target)}${where} is deprecated`;
  if (target.kind === 'bundle')
    return `${what}: classic OLM shows BundleDeprecated on Subscriptions that run it and still resolves as before; OLM v1 ranks it below every bundle that is not deprecated`;
  if (target.kind === 'channel')
    return `${what}: Subscriptions and ClusterExtensions on it show ChannelDeprecated; resolution does not change`;
  return `${what}: every Subscription and ClusterExtension of ${pkg.name} shows PackageDeprecated; resolution does not change`;
}

// ---- the text edit

interface DeprecationSite {
  map: TMap;
  /** The template's entries list it sits in; undefined for a top-level object. */
  parent?: TSeq;
  top: TNode;
}

function deprecationSites(nodes: TNode[], pkg: string): DeprecationSite[] {
  const out: DeprecationSite[] = [];
  const mine = (m: TMap): boolean =>
    scalarOf(m, 'schema') === 'olm.deprecations' && scalarOf(m, 'package') === pkg;
  for (const top of nodes) {
    if (top.kind !== 'map') continue;
    if (mine(top)) out.push({ map: top, top });
    if (scalarOf(top, 'schema') === 'olm.template.basic') {
      const list = valueOf(top, 'entries');
      if (list?.kind !== 'seq') continue;
      for (const item of list.items)
        if (item.kind === 'map' && mine(item)) out.push({ map: item, parent: list, top });
    }
  }
  return out;
}

const sameReference = (entry: TNode, ref: Reference): boolean => {
  if (entry.kind !== 'map') return false;
  const r = valueOf(entry, 'reference');
  if (r?.kind !== 'map') return false;
  return scalarOf(r, 'schema') === ref.schema && String(scalarOf(r, 'name') ?? '') === ref.name;
};

/** Keys as the file writes them: sorted at every level (as opm writes YAML), else Go's field order. */
function keyed(
  value: Record<string, unknown>,
  sorted: boolean,
  orders: Record<string, string[]>,
): Record<string, unknown> {
  const order = orders[Object.keys(value).join(',')] ?? [];
  const rank = (k: string): number => (order.includes(k) ? order.indexOf(k) : order.length);
  const keys = Object.keys(value).sort(sorted ? undefined : (a, b) => rank(a) - rank(b));
  return Object.fromEntries(
    keys.map((k) => {
      const v = value[k];
      if (Array.isArray(v))
        return [
          k,
          v.map((i) =>
            i && typeof i === 'object' ? keyed(i as Record<string, unknown>, sorted, orders) : i,
          ),
        ];
      if (v && typeof v === 'object') return [k, keyed(v as Record<string, unknown>, sorted, orders)];
      return [k, v];
    }),
  );
}

function entryValue(ref: Reference, message: string): Record<string, unknown> {
  return {
    reference: ref.name === '' ? { schema: ref.schema } : { schema: ref.schema, name: ref.name },
    message,
  };
}

const GO_ORDER: Record<string, string[]> = {
  'schema,package,entries': ['schema', 'package', 'entries'],
  'reference,message': ['reference', 'message'],
  'schema,name': ['schema', 'name'],
};

const keysSorted = (m: TMap | undefined): boolean => {
  const keys = m?.pairs.map((p) => p.key) ?? [];
  return keys.length >= 2 && keys.every((k, i) => i === 0 || keys[i - 1]! <= k);
};

/** The package's objects in a plain file: the last one is where a new blob goes after. */
function lastOfPackage(nodes: TNode[], pkg: string): TNode | undefined {
  return nodes
    .filter(
      (n) =>
        n.kind === 'map' &&
        (scalarOf(n, 'package') === pkg ||
          (scalarOf(n, 'schema') === 'olm.package' && scalarOf(n, 'name') === pkg)),
    )
    .at(-1);
}

/**
 * The file with an entry for `ref` added to the package's `olm.deprecations` blob, or a
 * new blob (after the package's last object, or at the end of a template's entries).
 */
export function addDeprecationText(
  path: string,
  text: string,
  pkg: string,
  ref: Reference,
  message: string,
): string {
  const format = formatOfPath(path, text);
  const style = detectStyle(text, format);
  const nodes = parseNodes(text, format);
  const sites = deprecationSites(nodes, pkg);
  if (sites.length > 1)
    throw new EditError(`${path} has ${sites.length} olm.deprecations blobs for ${pkg}; opm allows one`);
  const site = sites[0];
  if (site) {
    const entries = valueOf(site.map, 'entries');
    const like = entries?.kind === 'seq' ? entries.items.find((i): i is TMap => i.kind === 'map') : undefined;
    const sorted = like ? keysSorted(like) : keysSorted(site.map);
    const entry = keyed(entryValue(ref, message), sorted, GO_ORDER);
    if (entries?.kind === 'seq' && (entries.items.length > 0 || entries.flow || format === 'json'))
      return applySplices(text, [insertSeqItem(text, entries, entry, style)]);
    throw new EditError(`${path}: the olm.deprecations blob of ${pkg} has no entries list to add to`);
  }
  const template = nodes.find(
    (n): n is TMap => n.kind === 'map' && scalarOf(n, 'schema') === 'olm.template.basic',
  );
  if (template) {
    const list = valueOf(template, 'entries');
    if (list?.kind !== 'seq') throw new EditError(`${path}: the template has no entries list`);
    const like = list.items.find((i): i is TMap => i.kind === 'map');
    const blob = keyed(
      { schema: 'olm.deprecations', package: pkg, entries: [entryValue(ref, message)] },
      keysSorted(like),
      GO_ORDER,
    );
    return applySplices(text, [insertSeqItem(text, list, blob, style)]);
  }
  const after = lastOfPackage(nodes, pkg);
  if (!after) throw new EditError(`${path} has no objects of package ${pkg}`);
  const blob = keyed(
    { schema: 'olm.deprecations', package: pkg, entries: [entryValue(ref, message)] },
    keysSorted(after.kind === 'map' ? after : undefined),
    GO_ORDER,
  );
  // JSON: the new object on the line after the package's last one, so that removing it
  // (from its start to the next object) gives the bytes back.
  if (format === 'json')
    return applySplices(text, [
      { at: after.end, del: 0, ins: '\n' + JSON.stringify(blob, null, style.jsonIndent) },
    ]);
  return applySplices(text, [insertDocument(text, blob, style, after)]);
}

/**
 * The file without the entry for `ref`; a blob left with no entries goes as a whole, so
 * deprecating and undeprecating gives back the file's bytes.
 */
export function removeDeprecationText(path: string, text: string, pkg: string, ref: Reference): string {
  const format = formatOfPath(path, text);
  const nodes = parseNodes(text, format);
  const site = deprecationSites(nodes, pkg).find((s) => {
    const entries = valueOf(s.map, 'entries');
    return entries?.kind === 'seq' && entries.items.some((e) => sameReference(e, ref));
  });
  if (!site)
    throw new EditError(`${path} has no olm.deprecations entry for ${ref.schema} ${ref.name}`.trimEnd());
  const entries = valueOf(site.map, 'entries') as TSeq;
  const matching = entries.items.filter((e) => sameReference(e, ref));
  if (matching.length === entries.items.length) {
    const splice = site.parent
      ? removeSeqItem(text, site.parent, site.map, format)
      : removeTopLevel(text, nodes, site.map, format);
    return applySplices(text, [splice]);
  }
  // Duplicates (invalid, DEP-DUPLICATE-ENTRY) go together; from the end, so offsets hold.
  let out = text;
  for (const e of [...matching].reverse()) out = applySplices(out, [removeSeqItem(out, entries, e, format)]);
  return out;
}

const lineStart = (text: string, at: number): number => text.lastIndexOf('\n', at - 1) + 1;
const lineEndIncl = (text: string, at: number): number => {
  const i = text.indexOf('\n', at);
  return i < 0 ? text.length : i + 1;
};

/** The splice that takes one item out of a sequence: its lines (block) or its text and a comma (flow, JSON). */
export function removeSeqItem(text: string, seq: TSeq, item: TNode, format: 'yaml' | 'json'): Splice {
  const items = seq.items;
  const i = items.indexOf(item);
  if (i < 0) throw new EditError('internal: the item is not in the list');
  if (seq.flow || format === 'json') {
    if (items.length === 1) return { at: seq.start + 1, del: seq.end - seq.start - 2, ins: '' };
    if (i < items.length - 1) return { at: item.start, del: items[i + 1]!.start - item.start, ins: '' };
    const prev = items[i - 1]!;
    return { at: prev.end, del: item.end - prev.end, ins: '' };
  }
  let dash = item.start - 1;
  while (dash >= 0 && text[dash] === ' ') dash--;
  const start = lineStart(text, text[dash] === '-' ? dash : item.start);
  return { at: start, del: lineEndIncl(text, contentEnd(item)) - start, ins: '' };
}

function removeTopLevel(text: string, nodes: TNode[], node: TNode, format: 'yaml' | 'json'): Splice {
  const i = nodes.indexOf(node);
  if (format === 'json') {
    // To the next object, or to the end: what separated it from the one before stays.
    const next = nodes[i + 1];
    return { at: node.start, del: (next ? next.start : text.length) - node.start, ins: '' };
  }
  let start = lineStart(text, node.start);
  // Its `---` line goes with it.
  const previous = lineStart(text, Math.max(0, start - 1));
  if (start > 0 && /^---[ \t]*$/.test(text.slice(previous, start - 1))) start = previous;
  return { at: start, del: lineEndIncl(text, contentEnd(node)) - start, ins: '' };
}
