// What a change to a catalog means for the clusters it serves (docs/impact.md): per package
// and channel, bundles and edges gained and lost, heads and default channel before and
// after, and which installed versions lose (or gain) their way to the head under classic
// OLM. Pure: two validated models in, only what changed out.
import { classicChannel, classicPath } from './classic.js';
import type { Model, ModelBundle, ModelChannel, ModelPackage } from '../fbc/model.js';
import { sortedJson } from '../fbc/load.js';
import { goStringCompare } from '../go/gostrings.js';

export type ImpactStatus = 'added' | 'removed' | 'changed';

export interface Edge {
  from: string;
  to: string;
  kind: 'replaces' | 'skips';
}

export interface ChannelImpact {
  status: ImpactStatus;
  headOld: string | null;
  headNew: string | null;
  bundlesAdded: string[];
  bundlesRemoved: string[];
  edgesAdded: Edge[];
  edgesRemoved: Edge[];
  skipRangeChanged: { bundle: string; old: string | null; new: string | null }[];
  stranded: string[];
  newlyReachable: string[];
}

export interface PackageImpact {
  status: ImpactStatus;
  /** null when unchanged. */
  defaultChannel: { old: string | null; new: string | null } | null;
  channels: Record<string, ChannelImpact>;
  bundlesChanged?: string[];
  deprecations?: { added: string[]; removed: string[] };
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort(goStringCompare);
const edgeKey = (e: Edge): string => JSON.stringify([e.from, e.to, e.kind]);
const byEdge = (a: Edge, b: Edge): number =>
  goStringCompare(a.from, b.from) || goStringCompare(a.to, b.to) || goStringCompare(a.kind, b.kind);

/** The one entry no other entry replaces or skips; null when there is not exactly one. */
export function channelHead(channel: ModelChannel | undefined): string | null {
  if (!channel) return null;
  const heads = classicChannel(channel).heads;
  return heads.length === 1 ? heads[0]! : null;
}

function edgesOf(channel: ModelChannel | undefined): Map<string, Edge> {
  const out = new Map<string, Edge>();
  for (const b of channel?.bundles.values() ?? []) {
    const add = (e: Edge): void => void out.set(edgeKey(e), e);
    if (b.replaces) add({ from: b.name, to: b.replaces, kind: 'replaces' });
    for (const s of b.skips) add({ from: b.name, to: s, kind: 'skips' });
  }
  return out;
}

/** Whether classic OLM takes a cluster running `b` to `head` in `channel` (being the head counts). */
function reachesHead(channel: ModelChannel | undefined, head: string | null, b: ModelBundle): boolean {
  if (!channel || head === null) return false;
  if (b.name === head) return true;
  return classicPath(channel, { name: b.name, ...(b.version ? { version: b.version } : {}) }).includes(head);
}

export function channelImpact(
  before: ModelChannel | undefined,
  after: ModelChannel | undefined,
): ChannelImpact | undefined {
  const oldNames = new Set(before?.bundles.keys() ?? []);
  const newNames = new Set(after?.bundles.keys() ?? []);
  const oldEdges = edgesOf(before);
  const newEdges = edgesOf(after);
  const skipRangeChanged: ChannelImpact['skipRangeChanged'] = [];
  for (const name of sorted(oldNames)) {
    const a = before!.bundles.get(name)!;
    const b = after?.bundles.get(name);
    if (b && a.skipRange !== b.skipRange)
      skipRangeChanged.push({ bundle: name, old: a.skipRange || null, new: b.skipRange || null });
  }
  const bundlesAdded = sorted([...newNames].filter((n) => !oldNames.has(n)));
  const bundlesRemoved = sorted([...oldNames].filter((n) => !newNames.has(n)));
  const edgesAdded = [...newEdges.values()].filter((e) => !oldEdges.has(edgeKey(e))).sort(byEdge);
  const edgesRemoved = [...oldEdges.values()].filter((e) => !newEdges.has(edgeKey(e))).sort(byEdge);
  if (
    before &&
    after &&
    bundlesAdded.length +
      bundlesRemoved.length +
      edgesAdded.length +
      edgesRemoved.length +
      skipRangeChanged.length ===
      0
  )
    return undefined;
  const headOld = channelHead(before);
  const headNew = channelHead(after);
  const stranded: string[] = [];
  const newlyReachable: string[] = [];
  for (const b of before?.bundles.values() ?? []) {
    const had = reachesHead(before, headOld, b);
    const has = reachesHead(after, headNew, b);
    if (!after || (had && !has)) stranded.push(b.name);
    else if (!had && has) newlyReachable.push(b.name);
  }
  return {
    status: !before ? 'added' : !after ? 'removed' : 'changed',
    headOld,
    headNew,
    bundlesAdded,
    bundlesRemoved,
    edgesAdded,
    edgesRemoved,
    skipRangeChanged,
    stranded: sorted(stranded),
    newlyReachable: sorted(newlyReachable),
  };
}

/** A bundle as clusters get it, graph aside: image, properties, related images. */
function bundleContent(pkg: ModelPackage | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const ch of pkg?.channels.values() ?? [])
    for (const b of ch.bundles.values())
      if (!out.has(b.name))
        out.set(
          b.name,
          sortedJson({
            image: b.image,
            properties: b.properties.map((p) => ({ type: p.type, value: p.value })),
            relatedImages: b.relatedImages.map((r) => ({ name: r.name, image: r.image })),
          }),
        );
  return out;
}

