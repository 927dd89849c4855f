// `/promote <bundle> <channel> [<root>]` from a pull-request comment: plan the edit on the
// branch it goes to (src/catalog/promote.ts), commit it in the mirror and run the pull-
// request checks on it with the commenter as author (so only the package's owners or the
// maintainers may promote, and a promotion that breaks a channel is refused), then write
// it to GitHub: onto the pull request's branch when it is open and in this repository,
// otherwise as a new pull request from the default branch.
import type { Context } from 'probot';
import { GitTreeSource } from '../catalog/source.js';
import {
  promote,
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
  type FileTree,
} from '../catalog/promote.js';
import { catalogRoots, readRepoConfig } from '../checks/changes.js';
import { runPrChecks } from '../checks/pr.js';
import { commitFiles, fetchMissingBlobs, withMirror } from '../git-mirror.js';
import type { RepoRef } from './check-runs.js';
import type { JobContext, PrHandlerOptions } from './pull-request.js';
import { teamMembers } from './teams.js';

export interface PromoteTarget {
  ref: RepoRef;
  number: number;
  commenter: string;
  cloneUrl: string;
  repoId: number;
  installationId?: number;
  bundle: string;
  channel: string;
  root?: string;
}

type Pull = Awaited<ReturnType<Context['octokit']['rest']['pulls']['get']>>['data'];

/** What happened, for the reply: a line or two, and the diff when something was written. */
export interface PromoteOutcome {
  ok: boolean;
  say: string;
}

const MAX_DIFF = 20_000;

/** A file tree of one commit of the mirror, read once (promote reads synchronously). */
async function gitFileTree(dir: string, rev: string, wanted: (path: string) => boolean): Promise<FileTree> {
  const source = new GitTreeSource(dir, rev, '');
  const paths = (await source.list()).filter((e) => e.kind === 'file').map((e) => e.path);
  const contents = await source.read(paths.filter(wanted));
  const texts = new Map<string, string>();
  for (const [path, data] of contents) if (Buffer.isBuffer(data)) texts.set(path, data.toString('utf8'));
  return { list: () => paths, read: (path) => texts.get(path) };
}

export async function promoteFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: PromoteTarget,
  pr: Pull,
): Promise<PromoteOutcome> {
  const { octokit } = context;
  const { ref } = target;
  const { data: repo } = await octokit.rest.repos.get({ ...ref });
  // Onto the pull request when it is open and its branch is in this repository.
  const ontoPr = pr.state === 'open' && pr.head.repo?.full_name === `${ref.owner}/${ref.repo}`;
  const branch = ontoPr ? pr.head.ref : repo.default_branch;
  const { data: tip } = await octokit.rest.repos.getBranch({ ...ref, branch });
  const parent = tip.commit.sha;
  const { token } = (await octokit.auth({ type: 'installation' })) as { token: string };
  const request = {
    bundle: target.bundle,
    channel: target.channel,
    ...(target.root ? { root: target.root } : {}),
  };

  const planned = await withMirror(
    { cloneUrl: target.cloneUrl, repoId: target.repoId, token, fetch: [parent] },
    async (dir) => {
      await fetchMissingBlobs(dir, [parent], token);
      const { config } = await readRepoConfig(dir, parent);
      const roots = await catalogRoots(dir, parent, config.catalogs);
      // The catalogs, and the owners files and templates that say how they are made.
      const tree = await gitFileTree(
        dir,
        parent,
        (p) =>
          roots.some((r) => p.startsWith(r + '/')) || p.startsWith('operators/') || p.startsWith('.github/'),
      );
      let result;
      try {
        result = await promote(request, { tree, roots, templates: templateMappingsFromTree(tree) });
      } catch (error) {
        if (error instanceof PromoteError) return { refused: error.message };
        throw error;
      }
      if (result.edits.length === 0) return { refused: 'nothing to change' };
      const message = `Promote ${target.bundle} to ${target.channel}\n\nRequested by @${target.commenter} in #${target.number}.`;
      const files = result.edits.map((e) => ({ path: e.path, text: e.after }));
      const commit = await commitFiles(dir, parent, files, message);
      // The edit as a change by the commenter: their permissions, and every check.
      const { checks } = await runPrChecks({
        repo: dir,
        base: parent,
        head: commit,
        author: target.commenter,
        approvers: [],
        teams: teamMembers(octokit, target.installationId),
      });
      return { result, message, checks };
    },
    { workDir: options.workDir },
  );
  if ('refused' in planned) return { ok: false, say: `\`/promote\`: ${planned.refused}` };
  const { result, message, checks } = planned;
  const permissions = checks.find((c) => c.name === 'catalog-bot/permissions');
  if (permissions && permissions.conclusion !== 'success')
    return {
      ok: false,
      say: `\`/promote\`: only the owners of the package or a maintainer may promote its bundles (${permissions.findings[0]?.message ?? permissions.title}).`,
    };
  const broken = checks.filter((c) => c.conclusion === 'failure');
  if (broken.length > 0)
    return {
      ok: false,
      say: `\`/promote\`: the edit would fail ${broken.map((c) => `\`${c.name}\``).join(', ')}: ${broken[0]!.findings.find((f) => f.level === 'error')?.message ?? broken[0]!.title}`,
    };

  // Write it to GitHub: a tree on top of the branch tip, a commit, the branch moved only
  // if nobody pushed meanwhile (no force).
  const { data: tree } = await octokit.rest.git.createTree({
    ...ref,
    base_tree: tip.commit.commit.tree.sha,
    tree: result.edits.map((e) => ({
      path: e.path,
      mode: '100644' as const,
      type: 'blob' as const,
      content: e.after,
    })),
  });
  const { data: commit } = await octokit.rest.git.createCommit({
    ...ref,
    message,
    tree: tree.sha,
    parents: [parent],
  });
  let where: string;
  if (ontoPr) {
    await octokit.rest.git.updateRef({ ...ref, ref: `heads/${branch}`, sha: commit.sha, force: false });
    where = `Pushed ${commit.sha.slice(0, 12)} to this pull request's branch \`${branch}\`.`;
  } else {
    const name = `catalog-bot/promote-${target.bundle}-${target.channel}-${commit.sha.slice(0, 7)}`.replace(
      /[^A-Za-z0-9._/-]/g,
      '-',
    );
    await octokit.rest.git.createRef({ ...ref, ref: `refs/heads/${name}`, sha: commit.sha });
    const { data: opened } = await octokit.rest.pulls.create({
      ...ref,
      title: `Promote ${target.bundle} to ${target.channel}`,
      head: name,
      base: branch,
      body: `Requested by @${target.commenter} in #${target.number}.\n\n${result.notes.map((n) => `- ${n}`).join('\n')}`,
    });
    where = `Opened #${opened.number} with the change.`;
  }
  let diff = result.edits.map((e) => unifiedDiff(e.path, e.before, e.after)).join('\n');
  if (diff.length > MAX_DIFF) diff = diff.slice(0, MAX_DIFF) + '\n… (diff truncated)';
  return {
    ok: true,
    say: [where, '', ...result.notes.map((n) => `- ${n}`), '', '```diff', diff.trimEnd(), '```'].join('\n'),
  };
}
