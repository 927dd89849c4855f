// `catalog-bot explain <bundle>`: why a cluster can or cannot get a bundle, in plain words.
// Every answer is read off the graph engines (classic.ts, v1.ts, dependencies.ts): this
// module only asks them questions and words their answers (docs/explain.md).
import {
  classicCandidates,
  classicChannel,
  classicNext,
  type InstalledBundle as ClassicInstalled,
} from './classic.js';
import { dependencyIndex, type CatalogBundle } from './dependencies.js';
import type { Model, ModelBundle, ModelChannel, ModelPackage } from '../fbc/model.js';
import { tryParseRange } from '../versions/range.js';
import { compareVersions, formatVersion, type Version } from '../versions/semver.js';
import { v1Chosen, v1Successors } from './v1.js';

export interface ExplainOptions {
  /** An installed version to explain from; default: every other entry of each channel. */
  from?: Version;
}

/** How one installed bundle fares under one OLM. */
export interface Route {
  /** The bundles the OLM moves through, one hop per resolution (the start excluded). */
  path: string[];
  reaches: boolean;
  /** Why it does not reach the bundle; null when it does. */
  why: string | null;
}

export interface FromExplanation {
  installed: string;
  version: string;
  /** False for a --from version no bundle of the package has. */
  inCatalog: boolean;
  classic: Route;
  v1: Route;
}

export interface ChannelExplanation {
  channel: string;
  default: boolean;
  deprecated: string | null;
  /** sortChannel's error, when classic cannot use the channel at all. */
  classicError: string | null;
  onClassicChain: boolean;
  /** Why the bundle is off classic's chain (skipped), or null. */
  offChainBecause: string | null;
  freshInstall: { classic: string | null; v1: string | null };
  from: FromExplanation[];
  /** Entries of the channel not explained from (past MAX_STARTS). */
  notExplained: number;
}

export interface Explanation {
  package: string;
  bundle: string;
  version: string | null;
  defaultChannel: string | null;
  packageDeprecated: string | null;
  bundleDeprecated: string | null;
  /** Requirements nothing in the catalog meets, each with why; [] when all are met. */
  unmetDependencies: { requirement: string; why: string }[];
  /** OLM v1 refuses any bundle that declares dependencies (docs/explain.md). */
  declaresDependencies: boolean;
  channels: ChannelExplanation[];
  /** The answer in plain words, one sentence a line. */
  summary: string[];
}

/** The bundle's package, or why it cannot be found (naming what would work). */
export function findBundle(model: Model, name: string): { pkg: ModelPackage } | { error: string } {
  for (const pkg of model.values())
    for (const channel of pkg.channels.values()) if (channel.bundles.has(name)) return { pkg };
  const asPackage = model.get(name);
  if (asPackage) {
    return {
      error: `"${name}" is a package, not a bundle; name one of its bundles: ${bundleNames(asPackage).join(', ')}`,
    };
  }
  const near = [...model.values()].filter((p) => name.startsWith(`${p.name}.`));
  if (near.length > 0) {
    return {
      error: `no bundle "${name}" in this catalog; package ${near[0]!.name} has: ${bundleNames(near[0]!).join(', ')}`,
    };
  }
  return {
    error: `no bundle "${name}" in this catalog, and no package it could belong to (packages: ${[...model.keys()].sort().join(', ')})`,
  };
}

function bundleNames(pkg: ModelPackage): string[] {
  const names = new Set<string>();
  for (const channel of pkg.channels.values()) for (const name of channel.bundles.keys()) names.add(name);
  return [...names].sort();
}

