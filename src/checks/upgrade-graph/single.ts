/**
 * Upgrade-graph checks on one catalog: the rules G5-G9, G11 and G15-G20
 * (docs/olm-upgrades.md, "What the checks ask of a graph"). opm's own graph rules live in
 * `src/catalog/fbc/validate.ts`; the skipRange lint (R-*) and old catalog vs new (G12-G14)
 * are separate modules.
 *
 * Everything here is pure: a validated model in, findings out. Each finding points at the
 * channel entry (or bundle property) to change and carries a hint naming the edit.
 *
 * Channels classic OLM cannot sort (no head, several heads, a replaces loop) are already
 * errors from the validator or from G5; the checks that need the classic chain skip them.
 * Bundles without a parsed version are left out of the version-based checks.
 */
import {
  classicChannel,
  classicChannelEntries,
  classicNext,
  classicPath,
  type ClassicChannel,
} from '../../catalog/olm/classic.js';
import { sortDiagnostics, type Diagnostic, type Level } from '../../catalog/diagnostics.js';
import type { Bundle, Property } from '../../catalog/fbc/declcfg.js';
import {
  parseRelease,
  type Model,
  type ModelBundle,
  type ModelChannel,
  type ModelPackage,
} from '../../catalog/fbc/model.js';
import { tryParseRange, type VersionRange } from '../../catalog/versions/range.js';
import {
  compareVersions,
  formatVersion,
  type PrereleasePart,
  type Version,
} from '../../catalog/versions/semver.js';
import { v1Chosen, v1Path, v1Successors } from '../../catalog/olm/v1.js';
import {
  maxOpenShiftVersions,
  PROPERTY_CONSTRAINT,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_PACKAGE_REQUIRED,
} from '../../catalog/property.js';

export interface GraphCheckOptions {
  /** Only these packages (a PR's changed ones); default all. */
  packages?: Set<string>;
  /**
   * The OpenShift minor this catalog serves, e.g. `4.21` (the catalog root's name without
   * the `v`). Enables G20's "head blocks cluster upgrades" warning; unset skips it.
   */
  openShiftVersion?: string;
}

export function singleCatalogFindings(model: Model, options: GraphCheckOptions = {}): Diagnostic[] {
  const out: Diagnostic[] = [];
  const target = options.openShiftVersion ? parseMinor(options.openShiftVersion.replace(/^v/, '')) : null;
  for (const pkg of model.values()) {
    if (options.packages && !options.packages.has(pkg.name)) continue;
    checkPackage(pkg, target, out);
  }
  return sortDiagnostics(out);
}

// ---------------------------------------------------------------------------------------
// Per-channel facts, computed once

interface ChannelView {
  pkg: ModelPackage;
  channel: ModelChannel;
  entries: ModelBundle[];
  classic: ClassicChannel;
  /** The classic head when `sortChannel` succeeds. */
  head: ModelBundle | undefined;
  onChain: Set<string>;
  /** Names some entry lists in `skips`. */
  skipped: Set<string>;
  /** Entries that name each bundle in `replaces` or `skips` (upgrade edges into it). */
  referrers: Map<string, ModelBundle[]>;
  opm: OpmView;
  v1Options: { channels: string[] };
  /** v1Chosen for each versioned entry as installed (with this channel selected). */
  v1Next: Map<string, string | null>;
  /** classicNext for each entry as installed. */
  classicNext: Map<string, string | null>;
  /** Package-wide bundle by name (first channel entry seen), for versions of edge targets. */
  byName: Map<string, ModelBundle>;
}

function viewOf(pkg: ModelPackage, channel: ModelChannel, byName: Map<string, ModelBundle>): ChannelView {
  const entries = [...channel.bundles.values()];
  const classic = classicChannel(channel);
  const chain = classicChannelEntries(channel);
  const referrers = new Map<string, ModelBundle[]>();
  const skipped = new Set<string>();
  for (const b of entries) {
    for (const target of new Set([b.replaces, ...b.skips])) {
      if (target === '' || !channel.bundles.has(target)) continue;
      const list = referrers.get(target);
      if (list) list.push(b);
      else referrers.set(target, [b]);
    }
    for (const s of b.skips) skipped.add(s);
  }
  const view: ChannelView = {
    pkg,
    channel,
    entries,
    classic,
    head: classic.error === null ? chain[0] : undefined,
    onChain: new Set(classic.chain),
    skipped,
    referrers,
    opm: opmView(channel),
    v1Options: { channels: [channel.name] },
    v1Next: new Map(),
    classicNext: new Map(),
    byName,
  };
  for (const b of entries) {
    if (b.version && b.blob) {
      view.v1Next.set(b.name, v1Chosen(pkg, { name: b.name, version: b.version }, view.v1Options));
    }
    if (classic.error === null) view.classicNext.set(b.name, classicNext(channel, { name: b.name }));
  }
  return view;
}

/** What opm's Channel.Head + validateReplacesChain conclude (validate.ts reports these). */
interface OpmView {
  error: 'no-head' | 'multiple-heads' | 'cycle' | null;
  /** The names on the replaces loop opm reports (C-CYCLE). */
  cycle: Set<string>;
  /** The entries opm reports as stranded (C-STRANDED). */
  stranded: Set<string>;
}

function opmView(ch: ModelChannel): OpmView {
  const view: OpmView = { error: null, cycle: new Set(), stranded: new Set() };
  const incoming = new Set<string>();
  const skipped = new Set<string>();
  for (const b of ch.bundles.values()) {
    if (b.replaces !== '') incoming.add(b.replaces);
    for (const s of b.skips) {
      incoming.add(s);
      skipped.add(s);
    }
  }
  const heads = [...ch.bundles.values()].filter((b) => !incoming.has(b.name));
  if (ch.bundles.size === 0) return view;
  if (heads.length !== 1) {
    view.error = heads.length === 0 ? 'no-head' : 'multiple-heads';
    return view;
  }
  const walk: string[] = [];
  const chain = new Set<string>();
  let cur: ModelBundle | undefined = heads[0];
  while (cur) {
    walk.push(cur.name);
    chain.add(cur.name);
    if (skipped.has(cur.replaces)) break;
    if (chain.has(cur.replaces)) {
      view.error = 'cycle';
      view.cycle = new Set(walk.slice(walk.indexOf(cur.replaces)));
      return view;
    }
    cur = ch.bundles.get(cur.replaces);
  }
  for (const name of ch.bundles.keys()) {
    if (!chain.has(name) && !skipped.has(name)) view.stranded.add(name);
  }
  return view;
}

