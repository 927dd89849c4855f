// A bundle pull request's catalog update, acted on by the App through the real Probot
// server (signed webhooks), real git repositories (the real jumpstarter-operator package
// before its 0.9.0 release, test/helpers/bundle-repo.ts) and GitHub's API as a stateful
// fake (docs/bundles.md, "After the check"):
// - from a fork: checked, merged, then the App's own release pull request, checked and
//   auto-merged; main ends with the real release's catalogs, and the time from the merge
//   to the catalog update is printed;
// - from a branch of the repository: the update is pushed onto the branch, on the checked
//   head only;
// - a release that is refused writes nothing anywhere.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bareOrigin, startAppHarness, type AppHarness } from './helpers/app-harness.js';
import { BUNDLE_DIR, BUNDLE_PKG, makeBundleRepo, type BundleRepo } from './helpers/bundle-repo.js';
import type { FakeGitHub } from './helpers/fake-github.js';

const CONFIG = `catalogs: [catalogs/*]
maintainers: [alice]
automerge:
  enabled: true
  method: merge
`;
const OWNERS = 'approvers: [carol]\n';
const CATALOGS = ['v4.18', 'v4.19', 'v4.20', 'v4.21', 'v4.22'].map(
  (v) => `catalogs/${v}/${BUNDLE_PKG}/catalog.yaml`,
);
const TEMPLATE = `operators/${BUNDLE_PKG}/catalog-templates/basic.yaml`;

