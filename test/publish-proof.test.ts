// Proof of publication (docs/publishing.md), through the real Probot server with signed
// webhooks against the fake GitHub API server and a real docker-registry on 127.0.0.1: the
// release comment names each catalog's image with its digest (one per merge, edited on a
// re-run); a merge published while the registry was down is found by the watchdog and
// published once it is back; `catalog-bot verify-published` against the pushed image; every
// tag read back after a push.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppMetrics } from '../src/metrics.js';
import { layerFromFiles } from '../src/publish/layer.js';
import { blob, OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST } from '../src/publish/oci.js';
import { TagMismatchError, verifyTags } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { metricsServer } from '../src/server.js';
import { startAppServer, type AppServer } from './helpers/app-server.js';
import { cliCommand } from './helpers/cli.js';
import { freePort, until } from './helpers/fleet.js';
import { webhookExample } from './helpers/github.js';
import { GitHubServer, type ServerRepo } from './helpers/github-server.js';
import {
  haveRegistryTools,
  pushTestBase,
  startProxy,
  startRegistry,
  type RunningRegistry,
} from './helpers/registry.js';

const validCatalog = fileURLToPath(new URL('./fixtures/valid-catalog/', import.meta.url));
const verifyPublished = cliCommand('verify-published');
const FULL = 'proof/catalog';

