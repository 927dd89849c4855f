// pull_request events: parse, decide, enqueue. The job mirrors the repository, runs the
// pull-request checks on the base and head commits and completes the check runs.
import type { Context } from 'probot';
import { runPrChecks, type PrCheckInput } from '../checks/pr.js';
import { blobAt, fetchMissingBlobs, mergeBase, revParse, withMirror } from '../git-mirror.js';
import { CONFIG_PATH } from '../checks/config.js';
import type { AppMetrics } from '../metrics.js';
import type { PolicyBundles } from '../publish/exists.js';
import type { RegistryClient } from '../publish/registry.js';
import type { JobQueue } from '../queue.js';
import { PERMISSIONS_CHECK } from '../checks/permissions.js';
import { mergeIfReady } from './merge.js';
import { LABELS, loadState, setLabel } from './pr-state.js';
import { teamMembers } from './teams.js';
import {
  completeAll,
  completeCheckRun,
  type CheckedAgainst,
  createCheckRuns,
  isGreen,
  PR_CHECK_NAMES,
  type RepoRef,
} from './check-runs.js';

export const PR_EVENTS = [
  'pull_request.opened',
  'pull_request.synchronize',
  'pull_request.reopened',
  'pull_request.ready_for_review',
  'pull_request.edited',
] as const;

export interface PrHandlerOptions {
  queue: JobQueue;
  /** Where the mirrors live (default: CATALOG_BOT_WORKDIR or the temp dir). */
  workDir?: string;
  /** Counts check outcomes for GET /metrics. */
  metrics?: AppMetrics;
  /**
   * The App's slug (its comments are `<slug>[bot]`, its check runs carry it). Without it
   * recorded approvals are not read and nothing is merged.
   */
  appSlug?: () => Promise<string>;
  /** The registry client for publishing (one per process, credentials from the environment). */
  registry?: () => RegistryClient;
  /** Renders bundle images (the registry): new template bundles, CRDs a catalog does not carry. */
  bundles?: PolicyBundles;
  /** Asks registries whether images exist (`catalog-bot/images`); without it that check is not run. */
  images?: PrCheckInput['images'];
}

/** What a job runs with: an installation's client and a logger. */
export type JobContext = Pick<Context, 'octokit' | 'log'>;

type PrContext = Context<'pull_request'>;

/** What the job needs, taken from the payload (plain JSON: it may travel through Redis). */
export interface PrJob {
  ref: RepoRef;
  number: number;
  headSha: string;
  /** The pull request's author; looked up with the pull request when unknown (re-runs). */
  author?: string;
  installationId?: number;
  cloneUrl: string;
  repoId: number;
}

/** Whether an event asks for the checks: `edited` only when the base branch changed. */
export function wantsChecks(context: PrContext): boolean {
  const { payload } = context;
  if (payload.action === 'edited') return payload.changes.base !== undefined;
  return ['opened', 'synchronize', 'reopened', 'ready_for_review'].includes(payload.action);
}

export function pullRequestHandler(options: PrHandlerOptions): (context: PrContext) => Promise<void> {
  return async (context) => {
    if (!wantsChecks(context)) return;
    const { payload } = context;
    const pr = payload.pull_request;
    const job: PrJob = {
      ref: { owner: payload.repository.owner.login, repo: payload.repository.name },
      number: pr.number,
      headSha: pr.head.sha,
      author: pr.user?.login ?? '',
      installationId: (payload as { installation?: { id: number } }).installation?.id,
      cloneUrl: payload.repository.clone_url,
      repoId: payload.repository.id,
    };
    await enqueueChecks(context, options, job, `delivery:${context.id}`);
  };
}

/**
 * Queue the checks of a pull request head. The first job (no group, so it never waits
 * behind the repository's other work) puts the check runs on the head in progress; it
 * then queues the job that completes them. A duplicate delivery (same key) does nothing.
 */
export async function enqueueChecks(
  context: Pick<Context, 'log'>,
  options: Pick<PrHandlerOptions, 'queue'>,
  job: PrJob,
  key: string,
): Promise<boolean> {
  const accepted = await options.queue.enqueue({ key, kind: 'announce-checks', data: job });
  if (!accepted) context.log.info({ key }, 'duplicate delivery ignored');
  return accepted;
}

export interface ChecksJob {
  job: PrJob;
  /** Check-run name -> id, created by the announce job: a retry updates the same runs. */
  runs: Record<string, number>;
}

/**
 * Create the check runs in progress, then queue the job that completes them. GitHub
 * failing (5xx, rate limits) throws, so the queue tries again later: nothing is dropped.
 * `again` (the job may have run before) reuses the runs it created then, by their
 * external id (the job's key): one set per delivery however often it runs.
 */
export async function announceChecksJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: PrJob,
  key: string,
  again = false,
): Promise<void> {
  let runs: Map<string, number>;
  try {
    runs = await createCheckRuns(context.octokit, job.ref, job.headSha, PR_CHECK_NAMES, {
      externalId: key,
      again,
    });
  } catch (error) {
    context.log.error({ err: error }, `could not create check runs on ${job.headSha}`);
    throw error;
  }
  const data: ChecksJob = { job, runs: Object.fromEntries(runs) };
  await options.queue.enqueue({ key: `${key}:checks`, group: `repo:${job.repoId}`, kind: 'pr-checks', data });
}

/**
 * GitHub answering 5xx or rate limited (after Octokit's own retries): worth another try
 * later. Anything else (git, a bad repository) would fail the same way again.
 */
