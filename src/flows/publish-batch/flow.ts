// Publishing in batches (docs/publishing.md, "Batches"). A publish job whose merge is no
// longer the branch head covers every merge from its own up to the head: each catalog root
// any of them changed is built once, from the newest merge, and every merge with a catalog
// change gets its `catalog-bot/publish` run and release comment naming the image that
// contains it. The later jobs of those merges find the batch's runs and do nothing. Before
// each root's build the branch is asked again: a head that moved on (fast-forward along the
// first parents) joins the batch, so moving tags get the head's catalog; once the batch takes
// no more merges, they are built from the head on their own.
import { commitMessage, firstParent, firstParentCommits } from '../../git/read.js';
import { isObjectId } from '../../git/object-id.js';
import { catalogRoots } from '../../checks/changes.js';
import type { RepoConfig } from '../../checks/config.js';
import type { BundleDirectory } from '../../checks/bundle-pr.js';
import { createCompletedRun } from '../../handlers/check-runs.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import {
  bundlesAddedBetween,
  fetchedBranchHead,
  publishBundles,
  publishRoot,
  publishRootUpToHead,
  rootsChangedBetween,
} from '../../publish/merge-content.js';
import type { RepoTarget } from '../../handlers/session.js';
import { mergedPullOf, writeReleaseComment } from '../release/comment.js';
import type { Session } from '../../handlers/session.js';
import {
  batchCheck,
  batchExternalId,
  batchReleaseComment,
  isBatchRun,
  MAX_BATCH_MERGES,
  MAX_BATCH_RETARGETS,
  rootsToBuild,
  type BatchMerge,
  type RootBuild,
} from '../../publish/batch.js';
import type { RegistryClient } from '../../publish/registry.js';
import { BUNDLE_IMAGE_CHECK, bundleImageCheck, PUBLISH_CHECK } from '../../publish/report.js';

/** What a batch needs of the publish job (src/handlers/push.ts, PublishJob). */
export interface BatchJob extends RepoTarget {
  repoUrl: string;
  branch: string;
  before: string;
  after: string;
  only?: 'catalogs' | 'bundles';
}

export interface BatchStart {
  /** The branch head when the job started. */
  head: string;
  /** What the job's own merge changed: the check runs it needs. */
  roots: string[];
  bundles: BundleDirectory[];
  config: RepoConfig;
  /** The registry client for this config's hosts. */
  client: () => RegistryClient;
}

/**
 * Publish the job's merge as part of a batch. Resolves false when the job is to publish its
 * merge on its own (it is the head, the head is published already, or the branch's
 * first-parent line does not lead from it to the head), true when the batch did the job (or
 * an earlier batch already had).
 */
export async function publishInBatch(
  context: JobContext,
  options: PrHandlerOptions,
  job: BatchJob,
  session: Session,
  start: BatchStart,
): Promise<boolean> {
  const slug = options.appSlug ? await options.appSlug() : undefined;
  if (slug !== undefined && (await publishedByEarlierBatch(context, job, start, slug))) {
    context.log.info({ sha: job.after }, 'published by an earlier batch');
    return true;
  }
  if (start.head === job.after || slug === undefined) return false;
  const first = await lineToTheHead(context, job, session, start, slug);
  if (first === undefined) return false;
  const batch: Batch = { context, job, session, start, merges: [], client: start.client() };
  await extendBatch(batch, first);
  const { builds, target } = await buildChangedRoots(batch);
  await reportBatch(batch, builds, target, slug);
  context.log.info(
    { sha: job.after, target, merges: batch.merges.length, builds: builds.size },
    `published a batch of ${batch.merges.length} merges with ${builds.size} catalog builds`,
  );
  return true;
}

/** A batch being published: its merges so far, oldest first. */
interface Batch {
  context: JobContext;
  job: BatchJob;
  session: Session;
  start: BatchStart;
  merges: BatchMerge[];
  client: RegistryClient;
}

