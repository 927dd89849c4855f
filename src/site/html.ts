// The pieces every page of the static catalog site is made of (docs/site.md): escaping, safe
// file names, the page frame. Every name in a catalog is the contributor's text: it reaches a
// page only through `text()` or `attr()`, and file names only through `pathSegment()`.
import { createHash } from 'node:crypto';

/** Text for an element's content. */
export function text(value: string): string {
  return value.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** Text for a double-quoted attribute value. */
export function attr(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PLAIN_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The file or directory name that stands for a catalog name. Plain names (every real one) are
 * kept, so URLs read like the catalog; any other name (`../x`, `<b>`, a very long one) becomes
 * `_` and its UTF-8 bytes in hex (a hash when long), which no plain name starts with, so two names never share a
 * file and no name leaves its directory.
 */
export function pathSegment(name: string): string {
  if (PLAIN_SEGMENT.test(name) && !name.endsWith('.')) return name;
  const hex = Buffer.from(name, 'utf8').toString('hex');
  // A long name is hashed (`_h` is no hex prefix): file names stay short.
  return hex.length <= 200 ? `_${hex}` : `_h${createHash('sha256').update(name).digest('hex')}`;
}

/** A relative URL to `target` (a site path like `v4.21/foo/index.html`) from the page at `from`. */
export function relativeUrl(from: string, target: string): string {
  const up = from.split('/').length - 1;
  // Segments are plain or hex (see pathSegment): nothing in them needs percent-encoding.
  return '../'.repeat(up) + target;
}

export interface PageFrame {
  /** The page's own site path, like `v4.21/foo/index.html`. */
  path: string;
  title: string;
  /** Where the page is, outermost first: [label, site path] pairs (the last is this page). */
  breadcrumbs: [string, string][];
  body: string;
  /** Adds the search script (the page works without it). */
  search?: boolean;
  /** What wrote the page, for the footer (default: `catalog-bot site`). */
  writer?: string;
}

export const STYLESHEET = 'assets/site.css';
export const SEARCH_SCRIPT = 'assets/search.js';

/**
 * A whole page. The Content-Security-Policy allows only the site's own stylesheet and script
 * and data: images (package icons): should a name ever slip past the escaping, no script in
 * it runs.
 */
export function page(frame: PageFrame): string {
  const link = (target: string): string => attr(relativeUrl(frame.path, target));
  const crumbs = frame.breadcrumbs
    .map(([label, target], i) =>
      i === frame.breadcrumbs.length - 1
        ? `<li><a href="${link(target)}" aria-current="page">${text(label)}</a></li>`
        : `<li><a href="${link(target)}">${text(label)}</a></li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${text(frame.title)} · catalog-bot</title>
<link rel="stylesheet" href="${link(STYLESHEET)}">
${frame.search ? `<script src="${link(SEARCH_SCRIPT)}" defer></script>\n` : ''}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="Breadcrumb"><ol class="crumbs">${crumbs}</ol></nav></header>
<main id="main" tabindex="-1">
${frame.body}
</main>
<footer><p>Written by <code>${text(frame.writer ?? 'catalog-bot site')}</code>. Static pages: they need no script.</p></footer>
</body>
</html>
`;
}

/** A link from the page at `from` to the site path `target`. */
export function anchor(from: string, target: string, label: string, extra = ''): string {
  return `<a href="${attr(relativeUrl(from, target))}"${extra}>${text(label)}</a>`;
}

// Colours chosen for at least 4.5:1 contrast on white (WCAG AA) for text, 3:1 for shapes.
export const SITE_CSS = `:root { color-scheme: light; --fg: #1f2328; --muted: #57606a; --line: #8c959f;
  --accent: #0550ae; --bad: #a40e26; --bad-bg: #ffebe9; --warn: #7d4e00; --warn-bg: #fff8c5;
  --ok: #116329; --head-bg: #dafbe1; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff;
  margin: 0 auto; max-width: 80rem; padding: 0 1rem 2rem; }
a { color: var(--accent); }
a:focus-visible, [tabindex]:focus-visible, input:focus-visible { outline: 3px solid #bf3989; outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.skip:focus { left: 1rem; top: 0.5rem; background: #fff; padding: 0.25rem 0.5rem; }
.crumbs { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem; }
.crumbs li + li::before { content: "/"; margin-right: 0.25rem; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.table-wrap { overflow-x: auto; }
.banner { border: 2px solid var(--bad); background: var(--bad-bg); padding: 0.5rem 1rem; border-radius: 6px; }
.note { border-left: 4px solid var(--warn); background: var(--warn-bg); padding: 0.25rem 0.75rem; }
.tag { display: inline-block; border: 1px solid currentColor; border-radius: 1em; padding: 0 0.5em; font-size: 0.85em; }
.tag.head { color: var(--ok); } .tag.stranded { color: var(--bad); } .tag.deprecated { color: var(--warn); }
.graph { overflow: auto; border: 1px solid #d0d7de; border-radius: 6px; max-height: 36rem; margin: 0.5rem 0; }
.graph svg { display: block; }
.graph .node rect { fill: #fff; stroke: var(--line); stroke-width: 1.5; }
.graph .node.head rect { fill: var(--head-bg); stroke: var(--ok); stroke-width: 3; }
.graph .node.stranded rect { fill: var(--bad-bg); stroke: var(--bad); stroke-width: 2; }
.graph .node.deprecated rect { stroke-dasharray: 6 3; stroke: var(--warn); }
.graph .node text { font: 12px ui-monospace, monospace; fill: var(--fg); }
.graph .edge path { fill: none; stroke: #424a53; stroke-width: 1.5; }
.graph .edge.skips path { stroke-dasharray: 6 4; stroke: #6639ba; }
.graph .edge.skipRange path { stroke-dasharray: 2 3; stroke: #8c959f; }
.graph .edge.added path { stroke: var(--ok); stroke-width: 3; }
.graph .edge.removed path { stroke: var(--bad); stroke-dasharray: 3 3; }
.graph .node.added rect { fill: var(--head-bg); stroke: var(--ok); stroke-width: 2; }
.graph .node.removed rect { fill: var(--bad-bg); stroke: var(--bad); stroke-dasharray: 6 3; }
.graph .edge.v1 path { stroke: #0550ae; }
.legend { font-size: 0.9em; color: var(--muted); }
.search { margin: 0.5rem 0 1rem; }
.search input { font: inherit; padding: 0.25rem 0.5rem; width: min(30rem, 100%); }
.packages { columns: 18rem; padding-left: 1.25rem; }
.packages li { break-inside: avoid; }
.cell-error { background: var(--bad-bg); } .cell-warning { background: var(--warn-bg); }
`;

/**
 * The index's search: hides the list items whose text does not contain what is typed. The
 * list is complete without it; the field is hidden until this runs.
 */
export const SEARCH_JS = `"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("search");
  var status = document.getElementById("search-status");
  if (!box) return;
  box.hidden = false;
  var input = box.querySelector("input");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-search]"));
  input.addEventListener("input", function () {
    var q = input.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (li) {
      var hit = q === "" || li.getAttribute("data-search").indexOf(q) !== -1;
      li.hidden = !hit;
      if (hit) shown++;
    });
    status.textContent = q === "" ? "" : shown + " of " + items.length + " packages match";
  });
});
`;
