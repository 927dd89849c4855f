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
    if (!lstatSync(repo).isDirectory()) throw new Error(`${repo} is not a directory`);
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
