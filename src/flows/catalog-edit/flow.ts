// What the comment commands that edit files share (`/promote`, `/default-channel`,
// `/deprecate`, `/undeprecate`, `/render`; each flow's own part is in its folder). The edit is planned on the branch it goes to, committed in the mirror and run through
// every pull-request check with the commenter as author (so only those who may change
// what it touches may ask for it, and an edit that breaks a check is refused), then
// written to GitHub: onto the pull request's branch when it is open and in this
// repository, otherwise as a new pull request from the default branch.
import type { PullRequest } from '../../github/types.js';
import { unifiedDiff } from '../../catalog/edits/promote.js';
import { CheckLimitError, CHECKS_SUBJECT, runTaskIsolated, type Callbacks } from '../../checks/isolate.js';
import { PERMISSIONS_CHECK } from '../../checks/permissions.js';
import { commitFilesOn, hasRules } from '../../handlers/branch-commit.js';
import { workModule } from '../../handlers/command-worker.js';
import type { CatalogEdit, CatalogEditWork, EditChecked, EditWork, PlanTask } from './work.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { bounded, codeBlock, inlineCode } from '../../handlers/quote.js';
import { openSession, type PullTarget } from '../../handlers/session.js';
import { teamMembers } from '../../handlers/teams.js';

export { gitFileTree, type Plan, type PlanTask } from './work.js';

export interface EditTarget extends PullTarget {
  commenter: string;
}

type Pull = PullRequest;

/** What happened, for the reply. */
export interface EditOutcome {
  ok: boolean;
  say: string;
}

const MAX_DIFF = 20_000;

/** A plan step made by a catalog edit (a flow's plan.ts, run by ./work.ts planCatalogEdit). */
export function catalogEdit(change: CatalogEdit, title: string): (dir: string, parent: string) => PlanTask {
  return (dir, parent) => {
    const input: CatalogEditWork = { dir, parent, change, title };
    return { module: workModule(import.meta.url, 'work').href, fn: 'planCatalogEdit', input };
  };
}

export async function editFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  command: string,
  /** The flow's plan step on the mirror `dir`, for the edit on commit `parent`. */
  plan: (dir: string, parent: string) => PlanTask,
  /** `all`: every check must pass on the edit (a promotion); `permissions`: only who asks matters. */
  gate: 'all' | 'permissions' = 'all',
): Promise<EditOutcome> {
  const { github } = context;
  const { ref } = target;
  const repo = await github.repos.get(ref);
  // Onto the pull request when it is open and its branch is in this repository, but never
  // onto the default branch or a protected one (a pull request from `main`, or from a
  // release branch): there the edit is proposed as a pull request into that branch, so it
  // gets the review the branch asks for (docs/security.md).
  const sameRepo = pr.state === 'open' && pr.head.repo?.full_name === `${ref.owner}/${ref.repo}`;
  const branch = sameRepo ? pr.head.ref : repo.default_branch;
  const tip = await github.repos.branch(ref, branch);
  const guarded =
    !sameRepo || branch === repo.default_branch || tip.protected || (await hasRules(github, ref, branch));
  const ontoPr = sameRepo && !guarded;
  const parent = tip.commit.sha;
  const commits = { fetch: [parent, pr.base.sha], blobs: [parent] };
  const flow = command.slice(1);
  const planned = await openSession(context, options, target, flow, commits, (session) => {
    const { callbacks = {}, ...step } = plan(session.dir, parent);
    const work: EditWork = {
      dir: session.dir,
      parent,
      rules: pr.base.sha,
      plan: step,
      commenter: target.commenter,
      number: target.number,
      gate,
      ...(options.observeValidations ? { logValidations: true } : {}),
    };
    return planCommitAndCheck(command, work, {
      ...callbacks,
      teams: teamMembers(github, target.installationId),
    });
  });
  for (const ran of 'ran' in planned ? planned.ran : []) options.observeChecks?.(flow, ran);
  if (planned.validated) options.observeValidations?.(flow, planned.validated);
  // Refusals quote the catalogs (names, channel lists): in a code span (src/handlers/quote.ts).
  if ('refused' in planned) return { ok: false, say: `\`${command}\`: ${inlineCode(planned.refused, 3000)}` };
  const { result, message, checks } = planned;
  const permissions = checks.find((c) => c.name === PERMISSIONS_CHECK);
  if (permissions && permissions.conclusion !== 'success')
    return {
      ok: false,
      say: `\`${command}\`: only the owners of what it changes or a maintainer may ask for it (${inlineCode(permissions.findings[0]?.message ?? permissions.title, 1000)}).`,
    };
  const broken = gate === 'all' ? checks.filter((c) => c.conclusion === 'failure') : [];
  if (broken.length > 0)
    return {
      ok: false,
      say: `\`${command}\`: the edit would fail ${broken.map((c) => `\`${c.name}\``).join(', ')}: ${inlineCode(broken[0]!.findings.find((f) => f.level === 'error')?.message ?? broken[0]!.title, 1000)}`,
    };

  // Write it to GitHub: a commit on top of the branch tip, the branch moved only if nobody
  // pushed meanwhile (no force).
  const sha = await commitFilesOn(
    github,
    ref,
    { parent, baseTree: tip.commit.commit.tree.sha },
    result.edits.map((e) => ({ path: e.path, content: e.after })),
    message,
  );
  let where: string;
  if (ontoPr) {
    await github.git.moveBranch(ref, branch, sha, false);
    where = `Pushed ${sha.slice(0, 12)} to this pull request's branch \`${branch}\`.`;
  } else {
    const name = `catalog-bot/${command.slice(1)}-${sha.slice(0, 12)}`;
    await github.git.createBranch(ref, name, sha);
    const opened = await github.pulls.create(ref, {
      title: result.title,
      head: name,
      base: branch,
      body: `Requested by @${target.commenter} in #${target.number}.\n\n${result.notes.map((n) => `- ${n}`).join('\n')}`,
    });
    where = sameRepo
      ? `Opened #${opened.number} with the change: \`${branch}\` is ${branch === repo.default_branch ? 'the default branch' : 'a protected branch'}, which catalog-bot does not push to.`
      : `Opened #${opened.number} with the change.`;
  }
  let diff = result.edits.map((e) => unifiedDiff(e.path, e.before, e.after)).join('\n');
  if (diff.length > MAX_DIFF) diff = diff.slice(0, MAX_DIFF) + '\n… (diff truncated)';
  // The notes and the diff quote names from the catalogs: in code blocks (src/handlers/quote.ts).
  const notes = result.notes.length > 0 ? ['', codeBlock(bounded(result.notes.join('\n'), MAX_DIFF))] : [];
  return {
    ok: true,
    say: [where, ...notes, '', codeBlock(diff, 'diff')].join('\n'),
  };
}

/**
 * ./work.ts editAndCheck in a check worker: the plan, the commit of the edit in the mirror and
 * its checks, one task. A limit hit while planning refuses the edit naming it; one hit in the
 * checks is thrown, as the checks' limits are.
 */
async function planCommitAndCheck(
  command: string,
  input: EditWork,
  callbacks: Callbacks,
): Promise<EditChecked> {
  try {
    return await runTaskIsolated<EditChecked>({
      module: workModule(import.meta.url, 'work'),
      fn: 'editAndCheck',
      input,
      callbacks,
      what: `the ${command} edit`,
    });
  } catch (error) {
    if (error instanceof CheckLimitError && error.subject !== CHECKS_SUBJECT.what)
      return { refused: error.message };
    throw error;
  }
}
