// `/deprecate` and `/undeprecate` end to end through the App: Probot's server on 127.0.0.1
// with signed webhooks, a real bare repository, the real mirror and checks, GitHub's API as a
// small stateful fake (nock). The edit is checked
// as the commenter's own change and written like `/promote` (docs/deprecate.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readState } from '../src/handlers/pr-state.js';
import { InProcessQueue } from '../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';

const CONFIG = `catalogs: [catalogs/*]
maintainers: [alice]
ownership:
  ownersFiles: true
  packageOwners: operators/{package}/OWNERS
  newPackages: maintainers
# The tests have no network: quay.io cannot be asked.
images:
  unverifiableRegistries: [quay.io]
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
// Hand-written, with a comment: the edit must leave it as it is.
const CATALOG = `---
# foo's package and channel
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
  - name: foo.v1.0.1
    replaces: foo.v1.0.0
  - name: foo.v1.0.2
    replaces: foo.v1.0.1
`;

function makeRepo() {
  const root = mkdtempSync(join(tmpdir(), 'catalog-bot-deprecate-'));
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
    'README.md': 'catalog\n',
    [`${ROOT}/catalog.yaml`]: CATALOG,
    [`${ROOT}/bundle-1.0.0.yaml`]: bundle('1.0.0'),
    [`${ROOT}/bundle-1.0.1.yaml`]: bundle('1.0.1'),
    [`${ROOT}/bundle-1.0.2.yaml`]: bundle('1.0.2'),
  });
  git(work, 'checkout', '-q', '-b', 'pr', base);
  const pr = commit('notes', { 'README.md': 'catalog, with notes\n' });
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  git(work, 'push', '-q', bare, 'main:refs/heads/main', `${pr}:refs/pull/2/head`, `${pr}:refs/heads/pr-2`);
  return {
    bare,
    pr,
    show: (rev: string, path: string) => git(bare, 'show', `${rev}:${path}`),
    parent: (rev: string) => git(bare, 'rev-parse', `${rev}^`),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

describe('/deprecate and /undeprecate through the App', () => {
  let repo: ReturnType<typeof makeRepo>;
  let workDir: string;
  let gh: FakeGitHub;
  let queue: InProcessQueue;
  let app: AppServer;
  let commentId = 7000;
  beforeEach(async () => {
    repo = makeRepo();
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    gh = new FakeGitHub('Codertocat', 'Hello-World', repo.bare);
    gh.addPull({ number: 2, head: repo.pr, author: 'carol', mergeable_state: 'blocked' });
    queue = new InProcessQueue();
    app = await startAppServer(gh, { queue, workDir });
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
    rmSync(workDir, { recursive: true, force: true });
  });

  async function send(login: string, body: string): Promise<number> {
    const id = ++commentId;
    const payload = issueCommentPayload({ bare: repo.bare, number: 2, id, login, body, at: gh.tick() });
    expect(await app.send('issue_comment', payload, `d-${id}`)).toBe(200);
    await queue.onIdle();
    return id;
  }
  const reactionsTo = (id: number) => gh.reactions.filter((r) => r.comment === id).map((r) => r.content);
  const lastReply = () =>
    gh
      .botComments(2)
      .filter((c) => readState(c.body) === undefined)
      .at(-1)?.body;

  // One repository and mirror for the whole story: refusals first, which must write
  // nothing, then the owner's edit. Five comments, two of them checked in full (the App
  // runs every check on the edit): allowed 90 s for a busy 2-core machine.
  it("refuses who may not ask and what is unsafe or pointless, then writes the owner's deprecation onto the branch", async () => {
    const carol = await send('carol', '/deprecate package foo');
    expect(reactionsTo(carol)).toEqual(['confused']);
    expect(lastReply()).toContain('only the owners of what it changes or a maintainer may ask for it');
    expect(gh.refUpdates).toEqual([]);

    const head = await send('alice', '/deprecate bundle foo.v1.0.2');
    expect(reactionsTo(head)).toEqual(['confused']);
    expect(lastReply()).toContain(
      '`/deprecate`: `foo.v1.0.2 is the only head of foo\'s default channel "stable" in catalogs/v4.21: classic OLM installs it on every new Subscription without a channel',
    );
    const undo = await send('alice', '/undeprecate channel foo/stable');
    expect(reactionsTo(undo)).toEqual(['confused']);
    expect(lastReply()).toContain(
      '`/undeprecate`: `channel stable of package foo is not deprecated in catalogs/v4.21: there is no olm.deprecations entry to remove',
    );
    const bad = await send('alice', '/deprecate operator foo');
    expect(reactionsTo(bad)).toEqual(['confused']);
    expect(lastReply()).toContain('usage: `/deprecate <bundle|channel|package> <name> [-- message]`');
    expect(gh.refUpdates).toEqual([]);

    const bob = await send('bob', '/deprecate bundle foo.v1.0.0 -- Broken upgrade; use 1.0.2.');
    expect(reactionsTo(bob), lastReply()).toEqual(['+1']);
    expect(gh.refUpdates.map((u) => u.ref)).toEqual(['pr-2']);
    const pushed = gh.refUpdates[0]!.sha;
    expect(repo.parent(pushed)).toBe(repo.pr); // on top of the branch, no force
    expect(repo.show(pushed, `${ROOT}/catalog.yaml`)).toBe(
      CATALOG +
        [
          '---',
          'schema: olm.deprecations',
          'package: foo',
          'entries:',
          '  - reference:',
          '      schema: olm.bundle',
          '      name: foo.v1.0.0',
          '    message: Broken upgrade; use 1.0.2.',
        ].join('\n'),
    );
    expect(lastReply()).toContain(`Pushed ${pushed.slice(0, 12)} to this pull request's branch \`pr-2\`.`);
    expect(lastReply()).toContain('+      name: foo.v1.0.0');
  }, 90_000);
});
