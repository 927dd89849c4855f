// GitHub's merge queue (docs/merge-queue.md): the checks of a merge group. A group's head
// commit is the group's base with every queued pull request ahead of it and its own merged
// in, in queue order (GitHub's merge commits, one per pull request, on the first-parent
// line). The catalog checks run on the group's head against its base: the combined catalogs,
// where two pull requests that are fine alone can give a channel two heads. The runs carry
// the same names as on pull requests, so branch protection can require them on the queue.
// Permissions are the pull requests' own: each pull request in the group must have its
// catalog-bot checks green at the very head the group merged (decided under the group's
// base rules). A failing group names the pull request that broke it: the first prefix of the
// group (its first pull requests, in order) that fails ends with that pull request, which is
// then taken out of the queue.
import type { Context } from 'probot';
import type { CheckResult } from '../../checks/check.js';
import { PERMISSIONS_CHECK } from '../../checks/permissions.js';
import { isAncestor } from '../../git/read.js';
import type { GitHub } from '../../github/port.js';
import {
  createCompletedRun,
  PR_CHECK_NAMES,
  resultsFor,
  unanswered,
  type Completion,
} from '../../handlers/check-runs.js';
import { errorLines } from '../../handlers/merge.js';
import { loadState, reply } from '../../handlers/pr-state.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { openSession, repoTarget, type RepoTarget, type Session } from '../../handlers/session.js';
import { mergeGroupMembers, type GroupMember } from './members.js';

export const MERGE_GROUP_EVENTS = ['merge_group.checks_requested', 'merge_group.destroyed'] as const;

/** A merge group to check (plain JSON: it may travel through Redis). */
export interface MergeGroupJob extends RepoTarget {
  /** The group's head commit and its queue branch (`gh-readonly-queue/<base>/pr-<n>-<sha>`). */
  headSha: string;
  headRef: string;
  /** The base branch and the commit the group was built on. */
  baseRef: string;
  baseSha: string;
}

const QUEUE_BRANCH = /^gh-readonly-queue\/.+\/pr-\d+-[0-9a-f]{40}$/;

/** `refs/heads/x` -> `x`. */
const branchName = (ref: string) => ref.replace(/^refs\/heads\//, '');

/**
 * Group heads GitHub destroyed while their checks were queued or running, in this process:
 * the job drops them (the queue branch's absence tells other replicas the same).
 */
const destroyed = new Set<string>();
const MAX_DESTROYED = 1000;

type MergeGroupContext = Context<'merge_group.checks_requested'> | Context<'merge_group.destroyed'>;

export function mergeGroupHandler(
  options: Pick<PrHandlerOptions, 'queue'>,
): (context: MergeGroupContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const group = payload.merge_group;
    if (!payload.repository) return;
    if (payload.action === 'destroyed') {
      destroyed.add(group.head_sha);
      if (destroyed.size > MAX_DESTROYED) destroyed.delete(destroyed.values().next().value!);
      context.log.info({ head: group.head_sha, reason: payload.reason }, 'merge group destroyed');
      return;
    }
    const job: MergeGroupJob = {
      ...repoTarget(payload as typeof payload & { repository: NonNullable<typeof payload.repository> }),
      headSha: group.head_sha,
      headRef: branchName(group.head_ref),
      baseRef: branchName(group.base_ref),
      baseSha: group.base_sha,
    };
    // Only GitHub's queue branches: a group names no other branch.
    if (!QUEUE_BRANCH.test(job.headRef)) {
      context.log.warn({ head: job.headRef }, 'merge group on a branch that is not a queue branch: ignored');
      return;
    }
    destroyed.delete(job.headSha);
    await options.queue.enqueue({
      key: `merge-group:${job.repoId}:${job.headSha}`,
      group: `repo:${job.repoId}`,
      kind: 'merge-group',
      data: job,
    });
  };
}

/** Whether the group is still GitHub's: not destroyed, its queue branch still at its head. */
async function alive(github: GitHub, job: MergeGroupJob): Promise<boolean> {
  if (destroyed.has(job.headSha)) return false;
  return (await github.repos.findBranch(job.ref, job.headRef))?.commit.sha === job.headSha;
}

/** What one group's checks found. */
interface GroupVerdict {
  members: GroupMember[];
  checks: CheckResult[];
  /** Per pull request of the group not yet merged: why its permissions do not hold, or undefined. */
  permissions: { member: GroupMember; problem: string | undefined }[];
  /** The pull request that broke the group, and what broke. */
  culprit?: { member: GroupMember; broken: CheckResult[]; permission?: string };
  /** Why the group is not checked at all (left to GitHub to rebuild). */
  dropped?: string;
}

