// The bot's own batch merge, for branches without GitHub's merge queue (docs/merge-queue.md,
// "Batch merge without GitHub's merge queue"), as Prow's Tide merges: the pull requests
// ready to merge into one base branch (each through the merge gate of src/handlers/merge.ts:
// approved, green on its head, nothing branch protection waits for) are taken together, in
// pull-request-number order, up to `automerge.batch.max`. Their heads are merged onto the
// base's tip one after the other in the mirror, and the catalog checks run on that combined
// result against the base, as on a merge group's head. Green: each is merged through REST at
// its checked head, one after the other, each time after making sure its head has not moved
// and the base is the checked tip plus this batch's own merges; any surprise stops the batch
// and leaves the rest to the next one. Red: the first prefix of the batch that fails ends with
// the culprit, which is told once (a hidden mark keeps it out of batches until its head
// changes) and left open; the rest is checked again as a batch. A batch of one is the gate's
// single merge.
import { readRepoConfig } from '../../checks/changes.js';
import type { CheckResult } from '../../checks/check.js';
import type { RepoConfig } from '../../checks/config.js';
import { revParse } from '../../git/mirror.js';
import { mergeCommit } from '../../git/tree.js';
import {
  answerRules,
  errorLines,
  mergeIfReady,
  mergePinned,
  movedSinceChecked,
  readyOnGitHub,
  reevaluateOthers,
  rulesOfBase,
  type MergeCandidate,
  type MergeOptions,
} from '../../handlers/merge.js';
import { LABELS, replyText } from '../../handlers/pr-state.js';
import { openSession, type RepoTarget, type Session, type SessionContext } from '../../handlers/session.js';
import type { MergeBatchJob } from './job.js';
import { culpritMark, mayBeReady, namedCulpritAt, prefixOrder } from './plan.js';

/** The pull request that breaks a batch: with which pull requests ahead of it, and how. */
interface Culprit {
  member: MergeCandidate;
  /** The pull requests of the batch merged before it in the failing prefix. */
  with: number[];
  broken: CheckResult[];
  /** It does not merge cleanly onto the prefix ahead of it. */
  conflict: boolean;
}

/** What the batch's checks decided. */
type BatchPlan =
  | { kind: 'none' }
  | { kind: 'alone'; number: number }
  | {
      kind: 'batch';
      /** Refused by the base's current rules (checked under another config, permissions). */
      refused: { member: MergeCandidate; rules: Awaited<ReturnType<typeof rulesOfBase>> }[];
      culprits: Culprit[];
      /** Green together: merged in this order. */
      passed: MergeCandidate[];
      method: RepoConfig['automerge']['method'];
    };

