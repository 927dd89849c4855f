// Acting on a bundle-only pull request's catalog update (docs/bundles.md, "After the
// check"). On a branch of this repository the App commits the checked update onto the pull
// request's branch; for a fork it waits for the merge, releases the merged bundle on the
// base, and opens its own pull request with exactly that update, checked and auto-merged
// like any other. The logic (what the update is, whether a change is exactly it) lives in
// src/checks; here are only the reads and writes to GitHub.
import type { Context } from 'probot';
import type { Diagnostic } from '../../catalog/diagnostics.js';
import { BUNDLE_CHECK } from '../../checks/bundle.js';
import { CheckLimitError } from '../../checks/isolate.js';
import { changedFiles, readRepoConfig } from '../../checks/changes.js';
import { boundedDiff } from '../../catalog/edits/diff-summary.js';
import { commitFilesOn, hasRules } from '../../handlers/branch-commit.js';
import type { GitHub, RepoRef } from '../../github/port.js';
import { reply } from '../../handlers/pr-state.js';
import { releaseBranch } from './source.js';
import {
  enqueueChecks,
  type JobContext,
  type PrHandlerOptions,
  type ReleasePushJob,
} from '../../handlers/pull-request.js';
import { openSession, pullTarget, pullTargetOf, type PullTarget } from '../../handlers/session.js';

export const RELEASE_EVENTS = ['pull_request.closed'] as const;

export type { ReleasePushJob };

/** After a merge: release the merged bundles on the base in the App's own pull request. */
export interface ReleaseFollowUpJob extends PullTarget {
  headSha: string;
  mergeSha: string;
  baseRef: string;
}

/** The commit author of every release commit: the App, never the contributor. */
const AUTHOR = { name: 'catalog-bot', email: 'catalog-bot@users.noreply.github.com' };
const MAX_DIFF = 20_000;

/** A pull request merged: queue the follow-up release (it does nothing unless one is due). */
export function releaseEventHandler(
  options: Pick<PrHandlerOptions, 'queue'>,
): (context: Context<'pull_request.closed'>) => Promise<void> {
  return async (context) => {
    const pr = context.payload.pull_request;
    if (!pr.merged || !pr.merge_commit_sha) return;
    const job: ReleaseFollowUpJob = {
      ...pullTarget(context.payload, pr.number),
      headSha: pr.head.sha,
      mergeSha: pr.merge_commit_sha,
      baseRef: pr.base.ref,
    };
    await options.queue.enqueue({
      key: `release:${job.repoId}:${pr.number}:${pr.merge_commit_sha}`,
      group: `repo:${job.repoId}`,
      kind: 'release-follow-up',
      data: job,
    });
  };
}

/** The commit message lines that name the bundles a release commit releases. */
const RELEASED_BUNDLE_TRAILER = 'Released-bundle';

/** The message of a release commit; its trailers name the bundles. */
function releaseMessage(dirs: string[], number: number): string {
  return [
    `Release ${dirs.join(', ')} to its catalogs`,
    '',
    `catalog-bot's release of the bundle${dirs.length === 1 ? '' : 's'} of #${number}: the catalog update its checks showed (docs/bundles.md).`,
    '',
    ...dirs.map((d) => `${RELEASED_BUNDLE_TRAILER}: ${d}`),
  ].join('\n');
}

/** A release commit, authored by the App, of the update's files on `on.parent` (no branch moves). */
function releaseCommit(
  github: GitHub,
  ref: RepoRef,
  on: { parent: string; baseTree: string },
  files: { path: string; after: string }[],
  message: string,
): Promise<string> {
  const tree = files.map((f) => ({ path: f.path, content: f.after }));
  return commitFilesOn(github, ref, on, tree, message, AUTHOR);
}

function diffOf(files: { path: string; before?: string; after: string }[], bundles: string[]): string {
  const { stats, diff } = boundedDiff(files, {
    maxLines: 400,
    maxChars: MAX_DIFF,
    rest: `\`git diff\` after \`${bundles.map((b) => `catalog-bot release ${b}`).join(' && ')}\``,
  });
  return `${stats.map((s) => `# ${s}`).join('\n')}\n${diff}`;
}

/**
 * Same repository: commit the update onto the pull request's branch, only while the branch
 * is still at the head that was checked (compare, then a fast-forward-only update: a push
 * in between makes GitHub refuse it), never onto the default or a protected branch. A
 * branch that moved gets nothing: its new head is checked on its own.
 */
