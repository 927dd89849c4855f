// `/remove <package>[/<bundle>]` (docs/remove.md, "In the App"): the removal `catalog-bot
// remove` plans (src/catalog/edits/remove.ts), planned on the default branch's tip in a check
// worker (./work.ts), judged as a change the commenter made (the permissions decision with
// them as author: the package's owners or a maintainer), then written as ONE pull request
// into the default branch from the App's branch for that target. Its description says, per
// catalog, what clusters lose (./body.ts). The pull request is then checked like any other:
// the pruning guard holds it until an owner says `/allow-prune` (docs/publishing.md).
import type { RemoveRequest } from '../../catalog/edits/remove.js';
import { CheckLimitError, runTaskIsolated } from '../../checks/isolate.js';
import { PERMISSIONS_CHECK } from '../../checks/permissions.js';
import type { GitHub, RepoRef } from '../../github/port.js';
import { commitFiles } from '../../git/tree.js';
import { commitFilesOn } from '../../handlers/branch-commit.js';
import { workModule } from '../../handlers/command-worker.js';
import type { CommandOutcome } from '../../handlers/commands/command.js';
import type { EditTarget } from '../catalog-edit/flow.js';
import { enqueueChecks, type JobContext, type PrHandlerOptions } from '../../handlers/pull-request.js';
import type { HeadJob } from '../../handlers/heads.js';
import { inlineCode } from '../../handlers/quote.js';
import { openSession, pullTargetOf } from '../../handlers/session.js';
import { removalPullBody, removalTitle } from './body.js';
import type { RemovalPlan, RemovalWork } from './work.js';

/**
 * A piece of a branch name git accepts: package and bundle names are already one segment of
 * letters, digits and `._+-` (parseRemovalTarget), but git also refuses `..`, a trailing `.`
 * and `.lock`.
 */
function refPart(name: string): string {
  return name
    .replace(/\.{2,}/g, (dots) => '-'.repeat(dots.length))
    .replace(/\.lock$/, '-lock')
    .replace(/\.$/, '-');
}

/**
 * The App's branch of a removal: one per target, so asking again finds the open pull request.
 * A package's and its bundles' branches never clash (`package` is no `bundle-` name).
 */
export function removalBranch(pkg: string, directory: string | null): string {
  const leaf =
    directory === null ? 'package' : `bundle-${refPart(directory.slice(directory.lastIndexOf('/') + 1))}`;
  return `catalog-bot/remove-${refPart(pkg)}/${leaf}`;
}

async function branchTip(github: GitHub, ref: RepoRef, name: string): Promise<string | undefined> {
  return (await github.repos.findBranch(ref, name))?.commit.sha;
}

type Planned =
  | { refused: string }
  | (Extract<RemovalPlan, { result: unknown }> & {
      message: string;
      permissions: { conclusion: string | null; message: string } | undefined;
    });

export async function removeFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  request: RemoveRequest,
): Promise<CommandOutcome> {
  const { github } = context;
  const { ref } = target;
  const repo = await github.repos.get(ref);
  const base = repo.default_branch;
  const tip = await github.repos.branch(ref, base);
  const parent = tip.commit.sha;
  const planned = await planRemovalAsCommenter(context, options, target, request, parent);
  // Refusals quote the repository's files (names, directories): in a code span.
  if ('refused' in planned) return { ok: false, say: `${COMMAND}: ${inlineCode(planned.refused, 3000)}` };
  const { result, files, message, permissions } = planned;
  if (!permissions || permissions.conclusion !== 'success')
    return {
      ok: false,
      say: `${COMMAND}: only the owners of package ${inlineCode(result.package)} or a maintainer may remove it (${inlineCode(permissions?.message ?? 'no permissions decision', 1000)}).`,
    };

  // One pull request per target: a second `/remove` points to the open one.
  const branch = removalBranch(result.package, result.directory);
  const open = await github.pulls.list(ref, { state: 'open', head: `${ref.owner}:${branch}` }, 10);
  const existing = open.find((p) => p.head.ref === branch);
  if (existing)
    return {
      ok: true,
      say: `${COMMAND}: #${existing.number} already removes ${inlineCode(removalTitle(result).replace(/^Remove /, ''), 300)}; it is still open.`,
    };

  const sha = await commitFilesOn(
    github,
    ref,
    { parent, baseTree: tip.commit.commit.tree.sha },
    files.map((f) => (f.text === null ? { path: f.path, sha: null } : { path: f.path, content: f.text })),
    message,
  );
  const opened = await openRemovalPull(context, target, result, { branch, base, sha });
  await queueRemovalPullWork(context, options, target, opened.number, sha);
  return { ok: true, say: removalOpenedReply(result, opened.number, base, files.length) };
}

