// Whether a branch takes its merges through GitHub's merge queue, and taking a pull request
// out of it (docs/merge-queue.md). The queue is a repository rule (a ruleset's `merge_queue`
// rule), read through the REST rules API; the queue itself is driven through GraphQL
// (src/github/port.ts, MergeQueue).
import type { GitHub, RepoRef } from '../../github/port.js';

/** The repository rule that makes a branch merge through the queue. */
export const MERGE_QUEUE_RULE = 'merge_queue';

/**
 * Whether `branch` requires the merge queue. An answer GitHub does not give counts as no:
 * the REST merge is then tried, and GitHub refuses it if the queue is required after all
 * (the refusal is reported on the pull request).
 */
export async function requiresMergeQueue(github: GitHub, ref: RepoRef, branch: string): Promise<boolean> {
  try {
    return (await github.repos.branchRules(ref, branch)).some((rule) => rule.type === MERGE_QUEUE_RULE);
  } catch {
    return false;
  }
}

/** The pull request as the queue needs it: its node id and its base branch. */
export interface QueuedPull {
  node_id: string;
  base: { ref: string };
}

/**
 * Take a pull request out of the merge queue when its base branch has one (a `/hold`, an
 * approval lost): a queued pull request would otherwise merge once its group is green.
 * Returns whether it was taken out.
 */
export async function dequeueIfQueued(github: GitHub, ref: RepoRef, pull: QueuedPull): Promise<boolean> {
  if (!(await requiresMergeQueue(github, ref, pull.base.ref))) return false;
  if (!(await github.mergeQueue.isQueued(pull.node_id))) return false;
  await github.mergeQueue.dequeue(pull.node_id);
  return true;
}