/**
 * Check a merge group and write the runs on its head. A group GitHub destroyed meanwhile (the
 * queue branch gone or moved, a `destroyed` event) and a group whose base branch moved past
 * it get no run: nothing green is left on a group that will not merge.
 */
export async function mergeGroupJob(
  context: JobContext,
  options: Partial<PrHandlerOptions>,
  job: MergeGroupJob,
  key: string,
): Promise<void> {
  const { github, log } = context;
  if (!(await alive(github, job))) {
    log.info({ head: job.headSha }, 'merge group destroyed before its checks: dropped');
    return;
  }
  const slug = options.appSlug ? await options.appSlug() : undefined;
  const baseTip = (await github.repos.branch(job.ref, job.baseRef)).commit.sha;
  const commits = {
    fetch: [`refs/heads/${job.headRef}`, `refs/heads/${job.baseRef}`],
    verify: [job.headSha, job.baseSha],
  };
  let verdict: GroupVerdict;
  try {
    verdict = await openSession(context, options, job, 'merge-group', commits, (session) =>
      checkGroup(context, session, job, baseTip, slug),
    );
  } catch (error) {
    // The queue branch deleted while it was fetched: the group is gone, not broken.
    if (!(await alive(github, job))) {
      log.info({ head: job.headSha }, 'merge group destroyed while checked: dropped');
      return;
    }
    throw error;
  }
  if (verdict.dropped) {
    log.info({ head: job.headSha, why: verdict.dropped }, 'merge group not checked');
    return;
  }
  // A group destroyed while it was checked gets nothing (no stale result on its head).
  if (!(await alive(github, job))) {
    log.info({ head: job.headSha }, 'merge group destroyed while checked: dropped');
    return;
  }
  const { culprit } = verdict;
  // Told once: a culprit no longer queued (another group named it first) hears nothing again.
  const culpritQueued = culprit ? await github.mergeQueue.isQueued(culprit.member.node_id) : false;
  const completions = groupCompletions(verdict);
  for (const name of PR_CHECK_NAMES)
    await createCompletedRun(github, job.ref, job.headSha, name, completions[name]!, { externalId: key });
  if (culprit && culpritQueued) {
    const ahead = verdict.members
      .slice(0, verdict.members.indexOf(culprit.member))
      .map((m) => `#${m.number}`);
    await reply(
      github,
      job.ref,
      culprit.member.number,
      [
        `Taken out of the merge queue: the merge group ${job.headSha.slice(0, 12)} into \`${job.baseRef}\` fails${ahead.length > 0 ? ` with ${ahead.join(', ')} ahead of this pull request` : ''}, and this pull request is the first that breaks it:`,
        '',
        ...(culprit.permission ? [`- \`${PERMISSIONS_CHECK}\`: ${culprit.permission}`] : []),
        ...errorLines(culprit.broken),
        '',
        'Fix the catalog (rebase on the base branch with the others merged); the checks run again on the new head.',
      ].join('\n'),
    );
    // GitHub takes the group's own pull request out; one ahead of it only the App does.
    if (await github.mergeQueue.isQueued(culprit.member.node_id))
      await github.mergeQueue.dequeue(culprit.member.node_id);
  }
  log.info({ head: job.headSha, culprit: culprit?.member.number }, 'merge group checked');
}

/** The checks of the whole group, then (when it fails) of its prefixes to name the culprit. */
async function checkGroup(
  context: JobContext,
  session: Session,
  job: MergeGroupJob,
  baseTip: string,
  slug: string | undefined,
): Promise<GroupVerdict> {
  const { dir } = session;
  // The base branch moved past the group (a push that bypassed the queue): GitHub rebuilds it.
  if (!(await isAncestor(dir, baseTip, job.headSha)))
    return { members: [], checks: [], permissions: [], dropped: `${job.baseRef} moved to ${baseTip}` };
  const members = await mergeGroupMembers(context.github, job.ref, dir, job.baseSha, job.headSha);
  if ('problem' in members)
    return {
      members: [],
      checks: [
        {
          name: PERMISSIONS_CHECK,
          conclusion: 'failure',
          title: 'The pull requests of this merge group cannot be told',
          summary: members.problem,
          findings: [],
          annotations: [],
        },
      ],
      permissions: [],
    };
  const pending = [];
  for (const m of members.members) if (!(await isAncestor(dir, m.commit, baseTip))) pending.push(m);
  await session.fetchBlobs([job.baseSha, job.headSha]);
  const permissions = [];
  for (const member of pending)
    permissions.push({ member, problem: await memberPermission(context, session, job, member, slug) });
  const run = (head: string) => session.run({ base: job.baseSha, head, checkRelease: true });
  const { checks } = await run(job.headSha);
  const brokenBy = (list: CheckResult[]) => list.filter((c) => c.conclusion === 'failure');
  const verdict: GroupVerdict = { members: members.members, checks, permissions };
  const fails = brokenBy(checks).length > 0 || permissions.some((p) => p.problem !== undefined);
  if (!fails) return verdict;
  // The culprit: the first pull request, in queue order, whose prefix of the group fails.
  for (const member of pending) {
    const permission = permissions.find((p) => p.member === member)?.problem;
    const broken =
      member.commit === job.headSha ? brokenBy(checks) : brokenBy((await run(member.commit)).checks);
    if (permission !== undefined || broken.length > 0) {
      verdict.culprit = { member, broken, ...(permission !== undefined ? { permission } : {}) };
      break;
    }
  }
  return verdict;
}