// ---------------------------------------------------------------------------------------
// Package driver

function checkPackage(pkg: ModelPackage, target: Minor | null, out: Diagnostic[]): void {
  const byName = new Map<string, ModelBundle>();
  for (const ch of pkg.channels.values()) {
    for (const b of ch.bundles.values()) if (!byName.has(b.name)) byName.set(b.name, b);
  }
  const views: ChannelView[] = [];
  for (const ch of pkg.channels.values()) {
    if (ch.bundles.size === 0) continue; // C-EMPTY / P-DEFAULT-CHANNEL-MISSING
    views.push(viewOf(pkg, ch, byName));
  }
  for (const view of views) {
    checkCycles(view, out);
    checkDowngradeEdges(view, out);
    checkV1Progress(view, out);
    if (view.head === undefined) continue; // sortChannel failed: no chain to judge
    checkClassicDeadEnds(view, out);
    checkHeadHighest(view, out);
    checkDivergence(view, out);
    checkZStreamShape(view, out);
    checkPrereleases(view, out);
    checkHeadDeprecated(view, out);
  }
  checkEdgesAcrossChannels(pkg, views, out);
  checkDependencies(pkg, views, out);
  checkMaxOpenShift(pkg, views, target, out);
}

// ---------------------------------------------------------------------------------------
// G5: no cycle at all in the replaces+skips graph

function checkCycles(view: ChannelView, out: Diagnostic[]): void {
  const { opm } = view;
  // A channel with no head has a cycle by construction, and C-NO-HEAD already fails it.
  if (opm.error === 'no-head') return;
  for (const scc of cyclicComponents(view)) {
    if (opm.error === 'cycle' && [...scc].some((n) => opm.cycle.has(n))) continue; // C-CYCLE
    const { loop, cut } = describeCycle(view, scc);
    const names = loop.map((b) => b.name);
    const sortError = view.classic.error;
    const consequence =
      sortError !== null && /cycle/.test(sortError)
        ? `classic OLM cannot resolve anything in this channel ("${sortError}")`
        : 'one of these edges leads from a newer bundle back to an older one';
    const hidden =
      opm.error === null ? ' opm validate does not see this loop (it hides behind a skipped entry).' : '';
    const self = names.length === 1;
    const edgeText = cut.kind === 'replaces' ? `replaces: ${cut.target.name}` : `skips: [${cut.target.name}]`;
    out.push(
      finding(view, cut.from, 'G5-CYCLE', 'error', {
        message: self
          ? `${where(view)}: ${names[0]} ${cut.kind === 'replaces' ? 'replaces' : 'skips'} itself, a cycle in the upgrade graph: ${consequence}.${hidden}`
          : `${where(view)}: the replaces/skips edges form a cycle: ${[...names, names[0]].join(' -> ')} (each bundle replaced or skipped by the next): ${consequence}.${hidden}`,
        hint: `Break the cycle: remove \`${edgeText}\` from ${cut.from.name}${
          self ? '' : versionNote(cut.from, cut.target)
        }.`,
      }),
    );
  }
}

function versionNote(from: ModelBundle, target: ModelBundle): string {
  if (!from.version || !target.version) return '';
  return ` (${from.name} is ${v(from)}, it should not upgrade ${target.name} ${v(target)})`;
}

/** Strongly connected components with a cycle (size > 1, or a self-edge), Tarjan, iterative. */
function cyclicComponents(view: ChannelView): Set<string>[] {
  const { channel } = view;
  // Upgrade direction: target -> entry that replaces/skips it. Cycles are the same either way.
  const out = new Map<string, string[]>();
  const selfLoop = new Set<string>();
  for (const b of channel.bundles.values()) {
    const targets = [...new Set([b.replaces, ...b.skips])].filter((t) => t !== '' && channel.bundles.has(t));
    out.set(b.name, targets);
    if (targets.includes(b.name)) selfLoop.add(b.name);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const result: Set<string>[] = [];
  let counter = 0;
  for (const root of out.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; i: number }[] = [{ node: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const succ = out.get(frame.node)!;
      if (frame.i < succ.length) {
        const next = succ[frame.i++]!;
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push({ node: next, i: 0 });
        } else if (onStack.has(next)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(next)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const scc = new Set<string>();
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          scc.add(n);
        } while (n !== frame.node);
        if (scc.size > 1 || selfLoop.has(frame.node)) result.push(scc);
      }
    }
  }
  return result;
}

interface CycleEdge {
  /** The entry holding the edge (the one to edit). */
  from: ModelBundle;
  target: ModelBundle;
  kind: 'replaces' | 'skips';
}

/** One loop through the component, in upgrade order, and the edge best removed to cut it. */
function describeCycle(view: ChannelView, scc: Set<string>): { loop: ModelBundle[]; cut: CycleEdge } {
  const { channel } = view;
  const edges: CycleEdge[] = [];
  for (const name of scc) {
    const from = channel.bundles.get(name)!;
    if (scc.has(from.replaces))
      edges.push({ from, target: channel.bundles.get(from.replaces)!, kind: 'replaces' });
    for (const s of new Set(from.skips)) {
      if (scc.has(s) && s !== from.replaces)
        edges.push({ from, target: channel.bundles.get(s)!, kind: 'skips' });
    }
  }
  // Prefer cutting an edge that points at a version not lower than the entry's own (a
  // downgrade): in a loop of versioned bundles at least one edge is one.
  const cut =
    edges.find((e) => e.from === e.target) ??
    edges.find((e) => e.from.version && e.target.version && compareV1(e.target, e.from) >= 0) ??
    edges[0]!;
  if (cut.from === cut.target) return { loop: [cut.from], cut };
  // Shortest path in upgrade direction from cut.from back to cut.target within the component.
  const upgrades = new Map<string, string[]>();
  for (const e of edges) {
    const list = upgrades.get(e.target.name);
    if (list) list.push(e.from.name);
    else upgrades.set(e.target.name, [e.from.name]);
  }
  const prev = new Map<string, string>([[cut.from.name, '']]);
  const queue = [cut.from.name];
  while (queue.length > 0 && !prev.has(cut.target.name)) {
    const n = queue.shift()!;
    for (const m of upgrades.get(n) ?? []) {
      if (!prev.has(m)) {
        prev.set(m, n);
        queue.push(m);
      }
    }
  }
  const path: string[] = [];
  for (let n = cut.target.name; n !== ''; n = prev.get(n) ?? '') path.unshift(n);
  // path: cut.from ... cut.target; the cut edge closes it (target -> from). Start at the target.
  const loop = [cut.target.name, ...path.slice(0, -1)].map((n) => channel.bundles.get(n)!);
  return { loop, cut };
}

