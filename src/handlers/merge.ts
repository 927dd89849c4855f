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
import { CONFIG_PATH, type RepoConfig } from '../checks/config.js';
import { PERMISSIONS_CHECK } from '../checks/permissions.js';
import { mergeTree, objectAt } from '../git/read.js';
import type { GitHub } from '../github/port.js';
import type { PullRequest } from '../github/types.js';
import type { JobQueue } from '../queue.js';
import { requiredChecks, resultsFor, unanswered, type CheckedAgainst, type ListedRun } from './check-runs.js';
import { LABELS, loadState, reply, type RecordedApproval } from './pr-state.js';
import { releaseSourceOf } from '../flows/release/source.js';
import { enqueueChecks, type PrJob } from './pull-request.js';
import { requiresMergeQueue } from '../flows/merge-queue/queue.js';
import { enqueueMergeBatch } from '../flows/merge-batch/job.js';
import {
  openSession,
  pullTarget,
  pullTargetOf,
  type PullTarget,
  type RepoTarget,
  type Session,
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
  /** Merge it alone even when the base branch's config asks for batches (a batch of one). */
  alone = false,
): Promise<MergeOutcome> {
  const { github, log } = ctx;
  const { number } = target;
  try {
    const ready = await readyOnGitHub(ctx, target, options);
    if ('merged' in ready) return ready;
    const { pr, head, baseTip } = ready;
    const recheck = await openSession(ctx, options, target, 'merge', ready.commits, async (session) => {
      const { config } = await readRepoConfig(session.dir, baseTip);
      if (!config.automerge.enabled) return { kind: 'off' as const };
      // Batches are the bot's own merge queue: a branch with GitHub's takes no REST merge anyway.
      if (
        !alone &&
        config.automerge.batch.enabled &&
        !(await requiresMergeQueue(github, target.ref, pr.base.ref))
      )
        return { kind: 'batch' as const };
      const rules = await rulesOfBase(session, ready);
      if ('stale' in rules) return { kind: 'stale' as const, rules };
      const merged = await mergeTree(session.dir, baseTip, head);
      if (merged === undefined) return { kind: 'conflict' as const };
      // A bundle-only change is checked with its catalog update applied (docs/bundles.md).
      const { checks } = await session.run({ base: baseTip, head: merged, checkRelease: true });
      const broken = checks.filter((c) => c.conclusion === 'failure');
      return { kind: 'checked' as const, broken, rules, method: config.automerge.method };
    });
    if (recheck.kind === 'off')
      return { merged: false, reason: 'auto-merge is off in the base branch config' };
    if (recheck.kind === 'batch') {
      await enqueueMergeBatch(options.queue, target, pr.base.ref, baseTip, head);
      return { merged: false, reason: `waits for a batch into ${pr.base.ref}`, queued: true };
    }
    if (recheck.kind === 'conflict') return { merged: false, reason: `conflicts with ${pr.base.ref}` };
    const refused = await answerRules(ctx, options, ready, recheck.rules);
    if (refused || recheck.kind === 'stale')
      return refused ?? { merged: false, reason: 'checked under another config' };
    if (recheck.broken.length > 0) {
      await reply(
        github,
        target.ref,
        number,
        [
          `Not merged: this pull request is fine on its own, but together with the current \`${pr.base.ref}\` (${baseTip.slice(0, 12)}) it breaks the catalog:`,
          '',
          ...errorLines(recheck.broken),
          '',
          'Rebase or merge the base branch in and fix the catalog; the checks run again on the new head.',
        ].join('\n'),
      );
      return { merged: false, reason: 'breaks the catalog together with the current base', told: true };
    }
    // The re-check took a while: a /hold, a push or a close in the meantime wins.
    const late = await movedSinceChecked(github, ready);
    if (late) return { merged: false, reason: late };
    // A branch that requires GitHub's merge queue takes no REST merge: the checked head is
    // queued, and the queue's merge groups are checked on their own (docs/merge-queue.md).
    if (await requiresMergeQueue(github, target.ref, pr.base.ref))
      return await enqueueInMergeQueue(ctx, ready);
    const outcome = await mergePinned(ctx, ready, recheck.method);
    if (outcome.merged) await reevaluateOthers(ctx, target, options, outcome.sha, [number]);
    return outcome;
  } catch (error) {
    log.error({ err: error, pr: number }, 'auto-merge evaluation failed');
    return { merged: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** A pull request that GitHub's side lets merge, with what its re-check in the mirror needs. */
export interface MergeCandidate {
  target: MergeTarget;
  pr: PullRequest;
  /** The head whose checks are green: the only commit that may be merged. */
  head: string;
  /** The base branch's tip the re-check is made against. */
  baseTip: string;
  slug: string;
  /** The runs of the checks that apply (their `checked` record: the config they ran under). */
  required: (ListedRun & { checked?: CheckedAgainst })[];
  /** The permissions ran against another base commit: decided again under the current one. */
  rulesMoved: boolean;
  approvals: RecordedApproval[];
  derivedRelease: Awaited<ReturnType<typeof releaseSourceOf>>;
  commits: { fetch: string[] };
}

/**
 * The gate on GitHub's side: open, not a draft nor on hold, every catalog-bot check of this
 * App green on this very head for this pull request, and nothing branch protection waits for.
 * `baseTip` is the base branch's tip when the caller already read it (a batch).
 */
export async function readyOnGitHub(
  ctx: Ctx,
  target: MergeTarget,
  options: MergeOptions,
  baseTip?: string,
): Promise<MergeCandidate | { merged: false; reason: string }> {
  const { github } = ctx;
  const { ref, number } = target;
  const pr = await github.pulls.get(ref, number);
  const why = notMergeable(pr);
  if (why) return { merged: false, reason: why };
  const head = pr.head.sha;
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
  const tip = baseTip ?? (await github.repos.branch(ref, pr.base.ref)).commit.sha;
  // Permissions as the base branch has them now (its config and owners files): a change
  // to them merged since the checks ran applies to every pull request still waiting.
  const rulesMoved = results.get(PERMISSIONS_CHECK)?.checked?.sha !== tip;
  const approvals = rulesMoved ? (await loadState(github, ref, number, `${slug}[bot]`)).state.approvals : [];
  // The App's own release pull request (docs/bundles.md).
  const derivedRelease = await releaseSourceOf(github, ref, pr, `${slug}[bot]`);
  const commits = { fetch: [tip, `refs/pull/${number}/head`] };
  return { target, pr, head, baseTip: tip, slug, required, rulesMoved, approvals, derivedRelease, commits };
}

/**
 * In the mirror: whether the results still hold under the base branch's current rules. Results
 * computed under another config of the base branch are stale; when the rules moved, the
 * permissions decision is made again under them.
 */
export async function rulesOfBase(
  session: Session,
  c: MergeCandidate,
): Promise<{ stale: true } | { permissions: CheckResult | undefined }> {
  const configBlob = await objectAt(session.dir, c.baseTip, CONFIG_PATH);
  if (c.required.some((r) => r.checked?.config !== configBlob)) return { stale: true };
  await session.fetchBlobs([c.baseTip, c.head]);
  if (!c.rulesMoved) return { permissions: undefined };
  const { checks } = await session.run({
    base: await session.mergeBase(c.baseTip, c.head),
    rules: c.baseTip,
    head: c.head,
    author: c.pr.user?.login ?? '',
    approvers: [],
    approvals: c.approvals,
    only: [PERMISSIONS_CHECK],
    ...(c.derivedRelease ? { derivedRelease: { changed: c.derivedRelease.changed } } : {}),
  });
  return { permissions: checks.find((check) => check.name === PERMISSIONS_CHECK) };
}

/**
 * What the merge gate says and does when the base's rules refuse the pull request: checked
 * under another config (the checks run again), or permissions that fail under the current
 * rules (said once, and the checks run again to show it). Undefined when they let it merge.
 */
export async function answerRules(
  ctx: Ctx,
  options: MergeOptions,
  c: MergeCandidate,
  rules: { stale: true } | { permissions?: CheckResult | undefined },
): Promise<MergeOutcome | undefined> {
  const { pr, head, baseTip, target } = c;
  const checkAgain = (why: string) => {
    const job: PrJob = { ...pullTargetOf(target), headSha: head, author: pr.user?.login ?? '' };
    return enqueueChecks(ctx, options, job, `recheck:${why}:${target.number}:${head}`);
  };
  if ('stale' in rules) {
    // The new runs, once green, bring the pull request back here.
    await checkAgain(`config:${pr.base.ref}:${baseTip}`);
    return { merged: false, reason: `checked under another config of ${pr.base.ref}; checking again` };
  }
  const { permissions } = rules;
  if (!permissions || permissions.conclusion === 'success') return undefined;
  await reply(
    ctx.github,
    target.ref,
    target.number,
    [
      `Not merged: under the rules of the current \`${pr.base.ref}\` (${baseTip.slice(0, 12)}), its config and owners files, \`${PERMISSIONS_CHECK}\` fails: ${permissions.title}`,
      '',
      ...errorLines([permissions]),
      '',
      'The checks run again on this head under those rules.',
    ].join('\n'),
  );
  // The permissions run shows the details (and, red, keeps this from being said again).
  await checkAgain(`permissions:${pr.base.ref}:${baseTip}`);
  return { merged: false, reason: 'permissions fail under the current base', told: true };
}

/** Why the pull request may no longer be merged as checked: held, closed, pushed or retargeted since. */
export async function movedSinceChecked(github: GitHub, c: MergeCandidate): Promise<string | undefined> {
  const now = await github.pulls.get(c.target.ref, c.target.number);
  return (
    notMergeable(now) ??
    (now.head.sha !== c.head ? `the head moved to ${now.head.sha.slice(0, 12)}` : undefined) ??
    (now.base.ref !== c.pr.base.ref ? `the base changed to ${now.base.ref}` : undefined)
  );
}

/** Queue the checked head in GitHub's merge queue (docs/merge-queue.md). */
async function enqueueInMergeQueue(ctx: Ctx, c: MergeCandidate): Promise<MergeOutcome> {
  const { github, log } = ctx;
  const { pr, head, target } = c;
  try {
    if (await github.mergeQueue.isQueued(pr.node_id))
      return { merged: false, reason: 'already in the merge queue', queued: true };
    await github.mergeQueue.enqueue(pr.node_id, head);
    log.info({ pr: target.number, head }, 'enqueued in the merge queue');
    return { merged: false, reason: `queued at ${head.slice(0, 12)} in the merge queue`, queued: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await reply(
      github,
      target.ref,
      target.number,
      `GitHub refused to add ${head.slice(0, 12)} to the merge queue: ${message.slice(0, 500)}\n\ncatalog-bot tries again after the next push, \`/retest\` or approval.`,
    );
    return { merged: false, reason: `GitHub refused to queue: ${message}`, told: true };
  }
}

/** The REST merge of the checked head only (GitHub refuses if the head moved); a refusal is said on the pull request. */
export async function mergePinned(
  ctx: Ctx,
  c: MergeCandidate,
  method: RepoConfig['automerge']['method'],
): Promise<MergeOutcome> {
  const { github, log } = ctx;
  const { head, target } = c;
  try {
    const data = await github.pulls.merge(target.ref, target.number, { sha: head, merge_method: method });
    log.info({ pr: target.number, sha: data.sha }, 'merged');
    return { merged: true, sha: data.sha };
  } catch (error) {
    const status = (error as { status?: number }).status;
    const message = error instanceof Error ? error.message : String(error);
    await reply(
      github,
      target.ref,
      target.number,
      `GitHub refused to merge ${head.slice(0, 12)}${status ? ` (HTTP ${status})` : ''}: ${message.slice(0, 500)}\n\ncatalog-bot does not retry on its own; it tries again after the next push, \`/retest\` or approval.`,
    );
    return { merged: false, reason: `GitHub refused the merge: ${message}`, told: true };
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
export async function reevaluateOthers(
  ctx: Ctx,
  target: RepoTarget,
  options: Pick<MergeOptions, 'queue'>,
  mergeSha: string,
  except: readonly number[],
  why = 'after-merge',
): Promise<void> {
  const pulls = await ctx.github.pulls.list(target.ref, { state: 'open' });
  for (const pr of pulls) {
    if (except.includes(pr.number) || pr.draft) continue;
    const { ref, repoId, cloneUrl, installationId } = target;
    const other: MergeTarget = { ref, repoId, cloneUrl, installationId, number: pr.number };
    await options.queue.enqueue({
      key: `${why}:${mergeSha}:${pr.number}`,
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
