// Auto-merge (README "Comment commands and auto-merge"): merge a pull request whose
// catalog-bot checks and required checks are green on its current head, that is neither a
// draft nor on hold, whose permissions are satisfied, and that still validates when
// combined with the CURRENT base (two pull requests that are fine alone can break a channel
// together). The merge passes the head sha that was checked, so a push in between is never
// merged unchecked. Runs in the repository's queue group, so merges in one repository never
// overlap. On a branch that requires GitHub's merge queue the checked head is queued
// instead (docs/merge-queue.md).
import type { Context } from 'probot';
import { readRepoConfig } from '../checks/changes.js';
import type { CheckResult } from '../checks/check.js';
import { CONFIG_PATH } from '../checks/config.js';
import { PERMISSIONS_CHECK } from '../checks/permissions.js';
import { mergeTree } from '../git/read.js';
import { blobAt } from '../git/mirror.js';
import type { JobQueue } from '../queue.js';
import { requiredChecks, resultsFor, unanswered } from './check-runs.js';
import { LABELS, loadState, reply } from './pr-state.js';
import { releaseSourceOf } from '../flows/release/source.js';
import { enqueueChecks, type PrJob } from './pull-request.js';
import { requiresMergeQueue } from '../flows/merge-queue/queue.js';
import {
  openSession,
  pullTarget,
  pullTargetOf,
  type PullTarget,
  type SessionContext,
  type SessionOptions,
} from './session.js';

/** The merge gate's job: the pull request alone. */
export type MergeTarget = PullTarget;

export interface MergeOptions extends SessionOptions {
  queue: JobQueue;
  /** The App's slug: only its check runs count as the catalog-bot checks. */
  appSlug: () => Promise<string>;
}

export type MergeOutcome =
  { merged: true; sha: string } | { merged: false; reason: string; told?: boolean; queued?: boolean };

type Ctx = SessionContext;

/** The queued form: look at one pull request and merge it if it is ready. */
export async function mergeJob(ctx: Ctx, options: MergeOptions, target: MergeTarget): Promise<void> {
  const outcome = await mergeIfReady(ctx, target, options);
  ctx.log.info({ pr: target.number, outcome }, 'auto-merge');
}

// GitHub's mergeable_state values that leave nothing branch protection still waits for.
const MERGEABLE = new Set(['clean', 'unstable', 'has_hooks']);

type PullState = {
  state: string;
  merged: boolean;
  draft?: boolean;
  labels: { name: string }[];
  head: { sha: string };
  base: { ref: string };
};

/** Why a pull request may not be merged as it is now, whatever its checks say. */
function notMergeable(pr: PullState): string | undefined {
  if (pr.state !== 'open' || pr.merged) return 'not open';
  if (pr.draft) return 'draft';
  if (pr.labels.some((l) => l.name === LABELS.hold)) return 'on hold';
  return undefined;
}

// The results of the checks as this App's runs record them (check-runs.ts).
export { requiredChecks, resultsFor, unanswered } from './check-runs.js';