// ---------------------------------------------------------------------------------------
// G6: classic dead ends

type Fate = { kind: 'head' } | { kind: 'dead'; at: string } | { kind: 'loop'; loop: string[] };

function classicFates(view: ChannelView): Map<string, Fate> {
  const fates = new Map<string, Fate>();
  const headName = view.head!.name;
  for (const start of view.entries) {
    if (fates.has(start.name)) continue;
    const walk: string[] = [];
    const seen = new Map<string, number>();
    let fate: Fate | undefined;
    let name: string | null = start.name;
    while (fate === undefined) {
      const known = name === null ? undefined : fates.get(name);
      if (known) {
        fate = known;
        break;
      }
      if (name === headName) {
        walk.push(name);
        fate = { kind: 'head' };
        break;
      }
      if (seen.has(name!)) {
        fate = { kind: 'loop', loop: walk.slice(seen.get(name!)!) };
        break;
      }
      seen.set(name!, walk.length);
      walk.push(name!);
      const next: string | null = view.classicNext.get(name!) ?? null;
      if (next === null) {
        fate = { kind: 'dead', at: name! };
        break;
      }
      name = next;
    }
    for (const n of walk) fates.set(n, fate);
  }
  return fates;
}

function checkClassicDeadEnds(view: ChannelView, out: Diagnostic[]): void {
  const { channel, head } = view;
  const fates = classicFates(view);
  const chainText = describeChain(view.classic.chain);
  const reported = new Set<string>();
  for (const b of view.entries) {
    const fate = fates.get(b.name)!;
    if (fate.kind === 'head') continue;
    const key = fate.kind === 'dead' ? fate.at : fate.loop.join(' ');
    if (reported.has(key)) continue;
    reported.add(key);
    const behind = view.entries
      .filter((o) => {
        const f = fates.get(o.name)!;
        return o.name !== (fate.kind === 'dead' ? fate.at : '') && sameFate(f, fate);
      })
      .map((o) => o.name);
    const alsoText =
      behind.length > 0
        ? ` Installs of ${listNames(behind)} end up there too (classic moves them to it).`
        : '';
    if (fate.kind === 'loop') {
      out.push(
        finding(view, head!, 'G6-CLASSIC-DEAD-END', 'error', {
          message: `${where(view)}: classic OLM moves ${[...fate.loop, fate.loop[0]].join(' -> ')} in a loop and never reaches the head ${head!.name}.${alsoText}`,
          hint: `Give ${head!.name} a direct edge from these bundles: ${skipsHint(head!, fate.loop)}.`,
        }),
      );
      continue;
    }
    const dead = channel.bundles.get(fate.at)!;
    const { target, fix } = deadEndFix(view, dead, fates);
    const opmText = view.opm.stranded.has(dead.name)
      ? ' opm validate also rejects it as stranded (C-STRANDED); this is what it means for installed clusters.'
      : ' opm validate accepts this channel, so nothing else catches it.';
    const v1 = view.v1Next.get(dead.name);
    const v1Text =
      v1 && v1 !== dead.name ? ` OLM v1 does move it on (to ${v1}).` : ' OLM v1 has no update for it either.';
    out.push(
      // Point at the entry to change, not at the stranded one.
      finding(view, target, 'G6-CLASSIC-DEAD-END', 'error', {
        message: `${where(view)}: classic OLM has no update from ${dead.name}: ${whyDead(view, dead)}, and the classic chain is ${chainText}.${v1Text}${alsoText}${opmText}`,
        hint: `${fix}, so classic OLM offers it an update.`,
      }),
    );
  }
}

function sameFate(a: Fate, b: Fate): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'dead' && b.kind === 'dead') return a.at === b.at;
  if (a.kind === 'loop' && b.kind === 'loop') return a.loop.join(' ') === b.loop.join(' ');
  return true;
}

function whyDead(view: ChannelView, dead: ModelBundle): string {
  const refs = (view.referrers.get(dead.name) ?? []).filter((r) => r !== dead);
  if (refs.length === 0) return 'no other entry replaces or skips it';
  const parts = refs.map((r) => {
    const edge = r.replaces === dead.name ? 'replaces' : 'skips';
    const skippers = view.entries.filter((e) => e.skips.includes(r.name)).map((e) => e.name);
    const reason =
      skippers.length > 0 ? `is skipped by ${listNames(skippers)}` : `is not on the head's replaces walk`;
    return `${r.name} (which ${edge} it) ${reason}`;
  });
  return `only off-chain entries lead away from it: ${parts.join('; ')}`;
}

/** The edit that gives `dead` a classic update: the lowest newer chain entry that reaches the head skips it. */
/** The entry to edit so a dead end gets an update (the lowest newer entry that reaches the head), and the edit. */
function deadEndFix(
  view: ChannelView,
  dead: ModelBundle,
  fates: Map<string, Fate>,
): { target: ModelBundle; fix: string } {
  const chain = classicChannelEntries(view.channel).filter((b) => fates.get(b.name)?.kind === 'head');
  let target = view.head!;
  if (dead.version) {
    const newer = chain.filter((b) => b.version && compareV1(b, dead) > 0).sort((a, b) => compareV1(a, b))[0];
    if (newer) target = newer;
  }
  return { target, fix: skipsHint(target, [dead.name]) };
}

