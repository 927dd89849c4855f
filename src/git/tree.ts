// New git objects made without a work tree: `writeTree` lays files over a commit's tree in a
// private index (nothing is checked out, the repository's own index is never touched), and
// `commitFiles` makes that tree a commit. The checks overlay a release's catalog files
// (src/checks/pr.ts); the App commits an edit to check it before it goes to GitHub.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeTree } from './read.js';
import { runGit } from './run.js';

/** A file of a new tree: its new text, or null when it is deleted. */
export interface TreeFile {
  path: string;
  text: string | null;
}

/** The tree of `parent` (a commit or tree) with `files` written over it; returns its id. */
export async function writeTree(dir: string, parent: string, files: readonly TreeFile[]): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'catalog-bot-index-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(work, 'index') };
  const run = async (args: string[], input?: string) =>
    (await runGit(dir, args, input, { env })).toString('utf8').trim();
  try {
    await run(['read-tree', parent]);
    // A deletion is an index entry of mode 0 (--force-remove wants a work tree; a mirror has none).
    const deleted = files.filter((f) => f.text === null).map((f) => `0 ${'0'.repeat(40)}\t${f.path}\n`);
    if (deleted.length > 0) await run(['update-index', '--index-info'], deleted.join(''));
    for (const f of files) {
      if (f.text === null) continue;
      const blob = await run(['hash-object', '-w', '--stdin'], f.text);
      await run(['update-index', '--add', '--cacheinfo', `100644,${blob},${f.path}`]);
    }
    return await run(['write-tree']);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * A commit in the repository with `files` changed on top of `parent`, by catalog-bot. It
 * exists to run the checks on an edit before that edit goes to GitHub.
 */
export async function commitFiles(
  dir: string,
  parent: string,
  files: readonly TreeFile[],
  message: string,
): Promise<string> {
  return commitTree(dir, await writeTree(dir, parent, files), [parent], message);
}

/**
 * A merge commit of `head` into `parent` (a commit), as GitHub's merge would make it, or
 * undefined when they conflict. The bot's batch merge builds its combined result with it
 * (docs/merge-queue.md): only in the mirror, never pushed.
 */
export async function mergeCommit(
  dir: string,
  parent: string,
  head: string,
  message: string,
): Promise<string | undefined> {
  const tree = await mergeTree(dir, parent, head);
  return tree === undefined ? undefined : commitTree(dir, tree, [parent, head], message);
}

/** A commit of `tree` over `parents`, written by catalog-bot. */
async function commitTree(dir: string, tree: string, parents: string[], message: string): Promise<string> {
  const commit = await runGit(dir, [
    '-c',
    'user.name=catalog-bot',
    '-c',
    'user.email=catalog-bot@users.noreply.github.com',
    'commit-tree',
    tree,
    ...parents.flatMap((p) => ['-p', p]),
    '-m',
    message,
  ]);
  return commit.toString('utf8').trim();
}
