// The checks of a pull request, on two commits of a git repository: the same code path
// for the App and for `catalog-bot check`. Reads git objects only (never a worktree).
import { GitTreeSource, validateCatalog, type CatalogReport } from '../catalog/index.js';
import { catalogGlobs, catalogRoots, changedFiles, changedPackages } from './changes.js';
import type { CheckResult } from './check.js';
import { upgradeGraphCheck } from './upgrade-graph/index.js';
import { validateCheck } from './validate.js';

export interface PrCheckInput {
  repo: string;
  base: string;
  head: string;
  /** Catalog root globs; default: the base commit's `.github/catalog-bot.yml`, else `catalogs/*`. */
  globs?: string[];
}

export interface CheckedRoot {
  path: string;
  base?: CatalogReport;
  head?: CatalogReport;
  /** Packages whose content differs between base and head. */
  packages: Set<string>;
}

export interface PrCheckResult {
  roots: CheckedRoot[];
  checks: CheckResult[];
}

export async function runPrChecks(input: PrCheckInput): Promise<PrCheckResult> {
  const { repo, base, head } = input;
  const globs = input.globs ?? (await catalogGlobs(repo, base)); // the base decides: a PR cannot change its rules
  const [baseRoots, headRoots, files] = await Promise.all([
    catalogRoots(repo, base, globs),
    catalogRoots(repo, head, globs),
    changedFiles(repo, base, head),
  ]);
  const all = [...new Set([...baseRoots, ...headRoots])].sort();
  const touched = all.filter((root) => files.some((f) => f.startsWith(root + '/')));

  const roots: CheckedRoot[] = [];
  for (const path of touched) {
    const [baseReport, headReport] = await Promise.all([
      baseRoots.includes(path) ? validateCatalog(new GitTreeSource(repo, base, path)) : undefined,
      headRoots.includes(path) ? validateCatalog(new GitTreeSource(repo, head, path)) : undefined,
    ]);
    roots.push({
      path,
      base: baseReport,
      head: headReport,
      packages: changedPackages(baseReport?.config, headReport?.config),
    });
  }

  const checks = [
    validateCheck(roots.flatMap((r) => (r.head ? [{ path: r.path, report: r.head }] : []))),
    upgradeGraphCheck(roots),
  ];
  return { roots, checks };
}
