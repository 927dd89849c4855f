// `/approve` on a pull request runs only the permissions decision: no validation, upgrade
// graph, dependency, CRD or template work (issue: one pull-request session). End to end
// through the App: signed webhooks, a real bare repository, GitHub's API as a fake (nock).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { readState } from '../src/handlers/pr-state.js';
import { InProcessQueue } from '../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { webhookExample } from './helpers/github.js';

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
const ROOT = 'catalogs/v4.21/foo';
const bundle = (version: string) => `---
schema: olm.bundle
package: foo
name: foo.v${version}
image: quay.io/example/foo-bundle:v${version}
properties:
  - type: olm.package
    value:
      packageName: foo
      version: ${version}
`;
const catalog = (entries: string) => `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
${entries}`;

function makeRepo() {
  const root = mkdtempSync(join(tmpdir(), 'catalog-bot-approve-'));
  const work = join(root, 'work');
  const bare = join(root, 'origin.git');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  const commit = (message: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), text);
    }
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', message);
    return git(work, 'rev-parse', 'HEAD');
  };
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  const base = commit('base', {
    '.github/catalog-bot.yml': CONFIG,
    'operators/foo/OWNERS': 'approvers: [bob]\n',
    'operators/foo/template.yaml': 'schema: olm.template.basic\nentries: []\n',
    [`${ROOT}/catalog.yaml`]: catalog('  - name: foo.v1.0.0\n'),
    [`${ROOT}/bundle-1.0.0.yaml`]: bundle('1.0.0'),
  });
  git(work, 'checkout', '-q', '-b', 'pr', base);
  // carol (no rights on foo) adds v1.1.0 and touches the template: every check has work.
  const head = commit('add 1.1.0', {
    [`${ROOT}/catalog.yaml`]: catalog(
      '  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n',
    ),
    [`${ROOT}/bundle-1.1.0.yaml`]: bundle('1.1.0'),
    'operators/foo/template.yaml': 'schema: olm.template.basic\nentries: [] # touched\n',
  });
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  git(
    work,
    'push',
    '-q',
    bare,
    'main:refs/heads/main',
    `${head}:refs/pull/2/head`,
    `${head}:refs/heads/pr-2`,
  );
  return { bare, head, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe('/approve runs only the permissions decision', () => {
  let repo: ReturnType<typeof makeRepo>;
  let workDir: string;
  let gh: FakeGitHub;
  let queue: InProcessQueue;
  let app: AppServer;
  let ran: { flow: string; checks: string[]; validatedRoots: number }[];

  beforeEach(async () => {
    repo = makeRepo();
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    gh = new FakeGitHub('Codertocat', 'Hello-World', repo.bare);
    queue = new InProcessQueue();
    ran = [];
    app = await startAppServer(gh, {
      queue,
      workDir,
      observeChecks: (flow, work) => ran.push({ flow, ...work }),
    });
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('answers /approve from permissions alone, while the pull request checks do every check', async () => {
    gh.addPull({ number: 2, head: repo.head, author: 'carol', mergeable_state: 'blocked' });
    const opened = webhookExample('pull_request', 'opened');
    opened.installation = { id: 4242 };
    opened.repository.clone_url = repo.bare;
    opened.number = opened.pull_request.number = 2;
    opened.pull_request.user.login = 'carol';
    opened.pull_request.head.sha = repo.head;
    expect(await app.send('pull_request', opened, 'd-1')).toBe(200);
    await queue.onIdle();
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
    expect(await app.send('issue_comment', comment, 'd-2')).toBe(200);
    await queue.onIdle();

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
    const root = mkdtempSync(join(tmpdir(), 'catalog-bot-approve-sets-'));
    const work = join(root, 'work');
    const bare = join(root, 'origin.git');
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        ['-C', work, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args],
        {
          encoding: 'utf8',
        },
      ).trim();
    const commit = (message: string, files: Record<string, string>) => {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), text);
      }
      git('add', '-A');
      git('commit', '-qm', message);
      return git('rev-parse', 'HEAD');
    };
    const foo = (image: string) =>
      `${catalog('  - name: foo.v1.0.0\n')}${bundle('1.0.0').replace('quay.io/example/', image)}`;
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    const base = commit('base', {
      '.github/catalog-bot.yml':
        'catalogs: [catalogs/*]\nmaintainers: [alice]\nimages:\n  unverifiableRegistries: [quay.io]\n',
      'catalogs/v4.21/foo/OWNERS': 'approvers: [fiona]\n',
      'catalogs/v4.21/bar/OWNERS': 'approvers: [mallory]\n',
      'catalogs/v4.21/bar/foo.yaml': foo('quay.io/example/'),
    });
    git('checkout', '-q', '-b', 'pr', base);
    const head = commit('new image', { 'catalogs/v4.21/bar/foo.yaml': foo('quay.io/example2/') });
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    git('push', '-q', bare, 'main:refs/heads/main', `${head}:refs/pull/2/head`, `${head}:refs/heads/pr-2`);
    return { bare, head, cleanup: () => rmSync(root, { recursive: true, force: true }) };
  }

  it('records it for what they own; the two owners together approve the package', async () => {
    const repo = ownerSetsRepo();
    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    const gh = new FakeGitHub('Codertocat', 'Hello-World', repo.bare);
    const queue = new InProcessQueue();
    const app = await startAppServer(gh, { queue, workDir });
    try {
      gh.addPull({ number: 2, head: repo.head, author: 'eve', mergeable_state: 'blocked' });
      const opened = webhookExample('pull_request', 'opened');
      opened.installation = { id: 4242 };
      opened.repository.clone_url = repo.bare;
      opened.number = opened.pull_request.number = 2;
      opened.pull_request.user.login = 'eve';
      opened.pull_request.head.sha = repo.head;
      expect(await app.send('pull_request', opened, 'd-1')).toBe(200);
      await queue.onIdle();
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
        expect(await app.send('issue_comment', payload, `d-${id}`)).toBe(200);
        await queue.onIdle();
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
      rmSync(workDir, { recursive: true, force: true });
    }
  });
});
