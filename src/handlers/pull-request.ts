// pull_request events: parse, decide, enqueue. The job mirrors the repository, runs the
// pull-request checks on the base and head commits and completes the check runs.
import type { Context } from 'probot';
import type { PrCheckInput, PrCheckResult } from '../checks/pr.js';
import { defaultWorkDir } from '../git/mirror.js';
import { objectAt } from '../git/read.js';
import { CONFIG_PATH } from '../checks/config.js';
import type { AppMetrics } from '../metrics.js';
import type { PolicyBundles } from '../publish/exists.js';
import type { RegistryClient } from '../publish/registry.js';
import { checksSubject, QueueUnavailableError, type JobQueue } from '../queue.js';
import { PERMISSIONS_CHECK } from '../checks/permissions.js';
import { LABELS, loadState, setLabel } from './pr-state.js';
import { releaseSourceOf } from '../flows/release/source.js';
import { dequeueIfQueued } from '../flows/merge-queue/queue.js';
import { impactSection } from '../flows/impact/section.js';
import type { ImpactCommentJob } from '../flows/impact/status.js';
import { storeImpact } from '../flows/pages/store.js';
import { pageUrl } from '../flows/pages/urls.js';
import { impactPath } from '../site/impact-page.js';
import {
  openSession,
  pullTarget,
  pullTargetOf,
  type PullTarget,
  type SessionContext,
  type SessionOptions,
} from './session.js';
import {
  requiredChecks,
  resultsFor,
  unanswered,
  completeAll,
  completeCheckRun,
  createCompletedRun,
  type CheckedAgainst,
  type Completion,
  type ListedRun as RecordedRun,
  createCheckRuns,
  isGreen,
  PR_CHECK_NAMES,
} from './check-runs.js';

export const PR_EVENTS = [
  'pull_request.opened',
  'pull_request.synchronize',
  'pull_request.reopened',
  'pull_request.ready_for_review',
  'pull_request.edited',
] as const;

export interface PrHandlerOptions extends SessionOptions {
  queue: JobQueue;
  /** Counts check outcomes for GET /metrics. */
  metrics?: AppMetrics;
  /**
   * The App's slug (its comments are `<slug>[bot]`, its check runs carry it). Without it
   * recorded approvals are not read and nothing is merged.
   */
  appSlug?: () => Promise<string>;
  /** The registry client for publishing (one per process, credentials from the environment). */
  registry?: () => RegistryClient;
  /**
   * Publish merges that land close together as one batch (docs/publishing.md, "Batches");
   * default: on unless `CATALOG_BOT_PUBLISH_BATCHES=off`.
   */
  publishBatches?: boolean;
  /** Renders bundle images (the registry): new template bundles, CRDs a catalog does not carry. */
  bundles?: PolicyBundles;
  /** Asks registries whether images exist (`catalog-bot/images`); without it that check is not run. */
  images?: PrCheckInput['images'];
  /** Reads published catalogs (`catalog-bot/prune`); without it that check is not run. */
  published?: PrCheckInput['published'];
  /** Checks slower than this show their runs in progress meanwhile (default: announceAfterMsFromEnv()). */
  announceAfterMs?: number;
  /**
   * How long a head must have been the head before a plain `/approve` counts for it
   * (default: approveGraceMsFromEnv(); docs/security.md "Approvals are what the approver saw").
   */
  approveGraceMs?: number;
  /** The App's public URL: check runs link to the pull request's impact page (docs/site.md). */
  publicUrl?: string;
}

/** What a job runs with: an installation's client and a logger. */
export type JobContext = SessionContext;

type PrContext = Context<'pull_request'>;

/** What the job needs, taken from the payload (plain JSON: it may travel through Redis). */
export interface PrJob extends PullTarget {
  headSha: string;
  /** The pull request's author; looked up with the pull request when unknown (re-runs). */
  author?: string;
  /**
   * When the work was asked for (ms since the epoch): a complete set of runs for this pull
   * request on this head started later already answers it (many deliveries, one check).
   */
  queuedAt?: number;
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
      ...pullTarget(payload, pr.number),
      headSha: pr.head.sha,
      author: pr.user?.login ?? '',
    };
    await enqueueChecks(context, options, job, `delivery:${context.id}`);
  };
}

