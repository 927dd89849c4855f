// One channel's upgrade graph as an inline SVG, laid out by dagre on the server (docs/site.md):
// the page needs no script to show it. The element's data attributes are a contract
// (docs/site.md "What other tools may rely on"): one `data-bundle` node per channel entry, one
// `data-from`/`data-to`/`data-kind` edge per replaces, skips and skipRange edge among the
// entries, `from` being the entry that declares it.
import dagre from '@dagrejs/dagre';
import { classicPath } from '../catalog/olm/classic.js';
import type { ModelChannel } from '../catalog/fbc/model.js';
import { tryParseRange } from '../catalog/versions/range.js';
import { compareVersions, formatVersion } from '../catalog/versions/semver.js';
import { attr, text } from './html.js';

export type EdgeKind = 'replaces' | 'skips' | 'skipRange' | 'v1';

export interface ChannelEdge {
  /** The entry that declares the edge (the newer bundle). */
  from: string;
  /** The entry it replaces, skips or whose version its skipRange holds. */
  to: string;
  kind: EdgeKind;
}

/**
 * Every edge among the channel's entries: `replaces` and `skips` naming an entry, and a
 * skipRange edge to every other entry whose version the range holds. Edges to bundles the
 * channel does not list have no node to end at; `missingTargets` lists them. Undefined when
 * there are more than `limit`.
 */