export async function mergeBatchJob(
  ctx: SessionContext,
  options: MergeOptions,
  job: MergeBatchJob,
): Promise<void> {
  const { github, log } = ctx;
  const repo: RepoTarget = {
    ref: job.ref,
    repoId: job.repoId,
    cloneUrl: job.cloneUrl,
    installationId: job.installationId,
  };
  // Merged by an earlier batch, or pushed since (its new checks ask again): nothing to do.
  const asker = await github.pulls.get(job.ref, job.number);
  if (asker.state !== 'open' || asker.head.sha !== job.headSha) {
    log.info({ pr: job.number }, 'merge batch: its pull request was taken or moved since');
    return;
  }
  const baseTip = (await github.repos.branch(job.ref, job.baseRef)).commit.sha;
  const slug = await options.appSlug();
  const listed = await github.pulls.list(job.ref, { state: 'open', base: job.baseRef });
  const commits = { fetch: [baseTip] };
  const plan = await openSession(ctx, options, repo, 'merge-batch', commits, async (session) => {
    const { config } = await readRepoConfig(session.dir, baseTip);
    const { enabled, batch } = config.automerge;
    if (!enabled || !batch.enabled) return { kind: 'alone', number: job.number } satisfies BatchPlan;
    const taken = await readyPulls(ctx, options, job, listed, baseTip, slug, batch.max);
    const members = await fetchHeads(session, taken);
    if (members.length === 0) return { kind: 'none' } satisfies BatchPlan;
    if (members.length === 1) return { kind: 'alone', number: members[0]!.target.number } satisfies BatchPlan;
    const refused: Extract<BatchPlan, { kind: 'batch' }>['refused'] = [];
    const allowed: MergeCandidate[] = [];
    for (const member of members) {
      const rules = await rulesOfBase(session, member);
      const permitted =
        !('stale' in rules) && (!rules.permissions || rules.permissions.conclusion === 'success');
      if (permitted) allowed.push(member);
      else refused.push({ member, rules });
    }
    const verdict = await checkBatch(session, baseTip, allowed);
    return { kind: 'batch', refused, ...verdict, method: config.automerge.method } satisfies BatchPlan;
  });
  if (plan.kind === 'none') {
    log.info({ base: job.baseRef }, 'merge batch: no pull request is ready');
    return;
  }
  if (plan.kind === 'alone') {
    const outcome = await mergeIfReady(ctx, { ...repo, number: plan.number }, options, true);
    log.info({ pr: plan.number, outcome }, 'merge batch of one');
    return;
  }
  for (const { member, rules } of plan.refused) await answerRules(ctx, options, member, rules);
  for (const culprit of plan.culprits) await tellCulprit(ctx, job, baseTip, culprit);
  const { merged, tip } = await mergeInOrder(ctx, job, baseTip, plan.passed, plan.method);
  log.info(
    { base: job.baseRef, merged, culprits: plan.culprits.map((c) => c.member.target.number) },
    'merge batch done',
  );
  // The base moved (or a surprise left some unmerged): the others are looked at again.
  const told = [...merged, ...plan.culprits.map((c) => c.member.target.number)];
  if (tip !== baseTip || merged.length < plan.passed.length)
    await reevaluateOthers(ctx, repo, options, tip, told, 'after-batch');
}

/**
 * The open pull requests into the base that pass the merge gate now, in number order, at
 * most `max`; one named as a batch's culprit at its current head is skipped (its checks stay
 * green, but together with the others it breaks the catalog).
 */
async function readyPulls(
  ctx: SessionContext,
  options: MergeOptions,
  job: MergeBatchJob,
  listed: Parameters<typeof mayBeReady>[0],
  baseTip: string,
  slug: string,
  max: number,
): Promise<MergeCandidate[]> {
  const { github } = ctx;
  const taken: MergeCandidate[] = [];
  for (const pull of mayBeReady(listed, job.baseRef, LABELS, job.number)) {
    if (taken.length >= max) break;
    const target = {
      ref: job.ref,
      repoId: job.repoId,
      cloneUrl: job.cloneUrl,
      installationId: job.installationId,
    };
    const ready = await readyOnGitHub(ctx, { ...target, number: pull.number }, options, baseTip);
    if ('merged' in ready) continue;
    // Only the App's own comments: a mark anyone else writes counts for nothing.
    const own = (await github.comments.list(job.ref, pull.number))
      .filter((c) => c.user?.type === 'Bot' && c.user.login === `${slug}[bot]`)
      .map((c) => c.body);
    if (namedCulpritAt(own, ready.head)) continue;
    taken.push(ready);
  }
  return taken;
}

/** The members whose checked heads the mirror holds once their refs are fetched (a head pushed away is left out). */
async function fetchHeads(session: Session, taken: MergeCandidate[]): Promise<MergeCandidate[]> {
  if (taken.length > 1) await session.fetchCommits(taken.map((c) => `refs/pull/${c.target.number}/head`));
  const held: MergeCandidate[] = [];
  for (const c of taken)
    if (taken.length === 1 || (await revParse(session.dir, c.head).catch(() => '')) === c.head) held.push(c);
  return held;
}

/**
 * The checks of the batch on its combined result, then, while it fails, of its prefixes to
 * name the culprit (the first pull request whose prefix fails); the culprit is left out and
 * the rest checked again, the prefix ahead of the culprit known to pass.
 */
