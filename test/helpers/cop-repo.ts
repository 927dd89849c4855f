// A git repository laid out exactly like community-operators-prod: the six real packages
// (every bundle directory, ci.yaml, templates, release configs, catalogs of every OpenShift
// version), with the repository's `.github/catalog-bot.yml` as the README documents it.
// `main` is the state just before one recorded bundle release of one package (its catalog,
// template and later promotion patches reversed, the bundle directory removed), so a branch
// that adds the directory back is that release's bundle pull request.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitIn } from './git.js';
import { HISTORY, REAL_REPO } from './ocp-history.js';
import { SHARED_DATA } from './oracle.js';

export { haveRealRepo } from './ocp-history.js';

/** The repository configuration a community-operators-prod maintainer would write. */
export const COP_CONFIG = `catalogs: [catalogs/*]
maintainers: [Allda]
ownership:
  packageOwners: operators/{package}/ci.yaml
  newPackages: maintainers
`;

/** Releases with what must be reversed (newest first) to get the state before them. */
const RELEASES: Record<string, { reverse: string[]; reviewer: string }> = {
  'clusterpulse/1.0.2': {
    reverse: ['clusterpulse-promote-v4.22', 'clusterpulse-1.0.2-catalog', 'clusterpulse-1.0.2-template'],
    reviewer: 'asamoorerh',
  },
  'jumpstarter-operator/0.9.0': {
    reverse: ['jumpstarter-operator-0.9.0-catalog', 'jumpstarter-operator-0.9.0-template'],
    reviewer: 'mangelajo',
  },
};

export interface CopRepo {
  repo: string;
  pkg: string;
  version: string;
  /** The bundle directory of the release, relative to the repository. */
  bundleDir: string;
  /** A `reviewers:` entry of the package's ci.yaml: an owner of the package. */
  reviewer: string;
  git: (...args: string[]) => string;
  /**
   * A branch off `from` (default main) with the release's bundle directory added (unless
   * `withBundle` is false) and `edit` applied to the work tree; returns the commit.
   */
  branch: (name: string, edit?: () => void, withBundle?: boolean, from?: string) => string;
  /** The release's recorded catalog and template changes (or only one part), applied to the work tree. */
  applyRelease: (only?: 'template' | 'catalog') => void;
  /** Back to the repository as made, on main: a test's own commits and branches' changes go too. */
  reset: () => void;
  cleanup: () => void;
}

export function makeCopRepo(release: keyof typeof RELEASES | string, config = COP_CONFIG): CopRepo {
  const spec = RELEASES[release];
  if (!spec) throw new Error(`no recorded release ${release}: one of ${Object.keys(RELEASES).join(', ')}`);
  const [pkg, version] = release.split('/') as [string, string];
  const bundleDir = `operators/${pkg}/${version}`;
  const repo = mkdtempSync(join(tmpdir(), 'cop-repo-'));
  const stash = mkdtempSync(join(tmpdir(), 'cop-repo-stash-'));
  const git = gitIn(repo);
  git('init', '-q', '-b', 'main');
  for (const d of ['operators', 'catalogs', 'config.yaml'])
    cpSync(join(REAL_REPO, d), join(repo, d), { recursive: true });
  mkdirSync(join(repo, '.github'));
  writeFileSync(join(repo, '.github', 'catalog-bot.yml'), config);
  for (const p of spec.reverse) git('apply', '-R', '--whitespace=nowarn', join(HISTORY, `${p}.patch`));
  cpSync(join(repo, bundleDir), join(stash, version), { recursive: true });
  rmSync(join(repo, bundleDir), { recursive: true });
  git('add', '-A');
  git('commit', '-qm', `before ${pkg} ${version}`);
  const forward = spec.reverse.filter((p) => p.startsWith(`${pkg}-${version}-`));
  return {
    repo,
    pkg,
    version,
    bundleDir,
    reviewer: spec.reviewer,
    git,
    branch: (name, edit, withBundle = true, from = 'main') => {
      git('checkout', '-q', '-b', name, from);
      if (withBundle) cpSync(join(stash, version), join(repo, bundleDir), { recursive: true });
      edit?.();
      git('add', '-A');
      git('commit', '-qm', name);
      return git('rev-parse', 'HEAD');
    },
    applyRelease: (only) => {
      for (const p of forward)
        if (!only || p.endsWith(`-${only}`)) git('apply', '--whitespace=nowarn', join(HISTORY, `${p}.patch`));
    },
    reset: () => {
      git('checkout', '-q', '-f', 'main');
      git('reset', '-q', '--hard', git('rev-list', '--max-parents=0', 'main'));
      git('clean', '-qfdx');
    },
    cleanup: () => {
      rmSync(repo, { recursive: true, force: true });
      rmSync(stash, { recursive: true, force: true });
    },
  };
}