/** An earlier batch covered this merge: the runs it needs are there, by this App. */
async function publishedByEarlierBatch(
  context: JobContext,
  job: BatchJob,
  start: BatchStart,
  slug: string,
): Promise<boolean> {
  const needs = [
    ...(start.roots.length > 0 ? [PUBLISH_CHECK] : []),
    ...(start.bundles.length > 0 && job.only !== 'catalogs' ? [BUNDLE_IMAGE_CHECK] : []),
  ];
  const runs = await context.github.checks.onCommit(job.ref, job.after, { filter: 'all' });
  return needs.length > 0 && needs.every((name) => runs.some((r) => isBatchRun(r, name, slug)));
}

/**
 * The first-parent line from the job's merge to the head, or undefined when the merge is to
 * be published on its own: the head's own job has run already (this push came late: nothing
 * waits behind this merge, its moving tags are left to the head), or the line does not
 * lead through it.
 */
async function lineToTheHead(
  context: JobContext,
  job: BatchJob,
  session: Session,
  start: BatchStart,
  slug: string,
): Promise<string[] | undefined> {
  const headRuns = await context.github.checks.onCommit(job.ref, start.head, {
    filter: 'all',
    check_name: PUBLISH_CHECK,
  });
  if (headRuns.some((r) => r.app?.slug === slug)) return undefined;
  const first = await firstParentLine(session.dir, job.before, start.head);
  return first !== undefined && first.includes(job.after) ? first : undefined;
}

/** Add the merges of `line` to the batch, pushing the bundle images they add first. */
async function extendBatch(batch: Batch, line: string[]): Promise<void> {
  const { context, job, session, start, merges } = batch;
  const { config } = start;
  const { dir } = session;
  const bundlesOf = new Map<string, BundleDirectory[]>();
  let parent = merges.at(-1)?.sha ?? job.before;
  for (const sha of line) {
    const roots = await rootsChangedBetween(dir, parent, sha, config);
    const bundles =
      config.bundles.pushImages && job.only !== 'catalogs'
        ? await bundlesAddedBetween(dir, parent, sha, config)
        : [];
    merges.push({ sha, roots });
    if (bundles.length > 0) bundlesOf.set(sha, bundles);
    parent = sha;
  }
  // Before the catalogs: a catalog of these merges may reference these very tags.
  for (const sha of line) {
    const bundles = bundlesOf.get(sha);
    if (!bundles) continue;
    await session.fetchBlobs([sha]);
    const published = await publishBundles(
      dir,
      { after: sha, repoUrl: job.repoUrl },
      config,
      bundles,
      batch.client,
    );
    await createCompletedRun(context.github, job.ref, sha, BUNDLE_IMAGE_CHECK, bundleImageCheck(published), {
      externalId: batchExternalId(start.head),
    });
  }
}

/**
 * Build each catalog root the batch changed once, from the newest merge. Tags without {sha}
 * move: they get the branch head's catalog, so the branch is asked before each build, and a
 * head that moved on along the first parents joins the batch (at most MAX_BATCH_RETARGETS
 * times; after that the moving tags are built from the head apart).
 */
async function buildChangedRoots(batch: Batch): Promise<{ builds: Map<string, RootBuild>; target: string }> {
  const { context, job, session, start, merges } = batch;
  const { config } = start;
  const { dir } = session;
  let target = start.head;
  let retargets = 0;
  const builds = new Map<string, RootBuild>();
  const pending = rootsToBuild(merges, await catalogRoots(dir, target, config.catalogs));
  const { images } = config.publish;
  while (pending.length > 0) {
    const now = (await context.github.repos.branch(job.ref, job.branch)).commit.sha;
    if (now !== target && retargets < MAX_BATCH_RETARGETS) {
      await session.fetchCommits([now]);
      const more = await firstParentLine(dir, target, now);
      if (more !== undefined && merges.length + more.length <= MAX_BATCH_MERGES) {
        retargets++;
        await extendBatch(batch, more);
        target = now;
        await retarget(batch, pending, more, target);
        continue;
      }
    }
    const root = pending.shift()!;
    await session.fetchBlobs([target]);
    builds.set(
      root,
      now === target
        ? {
            commit: target,
            publication: await publishRoot({ dir, job, config, client: batch.client }, root, target, images),
          }
        : await buildBehindTheHead(batch, root, target),
    );
  }
  return { builds, target };
}