export function explainBundle(
  model: Model,
  pkg: ModelPackage,
  bundleName: string,
  options: ExplainOptions = {},
): Explanation {
  const entries = [...pkg.channels.values()]
    .map((c) => c.bundles.get(bundleName))
    .filter((b): b is ModelBundle => b !== undefined);
  const target = entries[0]!;
  const deps = dependencyIndex(model);
  const catalogBundle = deps.bundle(pkg.name, bundleName);
  const unmet = catalogBundle ? unmetDependencies(deps, catalogBundle) : [];
  const channels = [...pkg.channels.values()]
    .filter((c) => c.bundles.has(bundleName))
    .map((c) => explainChannel(pkg, c, bundleName, options));
  const explanation: Explanation = {
    package: pkg.name,
    bundle: bundleName,
    version: target.version ? formatVersion(target.version) : null,
    defaultChannel: pkg.defaultChannel?.name ?? null,
    packageDeprecated: pkg.deprecation?.message ?? null,
    bundleDeprecated: entries.find((e) => e.deprecation)?.deprecation?.message ?? null,
    unmetDependencies: unmet,
    declaresDependencies: (catalogBundle?.dependencies.length ?? 0) > 0,
    channels,
    summary: [],
  };
  explanation.summary = summarize(explanation);
  return explanation;
}

function unmetDependencies(
  deps: ReturnType<typeof dependencyIndex>,
  bundle: CatalogBundle,
): { requirement: string; why: string }[] {
  if (deps.installable(bundle)) return [];
  const out: { requirement: string; why: string }[] = [];
  for (const d of bundle.dependencies) {
    if (d.error) out.push({ requirement: d.text, why: d.error.message });
    else if (d.constraint && !deps.candidates(d.constraint).some((c) => deps.installable(c.bundle)))
      out.push({ requirement: d.text, why: d.failureMessage ?? deps.explain(d.constraint) });
  }
  // Installable fails through a provider's own unmet needs: say so rather than nothing.
  if (out.length === 0)
    out.push({
      requirement: bundle.dependencies.map((d) => d.text).join('; '),
      why: 'every provider of it has requirements of its own that nothing in this catalog meets',
    });
  return out;
}

/**
 * The installed versions a channel is explained from when no `from` is given: the ones
 * nearest the bundle. Each start costs a path as long as the channel, so a channel of
 * 8,000 entries explained from all of them held 32 million hops (2.6 GB).
 */
export const MAX_STARTS = 100;

/** The MAX_STARTS entries nearest `target` by version (below it first), in channel order. */
function nearestStarts<T extends { version: Version }>(starts: T[], target: Version | undefined): T[] {
  if (starts.length <= MAX_STARTS) return starts;
  const below = (b: T) => target === undefined || compareVersions(b.version, target) <= 0;
  const byNearness = [...starts].sort((a, b) => {
    if (below(a) !== below(b)) return below(a) ? -1 : 1;
    const order = compareVersions(a.version, b.version);
    return below(a) ? -order : order;
  });
  const kept = new Set(byNearness.slice(0, MAX_STARTS));
  return starts.filter((s) => kept.has(s));
}

/**
 * The hops from `first` on, each next hop asked of `hop` once per name: the paths of a
 * channel's starts share their tails, and asking the engine again for every start made
 * explain cubic in the channel's length. A name seen twice ends the path (a cycle).
 */
function pathFrom(start: string, first: string | null, hop: (name: string) => string | null): string[] {
  const path: string[] = [];
  const seen = new Set([start]);
  let next = first;
  while (next !== null) {
    path.push(next);
    if (seen.has(next)) break;
    seen.add(next);
    next = hop(next);
  }
  return path;
}

function memo(fn: (name: string) => string | null): (name: string) => string | null {
  const known = new Map<string, string | null>();
  return (name) => {
    if (!known.has(name)) known.set(name, fn(name));
    return known.get(name)!;
  };
}

