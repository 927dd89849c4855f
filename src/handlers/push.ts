// A push to the default branch (a merge): build and push the image of every changed
// catalog root to every configured tag, or trigger a workflow that builds elsewhere, and
// report `catalog-bot/publish` on the commit. With `bundles.pushImages`, first the bundle
// image of every bundle directory the merge adds, reported as `catalog-bot/bundle-image`.
// Publishing in one repository is serialized (its own queue group), and a moving tag (one
// without {sha}) only ever gets the catalog of the branch head read just before its build:
// an older job never puts an older catalog there, and a head that moved on during the job
// still gets this merge's roots (docs/publishing.md, "When main moves during a publish").
// A merge that is no longer the head when its job starts is published in a batch up to the
// head (src/flows/publish-batch/).
import type { Context } from 'probot';
import { commitMessage } from '../git/read.js';
import type { BundleDirectory } from '../checks/bundle-pr.js';
import { readRepoConfig } from '../checks/changes.js';
import type { RepoConfig } from '../checks/config.js';
import { publishInBatch } from '../flows/publish-batch/flow.js';
import { revParse } from '../git/mirror.js';
import { publishBatchesFromEnv } from '../publish/batch.js';
import { templateRegistry } from '../publish/bundle-image.js';
import {
  bundlesAddedBetween,
  fetchedBranchHead,
  publishBundles,
  publishRootUpToHead,
  rootsChangedBetween,
} from '../publish/merge-content.js';
import { credentialHostsOf, type RegistryClient } from '../publish/registry.js';
import {
  BUNDLE_IMAGE_CHECK,
  bundleImageCheck,
  cell,
  publishCheck,
  PUBLISH_CHECK,
  releaseComment,
  type RootPublication,
} from '../publish/report.js';
import { completeCheckRun, createCheckRuns, createCompletedRun } from './check-runs.js';
import { mergedPullOf, writeReleaseComment } from '../flows/release/comment.js';
import { openSession, repoTarget, type RepoTarget, type Session } from './session.js';
import type { JobContext, PrHandlerOptions } from './pull-request.js';

export const PUSH_EVENTS = ['push'] as const;

export interface PublishJob extends RepoTarget {
  /** For the OCI source annotation. */
  repoUrl: string;
  branch: string;
  /**
   * The branch's previous commit (all zeros for a new branch), or empty for "the pushed
   * commit's first parent" (a re-run of the check).
   */
  before: string;
  after: string;
  /**
   * Set when the reconciliation's watchdog queued this job: why the commit was overdue. The
   * publish check run's summary says so (docs/publishing.md, "Watchdog").
   */
  watchdog?: string;
  /** Only this part (a re-run of its check run); both when absent. */
  only?: 'catalogs' | 'bundles';
}

const ZERO = /^0+$/;

export function pushHandler(options: PrHandlerOptions): (context: Context<'push'>) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const branch = payload.repository.default_branch;
    if (payload.ref !== `refs/heads/${branch}` || payload.deleted || ZERO.test(payload.after)) return;
    const job: PublishJob = {
      ...repoTarget(payload),
      repoUrl: payload.repository.html_url,
      branch,
      before: payload.before,
      after: payload.after,
    };
    await options.queue.enqueue({
      key: `delivery:${context.id}`,
      group: `publish:${job.repoId}`,
      kind: 'publish',
      data: job,
    });
  };
}

/** The catalog roots a push changed, read from the pushed commit's config. */
async function changedRoots(dir: string, job: PublishJob, config: RepoConfig): Promise<string[]> {
  return rootsChangedBetween(dir, await previousCommit(dir, job), job.after, config);
}

/** The previous commit of a push: its `before`, or the first parent on a re-run; '' for none. */
async function previousCommit(dir: string, job: PublishJob): Promise<string> {
  const before = job.before === '' ? await revParse(dir, `${job.after}^`).catch(() => '') : job.before;
  return ZERO.test(before) ? '' : before;
}

/**
 * The bundle directories a push adds: at `bundles.path`, holding files at the pushed commit
 * and none at the previous one. A branch's first push adds none (it is not a merge).
 */
async function addedBundles(dir: string, job: PublishJob, config: RepoConfig): Promise<BundleDirectory[]> {
  return bundlesAddedBetween(dir, await previousCommit(dir, job), job.after, config);
}

