// Questions the App and the checks ask of a repository's commits, each a named function so no
// raw git arguments are written outside src/git/ (docs/architecture.md, "src/git/"). Revisions
// come from the App (object ids, refs it names), never from a pull request's text.
import { KEPT_LISTING_BYTES, KeptAnswers } from './kept.js';
import { gitRecords, runGit } from './run.js';

// The catalog loader reads a commit's blobs in bounded batches (GitTreeSource).
export { readBlobs } from './run.js';

/** The full message of a commit. */
export async function commitMessage(dir: string, commit: string): Promise<string> {
  return (await runGit(dir, ['log', '-1', '--format=%B', commit])).toString('utf8');
}

/** A commit's committer time, in seconds since 1970. */
export async function commitSeconds(dir: string, rev: string): Promise<number> {
  return Number((await runGit(dir, ['log', '-1', '--format=%ct', rev, '--'])).toString('utf8').trim());
}

/** The tree of `head` merged into `base`, or undefined on a conflict. */
export async function mergeTree(dir: string, base: string, head: string): Promise<string | undefined> {
  try {
    const out = (await runGit(dir, ['merge-tree', '--write-tree', '--no-messages', base, head])).toString(
      'utf8',
    );
    return out.split('\n')[0]?.trim() || undefined;
  } catch {
    return undefined; // exit 1: conflicts
  }
}

/** The tree id of a commit. */
export async function treeOf(dir: string, commit: string): Promise<string> {
  return (await runGit(dir, ['rev-parse', `${commit}^{tree}`])).toString('utf8').trim();
}

/**
 * The object id of `path` at `rev` (a file's blob id, a directory's tree id), or '' when
 * there is none: two commits with the same id at a path hold the same bytes there.
 */
export async function objectAt(dir: string, rev: string, path: string): Promise<string> {
  const out = await runGit(dir, [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${rev}:${path}`,
  ]).catch(() => undefined);
  return out?.toString('utf8').trim() ?? '';
}

/** The blob ids of the files of `rev` under `dirs` (each ending in `/`). */
export async function blobIdsUnder(dir: string, rev: string, dirs: readonly string[]): Promise<Set<string>> {
  const listing = (await runGit(dir, ['ls-tree', '-r', rev, '--', ...dirs])).toString('utf8').split('\n');
  return new Set(listing.map((line) => line.split(/\s+/)[2]).filter((id): id is string => Boolean(id)));
}

/** The paths of the files of `rev` under `dirs` (each ending in `/`). */
export async function filesUnder(dir: string, rev: string, dirs: readonly string[]): Promise<string[]> {
  if (dirs.length === 0) return [];
  const out = await runGit(dir, ['ls-tree', '-r', '-z', '--name-only', rev, '--', ...dirs]);
  return out.toString('utf8').split('\0').filter(Boolean);
}

/** The files of `rev` under `dirs` (each ending in `/`) whose text holds `text` (a fixed string). */
export async function filesMentioning(
  dir: string,
  rev: string,
  text: string,
  dirs: readonly string[],
): Promise<string[]> {
  const out = await runGit(dir, ['grep', '-l', '-F', '-e', text, rev, '--', ...dirs]).catch(() =>
    Buffer.alloc(0),
  ); // exit 1: no match
  // Each line is `<rev>:<path>`.
  return out
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(rev.length + 1));
}

/** The commit `rev` names (full id); throws when it names none. `--end-of-options`: a rev is never an option. */
export async function commitId(dir: string, rev: string): Promise<string> {
  return (await runGit(dir, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`]))
    .toString('utf8')
    .trim();
}

/** The first parent of a commit, or undefined when it has none (or is no commit). */
export async function firstParent(dir: string, commit: string): Promise<string | undefined> {
  const out = await runGit(dir, ['rev-parse', `${commit}^1`]).catch(() => undefined);
  return out?.toString('utf8').trim();
}

/** Is `ancestor` in the history of `descendant` (or the same commit)? */
export async function isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
  return runGit(dir, ['merge-base', '--is-ancestor', ancestor, descendant]).then(
    () => true,
    () => false,
  );
}

// Whole-tree listings of commits named by id, kept (kept.ts): each check of a job asks.
const directoryLists = new KeptAnswers<readonly string[]>(KEPT_LISTING_BYTES, (dirs) =>
  dirs.reduce((n, d) => n + d.length + 40, 0),
);
const fileEntryLists = new KeptAnswers<ReadonlyMap<string, TreeFileEntry>>(KEPT_LISTING_BYTES, (m) => {
  let n = 0;
  for (const path of m.keys()) n += path.length + 150;
  return n;
});