function explainChannel(
  pkg: ModelPackage,
  channel: ModelChannel,
  target: string,
  options: ExplainOptions,
): ChannelExplanation {
  const classic = classicChannel(channel);
  const v1Options = { channels: [channel.name] };
  const onChain = classic.chain.includes(target);
  const skippers = [...channel.bundles.values()].filter((b) => b.skips.includes(target)).map((b) => b.name);
  const offChainBecause =
    classic.error !== null || onChain
      ? null
      : skippers.length > 0
        ? `${skippers.join(', ')} ${skippers.length === 1 ? 'skips' : 'skip'} it, and classic OLM leaves skipped entries off the channel's replaces chain, so it never installs or upgrades to it`
        : `it is not on the replaces chain that classic OLM walks from the head ${classic.heads.join(', ')}`;
  const starts: { installed: ClassicInstalled & { version: Version }; inCatalog: boolean }[] = [];
  if (options.from) {
    const same = [...pkg.channels.values()]
      .flatMap((c) => [...c.bundles.values()])
      .find((b) => b.version && compareVersions(b.version, options.from!) === 0);
    starts.push({
      installed: { name: same?.name ?? `${pkg.name}.v${formatVersion(options.from)}`, version: options.from },
      inCatalog: same !== undefined,
    });
  } else {
    for (const b of channel.bundles.values())
      if (b.name !== target && b.version)
        starts.push({ installed: { name: b.name, version: b.version }, inCatalog: true });
  }
  const targetEntry = channel.bundles.get(target)!;
  const explained = options.from
    ? starts
    : nearestStarts(
        starts.map((s) => ({ ...s, version: s.installed.version })),
        targetEntry.version,
      );
  // After the first hop the installed bundle is a catalog entry, with the catalog's version.
  const classicHop = memo((name) => classicNext(channel, { name }));
  const v1Next = (installed: { name: string; version: Version }): string | null => {
    const chosen = v1Chosen(pkg, installed, v1Options);
    return chosen === installed.name ? null : chosen;
  };
  const v1Hop = memo((name) => {
    const version = versionOf(channel, name);
    return version ? v1Next({ name, version }) : null;
  });
  return {
    channel: channel.name,
    default: pkg.defaultChannel === channel,
    deprecated: channel.deprecation?.message ?? null,
    classicError: classic.error,
    onClassicChain: onChain,
    offChainBecause,
    freshInstall: { classic: classic.install, v1: v1Chosen(pkg, null, v1Options) },
    notExplained: starts.length - explained.length,
    from: explained.map(({ installed, inCatalog }) => {
      const classicHops = pathFrom(installed.name, classicNext(channel, installed), classicHop);
      const v1Hops = pathFrom(installed.name, v1Next(installed), v1Hop);
      return {
        installed: installed.name,
        version: formatVersion(installed.version),
        inCatalog,
        classic: {
          path: classicHops,
          reaches: classicHops.includes(target),
          why: classicHops.includes(target)
            ? null
            : classicWhy(channel, installed, classicHops, targetEntry, classic.error, offChainBecause),
        },
        v1: {
          path: v1Hops,
          reaches: v1Hops.includes(target),
          why: v1Hops.includes(target) ? null : v1Why(pkg, installed, v1Hops, targetEntry, v1Options),
        },
      };
    }),
  };
}

const versionOf = (channel: ModelChannel, name: string): Version | undefined =>
  channel.bundles.get(name)?.version;

/** Where the target's skipRange leaves `version`, in words, or '' when it has none or covers it. */
function outsideSkipRange(target: ModelBundle, version: Version | undefined): string {
  if (!target.skipRange || !version) return '';
  const parsed = tryParseRange(target.skipRange);
  if (!parsed.ok)
    return `; ${target.name}'s skipRange "${target.skipRange}" does not parse, so OLM ignores it`;
  return parsed.range.covers(version)
    ? ''
    : `; ${formatVersion(version)} is outside ${target.name}'s skipRange "${target.skipRange}"`;
}

