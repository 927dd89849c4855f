// `/approve` on a pull request runs only the permissions decision: no validation, upgrade
// graph, dependency, CRD or template work (issue: one pull-request session). End to end
// through the App: signed webhooks, a real bare repository, GitHub's API as a fake (nock).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { readState } from '../src/handlers/pr-state.js';
import { issueCommentPayload } from './helpers/app-server.js';
import { startAppHarness, type AppHarness } from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';
import {
  fooBundle as bundle,
  fooChannel,
  FOO_OWNERS,
  FOO_ROOT as ROOT,
  WorkRepo,
} from './helpers/foo-repo.js';

const CONFIG = `catalogs: [catalogs/*]
maintainers: [alice]
ownership:
  packageOwners: operators/{package}/OWNERS
images:
  unverifiableRegistries: [quay.io]
templates:
  - template: operators/foo/template.yaml
    outputs: [catalogs/v4.21/foo/catalog.yaml]
`;
function makeRepo() {
  const repo = new WorkRepo('catalog-bot-approve-');
  const base = repo.commit('base', {
    '.github/catalog-bot.yml': CONFIG,
    [FOO_OWNERS]: 'approvers: [bob]\n',
    'operators/foo/template.yaml': 'schema: olm.template.basic\nentries: []\n',
    [`${ROOT}/catalog.yaml`]: fooChannel(['1.0.0']),
    [`${ROOT}/bundle-1.0.0.yaml`]: bundle('1.0.0'),
  });
  // carol (no rights on foo) adds v1.1.0 and touches the template: every check has work.
  const head = repo.commit('add 1.1.0', {
    [`${ROOT}/catalog.yaml`]: fooChannel(['1.0.0', '1.1.0']),
    [`${ROOT}/bundle-1.1.0.yaml`]: bundle('1.1.0'),
    'operators/foo/template.yaml': 'schema: olm.template.basic\nentries: [] # touched\n',
  });
  repo.push(base, 'refs/heads/main');
  repo.push(head, 'refs/pull/2/head', 'refs/heads/pr-2');
  return { bare: repo.bare, head, cleanup: () => repo.cleanup() };
}

describe('/approve runs only the permissions decision', () => {
  let repo: ReturnType<typeof makeRepo>;
  let gh: FakeGitHub;
  let app: AppHarness;
  let ran: { flow: string; checks: string[]; validatedRoots: number }[];

  beforeEach(async () => {
    repo = makeRepo();
    ran = [];
    app = await startAppHarness(repo.bare, [], {
      observeChecks: (flow, work) => ran.push({ flow, ...work }),
    });
    gh = app.gh;
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
  });

  it('answers /approve from permissions alone, while the pull request checks do every check', async () => {
    gh.addPull({ number: 2, head: repo.head, author: 'carol', mergeable_state: 'blocked' });
    await app.pullRequest(2, 'opened');
    // The checks of the head: every check of the list that applies, on validated catalogs.
    const checks = ran.filter((r) => r.flow === 'pr-checks');
    expect(checks).toHaveLength(1);
    expect(checks[0]!.checks).toEqual(
      expect.arrayContaining([
        'catalog-bot/permissions',
        'catalog-bot/validate',
        'catalog-bot/upgrade-graph',
        'catalog-bot/dependencies',
        'catalog-bot/crd-upgrade',
        'catalog-bot/templates',
      ]),
    );
    expect(checks[0]!.validatedRoots).toBe(1);
    expect(gh.runsFor(repo.head, 'catalog-bot/permissions').at(-1)?.conclusion).toBe('failure');

    // bob, foo's owner, approves, on a head older than the grace (docs/security.md).
    gh.tick(61_000);
    const comment = issueCommentPayload({
      bare: repo.bare,
      number: 2,
      id: 9001,
      login: 'bob',
      userId: 12,
      body: '/approve',
      at: gh.tick(),
    });
    ran = [];
    await app.deliver('issue_comment', comment);

    // The approval is recorded, decided by the permissions check and nothing else.
    const approvals = gh
      .botComments(2)
      .map((c) => readState(c.body))
      .find(Boolean)?.approvals;
    expect(approvals).toMatchObject([{ login: 'bob', comment: 9001, sha: repo.head }]);
    expect(ran.filter((r) => r.flow === 'approve')).toEqual([
      { flow: 'approve', checks: ['catalog-bot/permissions'], validatedRoots: 0 },
    ]);
    // Then the checks run again with the approval (a flow of its own, with every check).
    expect(ran.filter((r) => r.flow === 'pr-checks')).toHaveLength(1);
    expect(gh.runsFor(repo.head, 'catalog-bot/permissions').at(-1)?.conclusion).toBe('success');
    expect(PR_CHECK_NAMES).toContain('catalog-bot/permissions');
  });
});

describe('/approve from the owner of one of several owner sets', () => {
  /** foo's file sits in bar/ (mallory's); fiona owns foo by name; eve opens the pull request. */
  function ownerSetsRepo() {
    const repo = new WorkRepo('catalog-bot-approve-sets-');
    const foo = (image: string) =>
      `${fooChannel(['1.0.0'])}${bundle('1.0.0').replace('quay.io/example/', image)}`;
    const base = repo.commit('base', {
      '.github/catalog-bot.yml':
        'catalogs: [catalogs/*]\nmaintainers: [alice]\nimages:\n  unverifiableRegistries: [quay.io]\n',
      'catalogs/v4.21/foo/OWNERS': 'approvers: [fiona]\n',
      'catalogs/v4.21/bar/OWNERS': 'approvers: [mallory]\n',
      'catalogs/v4.21/bar/foo.yaml': foo('quay.io/example/'),
    });
    const head = repo.commit('new image', { 'catalogs/v4.21/bar/foo.yaml': foo('quay.io/example2/') });
    repo.push(base, 'refs/heads/main');
    repo.push(head, 'refs/pull/2/head', 'refs/heads/pr-2');
    return { bare: repo.bare, head, cleanup: () => repo.cleanup() };
  }

  it('records it for what they own; the two owners together approve the package', async () => {
    const repo = ownerSetsRepo();
    const app = await startAppHarness(repo.bare, [
      { number: 2, head: repo.head, author: 'eve', mergeable_state: 'blocked' },
    ]);
    const gh = app.gh;
    try {
      await app.pullRequest(2, 'opened');
      const permissions = () => gh.runsFor(repo.head, 'catalog-bot/permissions').at(-1)?.conclusion;
      expect(permissions()).toBe('failure');
      gh.tick(61_000); // the head is older than the grace (docs/security.md)
      let id = 9100;
      const approve = async (login: string) => {
        const payload = issueCommentPayload({
          bare: repo.bare,
          number: 2,
          id: ++id,
          login,
          body: '/approve',
          at: gh.tick(),
        });
        await app.deliver('issue_comment', payload);
        return gh
          .botComments(2)
          .map((c) => readState(c.body))
          .find(Boolean)?.approvals;
      };
      // zed owns nothing here: refused, nothing recorded.
      expect(await approve('zed')).toEqual([]);
      // fiona owns one set of foo: recorded for foo, and foo still needs mallory's set.
      expect(await approve('fiona')).toMatchObject([
        { login: 'fiona', subjects: { 'package foo (catalogs/v4.21)': expect.any(String) } },
      ]);
      expect(permissions()).toBe('failure');
      expect(await approve('mallory')).toHaveLength(2);
      expect(permissions()).toBe('success');
    } finally {
      await app.stop();
      repo.cleanup();
    }
  });
});
