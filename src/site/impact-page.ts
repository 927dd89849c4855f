// The pull-request impact page the App serves (docs/site.md, "The pull-request impact
// page"): the whole impact of a head, as the pull-request checks computed it (the data of the
// status comment's impact section, never summarised), with one SVG per changed channel.
// Pure: the stored impact in, HTML out. Every name comes from the pull request's files: it
// reaches the page only through text() and attr().
import type { ChannelImpact, PackageImpact } from '../catalog/olm/impact.js';
import { groupRoots, type CatalogsImpact } from '../catalog/olm/impact-report.js';
import { impactSvg } from './impact-graph.js';
import { INDEX } from './pages.js';
import { attr, page, text } from './html.js';

export interface ImpactPageInput {
  number: number;
  /** The head the impact was computed for. */
  head: string;
  /** The merge base it was compared with. */
  base: string;
  catalogs: CatalogsImpact;
}

/** The page's site path (under /catalog-bot/pages/<owner>/<repo>/). */
export const impactPath = (number: number, head: string): string => `pull/${number}/${head}`;

const code = (s: string): string => `<code>${text(s)}</code>`;
const codes = (xs: string[]): string => xs.map(code).join(', ');
const orNone = (s: string | null): string => (s === null ? '(none)' : code(s));

function channelSection(name: string, c: ChannelImpact, id: string): string {
  const rows: [string, string][] = [['head', `${orNone(c.headOld)} → ${orNone(c.headNew)}`]];
  if (c.bundlesAdded.length) rows.push(['bundles added', codes(c.bundlesAdded)]);
  if (c.bundlesRemoved.length) rows.push(['bundles removed', codes(c.bundlesRemoved)]);
  for (const e of c.edgesAdded) rows.push(['edge added', `${code(e.from)} ${e.kind} ${code(e.to)}`]);
  for (const e of c.edgesRemoved) rows.push(['edge removed', `${code(e.from)} ${e.kind} ${code(e.to)}`]);
  for (const s of c.skipRangeChanged)
    rows.push([`skipRange of ${code(s.bundle)}`, `${orNone(s.old)} → ${orNone(s.new)}`]);
  if (c.stranded.length)
    rows.push(['<strong>stranded</strong> (lose their way to the head)', codes(c.stranded)]);
  if (c.newlyReachable.length) rows.push(['newly reach the head', codes(c.newlyReachable)]);
  const svg = impactSvg(
    c,
    { title: `${id}-title`, desc: `${id}-desc`, arrow: `${id}-arrow` },
    {
      title: `What the change does to channel ${name}`,
      desc: `${c.bundlesAdded.length} bundles added, ${c.bundlesRemoved.length} removed, ${c.edgesAdded.length} edges added, ${c.edgesRemoved.length} removed. The same as text follows.`,
    },
  );
  return `<section data-impact-channel="${attr(name)}" aria-labelledby="${id}">
<h4 id="${id}">Channel ${text(name)} (${c.status})</h4>
${
  svg
    ? `<div class="graph" tabindex="0" role="group" aria-label="${attr(`Change to channel ${name}, scrollable`)}">
${svg}
</div>
<p class="legend">Arrows point the way clusters upgrade. Thick green: edge added; thin dotted red: edge removed (each edge's kind is in the table below). Green box: bundle added; dashed red box: bundle removed; red: stranded.</p>`
    : ''
}
<div class="table-wrap"><table><caption>Channel ${text(name)}: what changes</caption><tbody>${rows.map(([k, v]) => `<tr><th scope="row">${k}</th><td>${v}</td></tr>`).join('')}</tbody></table></div>
</section>`;
}

function packageSection(name: string, p: PackageImpact, prefix: string): string {
  const facts = [
    p.defaultChannel
      ? `<li>default channel ${orNone(p.defaultChannel.old)} → ${orNone(p.defaultChannel.new)}</li>`
      : '',
    p.bundlesChanged?.length
      ? `<li>bundles changed (image, properties or related images): ${codes(p.bundlesChanged)}</li>`
      : '',
    p.deprecations?.added.length ? `<li>deprecated: ${codes(p.deprecations.added)}</li>` : '',
    p.deprecations?.removed.length ? `<li>no longer deprecated: ${codes(p.deprecations.removed)}</li>` : '',
  ].join('');
  const channels = Object.entries(p.channels).map(([ch, c], i) => channelSection(ch, c, `${prefix}c${i}`));
  return `<h3>Package ${text(name)} (${p.status})</h3>
${facts ? `<ul>${facts}</ul>` : ''}
${channels.join('\n')}`;
}

export function impactPage(input: ImpactPageInput): string {
  const path = impactPath(input.number, input.head);
  const groups = groupRoots(input.catalogs);
  const body = groups.map((g, gi) => {
    const packages = Object.entries(g.impact.packages).map(([name, p], pi) =>
      packageSection(name, p, `g${gi}p${pi}`),
    );
    return `<h2>${text(g.label)}</h2>
${g.roots.length > 1 ? `<p>The same change in ${g.roots.length} catalogs: ${codes(g.roots)}.</p>` : ''}
${packages.join('\n')}`;
  });
  return page({
    path,
    title: `Pull request #${input.number}: impact`,
    breadcrumbs: [
      ['Catalogs', INDEX],
      [`Pull request #${input.number}`, path],
    ],
    writer: 'catalog-bot',
    body: `<h1>Pull request #${input.number}: what clusters will see after the merge</h1>
<p>At head ${code(input.head)}, compared with the merge base ${code(input.base)}. The whole impact, as the pull request's checks computed it; the status comment may show a summary.</p>
${groups.length === 0 ? '<p>No change that clusters would see.</p>' : body.join('\n')}`,
  });
}