function skipsHint(target: ModelBundle, names: string[]): string {
  const fresh = names.filter((n) => !target.skips.includes(n));
  return target.skips.length === 0
    ? `add \`skips: [${fresh.join(', ')}]\` to ${target.name}`
    : `add ${fresh.map((n) => `\`${n}\``).join(', ')} to the \`skips\` of ${target.name}`;
}

function describeChain(chain: readonly string[]): string {
  if (chain.length <= 6) return chain.join(' -> ');
  return `${chain.slice(0, 3).join(' -> ')} -> ... -> ${chain[chain.length - 1]} (${chain.length} entries)`;
}

// ---------------------------------------------------------------------------------------
// G7: v1 progress

function checkV1Progress(view: ChannelView, out: Diagnostic[]): void {
  const { channel } = view;
  const versioned = view.entries.filter((b) => b.version && b.blob);
  if (versioned.length === 0) return;
  const top = versioned.reduce((a, b) => (compareV1(b, a) > 0 ? b : a));
  for (const b of versioned) {
    if (compareV1(b, top) === 0) continue;
    const chosenName = view.v1Next.get(b.name) ?? null;
    const chosen = chosenName === null ? undefined : channel.bundles.get(chosenName);
    const cmp = chosen ? compareV1(chosen, b) : -1;
    if (cmp > 0) continue;
    const next = nextHigher(
      versioned.filter((o) => !o.deprecation),
      b,
    );
    const fix = next ? `${replacesOrSkipsHint(next, b)} (the next higher version, ${v(next)})` : '';
    if (!chosen || cmp < 0) {
      out.push(
        finding(view, b, 'G7-V1-NO-PROGRESS', 'error', {
          message: chosen
            ? `${where(view)}: OLM v1 moves ${b.name} (${v(b)}) down to ${chosen.name} (${v(chosen)}): it ranks non-deprecated bundles first${b.deprecation ? `, and ${b.name} is deprecated` : ''}.`
            : `${where(view)}: OLM v1 finds no bundle for an install of ${b.name}.`,
          hint: fix
            ? `Give it a non-deprecated way up: ${fix}.`
            : 'Give it a non-deprecated higher successor.',
        }),
      );
      continue;
    }
    const deprecatedUp = v1Successors(view.pkg, { name: b.name, version: b.version! }, view.v1Options)
      .map((n) => channel.bundles.get(n))
      .filter((o): o is ModelBundle => o?.version !== undefined && compareV1(o, b) > 0);
    const why =
      deprecatedUp.length > 0
        ? `its higher successors (${listNames(deprecatedUp.map((o) => o.name))}) are deprecated, and OLM v1 prefers staying on a non-deprecated bundle`
        : 'no higher bundle in the channel replaces, skips or skipRange-covers it';
    const classic = view.classicNext.get(b.name);
    const classicText =
      classic === undefined
        ? ''
        : classic === null
          ? ' Classic OLM has no update for it either.'
          : ` Classic OLM moves it to ${classic}${lowerNote(channel, classic, b)}.`;
    out.push(
      finding(view, b, 'G7-V1-NO-PROGRESS', 'warning', {
        message: `${where(view)}: OLM v1 keeps ${b.name} (${v(b)}) installed although ${top.name} (${v(top)}) is newer: ${why}.${classicText}`,
        hint: fix ? `${capitalize(fix)}.` : 'Give it a higher successor.',
      }),
    );
  }
}

function lowerNote(channel: ModelChannel, name: string, than: ModelBundle): string {
  const b = channel.bundles.get(name);
  if (!b?.version || !than.version) return '';
  return compareV1(b, than) < 0
    ? ` (${v(b)}, a downgrade)`
    : compareV1(b, than) === 0
      ? ' (same version)'
      : '';
}

function nextHigher(versioned: ModelBundle[], b: ModelBundle): ModelBundle | undefined {
  let best: ModelBundle | undefined;
  for (const o of versioned) {
    if (compareV1(o, b) > 0 && (!best || compareV1(o, best) < 0)) best = o;
  }
  return best;
}

function replacesOrSkipsHint(target: ModelBundle, from: ModelBundle): string {
  if (target.replaces === '') return `add \`replaces: ${from.name}\` to ${target.name}`;
  return skipsHint(target, [from.name]);
}

// ---------------------------------------------------------------------------------------
// G8: upward edges only

