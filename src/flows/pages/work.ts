// The catalog work of one App-served page (docs/site.md, "Served by the App"), in a check
// worker (src/checks/isolate.ts): its turns, deadline and heap cap bound a page as they bound
// the checks, and the event loop that answers webhooks never loads a catalog. Reads the
// pages mirror's git objects at one commit of the default branch; loads only the catalog
// roots the page needs.
import { basename } from 'node:path';
import { validateCatalog } from '../../catalog/index.js';
import { GitTreeSource } from '../../catalog/fbc/source.js';
import { catalogRoots, readRepoConfig } from '../../checks/changes.js';
import {
  catalogPaths,
  catalogSegment,
  catalogsForPage,
  sitePage,
  type SiteCatalog,
} from '../../site/site.js';

export interface PageWork {
  /** The pages mirror (a bare repository). */
  dir: string;
  /** The default branch's commit. */
  sha: string;
  /** The site path, like `v4.21/foo/index.html`. */
  path: string;
}

// As `catalog-bot site`: a broken catalog's findings are listed, not a million of them.
const MAX_FINDINGS = 1000;

/** A page (`say`, when `ok`), and what the site of that commit holds, so unknown paths need no worker. */
export interface RenderedPage {
  ok: boolean;
  say: string;
  /** The first path segment of every catalog of the commit. */
  segments: string[];
  /** Every page path of the catalogs loaded for this page, by their first segment. */
  paths: Record<string, string[]>;
}

export async function renderPage(work: PageWork): Promise<RenderedPage> {
  // The rules of the commit shown: which directories are catalog roots.
  const { config } = await readRepoConfig(work.dir, work.sha);
  // Pages name a root by its directory name (as `catalog-bot site` does); the first of two
  // roots with one name is shown.
  const roots = new Map<string, string>();
  for (const root of await catalogRoots(work.dir, work.sha, config.catalogs))
    if (!roots.has(basename(root))) roots.set(basename(root), root);
  const names = [...roots.keys()];
  const catalogs: SiteCatalog[] = [];
  for (const name of catalogsForPage(names, work.path)) {
    const report = await validateCatalog(new GitTreeSource(work.dir, work.sha, roots.get(name)!), {
      maxDiagnostics: MAX_FINDINGS,
    });
    catalogs.push({
      name,
      valid: report.valid,
      diagnostics: report.diagnostics,
      ...(report.omitted ? { omitted: report.omitted } : {}),
      model: report.model,
      packages: report.config.packages,
    });
  }
  const html = sitePage(catalogs, work.path, names);
  const known = {
    segments: names.map(catalogSegment),
    paths: Object.fromEntries(catalogs.map((c) => [catalogSegment(c.name), catalogPaths(c)])),
  };
  return html === undefined ? { ok: false, say: '', ...known } : { ok: true, say: html, ...known };
}
