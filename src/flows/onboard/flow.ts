// `/onboard <package>` (docs/legacy-index.md, "`/onboard` in the App"): the conversion of
// `catalog-bot onboard` on the default branch, proposed as one pull request. The conversion
// runs in a check worker (./work.ts), is committed in the mirror and checked with the
// commenter as its author: only the package's owners or a maintainer may ask for it, and a
// conversion that fails a check is refused. Then it is written to GitHub on the App's
// branch `catalog-bot/onboard-<package>` and opened as a pull request, checked like any
// other; while that pull request is open, asking again points to it.
import { PERMISSIONS_CHECK } from '../../checks/permissions.js';
import { CheckLimitError, runTaskIsolated } from '../../checks/isolate.js';
import { commitFiles } from '../../git/tree.js';
import { commitFilesOn } from '../../handlers/branch-commit.js';
import { workModule } from '../../handlers/command-worker.js';
import type { EditTarget } from '../catalog-edit/flow.js';
import { enqueueChecks, type JobContext, type PrHandlerOptions } from '../../handlers/pull-request.js';
import { inlineCode } from '../../handlers/quote.js';
import { openSession, pullTargetOf } from '../../handlers/session.js';
import { onboardBody } from './body.js';
import type { OnboardPlan, OnboardWork } from './work.js';

/** The App's branch for a package's onboarding: one per package, so one open pull request. */
export const onboardBranch = (pkg: string): string => `catalog-bot/onboard-${pkg}`;

export interface OnboardOutcome {
  ok: boolean;
  say: string;
}

const COMMAND = '`/onboard`';

export async function onboardFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pkg: string,
): Promise<OnboardOutcome> {
  const { github } = context;
  const { ref } = target;
  const branch = onboardBranch(pkg);
  const bot = options.appSlug ? `${await options.appSlug()}[bot]` : undefined;
  // Only the App's own open pull request from its branch counts: anyone with write access
  // can push a branch of that name and open a pull request from it.
  const open = await github.pulls.list(ref, { state: 'open', head: `${ref.owner}:${branch}` }, 10);
  const proposed = open.find((p) => p.head.ref === branch && (bot === undefined || p.user?.login === bot));
  if (proposed)
    return {
      ok: false,
      say: `${COMMAND}: #${proposed.number} proposes the onboarding of ${inlineCode(pkg)} already and is still open; review it there (close it to ask again).`,
    };

  const repo = await github.repos.get(ref);
  const base = repo.default_branch;
  const tip = await github.repos.branch(ref, base);
  const parent = tip.commit.sha;
  const message = `Onboard ${pkg} to file-based catalogs\n\nRequested by @${target.commenter} in #${target.number}.`;
  const commits = { fetch: [parent], blobs: [parent] };
  const checked = await openSession(context, options, target, 'onboard', commits, async (session) => {
    const plan = await planInWorker({ dir: session.dir, parent, package: pkg });
    if ('refused' in plan) return plan;
    const commit = await commitFiles(
      session.dir,
      parent,
      plan.edits.map((e) => ({ path: e.path, text: e.after })),
      message,
    );
    // The conversion as a change by the commenter: who may ask first (a stranger costs no
    // more checks), then every check (docs/security.md).
    const asked = { base: parent, rules: parent, head: commit, author: target.commenter, approvers: [] };
    const allowed = await session.run({ ...asked, only: [PERMISSIONS_CHECK] });
    if (allowed.checks.some((c) => c.conclusion !== 'success')) return { plan, checks: allowed.checks };
    return { plan, checks: (await session.run(asked)).checks };
  });
  if ('refused' in checked)
    return { ok: false, say: `${COMMAND} ${inlineCode(pkg)}: ${inlineCode(checked.refused, 3000)}` };
  const { plan, checks } = checked;
  const permissions = checks.find((c) => c.name === PERMISSIONS_CHECK);
  if (permissions && permissions.conclusion !== 'success')
    return {
      ok: false,
      say: `${COMMAND}: only the owners of ${inlineCode(pkg)} (its ci.yaml reviewers) or a maintainer may onboard it (${inlineCode(permissions.findings[0]?.message ?? permissions.title, 1000)}).`,
    };
  const broken = checks.filter((c) => c.conclusion === 'failure');
  if (broken.length > 0)
    return {
      ok: false,
      say: `${COMMAND} ${inlineCode(pkg)}: the conversion would fail ${broken.map((c) => `\`${c.name}\``).join(', ')}: ${inlineCode(broken[0]!.findings.find((f) => f.level === 'error')?.message ?? broken[0]!.title, 1000)}; nothing was written.`,
    };

  // Written on top of the tip it was computed on; the branch is the App's own (created, or
  // moved when it is left over from an earlier, closed proposal).
  const sha = await commitFilesOn(
    github,
    ref,
    { parent, baseTree: tip.commit.commit.tree.sha },
    plan.edits.map((e) => ({ path: e.path, content: e.after })),
    message,
  );
  const created = await github.git.createBranch(ref, branch, sha).then(
    () => true,
    (error: { status?: number }) => {
      if (error.status !== 422) throw error;
      return false;
    },
  );
  if (!created) await github.git.moveBranch(ref, branch, sha, true);
  const opened = await github.pulls.create(ref, {
    title: `Onboard ${pkg} to file-based catalogs`,
    head: branch,
    base,
    body: onboardBody(plan, {
      package: pkg,
      commenter: target.commenter,
      number: target.number,
      base,
      parent,
    }),
  });
  // Checked at once (GitHub's own event for it, if any, finds the work done).
  await enqueueChecks(
    context,
    options,
    { ...pullTargetOf({ ...target, number: opened.number }), headSha: sha, ...(bot ? { author: bot } : {}) },
    `onboard:${target.repoId}:${opened.number}:${sha}`,
  );
  const changes = Object.keys(plan.impact).length;
  return {
    ok: true,
    say: `Opened #${opened.number}: ${inlineCode(pkg)} on file-based catalogs (${plan.edits.length} files; ${changes === 0 ? 'nothing changes for clusters' : `clusters see changes in ${changes} catalog(s), see its description`}). It is checked like any pull request and merges once its checks pass and an owner or a maintainer approves it.`,
  };
}

/** The plan of ./work.ts in a check worker; stopped at a limit, it is refused naming it. */
async function planInWorker(work: OnboardWork): Promise<OnboardPlan> {
  try {
    return await runTaskIsolated<OnboardPlan>({
      module: workModule(import.meta.url, 'work'),
      fn: 'planOnboard',
      input: work,
      what: 'the /onboard conversion',
    });
  } catch (error) {
    if (error instanceof CheckLimitError) return { refused: error.message };
    throw error;
  }
}
