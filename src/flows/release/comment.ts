// The release comment (docs/publishing.md, "Proof of publication"): after a merge is
// published, the merged pull request gets one comment naming each catalog and the image
// reference (tag and digest) it was published as. A re-run edits that comment; an unchanged
// comment costs no write (docs/github-limits.md).
import { releaseMarker } from '../../publish/report.js';
import type { GitHub, RepoRef } from '../../github/port.js';

/**
 * The pull request whose merge made `sha`: GitHub's list of pull requests associated with
 * the commit, else the number the merge commit's message names ("Merge pull request #N",
 * or a squash's trailing "(#N)"). Either way the pull request must be merged and record
 * `sha` as its merge commit: a commit message is text anyone's pull request title can carry.
 */
export async function mergedPullOf(
  github: GitHub,
  ref: RepoRef,
  sha: string,
  message: string,
): Promise<number | undefined> {
  const isTheMerge = (p: { merged_at?: string | null; merge_commit_sha?: string | null }) =>
    Boolean(p.merged_at) && p.merge_commit_sha === sha;
  try {
    const found = (await github.pulls.ofCommit(ref, sha)).find(isTheMerge);
    if (found) return found.number;
  } catch {
    // Some hosts do not offer the list: the message is the other way to find it.
  }
  const subject = message.split('\n')[0] ?? '';
  const named =
    /^Merge pull request #(\d+) /.exec(subject)?.[1] ?? /\(#(\d+)\)\s*$/.exec(subject)?.[1] ?? undefined;
  if (named === undefined) return undefined;
  try {
    const data = await github.pulls.get(ref, Number(named));
    return isTheMerge(data) ? data.number : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Write the release comment of merge commit `sha` on pull request `number`: edit this
 * App's comment for that commit when there is one (a re-run or a retry), else create it.
 * Only a comment written by this App counts: anyone can paste the marker.
 */
export async function writeReleaseComment(
  github: GitHub,
  ref: RepoRef,
  number: number,
  sha: string,
  body: string,
  botLogin: string,
): Promise<'created' | 'updated' | 'unchanged'> {
  const comments = await github.comments.list(ref, number);
  const marker = releaseMarker(sha);
  const mine = comments.find(
    (c) => c.user?.type === 'Bot' && c.user.login === botLogin && (c.body ?? '').startsWith(marker),
  );
  if (mine) {
    if (mine.body === body) return 'unchanged';
    await github.comments.update(ref, mine.id, body);
    return 'updated';
  }
  await github.comments.create(ref, number, body);
  return 'created';
}
