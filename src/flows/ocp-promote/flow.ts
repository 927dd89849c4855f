// `/ocp-promote <from> <to>`: open OpenShift catalog `<to>` from `<from>` as pull requests
// into the default branch (docs/ocp-lifecycle.md). The edits are those of
// `catalog-bot ocp-promote` (src/catalog/edits/ocp-promote.ts), computed on the default
// branch's tip: one pull request for the `always` packages and one per `review-needed`
// package (labelled, its owners mentioned). Each pull request is written by its own job in
// the installation's write queue, at GitHub's pace (docs/github-limits.md); branch names are
// fixed by the versions and the package, so asking again updates them instead of opening more.
import type { OcpPackageResult } from '../../catalog/edits/ocp-promote.js';
import { readRepoConfig } from '../../checks/changes.js';
import { CheckLimitError, runTaskIsolated } from '../../checks/isolate.js';
import { isTeam, normLogin } from '../../checks/owners.js';
import type { GitHub, RepoRef } from '../../github/port.js';
import type { CommandOutcome } from '../../handlers/commands/command.js';
import { workModule } from '../../handlers/command-worker.js';
import {
  MAX_LISTED,
  REVIEW_NEEDED_LABEL,
  type EditPullJob,
  type OcpPlanned,
  type OcpPromoteWork,
} from './work.js';
import type { EditTarget } from '../catalog-edit/flow.js';
import { commitFilesOn } from '../../handlers/branch-commit.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { inlineCode } from '../../handlers/quote.js';
import { openSession } from '../../handlers/session.js';
import { teamMembers } from '../../handlers/teams.js';

export { promotionBranch, REVIEW_NEEDED_LABEL, type EditPullJob } from './work.js';

async function isMaintainer(
  github: GitHub,
  installationId: number | undefined,
  maintainers: string[],
  login: string,
): Promise<boolean> {
  const me = normLogin(login);
  const entries = maintainers.map(normLogin);
  if (entries.includes(me)) return true;
  const members = teamMembers(github, installationId);
  for (const team of entries.filter(isTeam)) {
    const list = await members(team).catch(() => [] as string[]);
    if (list.map(normLogin).includes(me)) return true;
  }
  return false;
}

/** `/ocp-promote <from> <to>`: plan the pull requests, queue their writes, say what will come. */
export async function ocpPromoteFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  request: { from: string; to: string; commentId: number },
): Promise<CommandOutcome> {
  const { github } = context;
  const { ref } = target;
  const command = '`/ocp-promote`';
  const repo = await github.repos.get(ref);
  const base = repo.default_branch;
  const tip = await github.repos.branch(ref, base);
  const parent = tip.commit.sha;
  const baseTree = tip.commit.commit.tree.sha;
  const commits = { fetch: [parent], blobs: [parent] };
  type Planned = OcpPlanned | { denied: string };
  const planned = await openSession(
    context,
    options,
    target,
    'ocp-promote',
    commits,
    async ({ dir }): Promise<Planned> => {
      // Who may: the maintainers of the default branch's configuration (it opens catalogs for everyone).
      const { config } = await readRepoConfig(dir, parent);
      if (!(await isMaintainer(github, target.installationId, config.maintainers, target.commenter)))
        return {
          denied: `only the maintainers listed in \`.github/catalog-bot.yml\` on the default branch may open a new OpenShift catalog.`,
        };
      const work: OcpPromoteWork = { dir, parent, baseTree, base, target, request };
      try {
        return await runTaskIsolated<OcpPlanned>({
          module: workModule(import.meta.url, 'work'),
          fn: 'planOcpPromote',
          input: work,
          what: 'the /ocp-promote plan',
        });
      } catch (error) {
        if (error instanceof CheckLimitError) return { refused: error.message };
        throw error;
      }
    },
  );
  if ('denied' in planned) return { ok: false, say: `${command}: ${planned.denied}` };
  // The core's refusals quote the repository's files: in a code span.
  if ('refused' in planned) return { ok: false, say: `${command}: ${inlineCode(planned.refused, 2000)}` };
  const { result, pulls } = planned;

  // The writes wait their turn in the installation's write queue, one pull request per job.
  for (const pull of pulls)
    await options.queue.enqueue({
      key: `ocp-promote:${target.repoId}:${request.commentId}:${parent}:${pull.branch}`,
      group: `writes:${target.installationId ?? `repo:${target.repoId}`}`,
      kind: 'edit-pull',
      data: pull,
    });
  return { ok: true, say: plainReply(request, base, result.packages, pulls) };
}

