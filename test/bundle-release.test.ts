// The acting part of a bundle pull request's release, in the checks (docs/bundles.md): the
// catalog checks run on the head with the release applied, and the App's own release pull
// request passes permissions only when it is exactly the release of a merged bundle. A real
// git repository (test/helpers/bundle-repo.ts: jumpstarter-operator before 0.9.0).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseMergedBundles } from '../src/checks/bundle-pr.js';
import { DEFAULT_BUNDLE_SETTINGS } from '../src/catalog/edits/release.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { GitTreeSource } from '../src/catalog/fbc/source.js';
import { GitFiles } from '../src/git/files.js';
import { releaseSourceOf } from '../src/flows/release/source.js';
import { BUNDLE_DIR, BUNDLE_PKG, makeBundleRepo, type BundleRepo } from './helpers/bundle-repo.js';

let made: BundleRepo;
let repo: string;
let bundleOnly: string;
let breaksGraph: string;
let merged: string;
let gitFiles: GitFiles;

beforeAll(() => {
  made = makeBundleRepo();
  repo = made.repo;
  bundleOnly = made.branch('bundle-only');
  // The release-config makes 0.9.0 replace 0.8.0 and skip nothing: 0.9.0-rc.2 stays a
  // second channel head.
  breaksGraph = made.branch('breaks-graph', () => {
    const file = join(repo, BUNDLE_DIR, 'release-config.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace(/replaces: .*/, 'replaces: jumpstarter-operator.v0.8.0')
        .replace(/ *skipRange: .*\n/, ''),
    );
  });
  // The bundle merged into main without its catalog update (a fork's pull request).
  made.git('checkout', '-q', 'main');
  made.git('merge', '-q', '--no-ff', '-m', 'merge bundle-only', 'bundle-only');
  merged = made.git('rev-parse', 'main');
  gitFiles = new GitFiles(repo);
}, 60_000);

afterAll(() => {
  gitFiles?.close();
  made.cleanup();
});