function classicWhy(
  channel: ModelChannel,
  installed: ClassicInstalled & { version: Version },
  hops: string[],
  target: ModelBundle,
  error: string | null,
  offChainBecause: string | null,
): string {
  if (error !== null) return `classic OLM cannot use channel "${channel.name}": ${error}`;
  if (target.version && compareVersions(installed.version, target.version) > 0)
    return `already newer than ${target.name} (${formatVersion(target.version)})`;
  if (offChainBecause !== null) return `${target.name} is off classic's chain: ${offChainBecause}`;
  // Walk the hops: the first one that passes the target says why.
  let from: ClassicInstalled = installed;
  for (const next of hops) {
    const candidates = classicCandidates(channel, from);
    if (candidates.includes(target.name))
      return `from ${from.name}, classic OLM could take ${target.name} but takes ${next}, the candidate nearest the channel head (candidates: ${candidates.join(', ')})`;
    const nextVersion = versionOf(channel, next);
    if (target.version && nextVersion && compareVersions(nextVersion, target.version) > 0)
      return `from ${from.name}, classic OLM goes straight to ${next}, past ${target.name}`;
    from = { name: next };
  }
  const last = from.name;
  const lastVersion = from === installed ? installed.version : versionOf(channel, last);
  return `classic OLM stops at ${last}: no entry on the chain replaces or skips it, and no skipRange covers ${lastVersion ? formatVersion(lastVersion) : 'its version'}${outsideSkipRange(target, lastVersion)}`;
}

function v1Why(
  pkg: ModelPackage,
  installed: { name: string; version: Version },
  hops: string[],
  target: ModelBundle,
  options: { channels: string[] },
): string {
  if (target.version && compareVersions(installed.version, target.version) > 0)
    return `already newer than ${target.name} (${formatVersion(target.version)})`;
  const deprecated = target.deprecation
    ? ` (${target.name} is deprecated, and OLM v1 ranks deprecated bundles last)`
    : '';
  let from = installed;
  for (const next of hops) {
    const successors = v1Successors(pkg, from, options);
    if (successors.includes(target.name))
      return `from ${from.name}, OLM v1 ranks ${next} above ${target.name} (non-deprecated first, then the highest version; successors: ${successors.join(', ')})${deprecated}`;
    const version = pkg.channels.get(options.channels[0]!)?.bundles.get(next)?.version;
    if (!version) break;
    from = { name: next, version };
  }
  const successors = v1Successors(pkg, from, options);
  if (successors.includes(target.name))
    return `OLM v1 keeps ${from.name}: it ranks above its successor ${target.name}${deprecated}`;
  return `OLM v1 stops at ${from.name}: nothing in channel "${options.channels[0]}" replaces or skips it, and no skipRange covers ${formatVersion(from.version)}${outsideSkipRange(target, from.version)}`;
}

