// What the CLI asks git of the user's checkout (docs/architecture.md, "src/git/"): run and
// waited for, each answer undefined when git fails; git's error text is never printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGitSync } from './run.js';

/** The commit `ref` names, or undefined when it names none. The caller keeps refs starting with `-` out. */
export function commitOfRef(repo: string, ref: string): string | undefined {
  return runGitSync(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
}

/** The best common ancestor of two commits, or undefined when they share no history. */
export function mergeBaseOf(repo: string, a: string, b: string): string | undefined {
  return runGitSync(repo, ['merge-base', a, b]);
}

/** Is `dir` inside a git repository? */
export function isGitRepository(dir: string): boolean {
  return runGitSync(dir, ['rev-parse', '--git-dir']) !== undefined;
}

/** The top directory of the working tree `dir` is in, or undefined (a bare repository). */
export function workingTreeTop(dir: string): string | undefined {
  return runGitSync(dir, ['rev-parse', '--show-toplevel']);
}

/**
 * The working tree at `top` as a commit on top of `head`: tracked changes, staged or not, and
 * untracked files that are not ignored; undefined when git cannot read it. Built in a
 * temporary index (GIT_INDEX_FILE): the user's index, branch and files are left alone; only
 * objects are added to the repository (as `git stash` adds them).
 */
export function commitWorkingTree(top: string, head: string): string | undefined {
  const scratch = mkdtempSync(join(tmpdir(), 'catalog-bot-index-'));
  try {
    const env = {
      ...process.env,
      GIT_INDEX_FILE: join(scratch, 'index'),
      // commit-tree needs a name; this commit is never on a branch.
      GIT_AUTHOR_NAME: 'catalog-bot check',
      GIT_AUTHOR_EMAIL: 'catalog-bot@localhost',
      GIT_COMMITTER_NAME: 'catalog-bot check',
      GIT_COMMITTER_EMAIL: 'catalog-bot@localhost',
    };
    const tree =
      runGitSync(top, ['read-tree', head], env) !== undefined &&
      runGitSync(top, ['add', '--all', '--', '.'], env) !== undefined
        ? runGitSync(top, ['write-tree'], env)
        : undefined;
    return tree === undefined
      ? undefined
      : runGitSync(top, ['commit-tree', tree, '-p', head, '-m', 'the working tree'], env);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