describe('catalog checks on the release of a bundle-only pull request', () => {
  it('reports the release and runs the catalog checks on the head with it applied', async () => {
    const base = made.git('rev-parse', 'main^1');
    const plain = await runPrChecksInProcess({ repo, base, head: bundleOnly });
    expect(plain.release?.bundles).toEqual([BUNDLE_DIR]);
    expect(plain.release?.files.map((f) => f.path)).toContain(`catalogs/v4.20/${BUNDLE_PKG}/catalog.yaml`);
    // Without checkRelease, validate sees no catalog change.
    const validate = plain.checks.find((c) => c.name === 'catalog-bot/validate')!;
    expect(validate.title).not.toMatch(/catalog update/);
    const checked = await runPrChecksInProcess({ repo, base, head: bundleOnly, checkRelease: true });
    for (const name of ['catalog-bot/validate', 'catalog-bot/upgrade-graph', 'catalog-bot/templates']) {
      const c = checked.checks.find((x) => x.name === name)!;
      expect(c.title, name).toMatch(/^With the bundle's catalog update: /);
      expect(c.conclusion, `${name}: ${c.summary.slice(0, 400)}`).toBe('success');
    }
    expect(checked.checks.find((c) => c.name === 'catalog-bot/bundle')!.conclusion).toBe('success');
    // Nothing moved: main and the branch are where they were.
    expect(made.git('rev-parse', 'bundle-only')).toBe(bundleOnly);
  }, 60_000);

  it('fails the pull request when the release breaks the upgrade graph', async () => {
    const base = made.git('rev-parse', 'main^1');
    const checked = await runPrChecksInProcess({
      repo,
      base,
      head: breaksGraph,
      checkRelease: true,
      only: ['catalog-bot/bundle', 'catalog-bot/upgrade-graph'],
    });
    const graph = checked.checks.find((c) => c.name === 'catalog-bot/upgrade-graph')!;
    expect(graph.title).toMatch(/^With the bundle's catalog update: /);
    expect(graph.conclusion).toBe('failure');
  }, 60_000);
});

describe("the App's own release pull request", () => {
  async function releaseCommit(
    edit?: (files: { path: string; after: string }[]) => void,
    dirs = [BUNDLE_DIR],
  ) {
    const release = await releaseMergedBundles({
      rev: merged,
      dirs,
      settings: DEFAULT_BUNDLE_SETTINGS,
      readDirectory: async (rev, dir) => {
        const source = new GitTreeSource(repo, rev, dir);
        const files = new Map<string, Buffer>();
        const paths = (await source.list()).filter((e) => e.kind === 'file').map((e) => e.path);
        for (const [p, data] of await source.read(paths)) if (Buffer.isBuffer(data)) files.set(p, data);
        return { files, bytes: 1, unreadable: [] };
      },
      readFile: (rev, path) => gitFiles.read(rev, path),
    });
    if (!('files' in release)) throw new Error(release.refused.message);
    const files = release.files.map((f) => ({ ...f }));
    edit?.(files);
    made.git('checkout', '-q', '-B', 'release', merged);
    for (const f of files) writeFileSync(join(repo, f.path), f.after);
    made.git('add', '-A');
    made.git(
      'commit',
      '-qm',
      `Release ${dirs.join(' ')}\n\n${dirs.map((d) => `Released-bundle: ${d}`).join('\n')}`,
    );
    return made.git('rev-parse', 'HEAD');
  }
  // What GitHub lists as the merged pull request's files: its bundle directory.
  const mergedFiles = {
    changed: [`${BUNDLE_DIR}/manifests/x.yaml`, `${BUNDLE_DIR}/metadata/annotations.yaml`],
  };
  const permissionsOf = async (head: string, derivedRelease: { changed: string[] } | null = mergedFiles) =>
    (
      await runPrChecksInProcess({
        repo,
        base: merged,
        head,
        author: 'catalog-bot[bot]',
        ...(derivedRelease ? { derivedRelease } : {}),
        only: ['catalog-bot/permissions'],
      })
    ).checks.find((c) => c.name === 'catalog-bot/permissions')!;

  it('passes permissions when it is exactly the release of the merged bundle', async () => {
    const head = await releaseCommit();
    const ok = await permissionsOf(head);
    expect(ok.conclusion).toBe('success');
    expect(ok.title).toContain(BUNDLE_DIR);
    // Only for the App itself: the same change by anyone else is judged by owners.
    expect((await permissionsOf(head, null)).conclusion).toBe('failure');
    // The bundles come from the merged pull request's files, never the commit message: a
    // release commit for a bundle that pull request did not add is judged by owners.
    const other = { changed: [`operators/${BUNDLE_PKG}/0.8.1/manifests/x.yaml`] };
    expect((await permissionsOf(head, other)).conclusion).toBe('failure');
  }, 60_000);

  it('fails permissions when one byte more than the release is in it', async () => {
    const head = await releaseCommit((files) => {
      const f = files.find((x) => x.path.endsWith('v4.21/jumpstarter-operator/catalog.yaml'))!;
      f.after = f.after.replace(
        'quay.io/community-operator-pipeline-prod/jumpstarter-operator:0.9.0',
        'quay.io/evil/jumpstarter-operator:0.9.0',
      );
    });
    expect((await permissionsOf(head)).conclusion).toBe('failure');
  }, 60_000);

  it('fails permissions when it carries another file besides the release', async () => {
    const head = await releaseCommit((files) =>
      files.push({ path: `operators/${BUNDLE_PKG}/Makefile`, after: '# and something else\n' }),
    );
    expect((await permissionsOf(head)).conclusion).toBe('failure');
  }, 60_000);
});

describe('which merged pull request a release pull request is for (releaseSourceOf)', () => {
  const ref = { owner: 'Codertocat', repo: 'Hello-World' };
  const bot = 'catalog-bot[bot]';
  /** GitHub as the App sees it: pull request #7, merged into `mergedInto`, added foo's bundle. */
  const github = (mergedInto: string) =>
    ({
      pulls: {
        get: async () => ({ merged: true, base: { ref: mergedInto } }),
        files: async () => [{ filename: 'operators/foo/2.0.0/release-config.yaml' }],
      },
    }) as unknown as Parameters<typeof releaseSourceOf>[0];
  const releasePull = (base: string) => ({
    user: { login: bot },
    head: { ref: 'catalog-bot/release-7', repo: { full_name: 'Codertocat/Hello-World' } },
    base: { ref: base },
  });

  it('lends nothing to a release pull request into another branch than the one #n was merged into', async () => {
    // The App's own release pull request into main, for #7 merged into main.
    expect(await releaseSourceOf(github('main'), ref, releasePull('main'), bot)).toEqual({
      number: 7,
      changed: ['operators/foo/2.0.0/release-config.yaml'],
    });
    // The attack: a writer merges #7 by hand into a branch of their own (`side`), so the App
    // opens its release pull request into `side`; the writer then retargets it to main (and
    // pushes main plus the release of a bundle of foo's that main holds unreleased). Its
    // permissions must not come from #7, which main never merged.
    expect(await releaseSourceOf(github('side'), ref, releasePull('main'), bot)).toBeUndefined();
  });
});