export function channelEdges(channel: ModelChannel, limit = Infinity): ChannelEdge[] | undefined {
  const out: ChannelEdge[] = [];
  const seen = new Set<string>();
  const add = (e: ChannelEdge): void => {
    const key = `${e.kind}\0${e.from}\0${e.to}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(e);
  };
  for (const b of channel.bundles.values()) {
    if (b.replaces && channel.bundles.has(b.replaces))
      add({ from: b.name, to: b.replaces, kind: 'replaces' });
    for (const s of b.skips) if (channel.bundles.has(s)) add({ from: b.name, to: s, kind: 'skips' });
    const range = b.skipRange ? tryParseRange(b.skipRange) : undefined;
    if (!range?.ok) continue;
    for (const n of channel.bundles.values())
      if (n.name !== b.name && n.version && range.range.covers(n.version))
        add({ from: b.name, to: n.name, kind: 'skipRange' });
    // skipRanges holding every older entry grow with the square of the channel: stop early.
    if (out.length > limit) return undefined;
  }
  return out;
}

/** `replaces` and `skips` that name a bundle the channel does not list (normal in real catalogs). */
export function missingTargets(channel: ModelChannel): ChannelEdge[] {
  const out: ChannelEdge[] = [];
  for (const b of channel.bundles.values()) {
    if (b.replaces && !channel.bundles.has(b.replaces))
      out.push({ from: b.name, to: b.replaces, kind: 'replaces' });
    for (const s of b.skips) if (!channel.bundles.has(s)) out.push({ from: b.name, to: s, kind: 'skips' });
  }
  return out;
}

/**
 * OLM v1's upgrade edges in one channel (docs/olm-upgrades.md "OLM v1"): for every entry
 * with a version, the bundle operator-controller would move a cluster running it to, with
 * the ClusterExtension's channels set to this one channel and no version range
 * (src/catalog/olm/v1.ts v1Chosen, already computed as the graph's `v1Chosen`). `from` is the
 * bundle chosen, `to` the installed entry, as for the classic edges. Chosen bundles outside
 * the channel cannot be (the channel filter keeps to it).
 */
export function v1Edges(
  channel: ModelChannel,
  chosen: Record<string, { v1Chosen: string | null }>,
): ChannelEdge[] {
  const out: ChannelEdge[] = [];
  for (const b of channel.bundles.values()) {
    const next = chosen[b.name]?.v1Chosen;
    if (next && next !== b.name && channel.bundles.has(next))
      out.push({ from: next, to: b.name, kind: 'v1' });
  }
  return out;
}

/**
 * Entries from which classic OLM never reaches the channel's head (docs/olm-upgrades.md):
 * clusters running them stay there. Empty when the channel has no single head.
 */
export function strandedEntries(channel: ModelChannel, head: string | null): Set<string> {
  const out = new Set<string>();
  if (head === null) return out;
  for (const b of channel.bundles.values()) {
    if (b.name === head) continue;
    const path = classicPath(channel, { name: b.name, ...(b.version ? { version: b.version } : {}) });
    if (!path.includes(head)) out.add(b.name);
  }
  return out;
}

export interface NodeMarks {
  head: string | null;
  stranded: Set<string>;
  deprecated: Set<string>;
}

const NODE_HEIGHT = 40;
const CHAR_WIDTH = 7.8;
const MARGIN = 12;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const round = (n: number): string => String(Math.round(n * 10) / 10);

/**
 * The SVG of the graph. dagre ranks the entries by the replaces and skips edges and, for each
 * skipRange, the newest version it holds (every skipRange edge would make wide ranges of
 * quadratic size); the other skipRange edges are drawn as curves between the laid-out nodes.
 * Arrows point the way clusters upgrade: from the older entry to the one that declares the edge.
 */
export function channelSvg(
  channel: ModelChannel,
  edges: ChannelEdge[],
  marks: NodeMarks,
  ids: { title: string; desc: string; arrow: string },
  labels: { title: string; desc: string },
  /**
   * `v1`: the OLM v1 drawing, its nodes and edges carrying `data-v1-bundle`, `data-v1-from`
   * and `data-v1-to`, so the classic graph's markup (the design's contract) stays the only
   * `data-bundle`/`data-from` of a channel.
   */
  drawing: 'classic' | 'v1' = 'classic',
): string {
  const data = drawing === 'v1' ? 'data-v1-' : 'data-';
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 48, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  const names = [...channel.bundles.keys()];
  const index = new Map(names.map((n, i) => [n, `n${i}`]));
  for (const b of channel.bundles.values()) {
    const version = b.version ? formatVersion(b.version) : '';
    const width = Math.max(b.name.length, version.length) * CHAR_WIDTH + 16;
    g.setNode(index.get(b.name)!, { width, height: NODE_HEIGHT });
  }
  const laidOut = new Set<ChannelEdge>();
  const newestCovered = new Map<string, ChannelEdge>();
  for (const e of edges) {
    if (e.kind !== 'skipRange') {
      laidOut.add(e);
      continue;
    }
    const best = newestCovered.get(e.from);
    const v = channel.bundles.get(e.to)!.version!;
    if (!best || compareVersions(v, channel.bundles.get(best.to)!.version!) > 0) newestCovered.set(e.from, e);
  }
  for (const e of newestCovered.values()) laidOut.add(e);
  edges.forEach((e, i) => {
    if (laidOut.has(e)) g.setEdge(index.get(e.to)!, index.get(e.from)!, {}, `e${i}`);
  });
  dagre.layout(g);
  const box = (name: string): Box => g.node(index.get(name)!) as unknown as Box;
  const width = (g.graph().width ?? 0) + 2;
  const height = (g.graph().height ?? 0) + 2;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="${attr(ids.title)} ${attr(ids.desc)}" width="${round(width)}" height="${round(height)}" viewBox="0 0 ${round(width)} ${round(height)}">`,
    `<title id="${attr(ids.title)}">${text(labels.title)}</title>`,
    `<desc id="${attr(ids.desc)}">${text(labels.desc)}</desc>`,
    `<defs><marker id="${attr(ids.arrow)}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#424a53"/></marker></defs>`,
  );
  edges.forEach((e, i) => {
    let d: string;
    if (laidOut.has(e)) {
      const points = g.edge(index.get(e.to)!, index.get(e.from)!, `e${i}`).points ?? [];
      d = points
        .map((p: { x: number; y: number }, j: number) => `${j === 0 ? 'M' : 'L'}${round(p.x)},${round(p.y)}`)
        .join(' ');
    } else {
      // Older entry's right side to newer entry's left side, bowed so parallel ones stay apart.
      const a = box(e.to);
      const b = box(e.from);
      const x1 = a.x + a.width / 2;
      const y1 = a.y;
      const x2 = b.x - b.width / 2;
      const y2 = b.y;
      const bow = Math.min(60, Math.abs(x2 - x1) / 4 + 10);
      d = `M${round(x1)},${round(y1)} Q${round((x1 + x2) / 2)},${round(Math.min(y1, y2) - bow)} ${round(x2)},${round(y2)}`;
    }
    parts.push(
      `<g class="edge ${e.kind}" ${data}from="${attr(e.from)}" ${data}to="${attr(e.to)}" data-kind="${e.kind}"><path d="${d}" marker-end="url(#${attr(ids.arrow)})"/></g>`,
    );
  });
  for (const b of channel.bundles.values()) {
    const n = box(b.name);
    const cls = [
      'node',
      ...(b.name === marks.head ? ['head'] : []),
      ...(marks.stranded.has(b.name) ? ['stranded'] : []),
      ...(marks.deprecated.has(b.name) ? ['deprecated'] : []),
    ].join(' ');
    const version = b.version ? formatVersion(b.version) : 'no version';
    parts.push(
      `<g class="${cls}" ${data}bundle="${attr(b.name)}" transform="translate(${round(n.x - n.width / 2)},${round(n.y - n.height / 2)})">` +
        `<rect width="${round(n.width)}" height="${round(n.height)}" rx="5"/>` +
        `<text x="8" y="16">${text(b.name)}</text><text x="8" y="32">${text(version)}</text></g>`,
    );
  }
  parts.push('</svg>');
  return parts.join('\n');
}