function summarize(e: Explanation): string[] {
  const lines: string[] = [];
  const v = e.version ? ` (${e.version})` : '';
  lines.push(
    `${e.bundle}${v} is in package ${e.package}, channel${e.channels.length === 1 ? '' : 's'} ${e.channels
      .map((c) => `${c.channel}${c.default ? ' (the default)' : ''}`)
      .join(', ')}; the default channel is ${e.defaultChannel ?? 'not set'}.`,
  );
  if (e.packageDeprecated) lines.push(`The package is deprecated: ${e.packageDeprecated}`);
  if (e.bundleDeprecated)
    lines.push(
      `The bundle is deprecated (OLM v1 picks it only when nothing else qualifies): ${e.bundleDeprecated}`,
    );
  for (const u of e.unmetDependencies)
    lines.push(
      `A dependency cannot be met: ${u.requirement}: ${u.why}. Classic OLM cannot install or upgrade to it.`,
    );
  if (e.declaresDependencies)
    lines.push(
      'It declares dependencies, which OLM v1 does not resolve: v1 fails on it instead of picking another bundle.',
    );
  for (const c of e.channels) {
    const subscription = c.default ? 'a Subscription without a channel, or' : 'a Subscription';
    if (c.deprecated) lines.push(`Channel ${c.channel} is deprecated: ${c.deprecated}`);
    lines.push(
      c.freshInstall.classic === e.bundle
        ? `New install, classic OLM: ${subscription} to channel ${c.channel} gets it.`
        : `New install, classic OLM: channel ${c.channel} installs ${c.freshInstall.classic ?? `nothing (${c.classicError})`}, not this bundle.`,
    );
    lines.push(
      c.freshInstall.v1 === e.bundle
        ? `New install, OLM v1: a ClusterExtension on channel ${c.channel} gets it.`
        : `New install, OLM v1: channel ${c.channel} installs ${c.freshInstall.v1 ?? 'nothing'}, not this bundle.`,
    );
    if (c.offChainBecause)
      lines.push(`Classic OLM, channel ${c.channel}: off the chain: ${c.offChainBecause}.`);
    for (const olm of ['classic', 'v1'] as const) {
      const name = olm === 'classic' ? 'Classic OLM' : 'OLM v1';
      const reach = c.from.filter((f) => f[olm].reaches);
      if (reach.length > 0)
        lines.push(
          `${name}, channel ${c.channel}: reached from ${reach
            .map(
              (f) =>
                `${f.installed} via ${shortPath(f[olm].path.slice(0, f[olm].path.indexOf(e.bundle) + 1))}`,
            )
            .join('; ')}.`,
        );
      // Installed versions that fail for the same reason share one line.
      const byWhy = new Map<string, string[]>();
      for (const f of c.from.filter((x) => !x[olm].reaches)) {
        const label = f.inCatalog ? f.installed : `${f.installed} (${f.version}, not in this catalog)`;
        byWhy.set(f[olm].why!, [...(byWhy.get(f[olm].why!) ?? []), label]);
      }
      for (const [why, labels] of byWhy)
        lines.push(`${name}, channel ${c.channel}: not from ${labels.join(', ')}: ${why}.`);
    }
    if (c.notExplained > 0)
      lines.push(
        `Channel ${c.channel}: explained from the ${c.from.length} entries nearest the bundle; ${c.notExplained} more are not (ask from one of them with a version).`,
      );
  }
  return lines;
}

/** A path for a sentence: long upgrade chains keep their first hops and the end (JSON has all). */
function shortPath(hops: string[]): string {
  if (hops.length <= 3) return hops.join(' -> ');
  return `${hops.slice(0, 2).join(' -> ')} -> … (${hops.length - 3} more) -> ${hops[hops.length - 1]}`;
}

/** A Mermaid flowchart of every path that reaches the bundle: classic hops solid, v1 dashed. */
export function explainMermaid(e: Explanation): string {
  const ids = new Map<string, string>();
  const id = (name: string): string => {
    let known = ids.get(name);
    if (known === undefined) ids.set(name, (known = 'n' + Buffer.from(name).toString('hex')));
    return known;
  };
  const lines = ['flowchart LR'];
  const nodes = new Set<string>([e.bundle]);
  const edges = new Set<string>();
  for (const c of e.channels) {
    for (const f of c.from) {
      for (const olm of ['classic', 'v1'] as const) {
        if (!f[olm].reaches) continue;
        const hops = [f.installed, ...f[olm].path.slice(0, f[olm].path.indexOf(e.bundle) + 1)];
        for (let i = 1; i < hops.length; i++) {
          nodes.add(hops[i - 1]!).add(hops[i]!);
          const arrow = olm === 'classic' ? `-->|classic ${c.channel}|` : `-.->|v1 ${c.channel}|`;
          edges.add(`  ${id(hops[i - 1]!)} ${arrow} ${id(hops[i]!)}`);
        }
      }
    }
  }
  // Names come from catalog files: anything but plain name characters becomes a Mermaid
  // entity, so a name cannot close the label, the diagram or a Markdown code fence.
  const label = (name: string): string => name.replace(/[^A-Za-z0-9._+-]/gu, (c) => `#${c.codePointAt(0)};`);
  for (const n of nodes) lines.push(`  ${id(n)}["${label(n)}"]${n === e.bundle ? ':::target' : ''}`);
  lines.push(...edges, '  classDef target stroke-width:3px');
  return lines.join('\n') + '\n';
}

export function explainText(e: Explanation): string {
  return e.summary.join('\n') + '\n';
}