/**
 * Why a pull request of the group does not bring its own permission, or undefined when it
 * does: it is open into the group's base, the head the group merged is its head, and its
 * catalog-bot checks are green there; when the rules moved since (another base commit), the
 * permissions decision is made again under the group's base, as the merge gate does.
 */
async function memberPermission(
  context: JobContext,
  session: Session,
  job: MergeGroupJob,
  member: GroupMember,
  slug: string | undefined,
): Promise<string | undefined> {
  const { github } = context;
  const pull = await github.pulls.get(job.ref, member.number);
  if (pull.state !== 'open') return `#${member.number} is not open`;
  if (pull.base.ref !== job.baseRef) return `#${member.number} is not into ${job.baseRef}`;
  if (pull.head.sha !== member.head)
    return `#${member.number}'s head is ${pull.head.sha.slice(0, 12)}, not ${member.head.slice(0, 12)} as merged in the group`;
  if (slug === undefined) return 'the App does not know its own runs';
  const runs = (await github.checks.onCommit(job.ref, member.head, { filter: 'all' })).filter(
    (r) => r.app?.slug === slug,
  );
  const results = resultsFor(runs, job.baseRef, member.number);
  const notGreen = unanswered(results, true);
  if (notGreen) return `#${member.number} at ${member.head.slice(0, 12)}: ${notGreen}`;
  if (results.get(PERMISSIONS_CHECK)?.checked?.sha === job.baseSha) return undefined;
  // Checked under other rules: decided again under the group's base (config and owners files).
  const { state } = await loadState(github, job.ref, member.number, `${slug}[bot]`);
  const { checks } = await session.run({
    base: await session.mergeBase(job.baseSha, member.head),
    rules: job.baseSha,
    head: member.head,
    author: pull.user?.login ?? '',
    approvers: [],
    approvals: state.approvals,
    only: [PERMISSIONS_CHECK],
  });
  const decided = checks.find((c) => c.name === PERMISSIONS_CHECK);
  return decided && decided.conclusion !== 'success'
    ? `#${member.number} under the rules of ${job.baseSha.slice(0, 12)}: ${decided.title}`
    : undefined;
}

/** The run of every check name on the group's head. */
function groupCompletions(verdict: GroupVerdict): Record<string, Completion> {
  const { culprit } = verdict;
  const named = culprit ? ` — broken by #${culprit.member.number}` : '';
  const who = verdict.members.map((m) => `#${m.number}`).join(', ');
  const completions: Record<string, Completion> = {};
  for (const check of verdict.checks)
    completions[check.name] = {
      conclusion: check.conclusion,
      title: `${check.title}${check.conclusion === 'failure' ? named : ''}`.slice(0, 255),
      summary: `Merge group of ${who || 'no pull request'}.${culprit ? ` The first pull request that breaks it: #${culprit.member.number}.` : ''}\n\n${check.summary}`,
      annotations: check.annotations,
    };
  if (!completions[PERMISSIONS_CHECK]) {
    const problems = verdict.permissions.filter((p) => p.problem !== undefined);
    completions[PERMISSIONS_CHECK] = {
      conclusion: problems.length === 0 ? 'success' : 'failure',
      title:
        problems.length === 0
          ? `Every pull request of the group is approved at the head it merges (${who})`
          : `Not approved as merged: ${problems.map((p) => `#${p.member.number}`).join(', ')}${named}`,
      summary: [
        'Each pull request of the merge group brings the permissions decision of its own checks, at the head the group merges (docs/merge-queue.md).',
        '',
        ...verdict.permissions.map((p) => `- #${p.member.number}: ${p.problem ?? 'approved, checks green'}`),
      ].join('\n'),
    };
  }
  for (const name of PR_CHECK_NAMES)
    completions[name] ??= {
      conclusion: 'neutral',
      title: 'Does not apply to this merge group',
      summary: `${name} did not run on this merge group's change.`,
    };
  return completions;
}