/** The queued work for one push. Never throws: what goes wrong is reported on the check run. */
export async function publishJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: PublishJob,
): Promise<void> {
  const { github } = context;
  // The check a failure is reported on: the one whose work was under way.
  const progress: PublishProgress = { failing: job.only === 'bundles' ? BUNDLE_IMAGE_CHECK : PUBLISH_CHECK };
  try {
    // A merge that is no longer the branch head is published in a batch up to the head
    // (docs/publishing.md, "Batches"); a re-run or a retry publishes its own commit.
    const batches =
      job.before !== '' && !ZERO.test(job.before) && (options.publishBatches ?? publishBatchesFromEnv());
    const head = batches ? (await github.repos.branch(job.ref, job.branch)).commit.sha : job.after;
    // Depth 2 of history is enough to find the parent on a re-run.
    const fetch = job.before === '' || ZERO.test(job.before) ? [job.after] : [job.before, job.after];
    if (head !== job.after) fetch.push(head);
    await openSession(context, options, job, 'publish', { fetch }, (session) =>
      publishInSession({ context, options, job, session, progress }, batches ? head : undefined),
    );
  } catch (error) {
    await reportPublishFailure(context, job, progress.failing, error);
  }
}

/** Which check a failure is reported on, as the work goes on. */
interface PublishProgress {
  failing: string;
}

/** One publish job in its session. */
interface PublishRun {
  context: JobContext;
  options: PrHandlerOptions;
  job: PublishJob;
  session: Session;
  progress: PublishProgress;
}

/**
 * What the push publishes: the bundle images it adds, then the catalog roots it changes (in a
 * batch up to `batchHead` when that is given and the config builds images itself).
 */
async function publishInSession(run: PublishRun, batchHead: string | undefined): Promise<void> {
  const { context, options, job, session, progress } = run;
  const { dir } = session;
  const { config } = await readRepoConfig(dir, job.after);
  const { images, dispatch } = config.publish;
  // A repository that publishes only bundle images hears of a failure on their check.
  if (images.length === 0 && !dispatch) progress.failing = BUNDLE_IMAGE_CHECK;
  const bundles =
    config.bundles.pushImages && job.only !== 'catalogs' ? await addedBundles(dir, job, config) : [];
  const roots =
    (images.length > 0 || dispatch) && job.only !== 'bundles' ? await changedRoots(dir, job, config) : [];
  if (roots.length === 0 && bundles.length === 0) return; // nothing this push publishes
  const client = (): RegistryClient => scopedRegistryClient(options, config);
  if (batchHead !== undefined && images.length > 0 && !dispatch) {
    const start = { head: batchHead, roots, bundles, config, client };
    if (await publishInBatch(context, options, job, session, start)) return;
  }
  if (bundles.length > 0) {
    progress.failing = BUNDLE_IMAGE_CHECK;
    // Before the catalogs: a catalog of this merge may reference these very tags.
    await session.fetchBlobs([job.after]);
    const published = await publishBundles(dir, job, config, bundles, client());
    // One write: the run is created complete (docs/github-limits.md).
    await createCompletedRun(
      context.github,
      job.ref,
      job.after,
      BUNDLE_IMAGE_CHECK,
      bundleImageCheck(published),
    );
  }
  if (roots.length === 0) return;
  progress.failing = PUBLISH_CHECK;
  const runs = await createCheckRuns(context.github, job.ref, job.after, [PUBLISH_CHECK]);
  const runId = runs.get(PUBLISH_CHECK) as number;
  if (dispatch) return handPublishingToWorkflow(run, dispatch, roots, runId);
  const publications = await publishRootsOfCommit(run, config, roots, runId, client());
  await tellMergedPull(run, publications);
}

/** REGISTRY_USERNAME/REGISTRY_PASSWORD go only to the hosts this config publishes to. */
function scopedRegistryClient(options: PrHandlerOptions, config: RepoConfig): RegistryClient {
  if (!options.registry) throw new Error('no registry client is configured');
  const { images, baseImage } = config.publish;
  const bundleRegistry = config.bundles.pushImages
    ? templateRegistry(config.bundles.imageTemplate)
    : undefined;
  return options
    .registry()
    .scoped([...credentialHostsOf([...images, baseImage]), ...(bundleRegistry ? [bundleRegistry] : [])]);
}