/**
 * Queue the checks of a pull request head, in the repository's queue group. No check run is
 * written yet (docs/github-limits.md): the job writes its runs when its results are ready,
 * and a head that is no longer the pull request's head by the time the job starts gets none.
 * A duplicate delivery (same key) does nothing.
 */
export async function enqueueChecks(
  context: Pick<Context, 'log'>,
  options: Pick<PrHandlerOptions, 'queue'>,
  job: PrJob,
  key: string,
): Promise<boolean> {
  const data: ChecksJob = { job: { ...job, queuedAt: job.queuedAt ?? Date.now() } };
  const accepted = await options.queue.enqueue({
    key,
    group: `repo:${job.repoId}`,
    kind: 'pr-checks',
    data,
    subject: checksSubject(job.repoId, job.number, job.headSha),
  });
  if (!accepted) context.log.info({ key }, 'duplicate delivery ignored');
  return accepted;
}

export interface ChecksJob {
  job: PrJob;
  /** Check-run name -> id of runs already created in progress (jobs queued by an earlier version). */
  runs?: Record<string, number>;
}

/**
 * How long the checks may take before their runs are shown in progress (default 10 s,
 * CATALOG_BOT_ANNOUNCE_AFTER_SECONDS). Results ready sooner are written once, completed:
 * one request per check instead of two (docs/github-limits.md).
 */
export function announceAfterMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.CATALOG_BOT_ANNOUNCE_AFTER_SECONDS ?? 10);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 10_000;
}

/**
 * A plain `/approve` counts for a head only if it was the head this long before the comment
 * (default 60 s, CATALOG_BOT_APPROVE_GRACE_SECONDS): a reviewer who read the head before a
 * push is not taken to approve the push (docs/security.md).
 */
export function approveGraceMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.CATALOG_BOT_APPROVE_GRACE_SECONDS ?? 60);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 60_000;
}

