// A git repository in a temp dir for bundle pull requests: `main` holds the real
// jumpstarter-operator package as it was before its 0.9.0 release (the snapshot with the
// release's catalog and template patches reversed, without the 0.9.0 directory), and each
// branch made with `branch` is one pull request on it.
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitIn } from './git.js';
import { SHARED_DATA } from './oracle.js';

const REAL = join(SHARED_DATA, 'real-repo');
const SNAPSHOT = join(REAL, 'community-operators-prod');
export const BUNDLE_PKG = 'jumpstarter-operator';
export const BUNDLE_DIR = `operators/${BUNDLE_PKG}/0.9.0`;
const PATCHES = ['catalog', 'template'].map((k) => join(REAL, 'history', `${BUNDLE_PKG}-0.9.0-${k}.patch`));

export interface BundleRepo {
  repo: string;
  git: (...args: string[]) => string;
  /** A branch off `from` (main) with the bundle directory added (unless `withBundle` is false) and `edit` applied. */
  branch: (name: string, edit?: () => void, withBundle?: boolean, from?: string) => string;
  /** The release's real catalog and template changes, applied to the work tree. */
  applyRelease: () => void;
  cleanup: () => void;
}

export function makeBundleRepo(): BundleRepo {
  const repo = mkdtempSync(join(tmpdir(), 'bundle-pr-'));
  const stash = mkdtempSync(join(tmpdir(), 'bundle-pr-stash-'));
  const git = gitIn(repo);
  git('init', '-q', '-b', 'main');
  cpSync(join(SNAPSHOT, 'operators', BUNDLE_PKG), join(repo, 'operators', BUNDLE_PKG), { recursive: true });
  for (const v of readdirSync(join(SNAPSHOT, 'catalogs'))) {
    const from = join(SNAPSHOT, 'catalogs', v, BUNDLE_PKG);
    if (existsSync(from)) cpSync(from, join(repo, 'catalogs', v, BUNDLE_PKG), { recursive: true });
  }
  for (const p of PATCHES) git('apply', '-R', '--whitespace=nowarn', p);
  cpSync(join(repo, BUNDLE_DIR), join(stash, '0.9.0'), { recursive: true });
  rmSync(join(repo, BUNDLE_DIR), { recursive: true });
  git('add', '-A');
  git('commit', '-qm', 'before 0.9.0');
  return {
    repo,
    git,
    branch: (name, edit, withBundle = true, from = 'main') => {
      git('checkout', '-q', '-b', name, from);
      if (withBundle) cpSync(join(stash, '0.9.0'), join(repo, BUNDLE_DIR), { recursive: true });
      edit?.();
      git('add', '-A');
      git('commit', '-qm', name);
      return git('rev-parse', 'HEAD');
    },
    applyRelease: () => {
      for (const p of PATCHES) git('apply', '--whitespace=nowarn', p);
    },
    cleanup: () => {
      rmSync(repo, { recursive: true, force: true });
      rmSync(stash, { recursive: true, force: true });
    },
  };
}
