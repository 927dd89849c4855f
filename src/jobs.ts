// Job kinds to the functions that run them. A job is data (see queue.ts); here it gets an
// installation's client and a logger, so any replica can run any job. Each kind says what
// its data looks like (checked before it runs: a job may come from Redis, written by an
// earlier version) and which installation it runs as.
import type { Probot } from 'probot';
import { checkOpenPullsJob, removeMirrorJob, type OpenPullsJob } from './handlers/installation.js';
import { noteHeadJob, type HeadJob } from './handlers/heads.js';
import { runCommandsJob, type CommentJob } from './handlers/issue-comment.js';
import { reviewJob, type ReviewJob } from './handlers/reviews.js';
import { mergeJob, type MergeTarget } from './handlers/merge.js';
import { editPullJob, type EditPullJob } from './flows/ocp-promote/flow.js';
import {
  enqueueChecks,
  runChecksJob,
  writeResultsJob,
  type ResultsJob,
  type ChecksJob,
  type JobContext,
  type PrHandlerOptions,
  type PrJob,
} from './handlers/pull-request.js';
import { publishJob, type PublishJob } from './handlers/push.js';
import {
  releaseFollowUpJob,
  releasePushJob,
  type ReleaseFollowUpJob,
  type ReleasePushJob,
} from './flows/release/flow.js';
import type { PullTarget, RepoTarget } from './handlers/session.js';
import { ConditionalCache } from './github/conditional-requests.js';
import { probotGitHubApp } from './github/adapter.js';
import type { JobRunner, JobSpec } from './queue.js';
import { impactCommentJob, type ImpactCommentJob } from './flows/impact/status.js';
import { mergeGroupJob, type MergeGroupJob } from './flows/merge-queue/flow.js';
import { mergeBatchJob } from './flows/merge-batch/flow.js';
import { MERGE_BATCH_KIND, type MergeBatchJob } from './flows/merge-batch/job.js';

type JobOptions = PrHandlerOptions & { appSlug: () => Promise<string> };

/** What a runner gets besides the data: the job's key and which attempt this is. */
interface JobRun {
  key: string;
  attempt: number;
}

interface JobKind<T> {
  /** Whether queued data is this kind's (the fields its runner relies on are there). */
  is: (data: unknown) => data is T;
  /** The installation the job runs as. */
  installation: (data: T) => number | undefined;
  run: (context: JobContext, options: JobOptions, data: T, job: JobRun) => Promise<void>;
}

/** One kind, its data type closed over: the table holds them all under one type. */
type Runner = {
  installation: (data: unknown) => number | undefined;
  run: (context: JobContext, options: JobOptions, data: unknown, job: JobRun) => Promise<void>;
};