/** Error codes of a connection that failed, not of a request GitHub or Redis refused. */
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * GitHub answering 5xx or rate limited (after Octokit's own retries), a connection failing,
 * or the queue unreachable (Redis away, docs/replicas.md): worth another try
 * later. Anything else (git, a bad repository) would fail the same way again.
 */
export function isTransient(error: unknown): boolean {
  // The queue (Redis) away, or the network between: nothing about the change itself.
  if (error instanceof QueueUnavailableError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && NETWORK_ERRORS.has(code)) return true;
  const e = error as { status?: number; message?: string; response?: { headers?: Record<string, string> } };
  if (typeof e?.status !== 'number') return false;
  if (e.status >= 500 || e.status === 429) return true;
  return (
    e.status === 403 &&
    (e.response?.headers?.['x-ratelimit-remaining'] === '0' || /rate limit/i.test(e.message ?? ''))
  );
}

/** A run as GitHub lists it: what the gate reads, plus who wrote it and for which job. */
type ListedRun = RecordedRun & { external_id?: string | null; app?: { slug?: string } | null };

/**
 * Whether the newest runs of this App on the head, one per check that applies (the newest
 * record says which), are complete for this pull request and base branch and were started
 * after `since`: the work asked for then is done (one job for many deliveries of the same head).
 */
export function answeredSince(runs: ListedRun[], baseRef: string, number: number, since: number): boolean {
  const results = resultsFor(runs, baseRef, number);
  if (unanswered(results) !== undefined) return false;
  return requiredChecks(results).every((name) => {
    const started = Date.parse(results.get(name)?.started_at ?? '');
    return !Number.isNaN(started) && started >= since;
  });
}

const NOT_COMPLETED = Symbol('slow');

/** One checks job as it runs: the job, its runs (check name -> id) and how they are written. */
interface ChecksJobRun {
  context: JobContext;
  options: Partial<PrHandlerOptions>;
  job: PrJob;
  runs: Map<string, number>;
  /** The job's key: the runs' external id, and the prefix of the jobs it queues. */
  key: string;
  attempt: number;
  slug?: string;
}

type Pull = Awaited<ReturnType<JobContext['github']['pulls']['get']>>;

/**
 * The queued work for one pull-request head (docs/github-limits.md). A head that is no
 * longer the pull request's head when the job starts, or whose checks another job already
 * ran since this one was asked for, costs no write. Results ready within `announceAfterMs`
 * are written once, each run created completed; slower checks first show their runs in
 * progress. An error completes the runs as failed, with the reason; when GitHub's answer
 * was transient the error is thrown as well, so the queue runs the job again. `key` (the
 * job's) is the runs' external id: a job run again (`attempt` > 1) updates the runs it made.
 */
export async function runChecksJob(
  context: JobContext,
  options: Partial<PrHandlerOptions>,
  data: ChecksJob,
  key = '',
  attempt = 1,
): Promise<void> {
  const { job } = data;
  const run: ChecksJobRun = {
    context,
    options,
    job,
    runs: new Map(Object.entries(data.runs ?? {})),
    key,
    attempt,
  };
  // What the results are computed against; the merge gate counts them only for this pull request and base.
  let checked: CheckedAgainst | undefined;
  try {
    const current = await context.github.pulls.get(job.ref, job.number);
    if (current.head.sha !== job.headSha) return await skipSupersededHead(run, current.head.sha);
    if (options.appSlug) run.slug = await options.appSlug();
    if (run.runs.size === 0 && (await answeredAlready(run, current.base.ref))) return;
    const status = run.slug
      ? await loadState(context.github, job.ref, job.number, `${run.slug}[bot]`)
      : undefined;
    checked = {
      base: current.base.ref,
      sha: current.base.sha,
      pr: job.number,
      author: job.author ?? current.user?.login ?? '',
    };
    const startedAt = new Date().toISOString();
    const { result, measuredFrom } = await checkHead(run, current, checked, status, startedAt);
    const completions = completionsOf(result, run.runs);
    const detailsUrl = await storeImpactPage(run, current, result, measuredFrom);
    if (detailsUrl !== undefined) for (const c of Object.values(completions)) c.detailsUrl = detailsUrl;
    const jobKey = key || `pr:${job.repoId}:${job.number}:${job.headSha}:${startedAt}`;
    await queueImpactComment(run, result, measuredFrom, detailsUrl, jobKey);
    await options.queue?.enqueue({
      key: `${jobKey}:results`,
      group: writeGroup(job),
      kind: 'pr-results',
      data: {
        job,
        checked: {
          ...checked,
          checks: PR_CHECK_NAMES.filter((name) => result.checks.some((c) => c.name === name)),
        },
        startedAt,
        runs: Object.fromEntries(run.runs),
        completions,
        green: result.checks.every((c) => isGreen(c.conclusion)),
        labels: (current.labels ?? []).map((l) => l.name),
        ...(result.release ? { release: true } : {}),
      } satisfies ResultsJob,
      // The head stays busy until its results are written (reconciliation waits for them).
      subject: checksSubject(job.repoId, job.number, job.headSha),
    });
  } catch (error) {
    await reportChecksFailure(run, error, checked);
    if (isTransient(error)) throw error;
  }
}

/** A head that is no longer the pull request's: dropped, or its runs completed as skipped. */
async function skipSupersededHead(run: ChecksJobRun, newHead: string): Promise<void> {
  const { context, job, runs } = run;
  if (runs.size === 0) {
    context.log.info(
      { pr: job.number, head: job.headSha },
      'head superseded before its checks started: dropped',
    );
    return;
  }
  await completeAll(context.github, job.ref, runs, {
    conclusion: 'skipped',
    title: 'Superseded by a newer commit',
    summary: `The pull request head is now ${newHead}; that commit is checked instead.`,
  });
  for (const name of runs.keys())
    run.options.metrics?.checkOutcomes.inc({ check: name, conclusion: 'skipped' });
}

/**
 * Read the head's runs of this App once (answered from the ETag cache when nothing changed)
 * instead of writing: a job run again takes back the runs it made (into `run.runs`); true
 * when another job checked the head since this one was asked for (nothing to do).
 */
async function answeredAlready(run: ChecksJobRun, baseRef: string): Promise<boolean> {
  const { context, job, runs, key, attempt, slug } = run;
  const listed = await context.github.checks
    .onCommit(job.ref, job.headSha, { filter: 'all' })
    .then((all) => (all as ListedRun[]).filter((r) => slug === undefined || r.app?.slug === slug))
    .catch((error: unknown) => {
      // A retry must find the runs it made; a first start can do without the list.
      if (attempt > 1) throw error;
      context.log.debug({ err: error }, 'could not list the check runs of the head');
      return undefined;
    });
  if (!listed) return false;
  if (key && attempt > 1)
    for (const r of listed)
      if (
        r.external_id === key &&
        (PR_CHECK_NAMES as readonly string[]).includes(r.name) &&
        !runs.has(r.name)
      )
        runs.set(r.name, r.id);
  if (
    runs.size > 0 ||
    job.queuedAt === undefined ||
    !answeredSince(listed, baseRef, job.number, job.queuedAt)
  )
    return false;
  context.log.info({ pr: job.number, head: job.headSha }, 'checked since this was asked for: dropped');
  return true;
}

/**
 * Run the checks of the head in a session; when they take longer than `announceAfterMs`,
 * create the missing runs in progress meanwhile, so people see them running.
 */
async function checkHead(
  run: ChecksJobRun,
  current: Pull,
  against: CheckedAgainst,
  status: Awaited<ReturnType<typeof loadState>> | undefined,
  startedAt: string,
): Promise<{ result: PrCheckResult; measuredFrom: string }> {
  const { context, options, job, runs, key } = run;
  const base = current.base.sha;
  // The App's own release pull request, from a branch of this repository (docs/bundles.md).
  const derivedRelease = await releaseSourceOf(
    context.github,
    job.ref,
    current,
    run.slug !== undefined ? `${run.slug}[bot]` : undefined,
  );
  const commits = {
    fetch: [base, `refs/pull/${job.number}/head`],
    verify: [base, job.headSha],
    blobs: [base, job.headSha],
  };
  let measuredFrom = base;
  const work = openSession(context, options, job, 'pr-checks', commits, async (session) => {
    against.config = await objectAt(session.dir, base, CONFIG_PATH);
    measuredFrom = await session.mergeBase(base, job.headSha);
    // Judge the pull request's own change (what GitHub shows as its diff) by today's rules;
    // how it combines with newer base commits is checked right before a merge.
    return session.run({
      base: measuredFrom,
      rules: base,
      head: job.headSha,
      author: against.author,
      approvers: [],
      approvals: status?.state.approvals ?? [],
      allowPrunes: status?.state.allowPrunes ?? [],
      // A bundle-only change is judged with its catalog update applied (docs/bundles.md).
      checkRelease: true,
      // What the change means for clusters, for the status comment (docs/impact.md).
      impact: run.slug !== undefined,
      ...(derivedRelease ? { derivedRelease: { changed: derivedRelease.changed } } : {}),
      ...(options.images ? { images: options.images } : {}),
      ...(options.published ? { published: options.published } : {}),
      ...(options.bundles
        ? { resolveBundle: options.bundles.resolveBundle, bundleManifests: options.bundles.manifests }
        : {}),
    });
  });
  // Settled either way here, so waiting on the timer first leaves no rejection unheard.
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<typeof NOT_COMPLETED>((resolve) => {
    timer = setTimeout(() => resolve(NOT_COMPLETED), options.announceAfterMs ?? announceAfterMsFromEnv());
  });
  const first = await Promise.race([work, slow]).finally(() => clearTimeout(timer));
  if (first !== NOT_COMPLETED) return { result: first, measuredFrom };
  // Slow checks: people see them running meanwhile.
  const missing = PR_CHECK_NAMES.filter((name) => !runs.has(name));
  if (missing.length > 0) {
    try {
      const created = await createCheckRuns(context.github, job.ref, job.headSha, missing, {
        ...(key ? { externalId: key } : {}),
        startedAt,
      });
      for (const [name, id] of created) runs.set(name, id);
    } catch (error) {
      context.log.error({ err: error }, `could not create check runs on ${job.headSha}`);
      throw error;
    }
  }
  const result = await work;
  return { result, measuredFrom };
}

/**
 * What each run is completed with. The writes wait their turn in the installation's write
 * queue (one write a second), so the repository's next pull request is checked meanwhile
 * (docs/github-limits.md). A run only for a check that applies to this change
 * (docs/github-limits.md, "Checks that do not apply"); the record in every run names them,
 * so the merge gate requires each. Runs already shown in progress for the others are
 * completed as not run.
 */
function completionsOf(result: PrCheckResult, runs: Map<string, number>): Record<string, Completion> {
  const completions: Record<string, Completion> = {};
  for (const check of result.checks)
    completions[check.name] = {
      conclusion: check.conclusion,
      title: check.title,
      summary: check.summary,
      annotations: check.annotations,
    };
  for (const name of runs.keys())
    completions[name] ??= {
      conclusion: 'neutral',
      title: 'Not run',
      summary: `${name} did not run on this change.`,
    };
  return completions;
}

/**
 * The whole impact, kept for the pull request's page; returns the page's address (the runs'
 * "Details" link) when the App knows its address and serves the repository's pages (docs/site.md).
 */
async function storeImpactPage(
  run: ChecksJobRun,
  current: Pull,
  result: PrCheckResult,
  measuredFrom: string,
): Promise<string | undefined> {
  const { context, options, job } = run;
  if (!result.impact) return undefined;
  const stored = await storeImpact(options.workDir ?? defaultWorkDir(), job.repoId, {
    number: job.number,
    head: job.headSha,
    base: measuredFrom,
    catalogs: result.impact,
  }).then(
    () => true,
    (error: unknown) => {
      context.log.warn({ err: error, pr: job.number }, 'could not store the impact for its page');
      return false;
    },
  );
  if (!stored || !options.publicUrl || current.base.repo.private !== false) return undefined;
  return pageUrl(options.publicUrl, job.ref.owner, job.ref.repo, impactPath(job.number, job.headSha));
}

/** The impact section of the status comment, written in the repository's queue (where approvals and heads are saved: one save at a time). */
async function queueImpactComment(
  run: ChecksJobRun,
  result: PrCheckResult,
  measuredFrom: string,
  detailsUrl: string | undefined,
  jobKey: string,
): Promise<void> {
  const { options, job } = run;
  if (!run.slug || !result.impact || !options.queue) return;
  const impact: ImpactCommentJob = {
    ...pullTargetOf(job),
    headSha: job.headSha,
    section: impactSection(result.impact, measuredFrom, job.headSha, undefined, detailsUrl),
    ...(Object.keys(result.impact).length === 0 ? { empty: true } : {}),
  };
  await options.queue.enqueue({
    key: `${jobKey}:impact`,
    group: `repo:${job.repoId}`,
    kind: 'pr-impact',
    data: impact,
  });
}

/**
 * The checks could not finish: their runs completed as failed with the reason; with no run
 * yet, a lasting error is shown and a transient one is left to the queue's next try.
 */
async function reportChecksFailure(run: ChecksJobRun, error: unknown, checked: CheckedAgainst | undefined) {
  const { context, options, job, runs, key } = run;
  const message = error instanceof Error ? error.message : String(error);
  context.log.error({ err: error }, `checks of ${job.ref.owner}/${job.ref.repo}#${job.number} failed`);
  for (const name of PR_CHECK_NAMES) options.metrics?.checkOutcomes.inc({ check: name, conclusion: 'error' });
  const failure = {
    conclusion: 'failure' as const,
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
  };
  try {
    await completeAll(context.github, job.ref, runs, failure);
    if (runs.size === 0 && !isTransient(error))
      await Promise.all(
        PR_CHECK_NAMES.map((name) =>
          createCompletedRun(
            context.github,
            job.ref,
            job.headSha,
            name,
            failure,
            key ? { externalId: key } : {},
          ),
        ),
      );
  } catch (again) {
    context.log.error({ err: again }, 'could not report the failure on the check runs');
  }
}

/** The installation's write queue: its writes are paced, one job at a time across replicas. */
function writeGroup(job: PrJob): string {
  return `writes:${job.installationId ?? `repo:${job.repoId}`}`;
}

/**
 * Push the checked catalog update of a bundle-only head onto its branch (handlers/release.ts,
 * docs/bundles.md).
 */
export interface ReleasePushJob extends PullTarget {
  /** The head whose checks were green: the only one the update goes onto. */
  headSha: string;
}

/** A pull request head's results, to be written (plain JSON: it may travel through Redis). */
export interface ResultsJob {
  job: PrJob;
  checked: CheckedAgainst;
  /** When the checks started (the runs' `started_at`). */
  startedAt: string;
  /** Runs shown in progress while the checks ran: completed, not created. */
  runs: Record<string, number>;
  /** Per check name, what its run says. */
  completions: Record<string, Completion>;
  /** Every check that ran is green (the merge gate looks then). */
  green: boolean;
  /** The pull request's labels when it was checked. */
  labels: string[];
  /** The head carries only a bundle, and its catalog update is due (docs/bundles.md). */
  release?: boolean;
}

/**
 * Write a head's results: each run created completed (or, shown in progress, completed),
 * the `approved` label when it changes, then the merge gate is queued in the repository's
 * group. A head pushed over while the results waited gets nothing, unless its runs were
 * already shown. `key` is the runs' external id: a retry updates the runs it made.
 */
export async function writeResultsJob(
  context: JobContext,
  options: Partial<PrHandlerOptions>,
  data: ResultsJob,
  key: string,
  attempt = 1,
): Promise<void> {
  const { github, log } = context;
  const { job } = data;
  const runs = new Map(Object.entries(data.runs));
  try {
    let labels = data.labels;
    if (attempt > 1) {
      const listed = (await github.checks.onCommit(job.ref, job.headSha, { filter: 'all' })) as ListedRun[];
      for (const r of listed) if (r.external_id === key && !runs.has(r.name)) runs.set(r.name, r.id);
    }
    if (runs.size === 0) {
      const now = await github.pulls.get(job.ref, job.number);
      if (now.head.sha !== job.headSha) {
        log.info({ pr: job.number, head: job.headSha }, 'head superseded while its results waited: dropped');
        return;
      }
      labels = (now.labels ?? []).map((l) => l.name);
    }
    // Every write settles before the job fails: a retry lists the runs this attempt made, so
    // a write still waiting its turn when another failed must not land after that listing.
    const written = await Promise.allSettled(
      PR_CHECK_NAMES.filter((name) => data.completions[name] !== undefined).map(async (name) => {
        const completion = { ...data.completions[name]!, checked: data.checked };
        const id = runs.get(name);
        if (id !== undefined) await completeCheckRun(github, job.ref, id, completion);
        else
          await createCompletedRun(github, job.ref, job.headSha, name, completion, {
            externalId: key,
            startedAt: data.startedAt,
          });
        options.metrics?.checkOutcomes.inc({ check: name, conclusion: completion.conclusion });
      }),
    );
    const failed = written.find((w): w is PromiseRejectedResult => w.status === 'rejected');
    if (failed) throw failed.reason;
    const slug = options.appSlug ? await options.appSlug() : undefined;
    // The `approved` label mirrors the permissions decision, for people to see.
    const permissions = data.completions[PERMISSIONS_CHECK];
    // An approval lost: out of GitHub's merge queue, where the head may wait (docs/merge-queue.md).
    if (slug && permissions && permissions.conclusion !== 'success' && labels.includes(LABELS.approved)) {
      const pull = await github.pulls.get(job.ref, job.number);
      if (pull.head.sha === job.headSha) await dequeueIfQueued(github, job.ref, pull);
    }
    if (permissions && slug)
      await setLabel(
        github,
        job.ref,
        job.number,
        labels,
        LABELS.approved,
        permissions.conclusion === 'success',
      );
    if (slug && options.queue && data.green && data.release) {
      // Before the merge gate looks: on a branch of this repository the update is pushed first.
      const push: ReleasePushJob = { ...pullTargetOf(job), headSha: job.headSha };
      await options.queue.enqueue({
        key: `${key}:release`,
        group: `repo:${job.repoId}`,
        kind: 'release-push',
        data: push,
      });
    }
    if (slug && options.queue && data.green && !labels.includes(LABELS.hold)) {
      const target: PullTarget = pullTargetOf(job);
      await options.queue.enqueue({
        key: `${key}:merge`,
        group: `repo:${job.repoId}`,
        kind: 'merge',
        data: target,
      });
    }
  } catch (error) {
    log.error(
      { err: error },
      `could not write the results of ${job.ref.owner}/${job.ref.repo}#${job.number}`,
    );
    if (isTransient(error)) throw error;
  }
}

export { PR_CHECK_NAMES };
