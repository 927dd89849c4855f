// A bundle pull request through the real Probot server: a signed pull_request webhook for a
// branch that adds a real bundle directory (test/helpers/bundle-repo.ts) ends with a
// completed `catalog-bot/bundle` run that shows the catalog update the merge needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppWithPull, type AppHarness } from './helpers/app-harness.js';
import { BUNDLE_DIR, makeBundleRepo, type BundleRepo } from './helpers/bundle-repo.js';

describe('catalog-bot app: a bundle pull request', () => {
  let made: BundleRepo;
  let head: string;
  let app: AppHarness;

  beforeAll(async () => {
    made = makeBundleRepo();
    head = made.branch('bundle-only');
    app = await startAppWithPull(made.repo, head);
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    made?.cleanup();
  });

  it('completes catalog-bot/bundle with the catalog update and its command', async () => {
    await app.pullRequest(1, 'opened', head);
    const bundle = app.gh.runsFor(head, 'catalog-bot/bundle')[0];
    expect(bundle).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(bundle?.output?.title).toMatch(/the merge needs the catalog update of 6 files/);
    expect(bundle?.output?.summary).toContain(`catalog-bot release ${BUNDLE_DIR}`);
    expect(bundle?.output?.summary).toContain('+- name: jumpstarter-operator.v0.9.0\n');
  }, 60_000);
});
