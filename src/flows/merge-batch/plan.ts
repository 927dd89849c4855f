// The pure parts of the bot's batch merge (docs/merge-queue.md, "Batch merge without GitHub's
// merge queue"): which open pull requests may be ready for a batch, in which order a failing
// batch's prefixes are checked to name the pull request that breaks it, and the culprit's
// comment with the hidden mark that keeps it out of batches until its head changes.

/** An open pull request as GitHub lists it: what tells, without more requests, that it may be ready. */
export interface ListedPull {
  number: number;
  draft?: boolean | null;
  labels: { name?: string | null }[];
  head: { sha: string };
  base: { ref: string };
}

/**
 * The pull requests into `baseRef` that may be ready, in pull-request-number order (the
 * batch's merge order): not drafts, not on hold, and carrying the `approved` label the App
 * sets from its permissions decision. The label only saves requests: each one still passes
 * the merge gate on its own runs before it is taken. The pull request that asked for the
 * batch is looked at even without the label (a label taken off by hand decides nothing).
 */
export function mayBeReady(
  pulls: readonly ListedPull[],
  baseRef: string,
  labels: { approved: string; hold: string },
  asker: number,
): ListedPull[] {
  const named = (p: ListedPull, label: string) => p.labels.some((l) => l.name === label);
  return pulls
    .filter(
      (p) =>
        p.base.ref === baseRef &&
        !p.draft &&
        (named(p, labels.approved) || p.number === asker) &&
        !named(p, labels.hold),
    )
    .sort((a, b) => a.number - b.number);
}

/**
 * The prefix lengths to check, in order, to find the first failing prefix of a batch of
 * `size` whose first `knownGood` members are known to pass together: the shortest first, so
 * the first that fails ends with the culprit (as a merge group's culprit is named). The
 * whole batch, already checked, comes last.
 */
export function prefixOrder(size: number, knownGood: number): number[] {
  const order: number[] = [];
  for (let length = Math.max(knownGood + 1, 1); length <= size; length++) order.push(length);
  return order;
}

/** The hidden mark of a culprit comment: the head it was named at. */
const CULPRIT_MARK = /<!-- catalog-bot:batch-culprit ([0-9a-f]{40}) -->/g;

export function culpritMark(head: string): string {
  return `<!-- catalog-bot:batch-culprit ${head} -->`;
}

/**
 * Whether one of the App's own comments (`bodies`: only comments written by the App) names
 * `head` as a batch's culprit. A mark in anyone else's comment counts for nothing.
 */
export function namedCulpritAt(bodies: readonly (string | null | undefined)[], head: string): boolean {
  return bodies.some((body) => [...(body ?? '').matchAll(CULPRIT_MARK)].some((m) => m[1] === head));
}