/** Merge the pull request if it is ready; says why not otherwise. Never throws. */
export async function mergeIfReady(
  ctx: Ctx,
  target: MergeTarget,
  options: MergeOptions,
): Promise<MergeOutcome> {
  const { github, log } = ctx;
  const { ref, number } = target;
  try {
    const pr = await github.pulls.get(ref, number);
    const why = notMergeable(pr);
    if (why) return { merged: false, reason: why };
    const head = pr.head.sha;

    // Every catalog-bot check, by this App, completed green on this very head for this pull request.
    const slug = await options.appSlug();
    const listed = await github.checks.onCommit(ref, head, { filter: 'all' });
    const results = resultsFor(
      listed.filter((r) => r.app?.slug === slug),
      pr.base.ref,
      number,
    );
    const notGreen = unanswered(results, true);
    if (notGreen) return { merged: false, reason: `${notGreen} on ${head.slice(0, 12)} into ${pr.base.ref}` };
    // Runs of checks that no longer apply (an older job's) are not the results.
    const required = requiredChecks(results).map((name) => results.get(name)!);
    // Branch protection's required checks (and reviews) are GitHub's to count.
    if (!MERGEABLE.has(pr.mergeable_state))
      return { merged: false, reason: `GitHub reports the pull request as ${pr.mergeable_state}` };

    const branch = await github.repos.branch(ref, pr.base.ref);
    const baseTip = branch.commit.sha;
    // Permissions as the base branch has them now (its config and owners files): a change
    // to them merged since the checks ran applies to every pull request still waiting.
    const rulesMoved = results.get(PERMISSIONS_CHECK)?.checked?.sha !== baseTip;
    const approvals = rulesMoved
      ? (await loadState(github, ref, number, `${slug}[bot]`)).state.approvals
      : [];
    const commits = { fetch: [baseTip, `refs/pull/${number}/head`] };
    // The App's own release pull request (docs/bundles.md).
    const derivedRelease = await releaseSourceOf(github, ref, pr, `${slug}[bot]`);
    const recheck = await openSession(ctx, options, target, 'merge', commits, async (session) => {
      const { dir } = session;
      const { config } = await readRepoConfig(dir, baseTip);
      if (!config.automerge.enabled) return { enabled: false as const };
      // Results computed under another config of the base branch do not count: check again.
      const configBlob = await blobAt(dir, baseTip, CONFIG_PATH);
      if (required.some((r) => r.checked?.config !== configBlob))
        return { enabled: true as const, stale: true as const };
      await session.fetchBlobs([baseTip, head]);
      const permissions = rulesMoved
        ? (
            await session.run({
              base: await session.mergeBase(baseTip, head),
              rules: baseTip,
              head,
              author: pr.user?.login ?? '',
              approvers: [],
              approvals,
              only: [PERMISSIONS_CHECK],
              ...(derivedRelease ? { derivedRelease: { changed: derivedRelease.changed } } : {}),
            })
          ).checks.find((c) => c.name === PERMISSIONS_CHECK)
        : undefined;
      const merged = await mergeTree(dir, baseTip, head);
      if (merged === undefined) return { enabled: true as const, conflict: true as const, config };
      // A bundle-only change is checked with its catalog update applied (docs/bundles.md).
      const { checks } = await session.run({ base: baseTip, head: merged, checkRelease: true });
      const broken = checks.filter((c) => c.conclusion === 'failure');
      return { enabled: true as const, conflict: false as const, broken, permissions, config };
    });
    if (!recheck.enabled) return { merged: false, reason: 'auto-merge is off in the base branch config' };
    const checkAgain = (why: string) => {
      const job: PrJob = { ...pullTargetOf(target), headSha: head, author: pr.user?.login ?? '' };
      return enqueueChecks(ctx, options, job, `recheck:${why}:${number}:${head}`);
    };
    if ('stale' in recheck) {
      // The new runs, once green, bring the pull request back here.
      await checkAgain(`config:${pr.base.ref}:${baseTip}`);
      return { merged: false, reason: `checked under another config of ${pr.base.ref}; checking again` };
    }
    if (recheck.conflict) return { merged: false, reason: `conflicts with ${pr.base.ref}` };
    if (recheck.permissions && recheck.permissions.conclusion !== 'success') {
      await reply(
        github,
        ref,
        number,
        [
          `Not merged: under the rules of the current \`${pr.base.ref}\` (${baseTip.slice(0, 12)}), its config and owners files, \`${PERMISSIONS_CHECK}\` fails: ${recheck.permissions.title}`,
          '',
          ...errorLines([recheck.permissions]),
          '',
          'The checks run again on this head under those rules.',
        ].join('\n'),
      );
      // The permissions run shows the details (and, red, keeps this from being said again).
      await checkAgain(`permissions:${pr.base.ref}:${baseTip}`);
      return { merged: false, reason: 'permissions fail under the current base', told: true };
    }
    if (recheck.broken.length > 0) {
      const lines = errorLines(recheck.broken);
      await reply(
        github,
        ref,
        number,
        [
          `Not merged: this pull request is fine on its own, but together with the current \`${pr.base.ref}\` (${baseTip.slice(0, 12)}) it breaks the catalog:`,
          '',
          ...lines,
          '',
          'Rebase or merge the base branch in and fix the catalog; the checks run again on the new head.',
        ].join('\n'),
      );
      return { merged: false, reason: 'breaks the catalog together with the current base', told: true };
    }

    // The re-check took a while: a /hold, a push or a close in the meantime wins.
    const now = await github.pulls.get(ref, number);
    const late =
      notMergeable(now) ??
      (now.head.sha !== head ? `the head moved to ${now.head.sha.slice(0, 12)}` : undefined) ??
      (now.base.ref !== pr.base.ref ? `the base changed to ${now.base.ref}` : undefined);
    if (late) return { merged: false, reason: late };

    // A branch that requires GitHub's merge queue takes no REST merge: the checked head is
    // queued, and the queue's merge groups are checked on their own (docs/merge-queue.md).
    if (await requiresMergeQueue(github, ref, pr.base.ref)) {
      try {
        if (await github.mergeQueue.isQueued(pr.node_id))
          return { merged: false, reason: 'already in the merge queue', queued: true };
        await github.mergeQueue.enqueue(pr.node_id, head);
        log.info({ pr: number, head }, 'enqueued in the merge queue');
        return { merged: false, reason: `queued at ${head.slice(0, 12)} in the merge queue`, queued: true };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await reply(
          github,
          ref,
          number,
          `GitHub refused to add ${head.slice(0, 12)} to the merge queue: ${message.slice(0, 500)}\n\ncatalog-bot tries again after the next push, \`/retest\` or approval.`,
        );
        return { merged: false, reason: `GitHub refused to queue: ${message}`, told: true };
      }
    }

    try {
      const data = await github.pulls.merge(ref, number, {
        sha: head, // GitHub refuses if the head moved: only the checked commit is merged
        merge_method: recheck.config.automerge.method,
      });
      log.info({ pr: number, sha: data.sha }, 'merged');
      await reevaluateOthers(ctx, target, options, data.sha);
      return { merged: true, sha: data.sha };
    } catch (error) {
      const status = (error as { status?: number }).status;
      const message = error instanceof Error ? error.message : String(error);
      await reply(
        github,
        ref,
        number,
        `GitHub refused to merge ${head.slice(0, 12)}${status ? ` (HTTP ${status})` : ''}: ${message.slice(0, 500)}\n\ncatalog-bot does not retry on its own; it tries again after the next push, \`/retest\` or approval.`,
      );
      return { merged: false, reason: `GitHub refused the merge: ${message}`, told: true };
    }
  } catch (error) {
    log.error({ err: error, pr: number }, 'auto-merge evaluation failed');
    return { merged: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** The first errors of each check, as list items. */
export function errorLines(checks: CheckResult[]): string[] {
  return checks.flatMap((c) =>
    c.findings
      .filter((f) => f.level === 'error')
      .slice(0, 5)
      .map((f) => `- \`${c.name}\`: ${f.file ? `${f.file}${f.line ? `:${f.line}` : ''}: ` : ''}${f.message}`),
  );
}

/** After a merge the base moved: queue the other open pull requests for another look. */
async function reevaluateOthers(
  ctx: Ctx,
  target: MergeTarget,
  options: MergeOptions,
  mergeSha: string,
): Promise<void> {
  const pulls = await ctx.github.pulls.list(target.ref, { state: 'open' });
  for (const pr of pulls) {
    if (pr.number === target.number || pr.draft) continue;
    const other: MergeTarget = { ...target, number: pr.number };
    await options.queue.enqueue({
      key: `after-merge:${mergeSha}:${pr.number}`,
      group: `repo:${target.repoId}`,
      kind: 'merge',
      data: other,
    });
  }
}

/**
 * Events after which a pull request may have become ready without a new check run of ours:
 * the hold label taken off by hand, another App's checks completing (required checks).
 */
export const MERGE_EVENTS = ['pull_request.unlabeled', 'check_suite.completed'] as const;

type MergeEventContext = Context<'pull_request.unlabeled'> | Context<'check_suite.completed'>;

export function mergeEventHandler(
  options: Omit<MergeOptions, 'appSlug'> & { appSlug?: () => Promise<string> },
): (context: MergeEventContext) => Promise<void> {
  return async (context) => {
    const { appSlug } = options;
    if (!appSlug) return;
    const { payload } = context;
    const repository = payload.repository;
    let numbers: number[];
    if ('check_suite' in payload) {
      // Our own suites complete through our own job, which already looked.
      if (payload.check_suite.app?.slug === (await appSlug())) return;
      numbers = (payload.check_suite.pull_requests ?? [])
        .filter((pr) => pr.base.repo.id === repository.id)
        .map((pr) => pr.number);
    } else {
      if (payload.label?.name !== LABELS.hold) return;
      numbers = [payload.pull_request.number];
    }
    for (const number of numbers) {
      const target: MergeTarget = pullTarget(payload, number);
      await options.queue.enqueue({
        key: `delivery:${context.id}:${number}`,
        group: `repo:${repository.id}`,
        kind: 'merge',
        data: target,
      });
    }
  };
}
