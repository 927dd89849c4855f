// One changed channel of a pull request's impact as an inline SVG (docs/site.md, "The
// pull-request impact page"): the bundles and edges the change adds or removes, laid out by
// dagre on the server, so the page needs no script. The same data as the status comment's
// Mermaid graph (src/catalog/olm/impact-report.ts mermaidChannel), drawn without Mermaid.
import dagre from '@dagrejs/dagre';
import type { ChannelImpact, Edge } from '../catalog/olm/impact.js';
import { attr, text } from './html.js';

/** More than this is listed, not drawn (docs/security.md, bounded work). */
export const MAX_IMPACT_DRAWN = 2000;

const NODE_HEIGHT = 30;
const CHAR_WIDTH = 7.8;
const MARGIN = 12;
const round = (n: number): string => String(Math.round(n * 10) / 10);

/** The names the drawing shows: every end of a changed edge and every bundle added or removed. */
export function impactNodes(c: ChannelImpact): string[] {
  const out = new Set<string>();
  for (const e of [...c.edgesAdded, ...c.edgesRemoved]) out.add(e.from).add(e.to);
  for (const b of [...c.bundlesAdded, ...c.bundlesRemoved]) out.add(b);
  return [...out];
}

/**
 * The SVG, or undefined when there is nothing to draw or too much. Each edge carries
 * `data-from`, `data-to`, `data-kind` (replaces, skips) and `data-change` (added, removed);
 * each box `data-bundle` and, for a bundle the change adds or removes, `data-change`.
 */
export function impactSvg(
  c: ChannelImpact,
  ids: { title: string; desc: string; arrow: string },
  labels: { title: string; desc: string },
): string | undefined {
  const names = impactNodes(c);
  const edges: (Edge & { change: 'added' | 'removed' })[] = [
    ...c.edgesAdded.map((e) => ({ ...e, change: 'added' as const })),
    ...c.edgesRemoved.map((e) => ({ ...e, change: 'removed' as const })),
  ];
  if (names.length === 0 || names.length + edges.length > MAX_IMPACT_DRAWN) return undefined;
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 48, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  const index = new Map(names.map((n, i) => [n, `n${i}`]));
  for (const n of names) g.setNode(index.get(n)!, { width: n.length * CHAR_WIDTH + 16, height: NODE_HEIGHT });
  // Arrows point the way clusters upgrade: from the older bundle to the one that declares the edge.
  edges.forEach((e, i) => g.setEdge(index.get(e.to)!, index.get(e.from)!, {}, `e${i}`));
  dagre.layout(g);
  const width = (g.graph().width ?? 0) + 2;
  const height = (g.graph().height ?? 0) + 2;
  const added = new Set(c.bundlesAdded);
  const removed = new Set(c.bundlesRemoved);
  const stranded = new Set(c.stranded);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="${attr(ids.title)} ${attr(ids.desc)}" width="${round(width)}" height="${round(height)}" viewBox="0 0 ${round(width)} ${round(height)}">`,
    `<title id="${attr(ids.title)}">${text(labels.title)}</title>`,
    `<desc id="${attr(ids.desc)}">${text(labels.desc)}</desc>`,
    `<defs><marker id="${attr(ids.arrow)}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#424a53"/></marker></defs>`,
  ];
  edges.forEach((e, i) => {
    const points = g.edge(index.get(e.to)!, index.get(e.from)!, `e${i}`).points ?? [];
    const d = points
      .map((p: { x: number; y: number }, j: number) => `${j === 0 ? 'M' : 'L'}${round(p.x)},${round(p.y)}`)
      .join(' ');
    parts.push(
      `<g class="edge ${e.kind} ${e.change}" data-from="${attr(e.from)}" data-to="${attr(e.to)}" data-kind="${e.kind}" data-change="${e.change}"><path d="${d}" marker-end="url(#${attr(ids.arrow)})"/></g>`,
    );
  });
  for (const name of names) {
    const n = g.node(index.get(name)!) as unknown as { x: number; y: number; width: number; height: number };
    const change = added.has(name) ? 'added' : removed.has(name) ? 'removed' : undefined;
    const cls = [
      'node',
      ...(change ? [change] : []),
      ...(name === c.headNew ? ['head'] : []),
      ...(stranded.has(name) ? ['stranded'] : []),
    ].join(' ');
    parts.push(
      `<g class="${cls}" data-bundle="${attr(name)}"${change ? ` data-change="${change}"` : ''} transform="translate(${round(n.x - n.width / 2)},${round(n.y - n.height / 2)})">` +
        `<rect width="${round(n.width)}" height="${round(n.height)}" rx="5"/>` +
        `<text x="8" y="19">${text(name)}</text></g>`,
    );
  }
  parts.push('</svg>');
  return parts.join('\n');
}