/**
 * Branch `strand` off branch `release` of makeCopRepo('clusterpulse/1.0.2') (the release
 * applied): the release edited by hand so that 1.0.2 skips only 1.0.1 in v4.21, which leaves
 * 1.0.0 a second head of fast-v1 there; returns the commit.
 */
export function strandingRelease(cop: CopRepo): string {
  return cop.branch(
    'strand',
    () => {
      const path = join(cop.repo, 'catalogs/v4.21/clusterpulse/catalog.yaml');
      const text = readFileSync(path, 'utf8');
      const edited = text.replace(
        '- name: clusterpulse.v1.0.2\n  skips:\n  - clusterpulse.v1.0.0\n  - clusterpulse.v1.0.1\n',
        '- name: clusterpulse.v1.0.2\n  skips:\n  - clusterpulse.v1.0.1\n',
      );
      if (edited === text) throw new Error(`${path}: the release's skips of 1.0.2 are not there to edit`);
      writeFileSync(path, edited);
    },
    false,
    'release',
  );
}

/** The onboarding cases (test data README): one package on the bundle index each. */
export const ONBOARDING = join(SHARED_DATA, 'onboarding');

export interface IndexRepo {
  repo: string;
  pkg: string;
  /** The withheld bundle directory, relative to the repository: what the pull request adds. */
  bundleDir: string;
  git: (...args: string[]) => string;
  /** A branch off main with the withheld bundle added and `edit(repo)` applied; returns the commit. */
  branch: (name: string, edit?: (repo: string) => void) => string;
  cleanup: () => void;
}

/**
 * A repository laid out like community-operators-prod with one package still on the bundle
 * index (an onboarding case's `before/`), main without the bundle directory `withhold`: a
 * branch that adds it back is that bundle's pull request. Without `withhold` (or null), main
 * holds every bundle directory (the package as it is, ready to onboard) and branches add
 * none. `config`: the repository's `.github/catalog-bot.yml`.
 */
export function makeIndexRepo(
  onboardingCase: string,
  withhold?: string | null,
  config = COP_CONFIG,
): IndexRepo {
  const before = join(ONBOARDING, onboardingCase, 'before');
  const pkg = onboardingCase;
  const bundleDir = withhold == null ? `operators/${pkg}` : `operators/${pkg}/${withhold}`;
  const repo = mkdtempSync(join(tmpdir(), 'index-repo-'));
  const stash = mkdtempSync(join(tmpdir(), 'index-repo-stash-'));
  const git = gitIn(repo);
  git('init', '-q', '-b', 'main');
  cpSync(before, repo, { recursive: true });
  mkdirSync(join(repo, '.github'));
  writeFileSync(join(repo, '.github', 'catalog-bot.yml'), config);
  if (withhold != null) {
    cpSync(join(repo, bundleDir), join(stash, withhold), { recursive: true });
    rmSync(join(repo, bundleDir), { recursive: true });
  }
  git('add', '-A');
  git('commit', '-qm', `before ${pkg} ${withhold ?? ''}`);
  return {
    repo,
    pkg,
    bundleDir,
    git,
    branch: (name, edit) => {
      git('checkout', '-q', '-b', name, 'main');
      if (withhold != null) cpSync(join(stash, withhold), join(repo, bundleDir), { recursive: true });
      edit?.(repo);
      git('add', '-A');
      git('commit', '-qm', name);
      return git('rev-parse', 'HEAD');
    },
    cleanup: () => {
      rmSync(repo, { recursive: true, force: true });
      rmSync(stash, { recursive: true, force: true });
    },
  };
}