/** The repository builds its images itself: a repository_dispatch or workflow_dispatch with the changed roots. */
async function handPublishingToWorkflow(
  run: PublishRun,
  dispatch: NonNullable<RepoConfig['publish']['dispatch']>,
  roots: string[],
  runId: number,
): Promise<void> {
  const { github } = run.context;
  const { job } = run;
  const payload = { sha: job.after, roots };
  if (dispatch.eventType) await github.repos.dispatch(job.ref, dispatch.eventType, payload);
  else
    await github.repos.dispatchWorkflow(job.ref, dispatch.workflow as string, job.branch, {
      sha: job.after,
      roots: roots.join(','),
    });
  await completeCheckRun(github, job.ref, runId, {
    conclusion: 'success',
    title: `Publishing handed to ${dispatch.eventType ? `repository_dispatch ${dispatch.eventType}` : `workflow ${dispatch.workflow}`}`,
    summary: `Changed catalog roots: ${roots.map((r) => `\`${r}\``).join(', ')}. The images are built by that workflow.`,
  });
}

/**
 * Each changed root built and pushed from the job's commit, and the run completed. Tags
 * without {sha} move: they get the catalog of the branch head, asked as late as possible
 * (a build of that head when a newer merge changed the root too).
 */
async function publishRootsOfCommit(
  run: PublishRun,
  config: RepoConfig,
  roots: string[],
  runId: number,
  client: RegistryClient,
): Promise<RootPublication[]> {
  const { github } = run.context;
  const { job, session } = run;
  await session.fetchBlobs([job.after]);
  const head = fetchedBranchHead(
    async () => (await github.repos.branch(job.ref, job.branch)).commit.sha,
    (shas) => session.fetchCommits(shas),
    job.after,
  );
  const publications: RootPublication[] = [];
  for (const root of roots)
    publications.push(
      ...(await publishRootUpToHead({ dir: session.dir, job, config, client }, root, job.after, head)),
    );
  const result = publishCheck(publications);
  const newer = publications.filter((p) => p.commit !== undefined);
  if (newer.length > 0)
    result.summary += `\n\n${job.branch} has moved past this commit while it was published: the moving tags of ${newer
      .map((p) => `\`${cell(p.root)}\` were built from \`${p.commit}\``)
      .join(', ')}, the branch head then (docs/publishing.md, "When main moves during a publish").`;
  if (job.watchdog) result.summary += `\n\n${watchdogNote(job.watchdog)}`;
  await completeCheckRun(github, job.ref, runId, result);
  return publications;
}

/**
 * The merged pull request hears where its change went. A failure here is logged, not a
 * failed publish: the images are out and the check run says so.
 */
async function tellMergedPull(run: PublishRun, publications: RootPublication[]): Promise<void> {
  const { context, options, job, session } = run;
  const body = releaseComment(job.after, publications);
  if (body === undefined || !options.appSlug) return;
  try {
    const message = await commitMessage(session.dir, job.after);
    const number = await mergedPullOf(context.github, job.ref, job.after, message);
    if (number !== undefined)
      await writeReleaseComment(
        context.github,
        job.ref,
        number,
        job.after,
        body,
        `${await options.appSlug()}[bot]`,
      );
  } catch (error) {
    context.log.warn({ err: error, sha: job.after }, 'could not write the release comment');
  }
}

/** Publishing failed: the check whose work was under way says why. */
async function reportPublishFailure(context: JobContext, job: PublishJob, failing: string, error: unknown) {
  const { github, log } = context;
  log.error({ err: error, sha: job.after }, 'publishing failed');
  const message = error instanceof Error ? error.message : String(error);
  try {
    const runs = await createCheckRuns(github, job.ref, job.after, [failing]);
    await completeCheckRun(github, job.ref, runs.get(failing) as number, {
      conclusion: 'failure',
      title: 'catalog-bot could not publish this commit',
      summary: `${message.slice(0, 4000)}\n\nRe-run this check to try again.${job.watchdog ? `\n\n${watchdogNote(job.watchdog)}` : ''}`,
    });
  } catch (again) {
    log.error({ err: again }, 'could not report the publishing failure');
  }
}

/** What the publish check run of a watchdog retry says (docs/publishing.md, "Watchdog"). */
export function watchdogNote(reason: string): string {
  return `**Retried by catalog-bot's publish watchdog:** ${reason}.`;
}
