// The pages of the static catalog site (docs/site.md), each a pure function of the validated
// catalog: the index with search, a catalog, a package with its channels' upgrade graphs, a
// bundle, and the package x OpenShift-version matrix.
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { Package } from '../catalog/fbc/declcfg.js';
import type { Model, ModelBundle, ModelChannel, ModelPackage } from '../catalog/fbc/model.js';
import { channelGraph } from '../catalog/olm/graph.js';
import { dependencyIndex, formatGvk, matches, type CatalogBundle } from '../catalog/olm/dependencies.js';
import { formatVersion } from '../catalog/versions/semver.js';
import { parseProperties, PROPERTY_GVK } from '../catalog/property.js';
import type { OcpMatrix } from '../checks/ocp-continuity.js';
import {
  channelEdges,
  channelSvg,
  missingTargets,
  strandedEntries,
  v1Edges,
  type ChannelEdge,
} from './graph.js';
import { anchor, attr, page, pathSegment, text } from './html.js';

/** One catalog root as the site shows it. */
export interface SiteCatalog {
  /** The root's directory name, like `v4.21`. */
  name: string;
  valid: boolean;
  diagnostics: Diagnostic[];
  /** Findings the loader counted but did not keep. */
  omitted?: { total: number; errors: number };
  model: Model;
  /** The olm.package blobs, for icons. */
  packages: readonly Package[];
}

export const INDEX = 'index.html';
export const MATRIX = 'matrix.html';
// A root named like one of the site's own top-level files gets the hex form (see pathSegment).
const TOP_LEVEL = new Set(['assets', INDEX, MATRIX]);
export const rootSegment = (c: string): string =>
  TOP_LEVEL.has(c) ? `_${Buffer.from(c, 'utf8').toString('hex')}` : pathSegment(c);
export const catalogPath = (c: string): string => `${rootSegment(c)}/index.html`;
export const packagePath = (c: string, p: string): string => `${rootSegment(c)}/${pathSegment(p)}/index.html`;
export const bundlePath = (c: string, p: string, b: string): string =>
  `${rootSegment(c)}/${pathSegment(p)}/bundles/${pathSegment(b)}.html`;

const MAX_LISTED_FINDINGS = 200;
// The largest real channel (v4.21) has 30 entries and 282 edges; a contributor's channel of
// thousands of entries whose skipRanges hold every older one must not make pages of millions
// of edges (docs/security.md, bounded work): it is listed, not drawn.
const MAX_DRAWN_ENTRIES = 1000;
const MAX_DRAWN_EDGES = 5000;
const code = (s: string): string => `<code>${text(s)}</code>`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function bundleVersion(b: { version?: ModelBundle['version'] }): string {
  return b.version ? formatVersion(b.version) : 'no version';
}

/** The distinct bundles of a package (a bundle sits in several channels), by name. */
function packageBundles(pkg: ModelPackage): Map<string, ModelBundle[]> {
  const out = new Map<string, ModelBundle[]>();
  for (const ch of pkg.channels.values())
    for (const b of ch.bundles.values()) out.set(b.name, [...(out.get(b.name) ?? []), b]);
  return new Map([...out].sort(([a], [b]) => byName(a, b)));
}

/** Default channel first, then by name. */
function orderedChannels(pkg: ModelPackage): ModelChannel[] {
  return [...pkg.channels.values()].sort(
    (a, b) =>
      Number(b.name === pkg.defaultChannel?.name) - Number(a.name === pkg.defaultChannel?.name) ||
      byName(a.name, b.name),
  );
}

function findingsList(diagnostics: Diagnostic[]): string {
  const shown = diagnostics.slice(0, MAX_LISTED_FINDINGS);
  const items = shown.map(
    (d) =>
      `<li><strong>${text(d.level)}</strong> ${code(d.rule)} ${d.file ? `${code(`${d.file}${d.line ? `:${d.line}` : ''}`)}: ` : ''}${text(d.message)}</li>`,
  );
  const more =
    diagnostics.length > shown.length ? `<p>and ${diagnostics.length - shown.length} more.</p>` : '';
  return `<ul>${items.join('')}</ul>${more}`;
}

