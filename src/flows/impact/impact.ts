// What a change means for clusters, between two commits of a repository (docs/impact.md):
// the orchestration `catalog-bot impact` and the App's `/explain impact` share. The pull
// request checks compute the same from the catalogs they already loaded (src/checks/pr.ts).
import { validateCatalog } from '../../catalog/index.js';
import { GitTreeSource } from '../../catalog/fbc/source.js';
import type { Model } from '../../catalog/fbc/model.js';
import { catalogImpact } from '../../catalog/olm/impact.js';
import type { CatalogsImpact } from '../../catalog/olm/impact-report.js';
import { catalogRoots, changedFiles, readRepoConfig } from '../../checks/changes.js';

async function modelAt(repo: string, rev: string, root: string, present: boolean): Promise<Model> {
  if (!present) return new Map();
  return (await validateCatalog(new GitTreeSource(repo, rev, root))).model;
}

/** Every changed catalog root's impact; roots without a change for users are left out. */
export async function impactOf(repo: string, base: string, head: string): Promise<CatalogsImpact> {
  // The rules come from the base: a change cannot widen what is looked at.
  const { config } = await readRepoConfig(repo, base);
  const [atBase, atHead, changed] = await Promise.all([
    catalogRoots(repo, base, config.catalogs),
    catalogRoots(repo, head, config.catalogs),
    changedFiles(repo, base, head),
  ]);
  const roots = [...new Set([...atBase, ...atHead])]
    .filter((r) => changed.some((f) => f.startsWith(`${r}/`)))
    .sort();
  const out: CatalogsImpact = {};
  for (const root of roots) {
    const [before, after] = await Promise.all([
      modelAt(repo, base, root, atBase.includes(root)),
      modelAt(repo, head, root, atHead.includes(root)),
    ]);
    const packages = catalogImpact(before, after);
    if (Object.keys(packages).length > 0) out[root] = { packages };
  }
  return out;
}
