/**
 * The OLM classic (v0) resolver's view of one channel: which entries it can install and
 * what it upgrades an installed bundle to. Ported from operator-lifecycle-manager v0.46.0
 * `pkg/controller/registry/resolver/resolver.go` (`sortChannel`, `getSubscriptionVariables`)
 * and `cache/predicates.go`; docs/olm-upgrades.md "Classic OLM" says the rules in prose.
 *
 * The model is treated as immutable: the per-channel work is cached by channel object, and
 * the arrays returned from that cache are frozen.
 */
import { goQuote } from '../go/gostrings.js';
import type { ModelBundle, ModelChannel } from '../fbc/model.js';
import { tryParseRange, type VersionRange } from '../versions/range.js';
import { parseVersionTolerant, SemverError, type Version } from '../versions/semver.js';
import { packageVersion } from '../property.js';

/** The installed CSV: its name and `spec.version`, which need not be in the catalog. */
export interface InstalledBundle {
  name: string;
  version?: Version;
}

export interface ClassicChannel {
  /** Entries no entry of the channel names in `replaces` or `skips` (self-references count), sorted. */
  heads: string[];
  /** `sortChannel`'s result, head first: the head's replaces walk minus skipped entries; [] on error. */
  chain: string[];
  /** `sortChannel`'s error, verbatim; null when the channel sorts. */
  error: string | null;
  /** Fresh install without `startingCSV`: the first chain entry; null on error. */
  install: string | null;
}

interface ClassicIndex {
  result: ClassicChannel;
  chain: ModelBundle[];
  /** For each name, the chain position of the first entry that `replaces` or `skips` it. */
  firstReplacerOf: Map<string, number>;
  /** Chain entries whose skipRange parses, in chain order. */
  skipRanges: { position: number; range: VersionRange }[];
  /** classicNext answers for name-only queries, which classicPath repeats for every start. */
  nextByName: Map<string, string | null>;
}

const indexByChannel = new WeakMap<ModelChannel, ClassicIndex>();

export function classicChannel(channel: ModelChannel): ClassicChannel {
  return classicIndex(channel).result;
}

/** The chain as model bundles (for file:line), head first; [] when `sortChannel` fails. */
export function classicChannelEntries(channel: ModelChannel): ModelBundle[] {
  return classicIndex(channel).chain;
}

/**
 * Every chain entry classic offers the solver for `installed`, nearest the head first:
 * skipRange contains the installed version, or `replaces`/`skips` names it. May include
 * the installed bundle itself. [] when `sortChannel` fails.
 */
export function classicCandidates(channel: ModelChannel, installed: InstalledBundle): string[] {
  const version = installedVersion(channel, installed);
  return classicIndex(channel)
    .chain.filter(
      (b) =>
        (version !== undefined && skipRangeContains(b.skipRange, version)) ||
        b.replaces === installed.name ||
        b.skips.includes(installed.name),
    )
    .map((b) => b.name);
}

/** What classic OLM upgrades `installed` to within this channel (one hop), or null (stays / error). */
export function classicNext(channel: ModelChannel, installed: InstalledBundle): string | null {
  const index = classicIndex(channel);
  if (index.result.error !== null) return null;
  if (installed.version !== undefined) return nextOnChain(channel, index, installed);
  let next = index.nextByName.get(installed.name);
  if (next === undefined) {
    next = nextOnChain(channel, index, installed);
    index.nextByName.set(installed.name, next);
  }
  return next;
}

function nextOnChain(channel: ModelChannel, index: ClassicIndex, installed: InstalledBundle): string | null {
  // Same answer as classicCandidates(...)[0], without scanning past the first name match.
  let winner = index.firstReplacerOf.get(installed.name) ?? Infinity;
  const version = installedVersion(channel, installed);
  if (version !== undefined) {
    for (const { position, range } of index.skipRanges) {
      if (position >= winner) break;
      if (range.covers(version)) {
        winner = position;
        break;
      }
    }
  }
  const next = index.chain[winner]?.name ?? null;
  // The solver prefers the catalog copy of the installed CSV, and the step resolver
  // then sees the subscription as up to date (step_resolver.go `upToDate`).
  return next === installed.name ? null : next;
}

/**
 * The bundles classic moves through from `installed`, one hop per resolution, in order
 * (the starting bundle excluded; [] when it stays). A hop to a bundle already on the path
 * (or the start) is appended and ends the walk, so a loop shows as a repeated last name.
 */
export function classicPath(channel: ModelChannel, installed: InstalledBundle): string[] {
  const path: string[] = [];
  const seen = new Set([installed.name]);
  let next = classicNext(channel, installed);
  while (next !== null) {
    path.push(next);
    if (seen.has(next)) break;
    seen.add(next);
    // After the first hop the installed CSV is a catalog entry, with the catalog's version.
    next = classicNext(channel, { name: next });
  }
  return path;
}

function classicIndex(channel: ModelChannel): ClassicIndex {
  let index = indexByChannel.get(channel);
  if (index === undefined) {
    index = buildIndex(channel);
    indexByChannel.set(channel, index);
  }
  return index;
}

