// The bot's record of the pull request's head over time, so that an `/approve` counts only
// for the head that existed when it was written (docs/security.md). Every event that can
// move the head has the bot look at it (in the repository's queue, like the comment
// commands) and keep in its status comment the head and a GitHub time it was the head at.
import type { Context } from 'probot';
import { installationOf, type PullTarget } from './session.js';
import { isTransient, type JobContext, type PrHandlerOptions } from './pull-request.js';
import { loadState, observeHead, saveState } from './pr-state.js';

export const HEAD_EVENTS = [
  'pull_request.opened',
  'pull_request.reopened',
  'pull_request.synchronize',
] as const;

export interface HeadJob extends Pick<PullTarget, 'ref' | 'number' | 'installationId'> {
  /** The head the event announced: once the pull request has moved on, that head's own job records it. */
  headSha?: string;
}

export function headEventHandler(
  options: Pick<PrHandlerOptions, 'queue'>,
): (context: Context<'pull_request'>) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const job: HeadJob = {
      ref: { owner: payload.repository.owner.login, repo: payload.repository.name },
      number: payload.pull_request.number,
      installationId: installationOf(payload),
      headSha: payload.pull_request.head.sha,
    };
    await options.queue.enqueue({
      key: `delivery:${context.id}:head`,
      group: `repo:${payload.repository.id}`,
      kind: 'note-head',
      data: job,
    });
  };
}

/** Record the head as it is now. A failure only means a later `/approve` is asked again. */
export async function noteHeadJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: HeadJob,
): Promise<void> {
  const { github, log } = context;
  try {
    const slug = options.appSlug ? await options.appSlug() : undefined;
    if (!slug) return;
    const seen = await observeHead(github, job.ref, job.number, undefined);
    // A newer push's event is queued behind this one and records its head: no write now
    // (docs/github-limits.md; writes are paced).
    if (job.headSha && seen.sha !== job.headSha) return;
    const status = await loadState(github, job.ref, job.number, `${slug}[bot]`);
    const previous = status.state.head;
    // The same head with no rewrite since: it has been the head all along, keep the older time.
    if (previous && previous.sha === seen.sha && seen.event <= previous.event) return;
    await saveState(github, job.ref, job.number, status, { head: seen });
  } catch (error) {
    log.warn({ err: error, pr: job.number }, 'could not record the pull request head');
    if (isTransient(error)) throw error;
  }
}