/** The paths of every directory of `rev`'s tree, at any depth. */
export function directoriesAt(dir: string, rev: string): Promise<readonly string[]> {
  const list = async () =>
    (await runGit(dir, ['ls-tree', '-r', '-d', '-z', '--name-only', rev]))
      .toString('utf8')
      .split('\0')
      .filter(Boolean);
  return directoryLists.ask(dir, [rev], list);
}

/** The paths of the files that differ between two commits (a rename is a delete and an add). */
export async function changedPaths(dir: string, base: string, head: string): Promise<string[]> {
  const out = await runGit(dir, ['diff', '--name-only', '--no-renames', '-z', base, head]);
  return out.toString('utf8').split('\0').filter(Boolean);
}

/** A file's entry in a tree: its mode (`100644`, `120000` a symlink, ...) and object id. */
export interface TreeFileEntry {
  mode: string;
  id: string;
}

/** Every file of `rev`'s tree, at any depth, by path: one listing of the whole tree. */
export function fileEntriesAt(dir: string, rev: string): Promise<ReadonlyMap<string, TreeFileEntry>> {
  const list = async () => {
    const listing = (await runGit(dir, ['ls-tree', '-r', '-z', rev])).toString('utf8');
    const out = new Map<string, TreeFileEntry>();
    for (const entry of listing.split('\0')) {
      const m = /^(\S+) \S+ (\S+)\t(.*)$/s.exec(entry);
      if (m) out.set(m[3] as string, { mode: m[1] as string, id: m[2] as string });
    }
    return out;
  };
  return fileEntryLists.ask(dir, [rev], list);
}

/** The names in directory `path` of `rev` (`''` the top), or undefined when `rev` has no such directory. */
export async function namesInDirectory(
  dir: string,
  rev: string,
  path: string,
): Promise<string[] | undefined> {
  const out = await runGit(dir, ['ls-tree', '-z', '--name-only', `${rev}:${path}`]).catch(() => undefined);
  return out?.toString('utf8').split('\0').filter(Boolean);
}

/** Who made a commit, its short id and subject. */
export interface CommitByline {
  author: string;
  hash: string;
  subject: string;
}

/**
 * The newest commit in `rev`'s history that changed how often `text` (a literal string)
 * occurs in `path` (`git log -S`), or undefined when none did.
 */
export async function newestCommitChangingText(
  dir: string,
  rev: string,
  text: string,
  path: string,
): Promise<CommitByline | undefined> {
  const out = (
    await runGit(dir, ['log', '-1', '--reverse', '--format=%an%x00%h%x00%s', `-S${text}`, rev, '--', path])
  ).toString('utf8');
  const [author, hash, subject] = out.trim().split('\0');
  if (!author || !hash) return undefined;
  return { author, hash, subject: subject ?? '' };
}

/** A commit of a first-parent line: its id, its parents and its subject. */
export interface LineCommit {
  commit: string;
  parents: string[];
  subject: string;
}

/**
 * The first-parent commits after `from` up to `to`, oldest first, at most `max` of them
 * (ask for one more than you take to see that a line is too long).
 */
export async function firstParentCommits(
  dir: string,
  from: string,
  to: string,
  max: number,
): Promise<LineCommit[]> {
  const out = (
    await runGit(dir, [
      'rev-list',
      '--first-parent',
      '--reverse',
      `--max-count=${max}`,
      '--format=%H %P%x00%s',
      `${from}..${to}`,
    ])
  ).toString('utf8');
  // rev-list writes a `commit <id>` line, then the format's line; only the latter holds a NUL,
  // and it is there even when the subject is empty.
  return out
    .split('\n')
    .filter((line) => line.includes('\0'))
    .map((line) => {
      const [ids = '', subject = ''] = line.split('\0');
      const [commit = '', ...parents] = ids.split(' ').filter(Boolean);
      return { commit, parents, subject };
    });
}

/**
 * The recursive listing of `rev`'s tree (below `prefix`, or all of it when empty), one
 * NUL-terminated `ls-tree -l` record at a time, as it streams: a tree of many files is never
 * one Buffer. `prefix` is the catalog root's clean path inside the repository.
 */
export function listTreeRecords(
  dir: string,
  rev: string,
  prefix: string,
  onRecord: (record: Buffer) => void,
): Promise<void> {
  const args = ['ls-tree', '-r', '-l', '-z', rev];
  if (prefix !== '') args.push('--', prefix + '/');
  return gitRecords(dir, args, onRecord);
}