async function checkBatch(
  session: Session,
  baseTip: string,
  members: MergeCandidate[],
): Promise<{ passed: MergeCandidate[]; culprits: Culprit[] }> {
  await session.fetchBlobs([baseTip, ...members.map((m) => m.head)]);
  const brokenAt = async (commit: string) =>
    (await session.run({ base: baseTip, head: commit, checkRelease: true })).checks.filter(
      (c) => c.conclusion === 'failure',
    );
  const culprits: Culprit[] = [];
  let batch = members;
  let knownGood = 0;
  while (batch.length > 0) {
    // The prefix ahead of the last culprit was the whole rest: it passed already.
    if (knownGood >= batch.length) return { passed: batch, culprits };
    const chain = await combine(session.dir, baseTip, batch);
    // A head that conflicts ends the chain: the longest prefix built is checked first.
    const built = chain.length;
    const last = built > knownGood ? await brokenAt(chain[built - 1]!) : [];
    if (built === batch.length && last.length === 0) return { passed: batch, culprits };
    let found: { at: number; broken: CheckResult[]; conflict: boolean } = {
      at: built,
      broken: [],
      conflict: true,
    };
    if (last.length > 0)
      for (const length of prefixOrder(built, knownGood)) {
        const broken = length === built ? last : await brokenAt(chain[length - 1]!);
        if (broken.length > 0) {
          found = { at: length - 1, broken, conflict: false };
          break;
        }
      }
    const ahead = batch.slice(0, found.at);
    culprits.push({
      member: batch[found.at]!,
      with: ahead.map((m) => m.target.number),
      broken: found.broken,
      conflict: found.conflict,
    });
    batch = [...ahead, ...batch.slice(found.at + 1)];
    knownGood = found.at;
  }
  return { passed: [], culprits };
}

/** The commits of the batch's prefixes: the base's tip with each head merged in turn; it stops at a conflict. */
async function combine(dir: string, baseTip: string, batch: MergeCandidate[]): Promise<string[]> {
  const chain: string[] = [];
  let tip = baseTip;
  for (const member of batch) {
    const next = await mergeCommit(
      dir,
      tip,
      member.head,
      `Merge pull request #${member.target.number} (batch)`,
    );
    if (next === undefined) break;
    chain.push(next);
    tip = next;
  }
  return chain;
}

/** Said once on the culprit, with the mark that keeps it out of batches until its head changes. */
async function tellCulprit(ctx: SessionContext, job: MergeBatchJob, baseTip: string, culprit: Culprit) {
  const { member } = culprit;
  const others = culprit.with.map((n) => `#${n}`).join(', ');
  const together = others ? `together with ${others}` : `together with the current \`${job.baseRef}\``;
  const base = `\`${job.baseRef}\` (${baseTip.slice(0, 12)})`;
  const body = [
    culprit.conflict
      ? `Not merged with its batch into ${base}: this pull request conflicts with the base ${together}.`
      : `Not merged with its batch into ${base}: this pull request breaks the catalog ${together}:`,
    '',
    ...errorLines(culprit.broken),
    '',
    `Its own checks stay green, but batches leave it out until its head changes: rebase on \`${job.baseRef}\` once the others are merged and fix the catalog.`,
  ].join('\n');
  await ctx.github.comments.create(
    job.ref,
    member.target.number,
    `${replyText(body)}\n${culpritMark(member.head)}`,
  );
}

/**
 * Merge the batch's green pull requests in order, each at its checked head, as long as
 * nothing moved: its head, its hold, and the base (the checked tip plus this batch's merges).
 * Returns who was merged and the base's tip as last seen.
 */
async function mergeInOrder(
  ctx: SessionContext,
  job: MergeBatchJob,
  baseTip: string,
  passed: MergeCandidate[],
  method: RepoConfig['automerge']['method'],
): Promise<{ merged: number[]; tip: string }> {
  const { github, log } = ctx;
  const merged: number[] = [];
  let expected = baseTip;
  for (const member of passed) {
    const tip = (await github.repos.branch(job.ref, job.baseRef)).commit.sha;
    const surprise =
      (await movedSinceChecked(github, member)) ??
      (tip !== expected
        ? `${job.baseRef} is at ${tip.slice(0, 12)}, not ${expected.slice(0, 12)} as the batch left it`
        : undefined);
    if (surprise) {
      log.info(
        { pr: member.target.number, surprise },
        'merge batch stopped; the rest waits for the next one',
      );
      return { merged, tip };
    }
    const outcome = await mergePinned(ctx, member, method);
    if (!outcome.merged) return { merged, tip };
    merged.push(member.target.number);
    expected = outcome.sha;
  }
  return { merged, tip: expected };
}
