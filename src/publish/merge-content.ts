// What a merge publishes, read from the mirror: the catalog roots and bundle directories a
// range of commits changes, and the build and push of one root's or bundle's image (the
// publish job, src/handlers/push.ts, and its batches, src/flows/publish-batch/).
import { GitTreeSource, validateCatalog } from '../catalog/index.js';
import { objectAt } from '../git/read.js';
import { isObjectId } from '../git/object-id.js';
import { bundleDirectories, MAX_BUNDLE_DIRS, type BundleDirectory } from '../checks/bundle-pr.js';
import { catalogRoots, changedFiles } from '../checks/changes.js';
import type { RepoConfig } from '../checks/config.js';
import { buildBundleImage, bundlePushTarget, pushBundleImage, readBundleImageFiles } from './bundle-image.js';
import { commitTime, publishCatalog } from './publish.js';
import type { RegistryClient } from './registry.js';
import type { BundlePublication, RootPublication } from './report.js';

/** The catalog roots at `after` that `before..after` changed ('' before: all of them). */
export async function rootsChangedBetween(
  dir: string,
  before: string,
  after: string,
  config: RepoConfig,
): Promise<string[]> {
  const roots = await catalogRoots(dir, after, config.catalogs);
  if (before === '') return roots;
  const files = await changedFiles(dir, before, after);
  return roots.filter((root) => files.some((f) => f.startsWith(root + '/')));
}

/** The bundle directories `before..after` adds (none without a `before`). */
export async function bundlesAddedBetween(
  dir: string,
  before: string,
  after: string,
  config: RepoConfig,
): Promise<BundleDirectory[]> {
  if (before === '') return [];
  const dirs = bundleDirectories(await changedFiles(dir, before, after), config.bundles.path);
  const added: BundleDirectory[] = [];
  for (const b of dirs) {
    const [now, then] = await Promise.all([
      new GitTreeSource(dir, after, b.dir).list(),
      new GitTreeSource(dir, before, b.dir).list(),
    ]);
    if (now.length > 0 && then.length === 0) added.push(b);
  }
  return added;
}

/** Build and push each added bundle's image; never throws for one bundle (it is reported). */
export async function publishBundles(
  dir: string,
  job: { after: string; repoUrl: string },
  config: RepoConfig,
  bundles: BundleDirectory[],
  client: RegistryClient,
): Promise<BundlePublication[]> {
  if (bundles.length > MAX_BUNDLE_DIRS)
    return [
      {
        dir: bundles.map((b) => b.dir).join(', '),
        error: `the merge adds ${bundles.length} bundle directories; catalog-bot pushes at most ${MAX_BUNDLE_DIRS} bundle images for one merge (push them in smaller merges, or build them elsewhere)`,
      },
    ];
  const created = await commitTime(dir, job.after);
  const out: BundlePublication[] = [];
  for (const b of bundles) {
    try {
      const target = bundlePushTarget(config.bundles.imageTemplate, b.package, b.version);
      const files = await readBundleImageFiles(new GitTreeSource(dir, job.after, b.dir));
      const image = await buildBundleImage(files, {
        created,
        bundleDir: b.dir,
        repoUrl: job.repoUrl,
        commit: job.after,
      });
      out.push({ dir: b.dir, result: await pushBundleImage(client, image, target) });
    } catch (error) {
      out.push({ dir: b.dir, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return out;
}

/** Where a job's catalogs are read (the mirror) and pushed (the registry), by whose config. */
export interface PublishTarget {
  dir: string;
  job: { repoUrl: string };
  config: RepoConfig;
  client: RegistryClient;
}

/**
 * Validate one catalog root at `commit` and push its image to `tags`; never throws (what goes
 * wrong is the publication's error).
 */
export async function publishRoot(
  to: PublishTarget,
  root: string,
  commit: string,
  tags: string[],
): Promise<RootPublication> {
  const { dir, job, config, client } = to;
  const source = new GitTreeSource(dir, commit, root);
  const report = await validateCatalog(source);
  if (!report.valid) {
    const errors = report.diagnostics.filter((d) => d.level === 'error').length;
    return {
      root,
      error: `the catalog does not validate (${errors} error${errors === 1 ? '' : 's'}; see catalog-bot validate); nothing was pushed`,
    };
  }
  try {
    const results =
      tags.length === 0
        ? []
        : await publishCatalog({
            source,
            root,
            tags,
            baseImage: config.publish.baseImage,
            repoUrl: job.repoUrl,
            commit,
            created: await commitTime(dir, commit),
            client,
          });
    return { root, results };
  } catch (error) {
    return { root, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The branch head now (asked of GitHub), fetched into the mirror. */
export type BranchHead = () => Promise<string>;

/**
 * The BranchHead of `ask` (GitHub's answer): each new head fetched into the mirror once
 * (`known` is there already). It becomes a git argument: a commit id, or the job fails.
 */
export function fetchedBranchHead(
  ask: () => Promise<string>,
  fetchCommits: (shas: string[]) => Promise<void>,
  known: string,
): BranchHead {
  const fetched = new Set([known]);
  return async () => {
    const sha = await ask();
    if (!isObjectId(sha)) throw new Error('the branch head GitHub names is not a commit id');
    if (!fetched.has(sha)) {
      await fetchCommits([sha]);
      fetched.add(sha);
    }
    return sha;
  };
}

/**
 * One root of `commit` published while the branch may have moved past it (docs/publishing.md,
 * "When main moves during a publish"): the `{sha}` tags from `commit`, the moving tags from
 * the branch head asked for just before their build, so that a moving tag always gets the
 * newest catalog even when no newer merge changes this root. One build, all tags, when the
 * root's files are the same at the head (the newer merges changed other roots). A root the
 * head no longer has is not built again: its moving tags stay as they are.
 */
export async function publishRootUpToHead(
  to: PublishTarget,
  root: string,
  commit: string,
  head: BranchHead,
): Promise<RootPublication[]> {
  const { dir, config } = to;
  const { images } = config.publish;
  const first = await head();
  if (first === commit || (await sameFiles(dir, root, commit, first)))
    return [await publishRoot(to, root, commit, images)];
  const pinned = images.filter((t) => t.includes('{sha}'));
  const moving = images.filter((t) => !t.includes('{sha}'));
  const out = pinned.length > 0 ? [await publishRoot(to, root, commit, pinned)] : [];
  if (moving.length === 0) return out;
  // Asked again: the build of the `{sha}` tags took a while.
  const now = await head();
  if (now === commit || (await sameFiles(dir, root, commit, now)))
    out.push(await publishRoot(to, root, commit, moving));
  else if ((await catalogRoots(dir, now, config.catalogs)).includes(root))
    out.push({ ...(await publishRoot(to, root, now, moving)), commit: now });
  return out;
}

/** Whether `root` holds the same files at both commits (and exists at both). */
async function sameFiles(dir: string, root: string, a: string, b: string): Promise<boolean> {
  const [atA, atB] = await Promise.all([objectAt(dir, a, root), objectAt(dir, b, root)]);
  return atA !== '' && atA === atB;
}
