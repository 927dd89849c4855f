// What the checks of a pull request are given for each catalog root it touches: the root's
// reports at base and head. Its own module so that the checks share it without importing
// the orchestrator (pr.ts) that runs them.
import type { CatalogReport } from '../catalog/index.js';

export interface CheckedRoot {
  path: string;
  base?: CatalogReport;
  head?: CatalogReport;
  /** Packages whose content differs between base and head. */
  packages: Set<string>;
}