/**
 * The branch moved past the batch's head and the batch takes no more merges: the root's
 * `{sha}` tags from the batch's head, its moving tags from the branch head (docs/publishing.md,
 * "When main moves during a publish"), so that no later job has to change this root for them
 * to be current.
 */
async function buildBehindTheHead(batch: Batch, root: string, target: string): Promise<RootBuild> {
  const { context, job, session, start } = batch;
  const head = fetchedBranchHead(
    async () => (await context.github.repos.branch(job.ref, job.branch)).commit.sha,
    (shas) => session.fetchCommits(shas),
    target,
  );
  const built = await publishRootUpToHead(
    { dir: session.dir, job, config: start.config, client: batch.client },
    root,
    target,
    head,
  );
  // Its own build: the one of `target` (none when only moving tags are configured).
  const publication = built.find((p) => p.commit === undefined) ?? { root, results: [] };
  const moving = built.filter((p) => p !== publication);
  return { commit: target, publication, ...(moving.length > 0 ? { moving } : {}) };
}

/** The batch moved to a new head: roots the newer merges change are built (again) from it; roots it lacks are not. */
async function retarget(batch: Batch, pending: string[], more: string[], target: string): Promise<void> {
  const present = await catalogRoots(batch.session.dir, target, batch.start.config.catalogs);
  for (const root of rootsToBuild(
    batch.merges.filter((m) => more.includes(m.sha)),
    present,
  ))
    if (!pending.includes(root)) pending.push(root);
  for (let i = pending.length - 1; i >= 0; i--) if (!present.includes(pending[i]!)) pending.splice(i, 1);
}

/**
 * Every merge with a catalog change: its run (oldest first), then the release comments.
 * Runs first, comments after: a comment waits for its slower notification pace
 * (src/github/write-pacing.ts), and a run written meanwhile would follow it too closely.
 */
async function reportBatch(
  batch: Batch,
  builds: Map<string, RootBuild>,
  target: string,
  slug: string,
): Promise<void> {
  const { context, job, session, merges } = batch;
  const { github } = context;
  const covered = merges.filter((m) => m.roots.length > 0);
  for (const merge of covered)
    await createCompletedRun(
      github,
      job.ref,
      merge.sha,
      PUBLISH_CHECK,
      batchCheck(merge, builds, merges.length),
      {
        externalId: batchExternalId(target),
      },
    );
  const botLogin = `${slug}[bot]`;
  for (const merge of covered) {
    const body = batchReleaseComment(merge, builds);
    if (body === undefined) continue;
    // A failure here is logged, not a failed publish: the images are out and the run says so.
    try {
      const message = await commitMessage(session.dir, merge.sha);
      const number = await mergedPullOf(github, job.ref, merge.sha, message);
      if (number !== undefined) await writeReleaseComment(github, job.ref, number, merge.sha, body, botLogin);
    } catch (error) {
      context.log.warn({ err: error, sha: merge.sha }, 'could not write the release comment');
    }
  }
}

/**
 * The first-parent commits after `from` up to `to`, oldest first; undefined when `from` is
 * not on `to`'s first-parent line (a force-push) or the line is longer than a batch takes.
 */
async function firstParentLine(dir: string, from: string, to: string): Promise<string[] | undefined> {
  // Commit ids only: they become git arguments.
  if (![from, to].every(isObjectId)) return undefined;
  const line = (await firstParentCommits(dir, from, to, MAX_BATCH_MERGES + 1).catch(() => undefined))?.map(
    (c) => c.commit,
  );
  if (line === undefined || line.length === 0 || line.length > MAX_BATCH_MERGES) return undefined;
  const parent = await firstParent(dir, line[0]!);
  return parent === from ? line : undefined;
}
