// The pull requests of a merge group, read from its commits (docs/merge-queue.md): GitHub
// builds a group as one merge commit per pull request on the first-parent line from the
// group's base to its head, the pull request's head as the second parent and "Merge pull
// request #N" as the first line of the message. Only those commits are GitHub's: a pull
// request's own commits are reached through second parents only, so nothing a contributor
// writes can pose as another pull request of the group. Whether the merged head is still the
// pull request's head is the permissions' question (flow.ts), so that the group names it.
import { firstParentCommits } from '../../git/read.js';
import type { GitHub, RepoRef } from '../../github/port.js';

export interface GroupMember {
  number: number;
  /** The pull request's head as the group merged it. */
  head: string;
  /** The group's merge commit for it: the prefix of the group that ends with it. */
  commit: string;
  /** The pull request's node id (for the merge queue's GraphQL mutations). */
  node_id: string;
}

/** At most this many pull requests per group (GitHub's largest group is 100). */
const MAX_MEMBERS = 100;

const MERGE_LINE = /^Merge pull request #(\d+) from /;

export async function mergeGroupMembers(
  github: GitHub,
  ref: RepoRef,
  dir: string,
  base: string,
  head: string,
): Promise<{ members: GroupMember[] } | { problem: string }> {
  const line = await firstParentCommits(dir, base, head, MAX_MEMBERS + 1);
  const members: GroupMember[] = [];
  for (const { commit, parents, subject } of line) {
    const [first = '', second, ...more] = parents;
    const number = Number(MERGE_LINE.exec(subject)?.[1]);
    if (!second || more.length > 0 || !Number.isSafeInteger(number))
      return {
        problem: `Commit ${commit.slice(0, 12)} of the group is not GitHub's merge commit of one pull request: set the merge queue's merge method to "merge" (docs/merge-queue.md).`,
      };
    const pull = await github.pulls.get(ref, number).catch(() => undefined);
    if (!pull)
      return { problem: `Commit ${commit.slice(0, 12)} merges #${number}, which GitHub does not know.` };
    if (members.length > 0 && members.at(-1)!.commit !== first)
      return { problem: `The group's commits are not one line from its base.` };
    members.push({ number, head: second, commit, node_id: pull.node_id });
  }
  if (members.length === 0 || members.length > MAX_MEMBERS)
    return { problem: `A merge group of ${members.length === 0 ? 'no' : 'too many'} pull requests.` };
  return { members };
}
