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
