// The catalog work of `/onboard <package>` (./flow.ts): the conversion of onboardPackage on
// one commit of the mirror, and what it changes for clusters, in a check worker (off the
// App's event loop, under its deadline and heap cap: docs/security.md, bounded work).
// Reads git objects only; the main thread commits, checks and writes to GitHub.
import { onboardPackage, OnboardRefusal } from '../../catalog/edits/onboard.js';
import { onboardingImpact, type RootImpact } from '../../catalog/edits/onboard-impact.js';
import type { ReleaseTree } from '../../catalog/edits/release.js';
import { GitTreeSource } from '../../catalog/fbc/source.js';
import { filesUnder } from '../../git/read.js';
import { MAX_PACKAGE_BYTES, readSourceDirectory } from '../../checks/bundle-pr.js';
import { catalogRoots, readRepoConfig } from '../../checks/changes.js';
import { onboardSettings, packageDirOf } from './settings.js';

export interface OnboardWork {
  /** The mirror's git directory. */
  dir: string;
  /** The commit converted (the default branch's tip). */
  parent: string;
  package: string;
}

/** One OpenShift catalog as the conversion writes it, for the pull request's description. */
export interface OnboardedCatalog {
  catalog: string;
  defaultChannel: string;
  channels: { name: string; entries: number }[];
  bundles: number;
}

export type OnboardPlan =
  | { refused: string }
  | {
      mode: string;
      edits: { path: string; after: string }[];
      catalogs: OnboardedCatalog[];
      notes: string[];
      /** Catalog root -> what changes for clusters there; empty: nothing changes. */
      impact: Record<string, RootImpact>;
    };

/** The package's files at `parent` as onboardPackage reads them, within the checks' byte bound. */
async function packageTree(
  work: OnboardWork,
  packageDir: string,
  roots: string[],
): Promise<ReleaseTree | { refused: string }> {
  const { dir, parent } = work;
  const read = await readSourceDirectory(new GitTreeSource(dir, parent, packageDir), MAX_PACKAGE_BYTES);
  if (read.bytes > MAX_PACKAGE_BYTES)
    return {
      refused: `${packageDir} holds ${read.bytes} bytes of files, more than the ${MAX_PACKAGE_BYTES / 2 ** 20} MiB the App reads for one package; run \`catalog-bot onboard\` instead`,
    };
  const files = new Map([...read.files].map(([p, data]) => [`${packageDir}/${p}`, data]));
  // Whatever the catalogs hold of the package already (onboardPackage refuses then).
  const inCatalogs = await filesUnder(
    dir,
    parent,
    roots.map((r) => `${r}/${work.package}/`),
  );
  const paths = [...files.keys(), ...inCatalogs].sort();
  return {
    list: () => paths,
    readBytes: (p) => files.get(p),
    read: (p) => files.get(p)?.toString('utf8'),
  };
}

/** The onboarding of `work.package` at `work.parent`, or why it cannot be done. */
export async function planOnboard(work: OnboardWork): Promise<OnboardPlan> {
  const { dir, parent } = work;
  const { config } = await readRepoConfig(dir, parent);
  const settings = onboardSettings(config);
  const roots = await catalogRoots(dir, parent, config.catalogs);
  const packageDir = packageDirOf(settings.path, work.package);
  if (packageDir === undefined)
    return { refused: `bundles.path "${settings.path}" does not name a package directory before {version}` };
  const tree = await packageTree(work, packageDir, roots);
  if ('refused' in tree) return tree;
  try {
    // No index to read: the App emulates what each OpenShift index serves (docs/legacy-index.md).
    const result = await onboardPackage({ tree, package: work.package, catalogRoots: roots, settings });
    return {
      mode: result.mode,
      edits: result.edits.map((e) => ({ path: e.path, after: e.after })),
      catalogs: Object.entries(result.catalogs).map(([catalog, c]) => ({
        catalog,
        defaultChannel: c.defaultChannel,
        channels: Object.entries(c.channels).map(([name, entries]) => ({ name, entries: entries.length })),
        bundles: c.bundles.length,
      })),
      notes: result.notes,
      impact: await onboardingImpact(result),
    };
  } catch (error) {
    if (error instanceof OnboardRefusal) return { refused: error.message };
    throw error;
  }
}
