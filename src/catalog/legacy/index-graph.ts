// The graph the old bundle index gave a package that is not on file-based catalogs: what
// `opm index add` built, one bundle at a time, for one OpenShift version's index
// (docs/legacy-index.md). Pure: bundles come in as their annotations and CSV fields.
//
// replaces-mode (opm's SQLite loader): each add recomputes the channel heads from every
// bundle already in a channel plus the new bundle's annotated channels (the highest
// version wins), then rebuilds each channel by walking its head's `replaces` chain, so a
// bundle belongs to every channel whose chain reaches it; a skipped bundle that is in the
// index is an entry of the channel too. semver-mode (`--mode semver`): each channel holds
// the bundles that annotate it, each replacing the next lower version.
import { compareVersions, type Version } from '../versions/semver.js';
import { rankOcp, type OcpMinor } from '../olm/ocp-continuity.js';
import { admitsCatalog, type OpenShiftRange } from './openshift-versions.js';
import { ocpCatalogVersion } from '../olm/ocp-continuity.js';

export type UpdateGraphMode = 'replaces-mode' | 'semver-mode';
export const UPDATE_GRAPH_MODES: readonly UpdateGraphMode[] = ['replaces-mode', 'semver-mode'];

/** What the index reads of one bundle. */
export interface LegacyBundle {
  /** The CSV name: the bundle's name in the index. */
  name: string;
  version: Version;
  /** `operators.operatorframework.io.bundle.channels.v1`, in order. */
  channels: string[];
  /** `operators.operatorframework.io.bundle.channel.default.v1`, or '' */
  defaultChannel: string;
  replaces: string;
  skips: string[];
  skipRange: string;
  openshift: OpenShiftRange;
  maxOpenShiftVersion: OcpMinor | null;
}

export interface LegacyEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface LegacyPackageGraph {
  defaultChannel: string;
  /** Channel name -> entries, entries sorted by name. */
  channels: Map<string, LegacyEntry[]>;
  /** Every bundle that is an entry of some channel, sorted. */
  bundles: string[];
  /** Things opm would have refused or dropped, in words. */
  notes: string[];
}

/** Whether a bundle goes into the index of an OpenShift catalog (`v4.12`). */
export function bundleInCatalog(b: LegacyBundle, catalog: string): boolean {
  if (!admitsCatalog(b.openshift, catalog)) return false;
  const v = ocpCatalogVersion(catalog);
  return !(b.maxOpenShiftVersion && v && rankOcp(v) > rankOcp(b.maxOpenShiftVersion));
}

/**
 * operator-registry's BuildIdCompare: semver precedence, then build metadata compared as
 * prerelease identifiers (no build < any build), so `1.0.0+1` and `1.0.0+2` are distinct.
 */
export function compareBuildIds(a: Version, b: Version): number {
  const c = compareVersions(a, b);
  if (c !== 0) return c;
  if (a.build.length === 0 || b.build.length === 0) return a.build.length - b.build.length;
  const part = (s: string): bigint | string => (/^(0|[1-9][0-9]*)$/.test(s) ? BigInt(s) : s);
  for (let i = 0; i < Math.min(a.build.length, b.build.length); i++) {
    const x = part(a.build[i]!);
    const y = part(b.build[i]!);
    if (x === y) continue;
    if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : 1;
    if (typeof x === 'bigint') return -1;
    if (typeof y === 'bigint') return 1;
    return x < y ? -1 : 1;
  }
  return a.build.length - b.build.length;
}