describe('catalog-bot app: acting on a bundle pull request', () => {
  let made: BundleRepo;
  /** The real release's catalogs and template (the community's catalog commit), path -> text. */
  let realRelease: Map<string, string>;
  let origin: { bare: string; cleanup: () => void };
  let bare: string;
  let app: AppHarness;
  let gh: FakeGitHub;

  beforeEach(async () => {
    made = makeBundleRepo();
    made.git('checkout', '-q', 'main');
    mkdirSync(join(made.repo, '.github'), { recursive: true });
    writeFileSync(join(made.repo, '.github/catalog-bot.yml'), CONFIG);
    writeFileSync(join(made.repo, `operators/${BUNDLE_PKG}/OWNERS`), OWNERS);
    made.git('add', '-A');
    made.git('commit', '-qm', 'config');
    // What the community's release bot committed for 0.9.0 (the real catalog commit).
    made.branch('real-release', made.applyRelease);
    realRelease = new Map([...CATALOGS, TEMPLATE].map((p) => [p, made.git('show', `real-release:${p}`)]));
    origin = bareOrigin(made.repo, ['main:refs/heads/main']);
    bare = origin.bare;
    app = await startAppHarness(bare, [], {
      // No registry in a test: every image exists; bundle images are never pulled.
      images: async (refs) =>
        new Map(refs.map((ref) => [ref, { ref, status: 'exists' as const, reason: '' }])),
      bundles: {
        resolveBundle: async (image) => {
          throw new Error(`no registry in this test (${image})`);
        },
        manifests: async (image) => {
          throw new Error(`no registry in this test (${image})`);
        },
      },
    });
    gh = app.gh;
    gh.registerCreatedPulls = true;
  }, 60_000);

  afterEach(async () => {
    await app?.stop();
    made?.cleanup();
    origin?.cleanup();
  });

  /** A contributor's pull request: `branch` of the work repository as pull request `number`. */
  function contribute(number: number, branch: string, options: { fork?: boolean } = {}) {
    const head = made.git('rev-parse', branch);
    const refs = [`${head}:refs/pull/${number}/head`];
    // A branch of this repository is also a branch of the bare repository.
    if (!options.fork) refs.push(`${head}:refs/heads/pr-${number}`);
    made.git('push', '-q', bare, ...refs);
    gh.addPull({
      number,
      head,
      author: 'carol',
      ...(options.fork ? { fork: 'carol' } : {}),
      onMerge: () => gh.mergeForReal('main', head),
    });
    return head;
  }

  const show = (rev: string, path: string) =>
    execFileSync('git', ['-C', bare, 'show', `${rev}:${path}`], { encoding: 'utf8' }).trimEnd();
  const conclusion = (sha: string, name: string) => gh.runsFor(sha, name).at(-1)?.conclusion;
  const said = (number: number) => gh.botComments(number).map((c) => c.body);

  it("a fork's bundle-only pull request: checked, merged, then the App's release pull request updates every catalog", async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only', { fork: true });
    await app.pullRequest(1, 'opened');
    const bundle = gh.runsFor(head, 'catalog-bot/bundle').at(-1)!;
    expect(bundle.conclusion).toBe('success');
    expect(bundle.output?.title).toMatch(/the merge needs the catalog update of 6 files/);
    // The catalog checks judged the head with the update applied.
    expect(gh.runsFor(head, 'catalog-bot/upgrade-graph').at(-1)?.output?.title).toMatch(
      /^With the bundle's catalog update: /,
    );
    expect(conclusion(head, 'catalog-bot/validate')).toBe('success');
    expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'merge' }]);
    // A fork's branch is never written to.
    expect(gh.refUpdates).toEqual([]);

    // GitHub tells of the merge; from here to the catalogs on main.
    const started = performance.now();
    await app.pullRequest(1, 'closed');
    const seconds = (performance.now() - started) / 1000;

    expect(gh.created).toHaveLength(1);
    const [release] = gh.created;
    expect(release).toMatchObject({ number: 100, base: 'main', head: 'catalog-bot/release-1' });
    expect(said(1).at(-1)).toContain('is #100');
    const releasePull = gh.pulls.get(100)!;
    expect(conclusion(releasePull.head, 'catalog-bot/permissions')).toBe('success');
    expect(gh.runsFor(releasePull.head, 'catalog-bot/permissions').at(-1)?.output?.title).toContain(
      BUNDLE_DIR,
    );
    expect(gh.merges.map((m) => m.number)).toEqual([1, 100]);
    // main now holds exactly the community's real catalog commit for 0.9.0.
    for (const [path, text] of realRelease) expect(show('main', path), path).toBe(text.trimEnd());
    // The release commit is the App's, and names the bundle.
    const message = execFileSync('git', ['-C', bare, 'log', '-1', '--format=%an%n%B', releasePull.head], {
      encoding: 'utf8',
    });
    expect(message).toMatch(/^catalog-bot\n/);
    expect(message).toContain(`Released-bundle: ${BUNDLE_DIR}`);
    console.log(`merge of the bundle pull request -> catalog update merged on main: ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThan(120);
  }, 180_000);

  it("a release branch someone pushed before the merge does not stop the App's release pull request", async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only', { fork: true });
    // A writer pushes `catalog-bot/release-1` (and could do so for every number to come)
    // before the merge: the App took the branch for an earlier delivery's and proposed nothing.
    const squatted = execFileSync('git', ['-C', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    execFileSync('git', ['-C', bare, 'update-ref', 'refs/heads/catalog-bot/release-1', squatted]);
    await app.pullRequest(1, 'opened');
    expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'merge' }]);
    await app.pullRequest(1, 'closed');
    expect(gh.created).toHaveLength(1);
    expect(gh.created[0]).toMatchObject({ number: 100, base: 'main', head: 'catalog-bot/release-1' });
    const releasePull = gh.pulls.get(100)!;
    expect(releasePull.head).not.toBe(squatted);
    expect(conclusion(releasePull.head, 'catalog-bot/permissions')).toBe('success');
    expect(gh.merges.map((m) => m.number)).toEqual([1, 100]);
    for (const [path, text] of realRelease) expect(show('main', path), path).toBe(text.trimEnd());
  }, 180_000);

  it('the release after a merge is computed in the checks worker, within its deadline: past it nothing is written and the pull request is told', async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only', { fork: true });
    await app.pullRequest(1, 'opened');
    expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'merge' }]);
    // A release costs what the bundle check's did (up to the check deadline, in the worker).
    // Computed on the App's event loop, that time stalled every repository's webhooks and
    // jobs; under the worker's deadline (1 ms here) it is stopped instead.
    const deadline = process.env.CATALOG_BOT_CHECK_TIMEOUT_MS;
    process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = '1';
    try {
      await app.pullRequest(1, 'closed');
    } finally {
      if (deadline === undefined) delete process.env.CATALOG_BOT_CHECK_TIMEOUT_MS;
      else process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = deadline;
    }
    expect(gh.created).toEqual([]);
    expect(said(1).at(-1)).toContain('CATALOG_BOT_CHECK_TIMEOUT_MS');
    expect(said(1).at(-1)).toContain('Nothing was written');
  }, 180_000);

  it('a bundle-only pull request from a branch of the repository gets the checked update pushed onto its branch', async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only');
    await app.pullRequest(1, 'opened');
    expect(conclusion(head, 'catalog-bot/bundle')).toBe('success');
    expect(gh.refUpdates.map((u) => u.ref)).toEqual(['pr-1']);
    const pushed = gh.refUpdates[0]!.sha;
    expect(execFileSync('git', ['-C', bare, 'rev-parse', `${pushed}^`], { encoding: 'utf8' }).trim()).toBe(
      head,
    );
    // Exactly the update: the real release's files, nothing else.
    const changed = execFileSync('git', ['-C', bare, 'diff', '--name-only', head, pushed], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .sort();
    expect(changed).toEqual([...realRelease.keys()].sort());
    for (const [path, text] of realRelease) expect(show(pushed, path), path).toBe(text.trimEnd());
    // The bundle-only head is not merged: its branch moved on.
    expect(gh.merges).toEqual([]);
    expect(said(1).at(-1)).toContain(`Pushed ${pushed.slice(0, 12)} to \`pr-1\``);
    // The pull request's head is now that commit (GitHub moves it with the branch): it is
    // checked as a new push, and carries the update (test/bundle-pr.test.ts).
    expect(gh.pulls.get(1)!.head).toBe(pushed);
  }, 180_000);

  it('a branch that moved after its check gets no release commit', async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only');
    // The contributor force-pushes the branch back to main while the App is about to
    // write: a release commit on the checked head would still be a fast-forward of it, so
    // only the comparison with the checked head keeps it off.
    const newer = made.git('rev-parse', 'main');
    gh.onBranch = (name) => {
      if (name !== 'pr-1') return;
      execFileSync('git', ['-C', bare, 'update-ref', 'refs/heads/pr-1', newer]);
      gh.pulls.get(1)!.head = newer;
    };
    await app.pullRequest(1, 'opened');
    expect(conclusion(head, 'catalog-bot/bundle')).toBe('success');
    expect(gh.refUpdates).toEqual([]);
    expect(
      execFileSync('git', ['-C', bare, 'rev-parse', 'refs/heads/pr-1'], { encoding: 'utf8' }).trim(),
    ).toBe(newer);
    expect(said(1).some((b) => b.includes('Pushed'))).toBe(false);
    expect(gh.merges).toEqual([]);
  }, 180_000);

  it('a branch deleted after its check gets no release commit, and the job ends there (no retries)', async () => {
    made.branch('bundle-only');
    const head = contribute(1, 'bundle-only');
    // The contributor deletes the branch while the App is about to write.
    gh.onBranch = (name) => {
      if (name === 'pr-1') execFileSync('git', ['-C', bare, 'update-ref', '-d', 'refs/heads/pr-1']);
    };
    await app.pullRequest(1, 'opened');
    expect(conclusion(head, 'catalog-bot/bundle')).toBe('success');
    expect(gh.refUpdates).toEqual([]);
    expect(said(1).some((b) => b.includes('Pushed'))).toBe(false);
    // A gone branch is not an error to try again (each retry waited longer: 15 s in all).
    expect(app.failedJobs).toEqual([]);
  }, 180_000);

  it('a release that is refused writes nothing: no push, no merge, and after a merge by hand no release pull request', async () => {
    made.branch('bad-channel', () => {
      const file = join(made.repo, BUNDLE_DIR, 'release-config.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('channels: [alpha]', 'channels: [nightly]'));
    });
    const head = contribute(1, 'bad-channel');
    await app.pullRequest(1, 'opened');
    const bundle = gh.runsFor(head, 'catalog-bot/bundle').at(-1)!;
    expect(bundle.conclusion).toBe('failure');
    expect(bundle.output?.summary).toContain('nightly');
    expect(gh.refUpdates).toEqual([]);
    expect(gh.merges).toEqual([]);
    // A maintainer merges it anyway.
    const main = execFileSync('git', ['-C', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const pull = gh.pulls.get(1)!;
    Object.assign(pull, { state: 'closed', merged: true, mergeCommit: gh.mergeForReal('main', head) });
    const merged = pull.mergeCommit!;
    expect(merged).not.toBe(main);
    await app.pullRequest(1, 'closed');
    expect(gh.created).toEqual([]);
    expect(gh.refUpdates).toEqual([]);
    expect(execFileSync('git', ['-C', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim()).toBe(merged);
    expect(said(1).at(-1)).toMatch(/cannot add .* to its catalogs.*nightly/s);
    expect(said(1).at(-1)).toContain('Nothing was written');
  }, 180_000);
});