function kind<T>(k: JobKind<T>): Runner {
  const malformed = () => new Error('the job data is not of its kind; dropped');
  return {
    installation: (data) => (k.is(data) ? k.installation(data) : undefined),
    run: async (context, options, data, job) => {
      if (!k.is(data)) throw malformed();
      return k.run(context, options, data, job);
    },
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
type Fields = Record<string, unknown>;
const isRepoTarget = (v: unknown): v is RepoTarget & Fields =>
  isRecord(v) &&
  isRecord(v.ref) &&
  typeof v.ref.owner === 'string' &&
  typeof v.ref.repo === 'string' &&
  typeof v.repoId === 'number' &&
  typeof v.cloneUrl === 'string';
const isPullTarget = (v: unknown): v is PullTarget & Fields =>
  isRepoTarget(v) && typeof v.number === 'number';
const isPrJob = (v: unknown): v is PrJob & Fields => isPullTarget(v) && typeof v.headSha === 'string';
const wrapsPrJob = (v: unknown): v is { job: PrJob } & Fields => isRecord(v) && isPrJob(v.job);
const own = (data: { installationId?: number }) => data.installationId;

/** Every job kind (JobSpec.kind) and what runs it. */
export const JOB_KINDS: Record<string, Runner> = {
  // Queued by an earlier version (runs were announced at once): checked in the repository's group now.
  'announce-checks': kind<PrJob>({
    is: isPrJob,
    installation: own,
    run: async (context, options, data, { key }) => {
      await enqueueChecks(context, options, data, `${key}:checks`);
    },
  }),
  'pr-checks': kind<ChecksJob>({
    is: wrapsPrJob,
    installation: (data) => data.job.installationId,
    run: (context, options, data, { key, attempt }) => runChecksJob(context, options, data, key, attempt),
  }),
  'pr-results': kind<ResultsJob>({
    is: (v): v is ResultsJob => wrapsPrJob(v) && isRecord(v.completions) && isRecord(v.checked),
    installation: (data) => data.job.installationId,
    run: (context, options, data, { key, attempt }) => writeResultsJob(context, options, data, key, attempt),
  }),
  commands: kind<CommentJob>({
    is: (v): v is CommentJob => isPullTarget(v) && typeof v.commentId === 'number' && isRecord(v.parsed),
    installation: own,
    run: (context, options, data, { key }) => runCommandsJob(context, options, data, key),
  }),
  review: kind<ReviewJob>({
    is: (v): v is ReviewJob =>
      isPullTarget(v) &&
      typeof v.reviewId === 'number' &&
      typeof v.reviewer === 'string' &&
      typeof v.commitId === 'string' &&
      typeof v.dismissed === 'boolean',
    installation: own,
    run: (context, options, data, { key }) => reviewJob(context, options, data, key),
  }),
  // A pull request of `/ocp-promote`, written in the installation's write queue.
  'edit-pull': kind<EditPullJob>({
    is: (v): v is EditPullJob =>
      isRepoTarget(v) &&
      typeof v.branch === 'string' &&
      typeof v.parent === 'string' &&
      typeof v.tree === 'string' &&
      Array.isArray(v.files),
    installation: own,
    run: (context, _options, data) => editPullJob(context, data),
  }),
  'note-head': kind<HeadJob>({
    is: (v): v is HeadJob => isRecord(v) && isRecord(v.ref) && typeof v.number === 'number',
    installation: own,
    run: (context, options, data) => noteHeadJob(context, options, data),
  }),
  // The impact section of the status comment, in the repository's queue (docs/impact.md).
  'pr-impact': kind<ImpactCommentJob>({
    is: (v): v is ImpactCommentJob =>
      isPullTarget(v) && typeof v.headSha === 'string' && typeof v.section === 'string',
    installation: own,
    run: (context, options, data) => impactCommentJob(context, options, data),
  }),
  merge: kind<MergeTarget>({
    is: isPullTarget,
    installation: own,
    run: (context, options, data) => mergeJob(context, options, data),
  }),
  // The bot's own batch merge into one base branch (docs/merge-queue.md).
  [MERGE_BATCH_KIND]: kind<MergeBatchJob>({
    is: (v): v is MergeBatchJob =>
      isPullTarget(v) &&
      typeof v.baseRef === 'string' &&
      typeof v.baseSha === 'string' &&
      typeof v.headSha === 'string',
    installation: own,
    run: (context, options, data) => mergeBatchJob(context, options, data),
  }),
  // The checks of a merge group of GitHub's merge queue (docs/merge-queue.md).
  'merge-group': kind<MergeGroupJob>({
    is: (v): v is MergeGroupJob =>
      isRepoTarget(v) &&
      typeof v.headSha === 'string' &&
      typeof v.headRef === 'string' &&
      typeof v.baseRef === 'string' &&
      typeof v.baseSha === 'string',
    installation: own,
    run: (context, options, data, { key }) => mergeGroupJob(context, options, data, key),
  }),
  'check-open-pulls': kind<OpenPullsJob>({
    is: (v): v is OpenPullsJob =>
      isRecord(v) &&
      isRecord(v.repo) &&
      typeof v.repo.full_name === 'string' &&
      typeof v.installationId === 'number',
    installation: own,
    run: (context, options, data, { key }) => checkOpenPullsJob(context, options, data, key),
  }),
  publish: kind<PublishJob>({
    is: (v): v is PublishJob =>
      isRepoTarget(v) && typeof v.after === 'string' && typeof v.branch === 'string',
    installation: own,
    run: (context, options, data) => publishJob(context, options, data),
  }),
  'release-push': kind<ReleasePushJob>({
    is: (v): v is ReleasePushJob => isPullTarget(v) && typeof v.headSha === 'string',
    installation: own,
    run: (context, options, data) => releasePushJob(context, options, data),
  }),
  'release-follow-up': kind<ReleaseFollowUpJob>({
    is: (v): v is ReleaseFollowUpJob =>
      isPullTarget(v) &&
      typeof v.headSha === 'string' &&
      typeof v.mergeSha === 'string' &&
      typeof v.baseRef === 'string',
    installation: own,
    run: (context, options, data) => releaseFollowUpJob(context, options, data),
  }),
  'remove-mirror': kind<{ repoId: number }>({
    is: (v): v is { repoId: number } => isRecord(v) && typeof v.repoId === 'number',
    installation: () => undefined,
    run: (_context, options, data) => removeMirrorJob(options, data),
  }),
};

export function jobRunner(app: Probot, options: JobOptions): JobRunner {
  // Re-reads of the same pull request, comments and check runs are conditional requests.
  const gitHub = probotGitHubApp(app, new ConditionalCache());
  return async (job: JobSpec & { attempt?: number }) => {
    const runner = Object.hasOwn(JOB_KINDS, job.kind) ? JOB_KINDS[job.kind] : undefined;
    const installationId = runner?.installation(job.data);
    const github = await gitHub.as(installationId);
    const context: JobContext = { github, log: app.log.child({ job: job.key, kind: job.kind }) };
    if (!runner) {
      context.log.error(`unknown job kind ${job.kind}; dropped`);
      return;
    }
    await runner.run(context, options, job.data, { key: job.key, attempt: job.attempt ?? 1 });
  };
}

/** What the start and end log lines of a job name: its repository, pull request and commit. */
export interface JobSubject {
  repository?: string;
  pull?: number;
  sha?: string;
}

/** The repository, pull request and commit a job is about, read from its data (any kind). */
export function jobSubject(data: unknown): JobSubject {
  if (!isRecord(data)) return {};
  // pr-checks and pr-results wrap the pull request's job; the others carry it at the top.
  const target = isRecord(data.job) ? data.job : data;
  const subject: JobSubject = {};
  const ref = isRecord(target.ref) ? target.ref : undefined;
  if (ref && typeof ref.owner === 'string' && typeof ref.repo === 'string')
    subject.repository = `${ref.owner}/${ref.repo}`;
  else if (isRecord(target.repo) && typeof target.repo.full_name === 'string')
    subject.repository = target.repo.full_name;
  if (typeof target.number === 'number') subject.pull = target.number;
  const sha = [target.headSha, target.after, target.mergeSha].find((v) => typeof v === 'string');
  if (typeof sha === 'string') subject.sha = sha;
  return subject;
}

/** `pr-checks acme/catalogs#7 @1a2b3c4d`: a job as a person reads it in the log. */
export function describeJob(kind: string, subject: JobSubject): string {
  const where = subject.repository ?? '';
  const pull = subject.pull === undefined ? '' : `#${subject.pull}`;
  const sha = subject.sha === undefined ? '' : ` @${subject.sha.slice(0, 8)}`;
  return `${kind} ${where}${pull}${sha}`.trim();
}

/**
 * A runner that logs, at info level, each job's start and end (with its duration and
 * outcome): what an operator follows to see "checking PR #7" and "checks written".
 */
export function loggedRunner(
  run: JobRunner,
  log: { info: (fields: object, message: string) => void },
): JobRunner {
  return async (job) => {
    const subject = jobSubject(job.data);
    const what = describeJob(job.kind, subject);
    const fields = { job: job.key, kind: job.kind, ...subject };
    const started = performance.now();
    log.info(fields, `job started: ${what}`);
    const seconds = () => Math.round(performance.now() - started) / 1000;
    try {
      await run(job);
    } catch (error) {
      log.info(
        { ...fields, seconds: seconds(), outcome: 'failed' },
        `job failed: ${what} after ${seconds()} s`,
      );
      throw error;
    }
    log.info({ ...fields, seconds: seconds(), outcome: 'done' }, `job done: ${what} in ${seconds()} s`);
  };
}