export async function releasePushJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: ReleasePushJob,
): Promise<void> {
  const { github, log } = context;
  const { ref } = job;
  const pr = await github.pulls.get(ref, job.number);
  const sameRepo = pr.head.repo?.full_name === `${ref.owner}/${ref.repo}`;
  if (pr.state !== 'open' || pr.head.sha !== job.headSha || !sameRepo) return;
  const repo = await github.repos.get(ref);
  const branch = pr.head.ref;
  if (branch === repo.default_branch) return;
  const tip = await github.repos.findBranch(ref, branch);
  if (tip === undefined) {
    log.info({ pr: job.number, branch }, 'the branch is gone: no release commit');
    return;
  }
  if (tip.commit.sha !== job.headSha) {
    log.info({ pr: job.number, branch }, 'the branch moved since its check: no release commit');
    return;
  }
  if (tip.protected || (await hasRules(github, ref, branch))) return;
  const base = pr.base.sha;
  const commits = { fetch: [base, `refs/pull/${job.number}/head`], verify: [job.headSha], blobs: [base] };
  const planned = await openSession(context, options, job, 'release-push', commits, async (session) => {
    const { config } = await readRepoConfig(session.dir, base);
    if (config.bundles.release !== 'push') return undefined;
    await session.fetchBlobs([job.headSha]);
    const { checks, release } = await session.run({
      base: await session.mergeBase(base, job.headSha),
      rules: base,
      head: job.headSha,
      only: [BUNDLE_CHECK],
    });
    const bundle = checks.find((c) => c.name === BUNDLE_CHECK);
    return bundle?.conclusion === 'success' ? release : undefined;
  });
  if (!planned || planned.files.length === 0) return;
  // The checked head is the only parent; the branch moves only from it (no force).
  const commit = await releaseCommit(
    github,
    ref,
    { parent: job.headSha, baseTree: tip.commit.commit.tree.sha },
    planned.files,
    releaseMessage(planned.bundles, job.number),
  );
  try {
    await github.git.moveBranch(ref, branch, commit, false);
  } catch (error) {
    // A push landed between the look and the write: that head is checked on its own.
    log.info({ err: error, pr: job.number }, 'the branch moved while the release commit was made');
    return;
  }
  await reply(
    github,
    ref,
    job.number,
    [
      `Pushed ${commit.slice(0, 12)} to \`${branch}\`: the catalog update of ${planned.files.length} file${planned.files.length === 1 ? '' : 's'} that the checks of ${job.headSha.slice(0, 12)} showed (the release of ${planned.bundles.map((b) => `\`${b}\``).join(', ')}). It is checked as the new head.`,
      '',
      '```diff',
      diffOf(planned.files, planned.bundles).trimEnd(),
      '```',
    ].join('\n'),
  );
}

/** The release planned on the base: refused, or the files to write. */
type ReleasePlan =
  | { dirs: string[]; refused: Diagnostic }
  | {
      dirs: string[];
      files: { path: string; before?: string; after: string }[];
      message: string;
    };

/**
 * After a bundle pull request is merged: release its bundles on the base as it is now, and
 * propose exactly that as the App's own pull request (from a `catalog-bot/release-<n>`
 * branch), checked like any other; the merge gate merges it when green. Nothing is written
 * when the release is refused: the original pull request says why.
 */
export async function releaseFollowUpJob(
  context: JobContext,
  options: PrHandlerOptions & { appSlug: () => Promise<string> },
  job: ReleaseFollowUpJob,
): Promise<void> {
  const { github } = context;
  const { ref } = job;
  // GitHub's word, not the payload's: the pull request is merged, with this merge commit.
  const pr = await github.pulls.get(ref, job.number);
  if (!pr.merged || pr.merge_commit_sha !== job.mergeSha) return;
  const tip = await github.repos.branch(ref, job.baseRef);
  const base = tip.commit.sha;
  const bot = `${await options.appSlug()}[bot]`;
  let planned: ReleasePlan | undefined;
  try {
    planned = await planReleaseOnBase(context, options, job, pr.head.sha, base);
  } catch (error) {
    if (!(error instanceof CheckLimitError)) throw error;
    await reply(
      github,
      ref,
      job.number,
      `catalog-bot could not compute the catalog update of this pull request's bundles on \`${job.baseRef}\` (${base.slice(0, 12)}): ${error.message.replace('the checks of this pull request', 'the release').replace('were stopped', 'was stopped')}.\n\nNothing was written. \`catalog-bot release <bundle-dir>\` in a clone makes it; propose it as a pull request.`,
    );
    return;
  }
  if (!planned) return;
  const commands = planned.dirs.map((d) => `catalog-bot release ${d}`).join(' && ');
  if ('refused' in planned) {
    const r = planned.refused;
    await reply(
      github,
      ref,
      job.number,
      `catalog-bot cannot add ${planned.dirs.map((d) => `\`${d}\``).join(', ')} to its catalogs on \`${job.baseRef}\` (${base.slice(0, 12)}): ${r.file ? `\`${r.file}:${r.line ?? 1}\`: ` : ''}${r.message}\n\nNothing was written. ${r.hint ?? ''} \`${commands}\` shows the same in a clone.`,
    );
    return;
  }
  const commit = await releaseCommit(
    github,
    ref,
    { parent: base, baseTree: tip.commit.commit.tree.sha },
    planned.files,
    planned.message,
  );
  if (!(await releaseBranchAt(context, job, commit, bot))) return;
  await proposeRelease(context, options, job, planned, { base, commit, commands, bot });
}