function deprecationsOf(pkg: ModelPackage | undefined): Set<string> {
  const out = new Set<string>();
  if (!pkg) return out;
  if (pkg.deprecation) out.add(`package:${pkg.name}`);
  for (const ch of pkg.channels.values()) {
    if (ch.deprecation) out.add(`channel:${ch.name}`);
    for (const b of ch.bundles.values()) if (b.deprecation) out.add(`bundle:${b.name}`);
  }
  return out;
}

export function packageImpact(
  before: ModelPackage | undefined,
  after: ModelPackage | undefined,
): PackageImpact | undefined {
  const channels: Record<string, ChannelImpact> = {};
  const names = sorted(new Set([...(before?.channels.keys() ?? []), ...(after?.channels.keys() ?? [])]));
  for (const name of names) {
    const c = channelImpact(before?.channels.get(name), after?.channels.get(name));
    if (c) channels[name] = c;
  }
  const oldDefault = before?.defaultChannel?.name ?? null;
  const newDefault = after?.defaultChannel?.name ?? null;
  const defaultChannel = oldDefault === newDefault ? null : { old: oldDefault, new: newDefault };
  const oldContent = bundleContent(before);
  const newContent = bundleContent(after);
  const bundlesChanged = sorted(
    [...oldContent].filter(([n, c]) => newContent.has(n) && newContent.get(n) !== c).map(([n]) => n),
  );
  const oldDep = deprecationsOf(before);
  const newDep = deprecationsOf(after);
  const added = sorted([...newDep].filter((d) => !oldDep.has(d)));
  const removed = sorted([...oldDep].filter((d) => !newDep.has(d)));
  if (
    before &&
    after &&
    Object.keys(channels).length === 0 &&
    defaultChannel === null &&
    bundlesChanged.length === 0 &&
    added.length + removed.length === 0
  )
    return undefined;
  return {
    status: !before ? 'added' : !after ? 'removed' : 'changed',
    defaultChannel,
    channels,
    ...(bundlesChanged.length > 0 ? { bundlesChanged } : {}),
    ...(added.length + removed.length > 0 ? { deprecations: { added, removed } } : {}),
  };
}

/**
 * Every package of two models that changed, by name. `only`: the packages known to differ
 * (the checks' change detection), so the others are not compared again.
 */
export function catalogImpact(
  before: Model,
  after: Model,
  only?: Iterable<string>,
): Record<string, PackageImpact> {
  const out: Record<string, PackageImpact> = {};
  for (const name of sorted(only ?? new Set([...before.keys(), ...after.keys()]))) {
    const p = packageImpact(before.get(name), after.get(name));
    if (p) out[name] = p;
  }
  return out;
}
