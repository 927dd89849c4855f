// GitHub reviews as approvals (docs/security.md "Approvals are what the approver saw"). A
// review records the commit it was given on, so an approving review names what was
// reviewed: it counts for that commit only, when it is the head, and only from someone who
// may approve as `/approve` decides. Dismissing the review withdraws it.
import type { Context } from 'probot';
import { enqueueChecks, isTransient, type JobContext, type PrHandlerOptions } from './pull-request.js';
import { mayApproveAll } from './issue-comment.js';
import { loadState, reply, saveState } from './pr-state.js';
import { pullTarget, pullTargetOf, type PullTarget } from './session.js';

export const REVIEW_EVENTS = ['pull_request_review.submitted', 'pull_request_review.dismissed'] as const;

type ReviewContext = Context<'pull_request_review.submitted'> | Context<'pull_request_review.dismissed'>;

/** What the job needs, taken from the payload. */
export interface ReviewJob extends PullTarget {
  reviewId: number;
  reviewer: string;
  /** The commit the review was given on. */
  commitId: string;
  /** The review was dismissed (otherwise: submitted, approving). */
  dismissed: boolean;
}

export function reviewHandler(options: PrHandlerOptions): (context: ReviewContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const { review } = payload;
    const dismissed = payload.action === 'dismissed';
    // Only an approving review gives anything; a dismissal takes away whatever it gave.
    if (!dismissed && review.state.toLowerCase() !== 'approved') return;
    // Bots' reviews never approve.
    if (!dismissed && (review.user?.type === 'Bot' || payload.sender?.type === 'Bot')) return;
    const job: ReviewJob = {
      ...pullTarget(payload, payload.pull_request.number),
      reviewId: review.id,
      reviewer: review.user?.login ?? '',
      commitId: review.commit_id,
      dismissed,
    };
    await options.queue.enqueue({
      key: `delivery:${context.id}`,
      group: `repo:${job.repoId}`,
      kind: 'review',
      data: job,
    });
  };
}

/** Record an approving review, or withdraw a dismissed one. */
export async function reviewJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: ReviewJob,
  key: string,
): Promise<void> {
  const { github, log } = context;
  const { ref, number, reviewer } = job;
  try {
    const slug = options.appSlug ? await options.appSlug() : undefined;
    if (!slug) return; // nothing can be recorded
    const pr = await github.pulls.get(ref, number);
    const status = await loadState(github, ref, number, `${slug}[bot]`);
    const recorded = status.state.approvals;
    let approvals = recorded;
    if (job.dismissed) {
      approvals = recorded.filter((a) => a.review !== job.reviewId);
      if (approvals.length === recorded.length) return; // it had given nothing
    } else {
      const decision = await mayApproveAll(context, job, reviewer, pr.base.sha, pr.head.sha, options);
      // Anyone may review; only owners count, each for what they own (docs/security.md), and
      // nobody else is told: reviews are common.
      if (!decision.ownsPart) {
        log.info({ pr: number, reviewer }, 'an approving review by someone who may not approve');
        return;
      }
      if (job.commitId !== pr.head.sha) {
        // Reviewed another commit than the head: it approves nothing here.
        await reply(
          github,
          ref,
          number,
          `@${reviewer} your approving review was given on ${job.commitId.slice(0, 12)}, and the head is now ${pr.head.sha.slice(0, 12)}: it approves nothing. Once you have looked at the head, approve it in a new review or comment \`/approve ${pr.head.sha.slice(0, 7)}\`.`,
        );
        return;
      }
      const others = recorded.filter((a) => a.login.toLowerCase() !== reviewer.toLowerCase());
      approvals = [
        ...others,
        { login: reviewer, comment: 0, review: job.reviewId, sha: pr.head.sha, subjects: decision.subjects },
      ];
    }
    await saveState(github, ref, number, status, { approvals });
    if (pr.state === 'open') {
      const prJob = { ...pullTargetOf(job), headSha: pr.head.sha, author: pr.user?.login ?? '' };
      await enqueueChecks(context, options, prJob, `${key}:checks`);
    }
  } catch (error) {
    log.error({ err: error, pr: number }, 'could not record the review');
    if (isTransient(error)) throw error;
  }
}