/**
 * The release of the merged pull request's bundles on the base, planned in a session, or
 * undefined when there is nothing to release (releases off, no bundle directory, no change).
 */
function planReleaseOnBase(
  context: JobContext,
  options: PrHandlerOptions,
  job: ReleaseFollowUpJob,
  head: string,
  base: string,
): Promise<ReleasePlan | undefined> {
  const commits = {
    fetch: [base, job.mergeSha, `refs/pull/${job.number}/head`],
    verify: [base, job.mergeSha],
    blobs: [base],
  };
  return openSession<ReleasePlan | undefined>(
    context,
    options,
    job,
    'release-follow-up',
    commits,
    async (session) => {
      const { dir } = session;
      const { config } = await readRepoConfig(dir, base);
      if (config.bundles.release === 'off') return undefined;
      // The pull request's own change (what it showed), whichever way it was merged: from
      // where it forked off the base as the merge found it (the merge commit's first parent).
      const files = await changedFiles(dir, await session.mergeBase(head, `${job.mergeSha}^1`), head);
      // In the checks' worker, within their deadline and heap cap: never on the event loop.
      const found = (await session.run({ base, head: base, releaseMerged: { changed: files } }))
        .mergedRelease;
      if (!found) return undefined;
      const { dirs, release } = found;
      if (!('files' in release)) return { refused: release.refused, dirs };
      if (release.files.length === 0) return undefined;
      // Its checks run on the pull request itself, as on any other (docs/bundles.md).
      return { dirs, files: release.files, message: releaseMessage(dirs, job.number) };
    },
  );
}

/**
 * The release branch made at `commit`; false when the App proposed this release before (its
 * own open pull request from the branch).
 */
async function releaseBranchAt(
  context: JobContext,
  job: ReleaseFollowUpJob,
  commit: string,
  bot: string,
): Promise<boolean> {
  const { github, log } = context;
  const { ref } = job;
  const branchName = releaseBranch(job.number);
  const created = await github.git.createBranch(ref, branchName, commit).then(
    () => true,
    (error: { status?: number }) => {
      if (error.status !== 422) throw error;
      return false;
    },
  );
  if (created) return true;
  // The branch is there. Only the App's own open pull request from it means this release was
  // proposed before: anyone who can push made the branch otherwise (before the merge, for
  // every number to come), or an earlier attempt stopped before opening the pull request.
  // The branch is the App's own, so it is moved to this release (docs/security.md).
  const open = await github.pulls.list(ref, { state: 'open', head: `${ref.owner}:${branchName}` }, 10);
  if (open.some((p) => p.head.ref === branchName && p.user?.login === bot)) {
    log.info({ pr: job.number }, `${branchName}: the release was proposed before`);
    return false;
  }
  await github.git.moveBranch(ref, branchName, commit, true);
  return true;
}

/** The release pull request opened from the release branch, the merged one told, and its checks queued. */
async function proposeRelease(
  context: JobContext,
  options: PrHandlerOptions,
  job: ReleaseFollowUpJob,
  planned: Extract<ReleasePlan, { files: unknown }>,
  at: { base: string; commit: string; commands: string; bot: string },
): Promise<void> {
  const { github } = context;
  const { ref } = job;
  const { base, commit, commands, bot } = at;
  const opened = await github.pulls.create(ref, {
    title: `Release ${planned.dirs.join(', ')} to its catalogs`,
    head: releaseBranch(job.number),
    base: job.baseRef,
    body: [
      `The catalog update of ${planned.dirs.map((d) => `\`${d}\``).join(', ')}, merged in #${job.number}: exactly what \`${commands}\` writes on ${base.slice(0, 12)}. catalog-bot merges it when its checks are green (docs/bundles.md).`,
      '',
      '```diff',
      diffOf(planned.files, planned.dirs).trimEnd(),
      '```',
    ].join('\n'),
  });
  await reply(
    github,
    ref,
    job.number,
    `The catalog update of this pull request's bundle${planned.dirs.length === 1 ? '' : 's'} is #${opened.number} (${planned.files.length} file${planned.files.length === 1 ? '' : 's'}); it is merged when its checks are green.`,
  );
  // Checked at once (GitHub's own event for it, if any, finds the work done).
  await enqueueChecks(
    context,
    options,
    {
      ...pullTargetOf({ ...job, number: opened.number }),
      headSha: commit,
      author: bot,
    },
    `release:${job.repoId}:${opened.number}:${commit}`,
  );
}