function buildIndex(channel: ModelChannel): ClassicIndex {
  const sorted = sortChannel(channel);
  const chain = sorted.chain;
  const firstReplacerOf = new Map<string, number>();
  const skipRanges: ClassicIndex['skipRanges'] = [];
  chain.forEach((b, position) => {
    for (const name of [b.replaces, ...b.skips]) {
      if (!firstReplacerOf.has(name)) firstReplacerOf.set(name, position);
    }
    // source_registry.go: `if r, err := semver.ParseRange(bundle.SkipRange); err == nil` —
    // an unparsable (or empty) skipRange is silently no range at all.
    const parsed = parsedSkipRange(b.skipRange);
    if (parsed !== undefined) skipRanges.push({ position, range: parsed });
  });
  const names = chain.map((b) => b.name);
  // Results are shared between callers through the cache, so they are frozen.
  const result = { heads: Object.freeze(sorted.heads), chain: Object.freeze(names) };
  return {
    result: Object.freeze({ ...result, error: sorted.error, install: names[0] ?? null }) as ClassicChannel,
    chain: Object.freeze(chain) as ModelBundle[],
    firstReplacerOf,
    skipRanges,
    nextByName: new Map(),
  };
}

/** resolver.go `sortChannel`, with entries in the order opm serves them (by name). */
function sortChannel(channel: ModelChannel): { heads: string[]; chain: ModelBundle[]; error: string | null } {
  // opm's cache walks bundles in a btree ordered by (channel, package, name), so OLM sees
  // a channel's entries sorted by name; that order picks which error and chain come first.
  const entries = [...channel.bundles.values()].sort((a, b) => compareGoStrings(a.name, b.name));
  const byName = new Map(entries.map((b) => [b.name, b]));
  const replaced = new Set<string>();
  const skipped = new Set<string>();
  // Only names present in the channel become edges.
  for (const b of entries) {
    if (byName.has(b.replaces)) replaced.add(b.replaces);
    for (const skip of b.skips) {
      if (byName.has(skip)) {
        replaced.add(skip);
        skipped.add(skip);
      }
    }
  }
  const heads = entries.filter((b) => !replaced.has(b.name));
  // sortChannel returns an empty input as is, before looking for heads.
  if (entries.length === 0) return { heads: [], chain: [], error: null };
  const headNames = heads.map((b) => b.name);
  const where = `in channel ${goQuote(channel.name)} of package ${goQuote(channel.package)}`;
  const fail = (error: string) => ({ heads: headNames, chain: [], error });
  if (heads.length === 0) {
    return fail(`no channel heads (entries not replaced by another entry) found ${where}`);
  }

  const chains: ModelBundle[][] = [];
  for (const head of heads) {
    // The walk follows `replaces` through skipped entries but leaves them out of the chain.
    const chain: ModelBundle[] = [];
    const visited = new Set<ModelBundle>();
    let current = head;
    for (;;) {
      visited.add(current);
      if (!skipped.has(current.name)) chain.push(current);
      const next = byName.get(current.replaces);
      if (next === undefined) break;
      if (visited.has(next)) {
        return fail(
          `a cycle exists in the chain of replacement beginning with ${goQuote(head.name)} ${where}`,
        );
      }
      current = next;
    }
    chains.push(chain);
  }

  if (chains.length > 1) {
    const described = chains.map((chain) => {
      if (chain.length === 0) return '[]';
      if (chain.length === 1) return chain[0]!.name;
      return `${chain[0]!.name}...${chain[chain.length - 1]!.name}`;
    });
    return fail(
      'a unique replacement chain within a channel is required to determine the relative order ' +
        `between channel entries, but ${chains.length} replacement chains were found ${where}: ` +
        described.join(', '),
    );
  }
  return { heads: headNames, chain: chains[0]!, error: null };
}

/** The version matched against skipRanges: the CSV's, else the catalog entry's. */
function installedVersion(channel: ModelChannel, installed: InstalledBundle): Version | undefined {
  if (installed.version !== undefined) return installed.version;
  const entry = channel.bundles.get(installed.name);
  return entry === undefined ? undefined : entryVersion(entry);
}

/**
 * The version OLM gives a catalog entry: blang `ParseTolerant` of the `olm.package`
 * version (source_registry.go `newOperatorFromBundle`). For versions opm accepts this is
 * the model's strict version; the fallback only matters for catalogs opm rejects.
 */
function entryVersion(entry: ModelBundle): Version | undefined {
  if (entry.version !== undefined) return entry.version;
  const raw = packageVersion(entry.properties);
  if (raw === undefined) return undefined;
  try {
    return parseVersionTolerant(raw);
  } catch (err) {
    if (err instanceof SemverError) return undefined;
    throw err;
  }
}

const parsedRanges = new Map<string, VersionRange | undefined>();

/** Parsed skipRange, or undefined where OLM has none (empty or unparsable). */
function parsedSkipRange(skipRange: string): VersionRange | undefined {
  if (skipRange === '') return undefined;
  if (!parsedRanges.has(skipRange)) {
    const parsed = tryParseRange(skipRange);
    // Catalogs repeat the same few ranges; cap the memo so it cannot grow without bound.
    if (parsedRanges.size > 10_000) parsedRanges.clear();
    parsedRanges.set(skipRange, parsed.ok ? parsed.range : undefined);
  }
  return parsedRanges.get(skipRange);
}

function skipRangeContains(skipRange: string, version: Version): boolean {
  const range = parsedSkipRange(skipRange);
  return range !== undefined && range.covers(version);
}

/** Go's string `<`: UTF-8 byte order, i.e. code-point order (UTF-16 units differ above U+FFFF). */
function compareGoStrings(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above U+E000..U+FFFF so code units sort like code points. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}