function checkDowngradeEdges(view: ChannelView, out: Diagnostic[]): void {
  const published = [...view.byName.values()].filter((b) => b.version);
  for (const e of view.entries) {
    if (!e.version) continue;
    const texts: string[] = [];
    const fixes: string[] = [];
    const edgeTargets: [string, 'replaces' | 'skips'][] = [];
    if (e.replaces !== '') edgeTargets.push([e.replaces, 'replaces']);
    for (const s of new Set(e.skips)) if (s !== e.replaces) edgeTargets.push([s, 'skips']);
    for (const [name, kind] of edgeTargets) {
      if (name === e.name) continue; // G5
      const t = view.byName.get(name);
      if (!t?.version || compareV1(t, e) < 0) continue;
      if (isPrereleaseBelowGA(e, t)) continue; // G17 says it better
      texts.push(
        `${kind} ${t.name} (${v(t)}), which is ${compareV1(t, e) === 0 ? 'the same version' : 'higher'}: classic OLM follows this edge and moves ${t.name} installs down to ${e.name}, OLM v1 never does`,
      );
      fixes.push(
        kind === 'replaces' ? `remove \`replaces: ${t.name}\`` : `remove \`${t.name}\` from its \`skips\``,
      );
    }
    const range = parsedRange(e.skipRange);
    if (range) {
      const own = range.covers(e.version);
      const higher = published.filter(
        (b) => b.name !== e.name && compareV1(b, e) >= 0 && range.covers(b.version!),
      );
      if (own || higher.length > 0) {
        const what = [
          ...(own ? [`its own version ${v(e)}`] : []),
          ...(higher.length > 0 ? [listNames(higher.map((b) => `${b.name} (${v(b)})`))] : []),
        ].join(' and ');
        texts.push(
          `has skipRange "${e.skipRange}", which covers ${what}: classic OLM offers ${e.name} as the update of any install at ${higher.length > 0 ? 'those versions' : 'that version'} (a downgrade for a newer install, e.g. one from another channel), OLM v1 never moves down`,
        );
        fixes.push(
          `end the skipRange below ${v(e)} (upper bound \`<${formatVersion({ ...e.version, build: [] })}\`)`,
        );
      }
    }
    if (texts.length === 0) continue;
    out.push(
      finding(view, e, 'G8-DOWNGRADE-EDGE', 'warning', {
        message: `${where(view)}: ${e.name} (${v(e)}) ${texts.join('; it ')}.`,
        hint: `Upgrade edges must lead to a higher version. In the entry of ${e.name}: ${fixes.join('; ')}.`,
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------
// G9: the head is the highest version

function checkHeadHighest(view: ChannelView, out: Diagnostic[]): void {
  const head = view.head!;
  if (!head.version) return;
  const higher = view.entries
    .filter((b) => b.version && compareV1(b, head) > 0)
    .sort((a, b) => compareV1(b, a));
  if (higher.length === 0) return;
  const top = higher[0]!;
  const fresh = v1Chosen(view.pkg, null, view.v1Options);
  const refs = (view.referrers.get(top.name) ?? []).map((r) => r.name);
  const unlink =
    refs.length > 0 ? `remove ${top.name} from the \`replaces\`/\`skips\` of ${listNames(refs)} and ` : '';
  out.push(
    finding(view, top, 'G9-HEAD-NOT-HIGHEST', 'warning', {
      message: `${where(view)}: the head ${head.name} (${v(head)}) is not the highest version; ${listNames(higher.map((b) => `${b.name} (${v(b)})`))} ${higher.length === 1 ? 'is' : 'are'} higher. ${
        fresh === head.name
          ? `OLM v1 installs the head too only because the higher ones are deprecated.`
          : `A fresh install gets ${head.name} from classic OLM but ${fresh ?? 'nothing'} from OLM v1.`
      }`,
      hint: `Make ${top.name} the head: ${unlink}${replacesOrSkipsHint(top, head)}.`,
    }),
  );
}

// ---------------------------------------------------------------------------------------
// G11: classic and v1 disagree on the next hop

function checkDivergence(view: ChannelView, out: Diagnostic[]): void {
  const { channel, pkg } = view;
  for (const b of view.entries) {
    if (!b.version || !b.blob) continue;
    const classic = view.classicNext.get(b.name) ?? null;
    const v1 = view.v1Next.get(b.name) ?? null;
    if ((classic ?? b.name) === (v1 ?? b.name)) continue;
    const classicWay = classicPath(channel, { name: b.name });
    const v1Way = v1Path(pkg, { name: b.name, version: b.version }, view.v1Options);
    const show = (way: string[]) => (way.length === 0 ? 'stays (no update)' : pathText([b.name, ...way]));
    const classicEnd = classicWay[classicWay.length - 1] ?? b.name;
    const v1End = v1Way[v1Way.length - 1] ?? b.name;
    const ends = classicEnd === v1End ? ` Both end at ${v1End}.` : '';
    let hint: string;
    const v1Target = channel.bundles.get(v1End);
    if (v1End !== b.name && v1Target && view.onChain.has(v1End) && !v1Target.skips.includes(b.name)) {
      hint = `To make both OLMs take the same way, ${skipsHint(v1Target, [b.name])}.`;
    } else if (v1 === null || v1 === b.name) {
      hint = `OLM v1 stays because ${classic} is not a higher version: fix that edge (see G8) or give ${b.name} a higher successor.`;
    } else {
      hint = `To make both OLMs take the same way, ${skipsHint(view.head!, [b.name])}.`;
    }
    out.push(
      finding(view, b, 'G11-DIVERGENCE', 'notice', {
        message: `${where(view)}: an install of ${b.name} upgrades differently: classic OLM ${show(classicWay)}; OLM v1 ${show(v1Way)}.${ends}`,
        hint,
      }),
    );
  }
}

function pathText(names: string[]): string {
  if (names.length <= 7) return names.join(' -> ');
  return `${names.slice(0, 3).join(' -> ')} -> ... -> ${names.slice(-2).join(' -> ')} (${names.length - 1} hops)`;
}

// ---------------------------------------------------------------------------------------
// G15: the same bundle has different edges in different channels

function checkEdgesAcrossChannels(pkg: ModelPackage, views: ChannelView[], out: Diagnostic[]): void {
  const byBundle = new Map<string, { view: ChannelView; b: ModelBundle }[]>();
  for (const view of views) {
    for (const b of view.entries) {
      const list = byBundle.get(b.name);
      if (list) list.push({ view, b });
      else byBundle.set(b.name, [{ view, b }]);
    }
  }
  const defaultName = pkg.defaultChannel?.name;
  // One finding per package: the differences usually come from one channel policy.
  const differing: { name: string; odd: { view: ChannelView; b: ModelBundle }; text: string; fix: string }[] =
    [];
  for (const [name, list] of byBundle) {
    if (list.length < 2) continue;
    const groups = new Map<string, { view: ChannelView; b: ModelBundle }[]>();
    for (const item of list) {
      const key = edgeSignature(item.b);
      const g = groups.get(key);
      if (g) g.push(item);
      else groups.set(key, [item]);
    }
    if (groups.size < 2) continue;
    // The reference is the shape with the most edges (adding an edge rarely hurts, removing
    // one can strand installs), then the most common, then the default channel's.
    const ranked = [...groups.values()].sort(
      (a, b) =>
        edgeCount(b[0]!.b) - edgeCount(a[0]!.b) ||
        b.length - a.length ||
        Number(b.some((i) => i.view.channel.name === defaultName)) -
          Number(a.some((i) => i.view.channel.name === defaultName)),
    );
    const reference = ranked[0]![0]!;
    const odd = ranked[1]![0]!;
    differing.push({
      name,
      odd,
      text: `${name} (${ranked.map((g) => `${g.map((i) => `"${i.view.channel.name}"`).join(', ')}: ${edgeText(g[0]!.b)}`).join('; ')})`,
      fix: `in channel "${odd.view.channel.name}" give ${name} ${edgeText(reference.b)} as in "${reference.view.channel.name}"`,
    });
  }
  if (differing.length === 0) return;
  const first = differing[0]!;
  const more = differing.length > 3 ? `; and ${differing.length - 3} more bundles` : '';
  out.push(
    finding(first.odd.view, first.odd.b, 'G15-EDGES-DIFFER-ACROSS-CHANNELS', 'warning', {
      message: `package "${pkg.name}": ${differing.length === 1 ? 'a bundle has' : `${differing.length} bundles have`} different upgrade edges in different channels: ${differing
        .slice(0, 3)
        .map((d) => d.text)
        .join(
          '; ',
        )}${more}. OLM v1 without a channel filter combines the edges of every channel; classic OLM only uses the subscribed channel's, so the two disagree (and a classic channel switch only finds the edges of the new channel).`,
      hint: `Give each bundle the same edges in every channel, e.g. ${first.fix}; if the difference is intended, ignore this warning.`,
    }),
  );
}

function edgeCount(b: ModelBundle): number {
  return (b.replaces === '' ? 0 : 1) + new Set(b.skips).size + (b.skipRange === '' ? 0 : 1);
}

function edgeSignature(b: ModelBundle): string {
  return JSON.stringify([b.replaces, [...new Set(b.skips)].sort(), b.skipRange]);
}

function edgeText(b: ModelBundle): string {
  const parts: string[] = [];
  if (b.replaces !== '') parts.push(`\`replaces: ${b.replaces}\``);
  if (b.skips.length > 0) parts.push(`\`skips: [${[...new Set(b.skips)].sort().join(', ')}]\``);
  if (b.skipRange !== '') parts.push(`\`skipRange: "${b.skipRange}"\``);
  return parts.length > 0 ? parts.join(' + ') : 'no edges';
}

// ---------------------------------------------------------------------------------------
// G16: z-stream / y-stream shape

function checkZStreamShape(view: ChannelView, out: Diagnostic[]): void {
  const { channel } = view;
  // (c) replaces and skips the same predecessor T while T has its own predecessor in the
  // channel: opm's walk and classic's candidates both stop at the skipped T. Reported when it
  // really leaves T's predecessor without a classic update (another edge may cover it).
  for (const e of view.entries) {
    if (e.replaces === '' || !e.skips.includes(e.replaces)) continue;
    const t = channel.bundles.get(e.replaces);
    const before = t && t.replaces !== '' ? channel.bundles.get(t.replaces) : undefined;
    if (!t || !before || view.classicNext.get(before.name) !== null) continue;
    const opm = view.opm.stranded.has(before.name) ? 'opm reports it as stranded, and ' : '';
    out.push(
      finding(view, e, 'G16-ZSTREAM-SHAPE', 'warning', {
        message: `${where(view)}: ${e.name} both replaces and skips ${t.name}, which itself replaces ${before.name}: the skipped ${t.name} leaves the classic chain, so ${opm}classic OLM has no update for ${before.name}.`,
        hint: `Remove \`${t.name}\` from the \`skips\` of ${e.name} (keep \`replaces: ${t.name}\`), or also skip ${before.name} there.`,
      }),
    );
  }
  // (a), (b): the newest bundle (the head) against the earlier GA versions of the channel.
  const head = view.head!;
  if (!head.version || head.version.pre.length > 0) return;
  const ga = view.entries
    .filter((b) => b !== head && b.version && b.version.pre.length === 0 && compareV1(b, head) < 0)
    .sort((a, b) => compareV1(a, b));
  const p = ga[ga.length - 1];
  // The semver template never links across a major version; neither does this guidance.
  if (!p || p.version!.major !== head.version.major) return;
  // (a) The head replaces the previous highest version (or jumps over it with skips/skipRange).
  if (!reaches(view, head, p)) {
    const current =
      head.replaces === ''
        ? 'it has no `replaces`'
        : `it replaces ${head.replaces}${view.byName.get(head.replaces)?.version ? ` (${v(view.byName.get(head.replaces)!)})` : ''}`;
    out.push(
      finding(view, head, 'G16-ZSTREAM-SHAPE', 'warning', {
        message: `${where(view)}: the head ${head.name} (${v(head)}) has no direct edge from the previous highest version ${p.name} (${v(p)}): ${current}, and it neither skips nor skipRange-covers ${p.name}.`,
        hint:
          head.replaces === ''
            ? `Add \`replaces: ${p.name}\` to ${head.name}.`
            : `Set \`replaces: ${p.name}\` on ${head.name}, or ${skipsHint(head, [p.name])}.`,
      }),
    );
  }
  // (b) The head skips (or skipRange-covers) the other earlier z-streams of its X.Y.
  const { major, minor } = head.version;
  const earlier = ga.filter((b) => b !== p && b.version!.major === major && b.version!.minor === minor);
  const uncovered = earlier.filter((b) => !directEdge(head, b));
  if (uncovered.length === 0) return;
  const y = `${major}.${minor}`;
  const headVersion = formatVersion({ ...head.version, build: [] });
  const fix =
    head.skipRange === ''
      ? `add \`skipRange: ">=${y}.0 <${headVersion}"\` to ${head.name}`
      : skipsHint(
          head,
          uncovered.map((b) => b.name),
        );
  out.push(
    finding(view, head, 'G16-ZSTREAM-SHAPE', 'warning', {
      message: `${where(view)}: the head ${head.name} does not skip or skipRange-cover the earlier ${y}.z bundles ${listNames(uncovered.map((b) => b.name))}, so their installs reach it one z-stream at a time.`,
      hint: `Let older ${y}.z installs jump straight to ${head.name}: ${fix}.`,
    }),
  );
}

/** e has a direct edge from p: replaces (possibly through an intermediate like an rc), skips or skipRange. */
function reaches(view: ChannelView, e: ModelBundle, p: ModelBundle): boolean {
  if (directEdge(e, p)) return true;
  const r = view.channel.bundles.get(e.replaces);
  return r?.version !== undefined && compareV1(r, p) >= 0 && compareV1(r, e) < 0;
}

function directEdge(from: ModelBundle, to: ModelBundle): boolean {
  if (from.replaces === to.name || from.skips.includes(to.name)) return true;
  const range = parsedRange(from.skipRange);
  return range !== undefined && to.version !== undefined && range.covers(to.version);
}

// ---------------------------------------------------------------------------------------
// G17: prereleases in the chain

function checkPrereleases(view: ChannelView, out: Diagnostic[]): void {
  const { channel, pkg } = view;
  const versioned = view.entries.filter((b) => b.version && b.blob);
  // (a) A prerelease with an edge from a GA version at or above it: `1.2.0-1` sorts below `1.2.0`.
  for (const e of versioned) {
    if (e.version!.pre.length === 0) continue;
    const targets = [...new Set([e.replaces, ...e.skips])]
      .map((n) => view.byName.get(n))
      .filter((t): t is ModelBundle => t !== undefined && t !== e && isPrereleaseBelowGA(e, t));
    if (targets.length === 0) continue;
    const base = formatVersion({ ...e.version!, pre: [], build: [] });
    out.push(
      finding(view, e, 'G17-PRERELEASE-IN-CHAIN', 'warning', {
        message: `${where(view)}: ${e.name} (${v(e)}) is a prerelease, which sorts below ${listNames(targets.map((t) => `${t.name} (${v(t)})`))} that it replaces or skips: OLM v1 never upgrades to it (a downgrade), while classic OLM does.`,
        hint: `Give ${e.name} a higher version than what it replaces (e.g. the next patch after ${base}, or build metadata like \`${base}+1\` instead of a \`-\` suffix).`,
      }),
    );
  }
  // (b) A GA install whose only higher v1 successors are prereleases: a v1 user with a
  // Masterminds range like ">=1.0.0" (prereleases excluded) is stuck there.
  for (const g of versioned) {
    if (g.version!.pre.length > 0) continue;
    const up = v1Successors(pkg, { name: g.name, version: g.version! }, view.v1Options)
      .map((n) => channel.bundles.get(n))
      .filter((b): b is ModelBundle => b?.version !== undefined && compareV1(b, g) > 0);
    if (up.length === 0 || up.some((b) => b.version!.pre.length === 0)) continue;
    const nextGA = nextHigher(
      versioned.filter((b) => b.version!.pre.length === 0),
      g,
    );
    if (!nextGA) continue; // nothing GA to jump to yet
    out.push(
      finding(view, nextGA, 'G17-PRERELEASE-IN-CHAIN', 'warning', {
        message: `${where(view)}: the only upgrades from ${g.name} (${v(g)}) go through prereleases (${listNames(up.map((b) => b.name))}); an OLM v1 user whose version range excludes prereleases (e.g. ">=${formatVersion({ ...g.version!, build: [] })}") is stuck on it.`,
        hint: `Let GA installs jump over the prerelease: ${skipsHint(nextGA, [g.name])}.`,
      }),
    );
  }
}

/** e is a prerelease and t a GA version at or above e (a `-` suffix used as a revision). */
function isPrereleaseBelowGA(e: ModelBundle, t: ModelBundle): boolean {
  return (
    e.version !== undefined &&
    t.version !== undefined &&
    e.version.pre.length > 0 &&
    t.version.pre.length === 0 &&
    compareV1(t, e) >= 0
  );
}

// ---------------------------------------------------------------------------------------
// G18: the head is deprecated

function checkHeadDeprecated(view: ChannelView, out: Diagnostic[]): void {
  const head = view.head!;
  if (!head.deprecation) return;
  const fresh = v1Chosen(view.pkg, null, view.v1Options);
  out.push(
    finding(view, head, 'G18-HEAD-DEPRECATED', 'warning', {
      message: `${where(view)}: the head ${head.name} is deprecated ("${head.deprecation.message}"). Classic OLM still installs it; OLM v1 skips it while anything else qualifies (a fresh install gets ${fresh ?? 'nothing'}).`,
      hint: `Publish a non-deprecated bundle that replaces ${head.name}, or remove its olm.deprecations entry.`,
    }),
  );
}

// ---------------------------------------------------------------------------------------
// G19: bundles v1 may pick declare dependencies

const DEPENDENCY_TYPES = new Set([PROPERTY_PACKAGE_REQUIRED, PROPERTY_GVK_REQUIRED, PROPERTY_CONSTRAINT]);

function checkDependencies(pkg: ModelPackage, views: ChannelView[], out: Diagnostic[]): void {
  const why = new Map<string, { b: ModelBundle; reasons: string[] }>();
  const note = (view: ChannelView, name: string | null, reason: string) => {
    if (name === null) return;
    const b = view.channel.bundles.get(name);
    if (!b?.blob || !b.properties.some((p) => DEPENDENCY_TYPES.has(p.type))) return;
    const item = why.get(name) ?? { b, reasons: [] };
    if (item.reasons.length < 3) item.reasons.push(reason);
    why.set(name, item);
  };
  // A ClusterExtension without a channel filter installs the package's overall pick.
  const overall = v1Chosen(pkg, null);
  const home = views.find((view) => overall !== null && view.channel.bundles.has(overall));
  if (home) note(home, overall, 'a fresh install without a channel filter');
  for (const view of views) {
    note(view, v1Chosen(pkg, null, view.v1Options), `a fresh install in channel "${view.channel.name}"`);
    for (const [from, to] of view.v1Next) {
      if (to !== null && to !== from) note(view, to, `the upgrade from ${from}`);
    }
  }
  for (const { b, reasons } of why.values()) {
    const props = b.properties.filter((p) => DEPENDENCY_TYPES.has(p.type));
    const first = props[0]!;
    out.push({
      rule: 'G19-DEPENDENCIES-ON-V1-CANDIDATE',
      level: 'warning',
      message: `package "${pkg.name}": ${b.name} declares ${listNames([...new Set(props.map((p) => p.type))])}, and OLM v1 picks it for ${reasons.join(', ')}: operator-controller fails resolution for a bundle with dependencies instead of trying the next one.`,
      ...propertyPos(b.blob!, first),
      package: pkg.name,
      hint: `Remove the ${first.type} property (${describeProperty(first)}) if the operator can run without it and document the dependency instead; while it is there OLM v1 users cannot install or upgrade to ${b.name}.`,
    });
  }
}

function describeProperty(p: Property): string {
  const value = JSON.stringify(p.value) ?? '';
  return value.length > 120 ? `${value.slice(0, 117)}...` : value;
}

// ---------------------------------------------------------------------------------------
// G20: olm.maxOpenShiftVersion

interface Minor {
  major: number;
  minor: number;
}

function parseMinor(s: string): Minor | null {
  const m = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/.exec(s);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
}

/** OCP 4.23 is treated as 5.0 by both OLMs. */
function rankMinor(m: Minor): number {
  return m.major === 4 && m.minor >= 23 ? 5000 + (m.minor - 23) : m.major * 1000 + m.minor;
}

function maxOpenShiftValues(blob: Bundle): { values: { value: unknown; prop?: Property }[]; count: number } {
  const { own, fromCsv } = maxOpenShiftVersions(blob.properties);
  const values =
    own.length > 0 ? own.map((p) => ({ value: p.value, prop: p })) : fromCsv.map((value) => ({ value }));
  return { values, count: Math.max(own.length, fromCsv.length) };
}

function checkMaxOpenShift(
  pkg: ModelPackage,
  views: ChannelView[],
  target: Minor | null,
  out: Diagnostic[],
): void {
  const heads = new Map<Bundle, string[]>();
  for (const view of views) {
    const blob = view.head?.blob;
    if (blob) heads.set(blob, [...(heads.get(blob) ?? []), view.channel.name]);
  }
  const seen = new Set<Bundle>();
  for (const view of views) {
    for (const b of view.entries) {
      const blob = b.blob;
      if (!blob || seen.has(blob)) continue;
      seen.add(blob);
      const { values, count } = maxOpenShiftValues(blob);
      if (count === 0) continue;
      const pos = propertyPos(blob, values[0]?.prop);
      const problems: string[] = [];
      if (count > 1)
        problems.push(`it declares olm.maxOpenShiftVersion ${count} times (OLM accepts at most one)`);
      let parsed: Minor | null = null;
      for (const { value } of values) {
        if (typeof value !== 'string') {
          problems.push(
            `the value ${JSON.stringify(value)} is not a string (YAML reads 4.10 as the number 4.1; quote it: "4.10")`,
          );
          continue;
        }
        const trimmed = value.replace(/^"|"$/g, '');
        const minor = parseMinor(trimmed);
        if (!minor) {
          problems.push(
            `the value "${value}" is not "<major>.<minor>" (no \`v\`, no patch, exactly one dot)`,
          );
        } else parsed ??= minor;
      }
      const headOf = heads.get(blob);
      if (target && parsed && headOf && rankMinor(parsed) <= rankMinor(target)) {
        problems.push(
          `it is the head of ${headOf.map((c) => `"${c}"`).join(', ')} with max ${parsed.major}.${parsed.minor}, at or below the OpenShift ${target.major}.${target.minor} this catalog serves: clusters running it cannot upgrade OpenShift (Upgradeable=False)`,
        );
      }
      if (problems.length === 0) continue;
      out.push({
        rule: 'G20-MAX-OPENSHIFT-VERSION',
        level: 'warning',
        message: `package "${pkg.name}", bundle ${b.name}: ${problems.join('; ')}.`,
        ...pos,
        package: pkg.name,
        hint:
          headOf && target && parsed && rankMinor(parsed) <= rankMinor(target)
            ? `Publish a head without olm.maxOpenShiftVersion (or with a higher one, e.g. "${target.major}.${target.minor + 1}"), or drop ${b.name} from this catalog's channels.`
            : 'Declare it once, as a quoted string like `value: "4.18"`.',
      });
    }
  }
}

// ---------------------------------------------------------------------------------------
// Shared helpers

/** VersionRelease order as OLM v1 uses it: semver precedence, then a legacy release in build metadata. */
function compareV1(a: ModelBundle, b: ModelBundle): number {
  const va = a.version!;
  const vb = b.version!;
  return compareVersions(va, vb) || compareRelease(legacyRelease(va), legacyRelease(vb));
}

function legacyRelease(version: Version): PrereleasePart[] {
  if (version.build.length === 0) return [];
  const parsed = parseRelease(version.build.join('.'));
  return parsed.ok ? parsed.release : [];
}

function compareRelease(a: PrereleasePart[], b: PrereleasePart[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(a.length - b.length);
  const zero = { major: 0n, minor: 0n, patch: 0n, build: [] };
  return compareVersions({ ...zero, pre: a }, { ...zero, pre: b });
}

const ranges = new Map<string, VersionRange | undefined>();

function parsedRange(skipRange: string): VersionRange | undefined {
  if (skipRange === '') return undefined;
  if (!ranges.has(skipRange)) {
    if (ranges.size > 10_000) ranges.clear();
    const parsed = tryParseRange(skipRange);
    ranges.set(skipRange, parsed.ok ? parsed.range : undefined);
  }
  return ranges.get(skipRange);
}

function v(b: ModelBundle): string {
  return b.version ? formatVersion(b.version) : 'no version';
}

function where(view: ChannelView): string {
  return `package "${view.pkg.name}", channel "${view.channel.name}"`;
}

function listNames(names: string[]): string {
  if (names.length <= 5) return names.join(', ');
  return `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The channel entry's file and line; the channel blob when the entry has no line. */
function entryPos(channel: ModelChannel, b: ModelBundle | undefined): { file?: string; line?: number } {
  const file = channel.pos?.file ?? b?.blob?.pos.file;
  const line = b?.entry.line ?? channel.pos?.line ?? b?.blob?.pos.line;
  return { ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}) };
}

/** A bundle property's line (the blob's when the property has none). */
function propertyPos(blob: Bundle, prop: Property | undefined): { file: string; line: number } {
  return { file: blob.pos.file, line: prop?.line ?? blob.pos.line };
}

function finding(
  view: ChannelView,
  b: ModelBundle | undefined,
  rule: string,
  level: Level,
  text: { message: string; hint: string },
): Diagnostic {
  return {
    rule,
    level,
    message: text.message,
    ...entryPos(view.channel, b),
    package: view.pkg.name,
    hint: text.hint,
  };
}
