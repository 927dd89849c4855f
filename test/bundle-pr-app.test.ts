// A bundle pull request through the real Probot server: a signed pull_request webhook for a
// branch that adds a real bundle directory (test/helpers/bundle-repo.ts) ends with a
// completed `catalog-bot/bundle` run that shows the catalog update the merge needs.
import { describe, expect, it } from 'vitest';
import { appWithPullForSuite } from './helpers/app-harness.js';
import { BUNDLE_DIR, makeBundleRepo } from './helpers/bundle-repo.js';

describe('catalog-bot app: a bundle pull request', () => {
  const suite = appWithPullForSuite(() => {
    const made = makeBundleRepo();
    return { made, head: made.branch('bundle-only') };
  });

  it('completes catalog-bot/bundle with the catalog update and its command', async () => {
    const { app, head } = suite;
    await app.pullRequest(1, 'opened', head);
    const bundle = app.gh.runsFor(head, 'catalog-bot/bundle')[0];
    expect(bundle).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(bundle?.output?.title).toMatch(/the merge needs the catalog update of 6 files/);
    expect(bundle?.output?.summary).toContain(`catalog-bot release ${BUNDLE_DIR}`);
    expect(bundle?.output?.summary).toContain('+- name: jumpstarter-operator.v0.9.0\n');
  }, 60_000);
});