function plainReply(
  request: { from: string; to: string },
  base: string,
  packages: OcpPackageResult[],
  pulls: EditPullJob[],
): string {
  const list = (ps: OcpPackageResult[], why: boolean) => [
    ...ps
      .slice(0, MAX_LISTED)
      .map((p) => `  - ${inlineCode(p.package)}${why ? `: ${inlineCode(p.reason, 300)}` : ''}`),
    ...(ps.length > MAX_LISTED ? [`  - and ${ps.length - MAX_LISTED} more`] : []),
  ];
  const of = (status: OcpPackageResult['status'], strategy?: string) =>
    packages.filter((p) => p.status === status && (strategy === undefined || p.strategy === strategy));
  const lines = [
    pulls.length === 0
      ? `Nothing to promote from \`${request.from}\` to \`${request.to}\`.`
      : `Opening ${pulls.length} pull request${pulls.length === 1 ? '' : 's'} into \`${base}\` from \`${request.from}\` to \`${request.to}\` (written one after another at GitHub's pace; asking again updates the same branches):`,
    ...pulls.map((p) => `- ${inlineCode(p.branch)}: ${inlineCode(p.title, 300)}`),
  ];
  const sections: [string, OcpPackageResult[], boolean][] = [
    ['Promoted (`always`)', of('promoted').filter((p) => p.strategy !== 'review-needed'), false],
    [
      `Each in its own pull request, labelled \`${REVIEW_NEEDED_LABEL}\`, its owners asked (\`review-needed\`)`,
      of('promoted', 'review-needed'),
      false,
    ],
    ['Skipped', of('skipped'), true],
    ['Refused (left out; fix them and ask again)', of('refused'), true],
  ];
  for (const [title, ps, why] of sections) if (ps.length > 0) lines.push('', `${title}:`, ...list(ps, why));
  return lines.join('\n');
}

/**
 * Write one pull request of a promotion: its branch at the planned tree on the default
 * branch's commit (created, or moved when it holds something else: the branch is the bot's
 * own), the pull request opened unless one is open from that branch, and its labels.
 * Safe to run again (a retry finds what the last attempt made).
 */
export async function editPullJob(context: JobContext, data: EditPullJob): Promise<void> {
  const { github, log } = context;
  const ref: RepoRef = data.ref;
  const current = await github.repos.findBranch(ref, data.branch);
  if (current?.commit.commit.tree.sha !== data.tree) {
    const sha = await commitFilesOn(
      github,
      ref,
      { parent: data.parent, baseTree: data.baseTree },
      data.files.map((f) =>
        f.sha !== undefined ? { path: f.path, sha: f.sha } : { path: f.path, content: f.content ?? '' },
      ),
      data.message,
    );
    if (current) await github.git.moveBranch(ref, data.branch, sha, true);
    else await github.git.createBranch(ref, data.branch, sha);
  }
  const open = await github.pulls.list(ref, { state: 'open', head: `${ref.owner}:${data.branch}` }, 10);
  let number: number;
  let labels: string[];
  const existing = open.find((p) => p.head.ref === data.branch);
  if (existing) {
    number = existing.number;
    labels = existing.labels.map((l) => l.name);
  } else {
    const created = await github.pulls.create(ref, {
      title: data.title,
      head: data.branch,
      base: data.base,
      body: data.body,
    });
    number = created.number;
    labels = [];
  }
  const missing = data.labels.filter((l) => !labels.includes(l));
  if (missing.length > 0) await github.labels.add(ref, number, missing);
  log.info({ pr: number, branch: data.branch }, 'promotion pull request written');
}
