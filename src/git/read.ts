// Questions the App and the checks ask of a repository's commits, each a named function so no
// raw git arguments are written outside src/git/ (docs/architecture.md, "src/git/"). Revisions
// come from the App (object ids, refs it names), never from a pull request's text.
import { runGit } from './run.js';

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
