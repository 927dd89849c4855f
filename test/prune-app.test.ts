// The pruning guard end to end through the App (docs/publishing.md, "Pruning guard"): a real
// docker-registry on 127.0.0.1 holding the catalog image catalog-bot built from the base
// branch, a real bare repository, signed webhooks to Probot's server on 127.0.0.1, GitHub's
// API as a stateful fake.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitTreeSource, loadCatalog } from '../src/catalog/index.js';
import { packageDigests } from '../src/checks/changes.js';
import { readState, stateCommentBody } from '../src/handlers/pr-state.js';
import { publishCatalog } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { fooBundle as bundle, fooChannel, FOO_ROOT as ROOT } from './helpers/foo-repo.js';
import { webhookExample } from './helpers/github.js';
import {
  freePort,
  haveRegistryTools,
  pushTestBase,
  startRegistry,
  type RunningRegistry,
} from './helpers/registry.js';

/** foo's stable channel of `stable`, and (unless `fast` is false) a fast channel holding 1.0.1. */
const channels = (stable: string[], fast = true) =>
  fooChannel(stable) +
  (fast ? `---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.0.1\n` : '');

// Each comment here runs the App's flow for real (mirror, check worker, registry), several
// per test: a little over the default timeout on a loaded machine.
describe.skipIf(!haveRegistryTools)('catalog-bot/prune through the App', { timeout: 120_000 }, () => {
  let registry: RunningRegistry;
  let client: RegistryClient;
  /** A port nothing listens on: a registry that is down. */
  let downHost: string;
  let root: string;
  let work: string;
  let bare: string;
  let workDir: string;
  let gh: FakeGitHub;
  let queue: InProcessQueue;
  let app: AppServer;
  let delivery = 0;
  let commentId = 9000;
  let image = 'catalog';
  let tests = 0;
  const ids: Record<string, number> = { alice: 11, bob: 12, carol: 13, dave: 14 };

  beforeAll(async () => {
    registry = await startRegistry();
    downHost = `127.0.0.1:${await freePort()}`;
    client = new RegistryClient({ insecureHosts: [registry.host, downHost], privateHosts: ['127.0.0.1'] });
    await pushTestBase(client, { registry: registry.host, repository: 'base', tag: '1' });
  });
  afterAll(async () => {
    client.close();
    await registry.stop();
  });

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    }).trim();

  function commit(files: Record<string, string | null>): string {
    for (const [path, text] of Object.entries(files)) {
      if (text === null) rmSync(join(work, path));
      else {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), text);
      }
    }
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', 'commit');
    return git(work, 'rev-parse', 'HEAD');
  }

  const config = (host: string) => `catalogs: [catalogs/*]
maintainers: [alice]
ownership:
  ownersFiles: true
  packageOwners: operators/{package}/OWNERS
  newPackages: maintainers
publish:
  baseImage: ${registry.host}/base:1
  images:
    - ${host}/${image}:{root}-{sha}
    - ${host}/${image}:{root}
images:
  unverifiableRegistries: [quay.io]
`;

  /**
   * main: foo with 1.0.0 and 1.0.1 (channels stable and fast), published; the pull request
   * (carol's) drops foo.v1.0.0, and also edits the config to point the guard at an empty
   * repository of the registry.
   */
  async function setUp(host = registry.host): Promise<{ base: string; head: string }> {
    const base = commit({
      '.github/catalog-bot.yml': config(host),
      'operators/foo/OWNERS': 'approvers: [bob]\n',
      [`${ROOT}/catalog.yaml`]: channels(['1.0.0', '1.0.1']),
      [`${ROOT}/bundle-1.0.0.yaml`]: bundle('1.0.0'),
      [`${ROOT}/bundle-1.0.1.yaml`]: bundle('1.0.1'),
    });
    git(work, 'push', '-q', bare, `${base}:refs/heads/main`);
    // What a merge of main published: the image catalog-bot builds, without opm's cache.
    await publishCatalog({
      source: new GitTreeSource(bare, base, 'catalogs/v4.21'),
      root: 'catalogs/v4.21',
      tags: [`${registry.host}/${image}:{root}`],
      baseImage: `${registry.host}/base:1`,
      client,
      opmCache: false,
    });
    const head = commit({
      '.github/catalog-bot.yml': config(host).replaceAll(`/${image}:`, '/elsewhere:'),
      [`${ROOT}/catalog.yaml`]: channels(['1.0.1']),
      [`${ROOT}/bundle-1.0.0.yaml`]: null,
    });
    git(work, 'push', '-q', bare, `${head}:refs/pull/2/head`, `${head}:refs/heads/pr-2`);
    gh.addPull({ number: 2, head, author: 'carol', mergeable_state: 'blocked' });
    return { base, head };
  }

  beforeEach(async () => {
    image = `catalog-${++tests}`;
    root = mkdtempSync(join(tmpdir(), 'catalog-bot-prune-'));
    work = join(root, 'work');
    bare = join(root, 'origin.git');
    workDir = join(root, 'mirrors');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
    gh.permissions.set('dave', 'write');
    queue = new InProcessQueue();
    app = await startAppServer(gh, { queue, workDir, registry: () => client });
  });
  afterEach(async () => {
    await app.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function opened() {
    const payload = webhookExample('pull_request', 'opened');
    payload.installation = { id: 4242 };
    payload.repository.clone_url = bare;
    payload.number = payload.pull_request.number = 2;
    payload.pull_request.user.login = gh.pulls.get(2)!.author;
    payload.pull_request.head.sha = gh.pulls.get(2)!.head;
    expect(await app.send('pull_request', payload, `t-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  async function comment(login: string, body: string, action: 'created' | 'deleted' = 'created') {
    const id = action === 'created' ? ++commentId : commentId;
    const payload = issueCommentPayload({
      bare,
      number: 2,
      id,
      login,
      userId: ids[login],
      body,
      at: gh.tick(),
      action,
    });
    expect(await app.send('issue_comment', payload, `t-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  const pruneRun = (sha: string) => gh.runsFor(sha, 'catalog-bot/prune').at(-1);
  const lastReply = () =>
    gh
      .botComments(2)
      .filter((c) => readState(c.body) === undefined)
      .at(-1)?.body ?? '';
  const allows = () =>
    gh
      .botComments(2)
      .map((c) => readState(c.body))
      .find(Boolean)?.allowPrunes ?? [];

  it('fails a pull request that prunes a published bundle; only its owner can allow it, and only that bundle', async () => {
    const { head } = await setUp();
    await opened();
    // The base config's tag is compared with, not the one the pull request writes.
    let run = pruneRun(head)!;
    expect(run.conclusion).toBe('failure');
    expect(run.output?.summary).toContain(`${registry.host}/${image}:v4.21`);
    expect(run.output?.summary).not.toContain('elsewhere');
    expect(run.output?.summary).toContain('bundle foo.v1.0.0 of package foo');
    expect(run.output?.summary).toContain('catalogs/v4.21');
    expect(run.output?.summary).not.toContain('foo.v1.0.1 of package');

    // An owner's allow for a bundle the change does not remove allows nothing.
    await comment('bob', '/allow-prune foo.v1.0.1');
    expect(lastReply()).toContain('does not remove it from a published catalog');
    expect(allows()).toEqual([]);

    // Someone who does not own foo (write access is not ownership) is told who can.
    await comment('dave', '/allow-prune foo.v1.0.0');
    expect(lastReply()).toContain('only the owners of package foo or a maintainer may allow');
    expect(lastReply()).toContain('@bob');
    expect(allows()).toEqual([]);
    expect(pruneRun(head)!.conclusion).toBe('failure');

    // foo's owner allows it: recorded, and the checks run again and pass.
    await comment('bob', '/allow-prune foo.v1.0.0');
    expect(allows()).toMatchObject([{ login: 'bob', target: 'foo.v1.0.0', sha: head }]);
    run = pruneRun(head)!;
    expect(run.conclusion).toBe('success');
    expect(run.output?.summary).toContain('@bob');

    // bob deletes his comment: the allow goes with it.
    await comment('bob', '/allow-prune foo.v1.0.0', 'deleted');
    expect(allows()).toEqual([]);
    expect(pruneRun(head)!.conclusion).toBe('failure');
  });

  it('an allow a non-owner managed to get recorded counts for nothing; the check decides ownership again', async () => {
    const { head } = await setUp();
    await opened();
    // The digest of foo at head, as an owner's allow records it.
    const loaded = await loadCatalog(new GitTreeSource(bare, head, 'catalogs/v4.21'), { blobDigests: true });
    const digest = packageDigests(loaded.config).get('foo')!;
    expect(digest).toBeTruthy();
    // A status record with an allow by `login`, as if an older bot had written it.
    const record = (login: string) => {
      const status = gh.botComments(2).find((c) => readState(c.body))!;
      // An older bot's record: no impact section (docs/impact.md) to keep.
      const { impact: _impact, ...state } = readState(status.body)!;
      status.body = stateCommentBody({
        ...state,
        allowPrunes: [
          {
            login,
            comment: 1,
            sha: head,
            target: 'foo.v1.0.0',
            subjects: { 'package foo (catalogs/v4.21)': digest },
          },
        ],
      });
    };
    record('carol');
    await comment('carol', '/retest');
    expect(pruneRun(head)!.conclusion).toBe('failure');
    // The same record in bob's name counts: only who wrote it differs.
    record('bob');
    await comment('carol', '/retest');
    expect(pruneRun(head)!.conclusion).toBe('success');
  });

  it('when the registry cannot be reached, what the change removes from the base still fails (the reason shown)', async () => {
    const { head } = await setUp(downHost);
    await opened();
    const run = pruneRun(head)!;
    // Neutral would let the removal merge whenever the image cannot be read just then.
    expect(run.conclusion).toBe('failure');
    expect(run.output?.summary).toMatch(/the base's catalog stands in: 1 removed \(1 not allowed\)/);
    expect(run.output?.summary).toContain(`${downHost}/${image}:v4.21`);
    expect(run.output?.summary).toMatch(/not compared: .*127\.0\.0\.1/);
  });
});
