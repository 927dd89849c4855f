// A repository's working tree as the editing commands (promote, default-channel, release,
// ocp-promote, ocp-matrix) read and write it: the same file view the App gets from git.
import { randomBytes } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { matchesGlob } from '../checks/changes.js';
import { CONFIG_PATH, parseRepoConfig } from '../checks/config.js';
import type { ReleaseTree } from '../catalog/edits/release.js';
import {
  commitOfRef,
  commitWorkingTree,
  isGitRepository,
  mergeBaseOf,
  workingTreeTop,
} from '../git/working-tree.js';
import { CommandFailure } from './command.js';

const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** A working tree's files, read when asked; symbolic links are not followed (they could lead out of the tree). */
export function workingTree(dir: string): ReleaseTree {
  const paths: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      if (SKIPPED_DIRS.has(name)) continue;
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const info = lstatSync(childAbs);
      if (info.isDirectory()) walk(childAbs, childRel);
      else if (info.isFile()) paths.push(childRel);
    }
  };
  walk(dir, '');
  const known = new Set(paths);
  const bytes = new Map<string, Buffer>();
  const readBytes = (p: string): Buffer | undefined => {
    if (!known.has(p)) return undefined;
    let got = bytes.get(p);
    if (!got) bytes.set(p, (got = readFileSync(join(dir, p))));
    return got;
  };
  return { list: () => paths, readBytes, read: (p) => readBytes(p)?.toString('utf8') };
}

/** The working tree of `--repo`; exit 2 when it is not a directory or cannot be read. */
export function openWorkingTree(repo: string): ReleaseTree {
  try {
    const info = lstatSync(repo, { throwIfNoEntry: false });
    if (info === undefined) throw new Error(`${repo}: no such file or directory`);
    if (!info.isDirectory()) throw new Error(`${repo} is not a directory`);
    return workingTree(repo);
  } catch (problem) {
    throw new CommandFailure((problem as Error).message, 2);
  }
}

/** Directories of the tree that match the repository's catalog globs. */
export function catalogRootsOf(tree: Pick<ReleaseTree, 'list' | 'read'>): string[] {
  const { config } = parseRepoConfig(tree.read(CONFIG_PATH));
  const dirs = new Set<string>();
  for (const p of tree.list()) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [...dirs].filter((d) => config.catalogs.some((g) => matchesGlob(d, g))).sort();
}

/**
 * Writes a file whole or not at all: the text goes to a new file next to it, which then
 * replaces it (a rename within a directory is atomic). A failure leaves the old file as it
 * was, and a symbolic link at the path is replaced, never written through (docs/security.md).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = 0o644;
  try {
    const info = lstatSync(path);
    if (info.isFile()) mode = info.mode & 0o777;
  } catch {
    // a new file
  }
  try {
    // 'wx': never an existing file or a link someone placed at the temporary name.
    writeFileSync(temp, data, { flag: 'wx', mode });
    if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${path} is a directory`);
    renameSync(temp, path);
  } catch (problem) {
    rmSync(temp, { force: true });
    throw problem;
  }
}

/** Writes every edit under the repository, creating directories as needed; returns the paths written. */
export function writeEdits(repo: string, edits: readonly { path: string; after: string }[]): string[] {
  const written: string[] = [];
  for (const edit of edits) {
    const target = join(repo, edit.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileAtomic(target, edit.after);
    written.push(edit.path);
  }
  return written;
}

/** The commit a ref names, or one clear line (exit 2) when there is none (no git error text). */
export function resolveCommit(repo: string, ref: string, option: string): string {
  // A ref starting with `-` would be read by git as an option.
  const sha = ref.startsWith('-') ? undefined : commitOfRef(repo, ref);
  if (sha === undefined) throw new CommandFailure(`${option} ${ref}: no such commit in ${repo}`, 2);
  return sha;
}

/**
 * `check`'s default base: where HEAD left the default branch (the merge-base of HEAD with
 * origin/HEAD, else main, else master), so the checks see what a pull request would change.
 */
export function defaultBase(repo: string): string {
  const branch = ['origin/HEAD', 'main', 'master', 'origin/main', 'origin/master'].find(
    (ref) => commitOfRef(repo, ref) !== undefined,
  );
  if (branch === undefined)
    throw new CommandFailure(
      `${repo}: no default branch (origin/HEAD, main or master); name one with --base`,
      2,
    );
  const base = mergeBaseOf(repo, 'HEAD', branch);
  if (base === undefined)
    throw new CommandFailure(`${repo}: HEAD has no common history with ${branch}; name --base`, 2);
  return base;
}

/**
 * The two commits a change is judged between (README "Command line"): `--head` or the working
 * tree, uncommitted changes included; `--base` or where HEAD left the default branch. Both
 * resolved here, so a bad ref is one line.
 */
export function changeRange(repo: string, head?: string, base?: string): { head: string; base: string } {
  return {
    head: head === undefined ? workingTreeCommit(repo) : resolveCommit(repo, head, '--head'),
    base: base === undefined ? defaultBase(repo) : resolveCommit(repo, base, '--base'),
  };
}

/**
 * The working tree as a commit on top of HEAD, so `check` sees what the author is about to
 * commit (src/git/working-tree.ts builds it without touching the user's index or files).
 */
export function workingTreeCommit(repo: string): string {
  if (!isGitRepository(repo)) throw new CommandFailure(`${repo} is not a git repository`, 2);
  const head = commitOfRef(repo, 'HEAD');
  if (head === undefined) throw new CommandFailure(`${repo}: HEAD has no commit yet; name --head`, 2);
  const top = workingTreeTop(repo);
  if (top === undefined) throw new CommandFailure(`${repo}: not a working tree of a git repository`, 2);
  const commit = commitWorkingTree(top, head);
  if (commit === undefined) throw new CommandFailure(`${repo}: the working tree could not be read by git`, 2);
  return commit;
}

/**
 * Why a path of the repository must not be deleted or written, or undefined: a symbolic link
 * at it, on the way to it, or inside the directory to delete could make a delete or a write
 * reach outside the repository (docs/security.md). Checked for every path before anything is
 * changed.
 */
export function linkOnPath(repo: string, path: string, whole = false): string | undefined {
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const sub = parts.slice(0, i).join('/');
    const info = lstatSync(join(repo, sub), { throwIfNoEntry: false });
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return `${sub} is a symbolic link`;
  }
  if (!whole) return undefined;
  const walk = (rel: string): string | undefined => {
    for (const name of readdirSync(join(repo, rel)).sort()) {
      const child = `${rel}/${name}`;
      const info = lstatSync(join(repo, child));
      if (info.isSymbolicLink()) return `${child} is a symbolic link`;
      if (info.isDirectory()) {
        const found = walk(child);
        if (found) return found;
      }
    }
    return undefined;
  };
  return lstatSync(join(repo, path), { throwIfNoEntry: false })?.isDirectory() ? walk(path) : undefined;
}

/** Deletes directories of the repository (checked with linkOnPath first); returns them. */
export function removeDirectories(repo: string, paths: readonly string[]): string[] {
  for (const path of paths) rmSync(join(repo, path), { recursive: true, force: true });
  return [...paths];
}
