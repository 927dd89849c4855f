// The real community-operators-prod packages as they were before some of their recorded
// commits: a copy of the catalogs and package configs with those commits' patches
// reverse-applied (newest first) in a temporary git repository.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_DATA, type TempTrees } from './oracle.js';

export const REAL_REPO = join(SHARED_DATA, 'real-repo', 'community-operators-prod');
export const HISTORY = join(SHARED_DATA, 'real-repo', 'history');
export const haveRealRepo = existsSync(REAL_REPO);

/** The OpenShift catalog names v4.<from> to v4.<to>, in order. */
export const ocpCatalogs = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `v4.${from + i}`);

export const REAL_PACKAGES = haveRealRepo ? readdirSync(join(REAL_REPO, 'operators')).sort() : [];

/** jumpstarter-operator's 0.9.0 and 0.9.0-rc.2 releases, newest first: newer than its v4.22 promotion. */
export const JUMPSTARTER_AFTER_V4_22 = [
  'jumpstarter-operator-0.9.0-catalog',
  'jumpstarter-operator-0.9.0-template',
  'jumpstarter-operator-0.9.0-rc.2-catalog',
  'jumpstarter-operator-0.9.0-rc.2-template',
];

/** The patches that give the repository as it was before the v4.22 promotion round of 2026-07. */
export const BEFORE_V4_22_PROMOTION = [
  'clusterpulse-promote-v4.22',
  ...JUMPSTARTER_AFTER_V4_22,
  'jumpstarter-operator-promote-v4.22',
  'rabbitmq-messaging-topology-operator-promote-v4.22',
  'ecr-secret-operator-promote-v4.22',
];

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

/**
 * One real package's files as they are now (path -> text): its catalog in every OpenShift
 * catalog that has it and, with `withOperators`, its `ci.yaml` and `catalog-templates/`.
 */
export function realPackageFiles(pkg: string, withOperators: boolean): Record<string, string> {
  const files: Record<string, string> = {};
  for (const v of readdirSync(join(REAL_REPO, 'catalogs'))) {
    const path = `catalogs/${v}/${pkg}/catalog.yaml`;
    if (existsSync(join(REAL_REPO, path))) files[path] = readFileSync(join(REAL_REPO, path), 'utf8');
  }
  if (withOperators) {
    const operator = `operators/${pkg}`;
    files[`${operator}/ci.yaml`] = readFileSync(join(REAL_REPO, operator, 'ci.yaml'), 'utf8');
    for (const t of readdirSync(join(REAL_REPO, operator, 'catalog-templates')))
      files[`${operator}/catalog-templates/${t}`] = readFileSync(
        join(REAL_REPO, operator, 'catalog-templates', t),
        'utf8',
      );
  }
  return files;
}

/** A temporary tree of `trees` holding realPackageFiles(pkg, withOperators); returns it and those files. */
export function writeRealPackage(
  trees: TempTrees,
  pkg: string,
  withOperators: boolean,
): { dir: string; files: Record<string, string> } {
  const files = realPackageFiles(pkg, withOperators);
  return { dir: trees.write(files), files };
}
