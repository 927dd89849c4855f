// `/deprecate` and `/undeprecate` end to end through the App: Probot's server on 127.0.0.1
// with signed webhooks, a real bare repository, the real mirror and checks, GitHub's API as a
// small stateful fake (nock). The edit is checked
// as the commenter's own change and written like `/promote` (docs/deprecate.md).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAppHarness, type AppHarness } from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';
import {
  fooBundle as bundle,
  fooChannel,
  fooConfig,
  FOO_BASE_VERSIONS,
  FOO_OWNERS,
  FOO_ROOT as ROOT,
  WorkRepo,
} from './helpers/foo-repo.js';

// foo's channel with a hand-written comment: the edit must leave the file as it is.
const CATALOG = fooChannel(FOO_BASE_VERSIONS).replace('---\n', "---\n# foo's package and channel\n");

function makeRepo() {
  const repo = new WorkRepo('catalog-bot-deprecate-');
  repo.commit('base', {
    '.github/catalog-bot.yml': fooConfig(),
    [FOO_OWNERS]: 'approvers: [bob]\n',
    'README.md': 'catalog\n',
    [`${ROOT}/catalog.yaml`]: CATALOG,
    [`${ROOT}/bundle-1.0.0.yaml`]: bundle('1.0.0'),
    [`${ROOT}/bundle-1.0.1.yaml`]: bundle('1.0.1'),
    [`${ROOT}/bundle-1.0.2.yaml`]: bundle('1.0.2'),
  });
  repo.push(repo.git('rev-parse', 'HEAD'), 'refs/heads/main');
  const pr = repo.commit('notes', { 'README.md': 'catalog, with notes\n' });
  repo.push(pr, 'refs/pull/2/head', 'refs/heads/pr-2');
  return {
    bare: repo.bare,
    pr,
    show: (rev: string, path: string) => repo.show(rev, path),
    parent: (rev: string) => repo.gitIn(repo.bare, 'rev-parse', `${rev}^`),
    cleanup: () => repo.cleanup(),
  };
}

describe('/deprecate and /undeprecate through the App', () => {
  let repo: ReturnType<typeof makeRepo>;
  let gh: FakeGitHub;
  let app: AppHarness;
  beforeEach(async () => {
    repo = makeRepo();
    app = await startAppHarness(repo.bare, [
      { number: 2, head: repo.pr, author: 'carol', mergeable_state: 'blocked' },
    ]);
    gh = app.gh;
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
  });

  const send = (login: string, body: string): Promise<number> => app.comment(2, login, body);
  const reactionsTo = (id: number) => app.reactionsTo(id);
  const lastReply = () => app.lastReply(2);

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
