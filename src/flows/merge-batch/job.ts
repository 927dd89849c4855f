// The batch job of the bot's own batch merge (docs/merge-queue.md, "Batch merge without
// GitHub's merge queue"): what the merge gate queues when the base branch's config asks for
// batches. Apart from the flow so the gate (src/handlers/merge.ts) can queue it without
// importing the flow that builds on the gate.
import type { JobQueue } from '../../queue.js';
import type { PullTarget, RepoTarget } from '../../handlers/session.js';

/** A batch into one base branch, asked for by one ready pull request (plain JSON: it may travel through Redis). */
export interface MergeBatchJob extends RepoTarget {
  baseRef: string;
  /** The base branch's tip when it was asked for. */
  baseSha: string;
  /** The pull request whose readiness asked for the batch, at the head that was ready. */
  number: number;
  headSha: string;
}

export const MERGE_BATCH_KIND = 'merge-batch';

/**
 * Queue a batch. It runs in the repository's group, so batches (and single merges) of one
 * repository never overlap, on any replica. The key names the base branch, its tip and the
 * asking head: one request is taken once; a later ready pull request on the same tip asks
 * again, and finds nothing to do if an earlier batch already took it (a key of repository and
 * branch alone would be dropped as recently finished and leave it waiting).
 */
export async function enqueueMergeBatch(
  queue: JobQueue,
  target: PullTarget,
  baseRef: string,
  baseSha: string,
  headSha: string,
): Promise<boolean> {
  const { ref, repoId, cloneUrl, installationId, number } = target;
  const data: MergeBatchJob = { ref, repoId, cloneUrl, installationId, baseRef, baseSha, number, headSha };
  return queue.enqueue({
    key: `merge-batch:${repoId}:${baseRef}:${baseSha}:${number}@${headSha}`,
    group: `repo:${repoId}`,
    kind: MERGE_BATCH_KIND,
    data,
  });
}