/** Version order, then name: the order the index took bundles in (history is not in the files). */
export function compareLegacyBundles(a: LegacyBundle, b: LegacyBundle): number {
  return compareBuildIds(a.version, b.version) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function inVersionOrder(bundles: LegacyBundle[]): LegacyBundle[] {
  return [...bundles].sort(compareLegacyBundles);
}

/** The entries of a channel that no entry replaces or skips: its heads. */
export function entryHeads(
  entries: readonly { name: string; replaces?: string; skips?: readonly string[] }[],
): string[] {
  const reached = new Set<string>();
  for (const e of entries) {
    if (e.replaces) reached.add(e.replaces);
    for (const s of e.skips ?? []) reached.add(s);
  }
  return entries.map((e) => e.name).filter((n) => !reached.has(n));
}

/** The graph of one package in the index of one OpenShift catalog; undefined when no bundle goes in. */
export function legacyIndexGraph(
  all: LegacyBundle[],
  mode: UpdateGraphMode,
  catalog: string,
): LegacyPackageGraph | undefined {
  const bundles = inVersionOrder(all.filter((b) => bundleInCatalog(b, catalog)));
  if (bundles.length === 0) return undefined;
  return mode === 'semver-mode' ? semverGraph(bundles) : replacesGraph(bundles);
}

// ---- replaces-mode

function replacesGraph(ordered: LegacyBundle[]): LegacyPackageGraph {
  const byName = new Map<string, LegacyBundle>();
  const notes: string[] = [];
  /** Bundles in the index (operatorbundle rows), in the order they were added. */
  const inIndex: LegacyBundle[] = [];
  /** bundle -> the channels it has entries in (channel_entry rows). */
  let members = new Map<string, Set<string>>();
  let walks = new Map<string, Walked>();
  let defaultChannel = '';

  for (const added of ordered) {
    if (byName.has(added.name)) {
      notes.push(`${added.name} is in two bundle directories; opm adds it once`);
      continue;
    }
    byName.set(added.name, added);
    inIndex.push(added);
    // SemverPackageManifest over the bundles that have channel entries (each carrying the
    // package's default channel) and then the new bundle (carrying its annotations).
    const listed = inIndex.filter((b) => b !== added && (members.get(b.name)?.size ?? 0) > 0);
    const nextHeads = new Map<string, LegacyBundle>();
    let max: LegacyBundle | undefined;
    let nextDefault = '';
    for (const b of [...listed, added]) {
      const channels = b === added ? b.channels : [...members.get(b.name)!];
      const carried = b === added ? b.defaultChannel : defaultChannel;
      for (const ch of channels) {
        const head = nextHeads.get(ch);
        if (!head || compareBuildIds(b.version, head.version) >= 0) nextHeads.set(ch, b);
      }
      if (!max || compareBuildIds(b.version, max.version) >= 0) {
        max = b;
        if (carried) nextDefault = carried;
      }
    }
    if (nextHeads.size === 1) nextDefault = [...nextHeads.keys()][0]!;
    else if (!nextHeads.has(nextDefault)) {
      notes.push(
        `opm index add would refuse ${added.name}: no default channel among its channels (${[...nextHeads.keys()].sort().join(', ')})`,
      );
      byName.delete(added.name);
      inIndex.pop();
      continue;
    }
    defaultChannel = nextDefault;
    ({ members, walks } = walkChannels(nextHeads, byName, notes));
  }
  return entriesOf(walks, byName, defaultChannel, notes);
}

interface Walked {
  /** Entries on the channel's replaces chain, with the edge opm recorded. */
  chain: Map<string, { replaces: string }>;
  /** Bundles that are entries only because a chain member skips them. */
  skipped: Set<string>;
}

/** addPackageChannels: each channel from its head down the replaces chain. */
function walkChannels(
  heads: Map<string, LegacyBundle>,
  byName: Map<string, LegacyBundle>,
  notes: string[],
): { members: Map<string, Set<string>>; walks: Map<string, Walked> } {
  const members = new Map<string, Set<string>>();
  const join = (name: string, channel: string): void => {
    if (!byName.has(name)) return;
    let set = members.get(name);
    if (!set) members.set(name, (set = new Set()));
    set.add(channel);
  };
  const walks = new Map<string, Walked>();
  for (const [channel, head] of heads) {
    const walked: Walked = { chain: new Map(), skipped: new Set() };
    walks.set(channel, walked);
    const seen = new Set([head.name]);
    let node: LegacyBundle | undefined = head;
    while (node) {
      join(node.name, channel);
      const entry = { replaces: '' };
      walked.chain.set(node.name, entry);
      for (const s of node.skips) {
        join(s, channel);
        walked.skipped.add(s);
      }
      const next = node.replaces;
      if (next === '') break;
      if (seen.has(next)) {
        notes.push(
          `channel ${channel}: ${node.name} replaces ${next}, which closes a cycle; opm stops there`,
        );
        break;
      }
      seen.add(next);
      entry.replaces = next;
      node = byName.get(next);
      // opm would refuse this add ("replaces nonexistent bundle"); published indexes hold
      // such entries all the same (the replaced bundle was taken out later), so keep it.
    }
  }
  return { members, walks };
}

function entriesOf(
  walks: Map<string, Walked>,
  byName: Map<string, LegacyBundle>,
  defaultChannel: string,
  notes: string[],
): LegacyPackageGraph {
  const channels = new Map<string, LegacyEntry[]>();
  const bundles = new Set<string>();
  for (const channel of [...walks.keys()].sort()) {
    const walked = walks.get(channel)!;
    const entries = new Map<string, LegacyEntry>();
    const add = (name: string, onChain: { replaces: string } | undefined): void => {
      const b = byName.get(name);
      if (!b) return;
      const entry: LegacyEntry = entries.get(name) ?? { name };
      if (onChain) {
        if (onChain.replaces) entry.replaces = onChain.replaces;
        if (b.skips.length > 0) entry.skips = [...b.skips];
      }
      if (b.skipRange) entry.skipRange = b.skipRange;
      entries.set(name, entry);
      bundles.add(name);
    };
    for (const [name, edge] of walked.chain) add(name, edge);
    for (const name of walked.skipped) if (!walked.chain.has(name)) add(name, undefined);
    channels.set(
      channel,
      [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  }
  return { defaultChannel, channels, bundles: [...bundles].sort(), notes };
}

// ---- semver-mode

function semverGraph(ordered: LegacyBundle[]): LegacyPackageGraph {
  const notes: string[] = [];
  const channels = new Map<string, LegacyEntry[]>();
  const bundles = new Set<string>();
  let defaultChannel = '';
  const byChannel = new Map<string, LegacyBundle[]>();
  for (const b of ordered) {
    if (b.defaultChannel) defaultChannel = b.defaultChannel;
    else if (defaultChannel === '' && b.channels.length === 1) defaultChannel = b.channels[0]!;
    for (const ch of new Set(b.channels)) {
      const list = byChannel.get(ch) ?? [];
      const same = list.find((o) => compareVersions(o.version, b.version) === 0);
      if (same) {
        notes.push(
          `channel ${ch}: ${b.name} has the version of ${same.name}; opm index add --mode semver refuses it`,
        );
        continue;
      }
      list.push(b);
      byChannel.set(ch, list);
    }
  }
  for (const ch of [...byChannel.keys()].sort()) {
    const list = byChannel.get(ch)!;
    const entries: LegacyEntry[] = list.map((b, i) => ({
      name: b.name,
      ...(i > 0 ? { replaces: list[i - 1]!.name } : {}),
      ...(b.skipRange ? { skipRange: b.skipRange } : {}),
    }));
    for (const e of entries) bundles.add(e.name);
    channels.set(
      ch,
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  }
  if (!channels.has(defaultChannel)) {
    if (channels.size === 1) defaultChannel = [...channels.keys()][0]!;
    else notes.push(`no default channel among ${[...channels.keys()].join(', ')}`);
  }
  return { defaultChannel, channels, bundles: [...bundles].sort(), notes };
}
