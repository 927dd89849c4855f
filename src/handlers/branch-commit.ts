// The commits the App makes on GitHub (comment edits, releases, OpenShift promotions), and
// the question that decides whether it may push to a branch at all (docs/security.md).
import type { GitHub, RepoRef } from '../github/port.js';

/** A file of a commit: its text, a blob GitHub already has, or `sha: null`: deleted. */
export type CommitFile = { path: string; content: string } | { path: string; sha: string | null };

/**
 * A commit of `files` on top of `parent` (whose tree is `baseTree`): a tree on the parent's
 * tree, then a commit whose only parent is `parent`. No branch moves here: the caller then
 * moves its branch (fast-forward only, unless the branch is the App's own) or creates one.
 * Returns the commit's sha.
 */
export async function commitFilesOn(
  github: GitHub,
  ref: RepoRef,
  on: { parent: string; baseTree: string },
  files: CommitFile[],
  message: string,
  author?: { name: string; email: string },
): Promise<string> {
  const tree = await github.git.createTree(ref, {
    base_tree: on.baseTree,
    tree: files.map((f) => ({
      path: f.path,
      mode: '100644' as const,
      type: 'blob' as const,
      ...('sha' in f ? { sha: f.sha } : { content: f.content }),
    })),
  });
  const commit = await github.git.createCommit(ref, {
    message,
    tree: tree.sha,
    parents: [on.parent],
    ...(author ? { author } : {}),
  });
  return commit.sha;
}

/**
 * Whether repository rules (rulesets) apply to a branch. Any rule makes it a branch the App
 * does not push to; an answer it cannot get counts as rules (docs/security.md: the App
 * pushes only to branches nothing guards; an edit then goes through a pull request, which
 * is always allowed).
 */
export async function hasRules(github: GitHub, ref: RepoRef, branch: string): Promise<boolean> {
  try {
    return (await github.repos.branchRules(ref, branch)).length > 0;
  } catch {
    return true;
  }
}