export function isTransient(error: unknown): boolean {
  const e = error as { status?: number; message?: string; response?: { headers?: Record<string, string> } };
  if (typeof e?.status !== 'number') return false;
  if (e.status >= 500 || e.status === 429) return true;
  return (
    e.status === 403 &&
    (e.response?.headers?.['x-ratelimit-remaining'] === '0' || /rate limit/i.test(e.message ?? ''))
  );
}

/**
 * The queued work for one pull-request event. An error completes the runs as failed, with
 * the reason; when GitHub's answer was transient the error is thrown as well, so the queue
 * runs the job again (the same runs, updated again).
 */
export async function runChecksJob(
  context: JobContext,
  options: Partial<PrHandlerOptions>,
  data: ChecksJob,
): Promise<void> {
  const { octokit, log } = context;
  const { workDir, metrics, appSlug } = options;
  const { job } = data;
  const runs = new Map(Object.entries(data.runs));
  // What the results are computed against; the merge gate counts them only for this pull request and base.
  let checked: CheckedAgainst | undefined;
  try {
    const { data: current } = await octokit.rest.pulls.get({ ...job.ref, pull_number: job.number });
    if (current.head.sha !== job.headSha) {
      await completeAll(octokit, job.ref, runs, {
        conclusion: 'skipped',
        title: 'Superseded by a newer commit',
        summary: `The pull request head is now ${current.head.sha}; that commit is checked instead.`,
      });
      for (const name of runs.keys()) metrics?.checkOutcomes.inc({ check: name, conclusion: 'skipped' });
      return;
    }
    const slug = appSlug ? await appSlug() : undefined;
    const status = slug ? await loadState(octokit, job.ref, job.number, `${slug}[bot]`) : undefined;
    const { token } = (await octokit.auth({ type: 'installation' })) as { token: string };
    const base = current.base.sha;
    const author = job.author ?? current.user?.login ?? '';
    checked = { base: current.base.ref, sha: base, pr: job.number, author };
    const against = checked;
    const mirror = {
      cloneUrl: job.cloneUrl,
      repoId: job.repoId,
      token,
      fetch: [base, `refs/pull/${job.number}/head`],
    };
    const result = await withMirror(
      mirror,
      async (dir) => {
        for (const sha of [base, job.headSha]) {
          if ((await revParse(dir, sha).catch(() => '')) !== sha)
            throw new Error(`commit ${sha} was not fetched`);
        }
        await fetchMissingBlobs(dir, [base, job.headSha], token);
        against.config = await blobAt(dir, base, CONFIG_PATH);
        // Judge the pull request's own change (what GitHub shows as its diff) by today's rules;
        // how it combines with newer base commits is checked right before a merge.
        return runPrChecks({
          repo: dir,
          base: await mergeBase(dir, base, job.headSha),
          rules: base,
          head: job.headSha,
          author,
          approvers: [],
          approvals: status?.state.approvals ?? [],
          ...(options.images ? { images: options.images } : {}),
          ...(options.bundles
            ? { resolveBundle: options.bundles.resolveBundle, bundleManifests: options.bundles.manifests }
            : {}),
          teams: teamMembers(octokit, job.installationId),
        });
      },
      { workDir },
    );
    await Promise.all(
      [...runs].map(async ([name, id]) => {
        const check = result.checks.find((c) => c.name === name) ?? {
          conclusion: 'neutral' as const,
          title: 'Not run',
          summary: `${name} did not run on this change.`,
        };
        await completeCheckRun(octokit, job.ref, id, { ...check, checked: against });
        metrics?.checkOutcomes.inc({ check: name, conclusion: check.conclusion });
      }),
    );
    // The `approved` label mirrors the permissions decision, for people to see.
    const permissions = result.checks.find((c) => c.name === PERMISSIONS_CHECK);
    const labels = (current.labels ?? []).map((l) => l.name);
    if (permissions && slug) {
      await setLabel(
        octokit,
        job.ref,
        job.number,
        labels,
        LABELS.approved,
        permissions.conclusion === 'success',
      );
    }
    const { queue } = options;
    const green = result.checks.every((c) => isGreen(c.conclusion));
    if (slug && queue && green && !labels.includes(LABELS.hold)) {
      const outcome = await mergeIfReady(
        context,
        {
          ref: job.ref,
          number: job.number,
          cloneUrl: job.cloneUrl,
          repoId: job.repoId,
          installationId: job.installationId,
        },
        { queue, workDir, appSlug: async () => slug },
      );
      log.info({ pr: job.number, outcome }, 'auto-merge');
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error({ err: error }, `checks of ${job.ref.owner}/${job.ref.repo}#${job.number} failed`);
    for (const name of runs.keys()) metrics?.checkOutcomes.inc({ check: name, conclusion: 'error' });
    try {
      await completeAll(octokit, job.ref, runs, {
        conclusion: 'failure',
        title: 'catalog-bot could not check this pull request',
        summary: [
          'catalog-bot hit an error before it could finish the checks, so this change is not verified.',
          'Push a new commit or re-run the checks to try again.',
          '',
          '```',
          message.slice(0, 4000),
          '```',
        ].join('\n'),
        // A failure for this base is the newest result for it: an older green one no longer counts.
        ...(checked ? { checked } : {}),
      });
    } catch (again) {
      log.error({ err: again }, 'could not report the failure on the check runs');
    }
    if (isTransient(error)) throw error;
  }
}

export { PR_CHECK_NAMES };
