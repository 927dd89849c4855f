// The whole static site for some catalog roots (docs/site.md): site path -> file content.
// Pure: `catalog-bot site` loads the roots and writes what this returns.
import { ocpCatalogVersion } from '../catalog/olm/ocp-continuity.js';
import { ocpMatrix } from '../checks/ocp-continuity.js';
import { SEARCH_JS, SEARCH_SCRIPT, SITE_CSS, STYLESHEET } from './html.js';
import {
  bundlePage,
  bundlePath,
  catalogPage,
  catalogPath,
  indexPage,
  INDEX,
  MATRIX,
  matrixPage,
  packagePage,
  packagePath,
  rootSegment,
  type SiteCatalog,
} from './pages.js';

export type { SiteCatalog } from './pages.js';

export function buildSite(catalogs: SiteCatalog[]): Map<string, string> {
  const files = new Map<string, string>();
  files.set(STYLESHEET, SITE_CSS);
  files.set(SEARCH_SCRIPT, SEARCH_JS);
  // The matrix needs two OpenShift catalogs to compare (docs/ocp-lifecycle.md).
  const ocp = catalogs.filter((c) => ocpCatalogVersion(c.name));
  const withMatrix = ocp.length >= 2;
  files.set(INDEX, indexPage(catalogs, withMatrix));
  if (withMatrix)
    files.set(
      MATRIX,
      matrixPage(
        ocpMatrix({ catalogs: ocp.map((c) => ({ name: c.name, root: c.name, model: c.model })) }),
        catalogs,
      ),
    );
  for (const catalog of catalogs) {
    files.set(catalogPath(catalog.name), catalogPage(catalog));
    for (const pkg of catalog.model.values()) {
      files.set(packagePath(catalog.name, pkg.name), packagePage(catalog, pkg));
      const entries = new Map<string, Parameters<typeof bundlePage>[2]>();
      for (const ch of pkg.channels.values())
        for (const b of ch.bundles.values()) entries.set(b.name, [...(entries.get(b.name) ?? []), b]);
      for (const [name, list] of entries)
        files.set(bundlePath(catalog.name, pkg.name, name), bundlePage(catalog, pkg, list));
    }
  }
  return files;
}

/**
 * The catalogs one page of the site needs, by name (the App loads only those): every one
 * for the index, the OpenShift ones for the matrix, the one a catalog, package or bundle
 * page belongs to; none for the site's own files or a path of no catalog.
 */
export function catalogsForPage(names: string[], path: string): string[] {
  if (path === INDEX) return names;
  if (path === MATRIX) return names.filter((n) => ocpCatalogVersion(n));
  const first = path.split('/')[0]!;
  return names.filter((n) => rootSegment(n) === first);
}

/**
 * One page of the site, as buildSite writes it, or undefined when the site has no such page.
 * `catalogs`: what catalogsForPage asked for; `all`: every catalog name, for the index's
 * matrix link.
 */
export function sitePage(
  catalogs: SiteCatalog[],
  path: string,
  all: string[] = catalogs.map((c) => c.name),
): string | undefined {
  if (path === STYLESHEET) return SITE_CSS;
  if (path === SEARCH_SCRIPT) return SEARCH_JS;
  const ocp = catalogs.filter((c) => ocpCatalogVersion(c.name));
  const withMatrix = all.filter((n) => ocpCatalogVersion(n)).length >= 2;
  if (path === INDEX) return indexPage(catalogs, withMatrix);
  if (path === MATRIX)
    return withMatrix
      ? matrixPage(
          ocpMatrix({ catalogs: ocp.map((c) => ({ name: c.name, root: c.name, model: c.model })) }),
          catalogs,
        )
      : undefined;
  for (const catalog of catalogs) {
    if (path === catalogPath(catalog.name)) return catalogPage(catalog);
    for (const pkg of catalog.model.values()) {
      if (path === packagePath(catalog.name, pkg.name)) return packagePage(catalog, pkg);
      if (!path.startsWith(packagePath(catalog.name, pkg.name).replace(/index\.html$/, 'bundles/'))) continue;
      const entries: Parameters<typeof bundlePage>[2] = [];
      for (const ch of pkg.channels.values())
        for (const b of ch.bundles.values())
          if (bundlePath(catalog.name, pkg.name, b.name) === path) entries.push(b);
      if (entries.length > 0) return bundlePage(catalog, pkg, entries);
    }
  }
  return undefined;
}

/** Every page path of a catalog (its catalog, package and bundle pages). */
export function catalogPaths(catalog: SiteCatalog): string[] {
  const out = [catalogPath(catalog.name)];
  for (const pkg of catalog.model.values()) {
    out.push(packagePath(catalog.name, pkg.name));
    const bundles = new Set<string>();
    for (const ch of pkg.channels.values()) for (const b of ch.bundles.keys()) bundles.add(b);
    for (const b of bundles) out.push(bundlePath(catalog.name, pkg.name, b));
  }
  return out;
}

/** The first path segment of a catalog's pages. */
export const catalogSegment = (name: string): string => rootSegment(name);
