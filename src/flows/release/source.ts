// Which bundles the App's own release pull request may release (docs/bundles.md, "Why the
// App's own pull request may pass catalog-bot/permissions"): those pull request #n added,
// as GitHub lists its files, when #n is merged into the branch the release goes into and the
// release comes from the App's `catalog-bot/release-<n>` branch. Never the commit message:
// anyone who can push to the branch writes that.
import type { GitHub, RepoRef } from '../../github/port.js';

/** The App's release branch for merged pull request `number`. */
export const releaseBranch = (number: number): string => `catalog-bot/release-${number}`;

/** GitHub lists at most this many files of a pull request. */
const MAX_LISTED_FILES = 3000;

/**
 * The files of the merged pull request a release pull request is for, or undefined when it
 * is not the App's own release pull request from this repository for a merged one.
 */
export async function releaseSourceOf(
  github: GitHub,
  ref: RepoRef,
  pr: {
    user?: { login?: string } | null;
    head: { ref: string; repo?: { full_name?: string } | null };
    base: { ref: string };
  },
  bot: string | undefined,
): Promise<{ number: number; changed: string[] } | undefined> {
  if (bot === undefined || pr.user?.login !== bot) return undefined;
  if (pr.head.repo?.full_name !== `${ref.owner}/${ref.repo}`) return undefined;
  const m = /^catalog-bot\/release-([1-9][0-9]{0,9})$/.exec(pr.head.ref);
  if (!m) return undefined;
  const number = Number(m[1]);
  try {
    const source = await github.pulls.get(ref, number);
    // Merged into this very branch: a writer can merge #n by hand into a branch of their own
    // and retarget the App's release pull request for it (docs/security.md).
    if (!source.merged || source.base.ref !== pr.base.ref) return undefined;
    const files = await github.pulls.files(ref, number);
    if (files.length >= MAX_LISTED_FILES) return undefined; // the list may be cut short
    return { number, changed: files.map((f) => f.filename) };
  } catch {
    return undefined;
  }
}