describe.skipIf(!haveRegistryTools)('proof of publication through the App server', () => {
  let dir: string;
  let registry: RunningRegistry;
  let client: RegistryClient;
  let gh: GitHubServer;
  let repo: ServerRepo;
  let work: string;
  let bare: string;
  let app: AppServer;
  let queue: InProcessQueue;
  let delivery = 0;

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  const image = () => `${registry.host}/proof`;

  /** A pull request branch off main with these files; the fake GitHub knows it as `number`. */
  function openPull(number: number, files: Record<string, string>): string {
    git(work, 'fetch', '-q', bare, 'main');
    git(work, 'checkout', '-q', '-B', `pr-${number}`, 'FETCH_HEAD');
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(work, path, '..'), { recursive: true });
      writeFileSync(join(work, path), text);
    }
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', `change ${number}`);
    const head = git(work, 'rev-parse', 'HEAD');
    git(work, 'push', '-q', bare, `HEAD:refs/heads/pr-${number}`);
    gh.addPull(repo, { number, head, author: 'alice' });
    return head;
  }

  /** Merge on the fake GitHub (a real merge commit in the bare repository) and deliver the push. */
  async function mergeAndPush(number: number): Promise<string> {
    const before = git(bare, 'rev-parse', 'main');
    const res = await fetch(`${gh.baseUrl}/repos/${FULL}/pulls/${number}/merge`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merge_method: 'merge' }),
    });
    const { sha } = (await res.json()) as { sha: string };
    await pushDelivery(before, sha);
    return sha;
  }

  async function pushDelivery(before: string, after: string): Promise<void> {
    const payload = webhookExample('push');
    Object.assign(payload, {
      ref: 'refs/heads/main',
      before,
      after,
      deleted: false,
      installation: { id: 4242 },
    });
    Object.assign(payload.repository, {
      id: repo.id,
      name: repo.name,
      full_name: FULL,
      clone_url: bare,
      html_url: `https://github.com/${FULL}`,
      default_branch: 'main',
    });
    payload.repository.owner.login = repo.owner;
    expect(await app.send('push', payload, `proof-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  const publishRuns = (sha: string) => gh.runsFor(FULL, sha, 'catalog-bot/publish');
  const digestOf = async (tag: string) =>
    (await client.headManifest({ registry: registry.host, repository: 'proof' }, tag))?.digest;
  const releaseComments = (issue: number) =>
    gh.comments.filter((c) => c.issue === issue && c.body.startsWith('<!-- catalog-bot:release '));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-bot-proof-'));
    registry = await startRegistry();
    // One try after a refused connection, so a registry that is down fails fast.
    client = new RegistryClient({
      insecureHosts: [registry.host],
      privateHosts: ['127.0.0.1'],
      retries: 1,
      backoffMs: 50,
    });
    await pushTestBase(client, { registry: registry.host, repository: 'base', tag: '1' });

    bare = join(dir, 'origin.git');
    work = join(dir, 'work');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    cpSync(validCatalog, join(work, 'catalogs/v4.21'), { recursive: true });
    mkdirSync(join(work, '.github'));
    writeFileSync(
      join(work, '.github/catalog-bot.yml'),
      [
        'catalogs: [catalogs/*]',
        'publish:',
        `  baseImage: ${registry.host}/base:1`,
        '  images:',
        `    - ${registry.host}/proof:{root}`,
        `    - ${registry.host}/proof:{root}-{sha}`,
        '',
      ].join('\n'),
    );
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', 'base');
    git(work, 'push', '-q', bare, 'HEAD:refs/heads/main');

    gh = await GitHubServer.start();
    repo = gh.addRepo({ owner: 'proof', name: 'catalog', id: 990_017, bare });
    queue = new InProcessQueue();
    app = await startAppServer(
      gh,
      { queue, workDir: join(dir, 'mirrors'), registry: () => client },
      { CATALOG_BOT_WRITE_PACING: 'off' },
    );
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    await gh?.close();
    client?.close();
    await registry?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('comments once on the merged pull request with each image reference and digest; a re-run edits that comment', async () => {
    openPull(1, { 'catalogs/v4.21/.indexignore': '# one\n' });
    const merge = await mergeAndPush(1);
    expect(publishRuns(merge).at(-1)?.output?.title).toBe('2 tags pushed');
    expect(publishRuns(merge).at(-1)?.conclusion).toBe('success');
    const digest = await digestOf('v4.21');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await digestOf(`v4.21-${merge.slice(0, 12)}`)).toBe(digest);

    const [comment, ...more] = releaseComments(1);
    expect(more).toEqual([]);
    expect(comment!.user.login).toBe('catalog-bot[bot]');
    expect(comment!.body).toContain(merge);
    expect(comment!.body).toContain(`| \`catalogs/v4.21\` | \`${image()}:v4.21@${digest}\` |`);
    expect(comment!.body).toContain(`\`${image()}:v4.21-${merge.slice(0, 12)}@${digest}\``);

    // Someone pastes the marker into a comment of their own: it is not the bot's to edit.
    gh.comments.push({
      id: 1,
      repo: FULL,
      issue: 1,
      body: `<!-- catalog-bot:release ${merge} -->\nforged`,
      user: { login: 'mallory', type: 'User' },
    });
    // The same push delivered again (a re-run): nothing new, so no write to the comment.
    const patches = () =>
      gh.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/issues/comments/')).length;
    const before = patches();
    await pushDelivery(git(bare, 'rev-parse', 'main^'), merge);
    expect(publishRuns(merge).map((r) => r.conclusion)).toEqual(['success', 'success']);
    expect(patches()).toBe(before);
    // A comment that says something else (an older run's) is edited, not duplicated.
    comment!.body = `<!-- catalog-bot:release ${merge} -->\nstale`;
    await pushDelivery(git(bare, 'rev-parse', 'main^'), merge);
    expect(patches()).toBe(before + 1);
    expect(releaseComments(1).filter((c) => c.user.type === 'Bot')).toHaveLength(1);
    expect(comment!.body).toContain(`${image()}:v4.21@${digest}`);
    expect(gh.comments.find((c) => c.id === 1)!.body).toContain('forged');
  }, 120_000);

  it('verify-published: the pushed image and its root are the same (0); a changed root differs, named (1)', async () => {
    const root = join(dir, 'verify', 'v4.21');
    mkdirSync(root, { recursive: true });
    // The root as merged: read from the merge commit's tree.
    const tar = execFileSync('git', ['-C', bare, 'archive', 'main', 'catalogs/v4.21']);
    execFileSync('tar', ['-x', '-C', join(dir, 'verify'), '--strip-components=1'], { input: tar });
    const env = { REGISTRY_INSECURE_HOSTS: registry.host, REGISTRY_PRIVATE_HOSTS: registry.host };
    const run = async (args: string[]) => {
      const out = new PassThrough();
      const err = new PassThrough();
      const code = await verifyPublished(args, out, err, env);
      return { code, out: String(out.read() ?? ''), err: String(err.read() ?? '') };
    };
    const same = await run([root, '--image', `${image()}:v4.21`]);
    expect(same.err).toBe('');
    expect(same.code).toBe(0);
    expect(same.out).toMatch(/serves the same catalog .* 1 packages, 1 channels, 2 bundles/);

    // A channel the image does not have, and a bundle whose edge changed.
    const catalog = join(root, 'example-operator/catalog.yaml');
    writeFileSync(
      catalog,
      readFileSync(catalog, 'utf8').replace('    replaces: example-operator.v1.0.0\n', '') +
        '---\nschema: olm.channel\npackage: example-operator\nname: fast\nentries:\n  - name: example-operator.v1.1.0\n',
    );
    const changed = await run([root, '--image', `${image()}:v4.21`, '--format', 'json']);
    expect(changed.code).toBe(1);
    const report = JSON.parse(changed.out) as { same: boolean; differences: string[]; digest: string };
    expect(report.same).toBe(false);
    expect(report.digest).toBe(await digestOf('v4.21'));
    expect(report.differences).toEqual([
      'package example-operator: channels only in the root: fast',
      'package example-operator, channel stable, entry example-operator.v1.1.0: skipRange >=0.9.0 <1.1.0 in the root, replaces example-operator.v1.0.0; skipRange >=0.9.0 <1.1.0 in the image',
    ]);

    // No such image: an error, exit 2.
    const missing = await run([root, '--image', `${image()}:no-such-tag`]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('cannot read');

    // Behind a registry that wants credentials: REGISTRY_USERNAME/REGISTRY_PASSWORD go to the
    // image's host only when the operator lists it in REGISTRY_CREDENTIAL_HOSTS.
    const guarded = await startProxy(registry.port, { auth: 'basic', username: 'u', password: 'p' });
    try {
      const through = (extra: NodeJS.ProcessEnv) =>
        verifyPublished(
          [root, '--image', `${guarded.host}/proof:v4.21`],
          new PassThrough(),
          new PassThrough(),
          {
            REGISTRY_INSECURE_HOSTS: guarded.host,
            REGISTRY_PRIVATE_HOSTS: guarded.host,
            REGISTRY_USERNAME: 'u',
            REGISTRY_PASSWORD: 'p',
            ...extra,
          },
        );
      expect(await through({})).toBe(2);
      expect(guarded.log.every((r) => r.status === 401)).toBe(true);
      expect(await through({ REGISTRY_CREDENTIAL_HOSTS: guarded.host })).toBe(1); // read, and still the changed root
    } finally {
      await guarded.stop();
    }
  }, 60_000);

  it('a merge published while the registry was down is found by the watchdog and published once it is back', async () => {
    openPull(2, { 'catalogs/v4.21/.indexignore': '# two\n' });
    await registry.pause();
    const merge = await mergeAndPush(2);
    const failed = publishRuns(merge).at(-1)!;
    expect(failed.conclusion).toBe('failure');
    expect(JSON.stringify(failed.output)).toMatch(/cannot reach registry/);
    expect(releaseComments(2)).toEqual([]);
    // A later merge that changes no catalog: the failed merge is no longer the branch head.
    openPull(3, { 'README.md': 'docs\n' });
    const later = await mergeAndPush(3);
    expect(publishRuns(later)).toEqual([]);

    await registry.resume();
    // Reconciliation runs when the App starts: a second replica, with the watchdog's time
    // set to nothing so the test need not wait (the default is 30 minutes).
    const metrics = new AppMetrics({ processMetrics: false });
    const metricsPort = await freePort();
    const scrape = metricsServer(metrics, { CATALOG_BOT_METRICS_PORT: String(metricsPort) })!;
    const asked = gh.requests.length;
    const q2 = new InProcessQueue();
    const second = await startAppServer(
      gh,
      {
        queue: q2,
        workDir: join(dir, 'mirrors-2'),
        registry: () => client,
        metrics,
        reconcileEveryMs: 3_600_000,
        publishWatchdog: { afterMs: 0, lookBackMs: 3_600_000, maxCommits: 10 },
      },
      { CATALOG_BOT_WRITE_PACING: 'off' },
    );
    try {
      expect(await until(() => publishRuns(merge).at(-1)?.conclusion === 'success', 60_000, 100)).toBe(true);
      await q2.onIdle();
      const done = publishRuns(merge).at(-1)!;
      expect(done.output?.summary).toContain("Retried by catalog-bot's publish watchdog");
      expect(done.output?.summary).toContain('the last catalog-bot/publish run failed');
      const pinned = await digestOf(`v4.21-${merge.slice(0, 12)}`);
      expect(pinned).toMatch(/^sha256:/);
      expect(releaseComments(2)).toHaveLength(1);
      expect(releaseComments(2)[0]!.body).toContain(`${image()}:v4.21-${merge.slice(0, 12)}@${pinned}`);
      // The merge that changed no catalog got no publish run, and the first merge (published) was left alone.
      expect(publishRuns(later)).toEqual([]);
      // What the pass cost: one page of commits, one comparison (the head, which has no run;
      // the failed merge's run says it changed a catalog, the repository's first commit is no merge).
      const pass = gh.requests.slice(asked).map((r) => r.path.split('?')[0]!);
      expect(pass.filter((p) => p.endsWith('/commits'))).toHaveLength(1);
      expect(pass.filter((p) => p.includes('/compare/'))).toHaveLength(1);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/^catalog_bot_publish_watchdog_retries_total 1$/m);
      expect(text).toMatch(/^catalog_bot_publish_overdue_commits 1$/m);
    } finally {
      await second.stop();
      scrape.close();
    }
  }, 180_000);

  it('the watchdog finds a failed merge behind a pull request of many commits dated ahead', async () => {
    openPull(4, { 'catalogs/v4.21/.indexignore': '# four\n' });
    await registry.pause();
    const merge = await mergeAndPush(4);
    expect(publishRuns(merge).at(-1)?.conclusion).toBe('failure');
    // The next pull request: twelve commits whose dates its author set a year ahead. GitHub
    // lists commits by date, so they fill the watchdog's page (10) before the failed merge.
    git(work, 'fetch', '-q', bare, 'main');
    git(work, 'checkout', '-q', '-B', 'pr-5', 'FETCH_HEAD');
    const ahead = new Date(Date.now() + 365 * 86_400_000).toISOString();
    for (let i = 0; i < 12; i++) {
      writeFileSync(join(work, 'README.md'), `docs ${i}\n`);
      git(work, 'add', '-A');
      execFileSync(
        'git',
        ['-C', work, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-qm', `docs ${i}`],
        {
          env: { ...process.env, GIT_AUTHOR_DATE: ahead, GIT_COMMITTER_DATE: ahead },
        },
      );
    }
    const head = git(work, 'rev-parse', 'HEAD');
    git(work, 'push', '-q', bare, `HEAD:refs/heads/pr-5`);
    gh.addPull(repo, { number: 5, head, author: 'alice' });
    const later = await mergeAndPush(5);
    expect(publishRuns(later)).toEqual([]);

    await registry.resume();
    const q3 = new InProcessQueue();
    const third = await startAppServer(
      gh,
      {
        queue: q3,
        workDir: join(dir, 'mirrors-3'),
        registry: () => client,
        reconcileEveryMs: 3_600_000,
        publishWatchdog: { afterMs: 0, lookBackMs: 3_600_000, maxCommits: 10 },
      },
      { CATALOG_BOT_WRITE_PACING: 'off' },
    );
    try {
      // Before, the watchdog saw only the head: the failed merge stayed unpublished, unseen.
      expect(await until(() => publishRuns(merge).at(-1)?.conclusion === 'success', 30_000, 100)).toBe(true);
      await q3.onIdle();
      expect(publishRuns(merge).at(-1)!.output?.summary).toContain(
        "Retried by catalog-bot's publish watchdog",
      );
    } finally {
      await third.stop();
    }
  }, 180_000);

  it('reading tags back: a tag that names another image fails the publish with both digests', async () => {
    const ref = { registry: registry.host, repository: 'readback' };
    const layer = await layerFromFiles(new Map([['a.json', Buffer.from('{}')]]));
    const config = blob(OCI_CONFIG, Buffer.from(JSON.stringify({ rootfs: { diff_ids: [layer.diffId] } })));
    const manifest = (annotation: string) =>
      blob(
        OCI_MANIFEST,
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: OCI_MANIFEST,
            config: config.descriptor,
            layers: [{ mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size }],
            annotations: { which: annotation },
          }),
        ),
      );
    await client.ensureBlob(ref, layer.digest, layer.data);
    await client.ensureBlob(ref, config.descriptor.digest, config.data);
    const [a, b] = [manifest('a'), manifest('b')];
    await client.putManifest(ref, 'moving', OCI_MANIFEST, b.data); // someone else wrote the tag
    const target = { ...ref, tag: 'moving' };
    await verifyTags(client, [target], b.descriptor.digest);
    const error = await verifyTags(client, [target], a.descriptor.digest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TagMismatchError);
    expect(String(error)).toContain(
      `${registry.host}/readback:moving reads back as ${b.descriptor.digest}, not the pushed ${a.descriptor.digest}`,
    );
    const gone = await verifyTags(client, [{ ...ref, tag: 'never-pushed' }], a.descriptor.digest).catch(
      (e: unknown) => e,
    );
    expect(String(gone)).toContain('readback:never-pushed cannot be read back');
  }, 30_000);
});
