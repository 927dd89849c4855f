// Job kinds to the functions that run them. A job is data (see queue.ts); here it gets an
// installation's client and a logger, so any replica can run any job.
import type { Probot } from 'probot';
import { checkOpenPullsJob, removeMirrorJob, type OpenPullsJob } from './handlers/installation.js';
import { noteHeadJob, type HeadJob } from './handlers/heads.js';
import { runCommandsJob, type CommentJob } from './handlers/issue-comment.js';
import { mergeJob, type MergeTarget } from './handlers/merge.js';
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
import { ConditionalCache, useConditionalRequests } from './conditional-requests.js';
import type { JobRunner, JobSpec } from './queue.js';

export function jobRunner(
  app: Probot,
  options: PrHandlerOptions & { appSlug: () => Promise<string> },
): JobRunner {
  // Re-reads of the same pull request, comments and check runs are conditional requests.
  const cache = new ConditionalCache();
  return async (job: JobSpec & { attempt?: number }) => {
    const data = job.data as { installationId?: number; job?: { installationId?: number } };
    const installationId = data.installationId ?? data.job?.installationId;
    const octokit = await app.auth(installationId);
    useConditionalRequests(octokit, cache, String(installationId));
    const context: JobContext = { octokit, log: app.log.child({ job: job.key, kind: job.kind }) };
    switch (job.kind) {
      case 'announce-checks':
        // Queued by an earlier version (runs were announced at once): checked in the repository's group now.
        await enqueueChecks(context, options, job.data as PrJob, `${job.key}:checks`);
        return;
      case 'pr-checks':
        return runChecksJob(context, options, job.data as ChecksJob, job.key, job.attempt ?? 1);
      case 'pr-results':
        return writeResultsJob(context, options, job.data as ResultsJob, job.key, job.attempt ?? 1);
      case 'commands':
        return runCommandsJob(context, options, job.data as CommentJob, job.key);
      case 'note-head':
        return noteHeadJob(context, options, job.data as HeadJob);
      case 'merge':
        return mergeJob(context, options, job.data as MergeTarget);
      case 'check-open-pulls':
        return checkOpenPullsJob(context, options, job.data as OpenPullsJob, job.key);
      case 'publish':
        return publishJob(context, options, job.data as PublishJob);
      case 'remove-mirror':
        return removeMirrorJob(options, job.data as { repoId: number });
      default:
        context.log.error(`unknown job kind ${job.kind}; dropped`);
    }
  };
}