/** Said on every page of a catalog that fails validation. */
function invalidBanner(catalog: SiteCatalog, own: Diagnostic[] | undefined, from: string): string {
  if (catalog.valid) return '';
  const errors =
    catalog.diagnostics.filter((d) => d.level === 'error').length + (catalog.omitted?.errors ?? 0);
  const mine = own && own.length > 0 ? `<p>Findings about this package:</p>${findingsList(own)}` : '';
  return `<div class="banner" role="note"><p><strong>This catalog fails validation</strong> (${plural(errors, 'error')}): classic OLM cannot serve it until it is fixed; the pages show what could be read. ${anchor(from, catalogPath(catalog.name), 'All findings')}.</p>${mine}</div>`;
}

export function indexPage(catalogs: SiteCatalog[], matrix: boolean): string {
  const path = INDEX;
  const rows = catalogs.map((c) => {
    const bundles = [...c.model.values()].reduce((n, p) => n + packageBundles(p).size, 0);
    return `<tr><th scope="row">${anchor(path, catalogPath(c.name), c.name)}</th><td>${c.model.size}</td><td>${bundles}</td><td>${c.valid ? 'valid' : '<strong>fails validation</strong>'}</td></tr>`;
  });
  const items = catalogs.flatMap((c) =>
    [...c.model.values()]
      .sort((a, b) => byName(a.name, b.name))
      .map(
        (p) =>
          `<li data-search="${attr(`${p.name} ${c.name}`.toLowerCase())}">${anchor(path, packagePath(c.name, p.name), p.name)} <span class="legend">${text(c.name)}</span></li>`,
      ),
  );
  return page({
    path,
    title: 'Catalogs',
    breadcrumbs: [['Catalogs', path]],
    search: true,
    body: `<h1>Catalogs</h1>
<div class="table-wrap"><table><caption>Catalog roots</caption><thead><tr><th scope="col">catalog</th><th scope="col">packages</th><th scope="col">bundles</th><th scope="col">validation</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>
${matrix ? `<p>${anchor(path, MATRIX, 'Packages by OpenShift version')}: the head of each package's default channel in every catalog.</p>` : ''}
<h2 id="packages">Packages</h2>
<div class="search" id="search" role="search" hidden><label for="search-input">Find a package</label> <input id="search-input" type="search" autocomplete="off"> <span id="search-status" role="status"></span></div>
<ul class="packages" aria-labelledby="packages">${items.join('')}</ul>`,
  });
}

export function catalogPage(catalog: SiteCatalog): string {
  const path = catalogPath(catalog.name);
  const rows = [...catalog.model.values()]
    .sort((a, b) => byName(a.name, b.name))
    .map((p) => {
      const def = p.defaultChannel;
      const head = def ? channelGraph(p, def).head : null;
      return `<tr><th scope="row">${anchor(path, packagePath(catalog.name, p.name), p.name)}</th><td>${def ? code(def.name) : '—'}</td><td>${head ? code(head) : '—'}</td><td>${p.channels.size}</td><td>${packageBundles(p).size}</td></tr>`;
    });
  const findings = catalog.valid
    ? ''
    : `<h2>Findings</h2>${findingsList(catalog.diagnostics)}${catalog.omitted ? `<p>${catalog.omitted.total} more findings were counted but not kept.</p>` : ''}`;
  return page({
    path,
    title: `Catalog ${catalog.name}`,
    breadcrumbs: [
      ['Catalogs', INDEX],
      [catalog.name, path],
    ],
    body: `<h1>Catalog ${text(catalog.name)}</h1>
${invalidBanner(catalog, undefined, path)}
<div class="table-wrap"><table><caption>${plural(catalog.model.size, 'package')}</caption><thead><tr><th scope="col">package</th><th scope="col">default channel</th><th scope="col">its head</th><th scope="col">channels</th><th scope="col">bundles</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>
${findings}`,
  });
}

const ICON_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml', 'image/webp']);

/** The package icon as a data: URL, when it is one of the image types and plain base64. */
function iconUrl(blob: Package | undefined): string | undefined {
  const icon = blob?.icon;
  if (!icon?.base64data || !icon.mediatype || !ICON_TYPES.has(icon.mediatype)) return undefined;
  const data = icon.base64data.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return undefined;
  return `data:${icon.mediatype};base64,${data}`;
}

function edgeSentence(e: ChannelEdge, absent = false): string {
  const verb = e.kind === 'skipRange' ? 'skips by its skipRange' : e.kind;
  return `<li>${code(e.from)} ${verb} ${code(e.to)}${absent ? ' (not in this channel)' : ''}</li>`;
}

function channelSection(catalog: SiteCatalog, pkg: ModelPackage, channel: ModelChannel, n: number): string {
  const path = packagePath(catalog.name, pkg.name);
  const graph = channelGraph(pkg, channel);
  const drawable = channel.bundles.size <= MAX_DRAWN_ENTRIES;
  const edges = (drawable && channelEdges(channel, MAX_DRAWN_EDGES)) || undefined;
  const stranded = strandedEntries(channel, graph.head);
  const deprecated = new Set([...channel.bundles.values()].filter((b) => b.deprecation).map((b) => b.name));
  const isDefault = channel.name === pkg.defaultChannel?.name;
  const heading = `ch${n}`;
  const svg =
    edges &&
    channelSvg(
      channel,
      edges,
      { head: graph.head, stranded, deprecated },
      { title: `g${n}-title`, desc: `g${n}-desc`, arrow: `g${n}-arrow` },
      {
        title: `Upgrade graph of channel ${channel.name}`,
        desc: `${plural(channel.bundles.size, 'entry')}, ${plural(edges.length, 'edge')}; head ${graph.head ?? 'none'}. The same graph as text follows.`,
      },
    );
  // OLM v1's edges: where operator-controller moves each entry (docs/olm-upgrades.md "OLM v1").
  const v1 = edges ? v1Edges(channel, graph.entries) : undefined;
  const v1Svg =
    v1 &&
    channelSvg(
      channel,
      v1,
      { head: graph.head, stranded: new Set(), deprecated },
      { title: `g${n}v1-title`, desc: `g${n}v1-desc`, arrow: `g${n}v1-arrow` },
      {
        title: `OLM v1 upgrade graph of channel ${channel.name}`,
        desc: `${plural(v1.length, 'entry')} that OLM v1 moves to another; fresh install ${graph.v1Install ?? 'none'}. The table below says the same.`,
      },
      'v1',
    );
  const rows = [...channel.bundles.values()].map((b) => {
    const e = graph.entries[b.name]!;
    const tags = [
      b.name === graph.head ? '<span class="tag head">head</span>' : '',
      stranded.has(b.name) ? '<span class="tag stranded">stranded</span>' : '',
      b.deprecation ? '<span class="tag deprecated">deprecated</span>' : '',
    ].join(' ');
    const stay = (to: string | null): string => (to === null || to === b.name ? 'stays' : code(to));
    return `<tr><th scope="row">${anchor(path, bundlePath(catalog.name, pkg.name, b.name), b.name)}</th><td>${text(bundleVersion(b))}</td><td>${tags}</td><td>${stay(e.classicNext)}</td><td>${stay(e.v1Chosen)}</td></tr>`;
  });
  const missing = missingTargets(channel);
  const notes = [
    channel.deprecation
      ? `<p class="note"><strong>Deprecated channel:</strong> ${text(channel.deprecation.message)}</p>`
      : '',
    graph.head === null
      ? `<p class="note">No single head (${graph.heads.length === 0 ? 'none' : graph.heads.map(code).join(', ')}): classic OLM cannot order this channel${graph.classicError ? `: ${text(graph.classicError)}` : ''}.</p>`
      : '',
    stranded.size > 0
      ? `<p class="note">${plural(stranded.size, 'entry')} marked stranded: classic OLM never takes clusters running ${stranded.size === 1 ? 'it' : 'them'} to the head.</p>`
      : '',
  ].join('');
  return `<section data-channel="${attr(channel.name)}" aria-labelledby="${heading}">
<h2 id="${heading}">Channel ${text(channel.name)}${isDefault ? ' <span class="tag">default</span>' : ''}</h2>
<p>Head: ${graph.head ? code(graph.head) : 'none'}. Fresh install: classic OLM ${graph.classicInstall ? code(graph.classicInstall) : 'nothing'}, OLM v1 ${graph.v1Install ? code(graph.v1Install) : 'nothing'}.</p>
${notes}
${
  edges && svg
    ? `<div class="graph" tabindex="0" role="group" aria-label="${attr(`Upgrade graph of channel ${channel.name}, scrollable`)}">
${svg}
</div>
<p class="legend">Arrows point the way clusters upgrade. Solid: replaces; dashed: skips; dotted: skipRange. Thick green border: head; red: stranded; dashed orange border: deprecated.</p>
<details><summary>The graph as text: ${plural(edges.length, 'edge')}${missing.length > 0 ? `, ${missing.length} to bundles not in the channel` : ''}</summary>
<ul>${edges.map((e) => edgeSentence(e)).join('')}${missing.map((e) => edgeSentence(e, true)).join('')}</ul>
</details>
<h3 id="${heading}-v1">OLM v1 upgrades</h3>
<p>OLM v1 (operator-controller) follows no chain: from an installed entry it moves straight to the highest version among the entries that replace it, skip it or whose skipRange holds its version (deprecated ones last), within this channel. One arrow per entry that moves; the table's “OLM v1 next” column says the same.</p>
<div class="graph" tabindex="0" role="group" aria-label="${attr(`OLM v1 upgrade graph of channel ${channel.name}, scrollable`)}">
${v1Svg}
</div>`
    : `<p class="note">Too large to draw: more than ${MAX_DRAWN_ENTRIES} entries or ${MAX_DRAWN_EDGES} edges. The entries and where each goes next follow.</p>`
}
<div class="table-wrap"><table><caption>Entries of channel ${text(channel.name)}: where each goes next</caption><thead><tr><th scope="col">entry</th><th scope="col">version</th><th scope="col">marks</th><th scope="col">classic OLM next</th><th scope="col">OLM v1 next</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>
</section>`;
}

export function packagePage(catalog: SiteCatalog, pkg: ModelPackage): string {
  const path = packagePath(catalog.name, pkg.name);
  const blob = catalog.packages.find((p) => p.name === pkg.name);
  const icon = iconUrl(blob);
  const own = catalog.diagnostics.filter((d) => d.package === pkg.name);
  const bundles = [...packageBundles(pkg).entries()].map(
    ([name, entries]) =>
      `<li>${anchor(path, bundlePath(catalog.name, pkg.name, name), name)} <span class="legend">${text(bundleVersion(entries[0]!))}</span></li>`,
  );
  const channels = orderedChannels(pkg);
  return page({
    path,
    title: `${pkg.name} (${catalog.name})`,
    breadcrumbs: [
      ['Catalogs', INDEX],
      [catalog.name, catalogPath(catalog.name)],
      [pkg.name, path],
    ],
    body: `<h1>${icon ? `<img src="${attr(icon)}" alt="" width="48" height="48"> ` : ''}${text(pkg.name)}</h1>
${invalidBanner(catalog, own, path)}
${pkg.deprecation ? `<p class="note"><strong>Deprecated package:</strong> ${text(pkg.deprecation.message)}</p>` : ''}
${pkg.description ? `<p>${text(pkg.description)}</p>` : ''}
<p>In catalog ${anchor(path, catalogPath(catalog.name), catalog.name)}. Default channel: ${pkg.defaultChannel ? code(pkg.defaultChannel.name) : 'none'}. ${plural(channels.length, 'channel')}: ${channels.map((c) => `<a href="#ch${channels.indexOf(c)}">${text(c.name)}</a>`).join(', ')}.</p>
${channels.map((c, i) => channelSection(catalog, pkg, c, i)).join('\n')}
<h2>Bundles</h2>
<ul>${bundles.join('')}</ul>`,
  });
}

function jsonBlock(value: unknown, limit = 4000): string {
  const json = JSON.stringify(value, null, 2) ?? 'null';
  return `<pre><code>${text(json.length > limit ? `${json.slice(0, limit)}\n… (${json.length - limit} more characters)` : json)}</code></pre>`;
}

interface CrdRow {
  name?: unknown;
  version?: unknown;
  kind?: unknown;
  displayName?: unknown;
}

/** The CRDs the CSV owns, from `olm.csv.metadata` `crdDescriptions` (what OperatorHub lists). */
function ownedCrds(b: ModelBundle): CrdRow[] {
  const descriptions = parseProperties(b.properties).csvMetadatas[0]?.crdDescriptions;
  const owned = (descriptions as { owned?: unknown } | undefined)?.owned;
  return Array.isArray(owned) ? owned.filter((o): o is CrdRow => typeof o === 'object' && o !== null) : [];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/** Bundles of the catalog with a dependency this bundle meets (olm.package.required, olm.gvk.required, ...). */
function requiredBy(model: Model, b: ModelBundle): { bundle: CatalogBundle; text: string }[] {
  const index = dependencyIndex(model);
  const me = index.bundles.get(`${b.package}\0${b.name}`);
  if (!me) return [];
  const out: { bundle: CatalogBundle; text: string }[] = [];
  for (const d of index.dependants)
    for (const dep of d.dependencies)
      if (d !== me && dep.constraint && matches(dep.constraint, me)) out.push({ bundle: d, text: dep.text });
  return out;
}

export function bundlePage(catalog: SiteCatalog, pkg: ModelPackage, entries: ModelBundle[]): string {
  const first = entries[0]!;
  const path = bundlePath(catalog.name, pkg.name, first.name);
  const index = dependencyIndex(catalog.model);
  const me = index.bundles.get(`${first.package}\0${first.name}`);
  const channelRows = entries.map(
    (b) =>
      `<tr><th scope="row"><a href="${attr(`../index.html#ch${orderedChannels(pkg).findIndex((c) => c.name === b.channel)}`)}">${text(b.channel)}</a></th><td>${b.replaces ? code(b.replaces) : '—'}</td><td>${b.skips.length > 0 ? b.skips.map(code).join(', ') : '—'}</td><td>${b.skipRange ? code(b.skipRange) : '—'}</td><td>${b.deprecation ? text(b.deprecation.message) : '—'}</td></tr>`,
  );
  const related = first.relatedImages.map(
    (r) => `<tr><td>${r.name ? code(r.name) : '—'}</td><td>${code(r.image)}</td></tr>`,
  );
  const gvks = first.properties
    .filter((p) => p.type === PROPERTY_GVK)
    .map((p) => {
      const v = p.value as { group?: unknown; version?: unknown; kind?: unknown };
      return `<li>${code(formatGvk({ group: str(v?.group), version: str(v?.version), kind: str(v?.kind) }))}</li>`;
    });
  const crds = ownedCrds(first).map(
    (c) =>
      `<tr><td>${code(str(c.name))}</td><td>${code(str(c.kind))}</td><td>${code(str(c.version))}</td><td>${text(str(c.displayName))}</td></tr>`,
  );
  const needs = (me?.dependencies ?? []).map(
    (d) => `<li>${text(d.text)}${d.error ? ` (${text(d.error.message)})` : ''}</li>`,
  );
  const users = requiredBy(catalog.model, first).map(
    ({ bundle, text: why }) =>
      `<li>${anchor(path, bundlePath(catalog.name, bundle.package, bundle.name), bundle.name)} (${text(bundle.package)}): ${text(why)}</li>`,
  );
  const displayName = str(parseProperties(first.properties).csvMetadatas[0]?.displayName);
  const properties = first.properties.map(
    (p) => `<details><summary>${code(p.type)}</summary>${jsonBlock(p.value)}</details>`,
  );
  return page({
    path,
    title: `${first.name} (${pkg.name}, ${catalog.name})`,
    breadcrumbs: [
      ['Catalogs', INDEX],
      [catalog.name, catalogPath(catalog.name)],
      [pkg.name, packagePath(catalog.name, pkg.name)],
      [first.name, path],
    ],
    body: `<h1>Bundle ${text(first.name)}</h1>
${invalidBanner(catalog, undefined, path)}
<dl>
<dt>Package</dt><dd>${anchor(path, packagePath(catalog.name, pkg.name), pkg.name)}</dd>
<dt>Version</dt><dd>${text(bundleVersion(first))}</dd>
${displayName ? `<dt>Display name</dt><dd>${text(displayName)}</dd>` : ''}
<dt>Image</dt><dd>${first.image ? code(first.image) : 'none (the catalog carries its manifests)'}</dd>
</dl>
<h2>Channels</h2>
<div class="table-wrap"><table><caption>Where this bundle is listed</caption><thead><tr><th scope="col">channel</th><th scope="col">replaces</th><th scope="col">skips</th><th scope="col">skipRange</th><th scope="col">deprecation</th></tr></thead><tbody>${channelRows.join('')}</tbody></table></div>
<h2>Related images</h2>
${related.length > 0 ? `<div class="table-wrap"><table><caption>${plural(related.length, 'related image')}</caption><thead><tr><th scope="col">name</th><th scope="col">image</th></tr></thead><tbody>${related.join('')}</tbody></table></div>` : '<p>None.</p>'}
<h2>Custom resource definitions</h2>
${crds.length > 0 ? `<div class="table-wrap"><table><caption>Owned by the CSV</caption><thead><tr><th scope="col">name</th><th scope="col">kind</th><th scope="col">version</th><th scope="col">display name</th></tr></thead><tbody>${crds.join('')}</tbody></table></div>` : '<p>The CSV lists no owned CRDs here.</p>'}
<p>APIs provided (<code>olm.gvk</code>):</p>${gvks.length > 0 ? `<ul>${gvks.join('')}</ul>` : '<p>None.</p>'}
<h2>Dependencies</h2>
<p>What it requires:</p>${needs.length > 0 ? `<ul>${needs.join('')}</ul>` : '<p>Nothing.</p>'}
<p>What requires it in this catalog:</p>${users.length > 0 ? `<ul>${users.join('')}</ul>` : '<p>Nothing.</p>'}
<h2>Properties</h2>
${properties.join('\n')}`,
  });
}

const MARK_TEXT = { error: 'error', warning: 'warning', notice: 'notice' } as const;

export function matrixPage(matrix: OcpMatrix, catalogs: SiteCatalog[]): string {
  const path = MATRIX;
  const known = new Set(catalogs.map((c) => c.name));
  const header = matrix.catalogs.map(
    (c) => `<th scope="col">${known.has(c) ? anchor(path, catalogPath(c), c) : text(c)}</th>`,
  );
  const rows = matrix.packages.map((p) => {
    const cells = matrix.catalogs.map((c) => {
      const cell = p.cells[c];
      if (!cell) return '<td>–<span class="sr-only"> not in this catalog</span></td>';
      const label = cell.version ?? cell.head ?? 'no head';
      const mark = cell.level ? ` <strong>(${MARK_TEXT[cell.level]})</strong>` : '';
      return `<td${cell.level ? ` class="cell-${cell.level === 'notice' ? 'warning' : cell.level}"` : ''}>${anchor(path, packagePath(c, p.package), label)}${mark}</td>`;
    });
    return `<tr><th scope="row">${text(p.package)}</th>${cells.join('')}</tr>`;
  });
  return page({
    path,
    title: 'Packages by OpenShift version',
    breadcrumbs: [
      ['Catalogs', INDEX],
      ['Packages by OpenShift version', path],
    ],
    body: `<h1>Packages by OpenShift version</h1>
<p>The version of the head of each package's default channel in each OpenShift catalog; “–” where the package is not in the catalog. Cells where the OpenShift-continuity check (<code>catalog-bot ocp-matrix</code>) finds a problem are marked with its level.</p>
<div class="table-wrap"><table><caption>${plural(matrix.packages.length, 'package')} × ${plural(matrix.catalogs.length, 'catalog')}</caption><thead><tr><th scope="col">package</th>${header.join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>
<h2>Findings</h2>
${matrix.findings.length > 0 ? findingsList(matrix.findings) : '<p>None.</p>'}`,
  });
}