const COMMAND = '`/remove`';

/**
 * The removal planned in a check worker on the default branch's tip, committed in the mirror
 * and judged as a change by the commenter, under the default branch's rules: only the
 * package's owners or a maintainer may delete what it deletes (docs/remove.md).
 */
function planRemovalAsCommenter(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  request: RemoveRequest,
  parent: string,
): Promise<Planned> {
  const commits = { fetch: [parent], blobs: [parent] };
  return openSession(context, options, target, 'remove', commits, async (session): Promise<Planned> => {
    const work: RemovalWork = { dir: session.dir, parent, request };
    let plan: RemovalPlan;
    try {
      plan = await runTaskIsolated<RemovalPlan>({
        module: workModule(import.meta.url, 'work'),
        fn: 'planRemovalWork',
        input: work,
        what: 'the /remove plan',
      });
    } catch (error) {
      if (error instanceof CheckLimitError) return { refused: error.message };
      throw error;
    }
    if ('refused' in plan) return plan;
    const message = `${removalTitle(plan.result)}\n\nRequested by @${target.commenter} in #${target.number}.`;
    const commit = await commitFiles(session.dir, parent, plan.files, message);
    const { checks } = await session.run({
      base: parent,
      rules: parent,
      head: commit,
      author: target.commenter,
      approvers: [],
      only: [PERMISSIONS_CHECK],
    });
    const run = checks.find((c) => c.name === PERMISSIONS_CHECK);
    return {
      ...plan,
      message,
      permissions: run && {
        conclusion: run.conclusion,
        message: run.findings.find((f) => f.level === 'error')?.message ?? run.title,
      },
    };
  });
}

type Removal = Extract<RemovalPlan, { result: unknown }>['result'];

/**
 * The removal's pull request from its branch. The branch is the App's own: one left from a
 * closed pull request is moved (no open pull request comes from it, checked before).
 */
async function openRemovalPull(
  context: JobContext,
  target: EditTarget,
  result: Removal,
  at: { branch: string; base: string; sha: string },
): Promise<{ number: number }> {
  const { github } = context;
  const { ref } = target;
  const { branch, base, sha } = at;
  if ((await branchTip(github, ref, branch)) === undefined) await github.git.createBranch(ref, branch, sha);
  else await github.git.moveBranch(ref, branch, sha, true);
  return github.pulls.create(ref, {
    title: removalTitle(result),
    head: branch,
    base,
    body: removalPullBody(result, { by: target.commenter, in: target.number }),
  });
}

/**
 * The new pull request's head noted now, as GitHub's `opened` event would have it noted (an
 * owner's `/approve` counts only for a head the App had seen when the comment was written,
 * docs/security.md), and its checks queued at once, as the App's own (GitHub's own event for
 * it, if any, finds the work done).
 */
async function queueRemovalPullWork(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  number: number,
  sha: string,
): Promise<void> {
  const noted: HeadJob = { ref: target.ref, number, installationId: target.installationId, headSha: sha };
  await options.queue.enqueue({
    key: `remove:${target.repoId}:${number}:${sha}:head`,
    group: `repo:${target.repoId}`,
    kind: 'note-head',
    data: noted,
  });
  const slug = options.appSlug ? await options.appSlug() : undefined;
  await enqueueChecks(
    context,
    options,
    {
      ...pullTargetOf({ ...target, number }),
      headSha: sha,
      ...(slug !== undefined ? { author: `${slug}[bot]` } : {}),
    },
    `remove:${target.repoId}:${number}:${sha}`,
  );
}

/** The reply once the removal's pull request is open. */
function removalOpenedReply(result: Removal, number: number, base: string, files: number): string {
  const catalogs = Object.keys(result.catalogs);
  return [
    `Opened #${number}: ${inlineCode(removalTitle(result), 300)} from \`${base}\` (${files} file${files === 1 ? '' : 's'}).`,
    catalogs.length > 0
      ? `Its description says what clusters lose in ${catalogs.length} catalog${catalogs.length === 1 ? '' : 's'}.`
      : 'No catalog served it.',
    result.allowPrune.length > 0
      ? 'Where the catalogs are published, `catalog-bot/prune` holds it until an owner of the package says `/allow-prune` (the description lists the lines).'
      : '',
  ]
    .filter(Boolean)
    .join(' ');
}
