// The real community-operators-prod packages as they were before some of their recorded
// commits: a copy of the catalogs and package configs with those commits' patches
// reverse-applied (newest first) in a temporary git repository.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_DATA } from './oracle.js';

export const REAL_REPO = join(SHARED_DATA, 'real-repo', 'community-operators-prod');
export const HISTORY = join(SHARED_DATA, 'real-repo', 'history');
export const haveRealRepo = existsSync(REAL_REPO);

export const REAL_PACKAGES = haveRealRepo ? readdirSync(join(REAL_REPO, 'operators')).sort() : [];

/**
 * A temporary directory holding `catalogs/` and every package's `ci.yaml` and
 * `catalog-templates/` as they were before the given history patches (named without
 * `.patch`, newest first).
 */
export function realRepoBefore(patches: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-ocp-'));
  cpSync(join(REAL_REPO, 'catalogs'), join(dir, 'catalogs'), { recursive: true });
  for (const pkg of REAL_PACKAGES) {
    const src = join(REAL_REPO, 'operators', pkg);
    cpSync(join(src, 'ci.yaml'), join(dir, 'operators', pkg, 'ci.yaml'));
    cpSync(join(src, 'catalog-templates'), join(dir, 'operators', pkg, 'catalog-templates'), {
      recursive: true,
    });
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  for (const p of patches) {
    execFileSync('git', ['apply', '-R', join(HISTORY, `${p}.patch`)], { cwd: dir, stdio: 'pipe' });
  }
  return dir;
}

/**
 * The `after` side of one file in a history patch: what the commit left there. A file the
 * commit changed (rather than added) is taken from `beforeDir`, the state before it.
 */
export function newFileOfPatch(patch: string, path: string, beforeDir?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-ocp-patch-'));
  execFileSync('git', ['init', '-q'], { cwd: dir });
  if (beforeDir && existsSync(join(beforeDir, path))) cpSync(join(beforeDir, path), join(dir, path));
  execFileSync('git', ['apply', `--include=${path}`, join(HISTORY, `${patch}.patch`)], {
    cwd: dir,
    stdio: 'pipe',
  });
  const text = readFileSync(join(dir, path), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return text;
}
