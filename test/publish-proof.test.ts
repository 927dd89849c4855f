// Proof of publication (docs/publishing.md), through the real Probot server with signed
// webhooks against the fake GitHub API server and a real docker-registry on 127.0.0.1: the
// release comment names each catalog's image with its digest (one per merge, edited on a
// re-run); a merge published while the registry was down is found by the watchdog and
// published once it is back; `catalog-bot verify-published` against the pushed image; every
// tag read back after a push.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppOptions } from '../src/app.js';
import { AppMetrics } from '../src/metrics.js';
import { layerFromFiles } from '../src/publish/layer.js';
import { OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST } from '../src/publish/oci.js';
import { TagMismatchError, verifyTags } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { metricsServer } from '../src/server.js';
import { pushPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { cliCommand } from './helpers/cli.js';
import { freePort, until } from './helpers/fleet.js';
import { GitHubServer, type ServerRepo } from './helpers/github-server.js';
import { gitAt, startPublishingApp, type PublishingApp } from './helpers/publish-origin.js';
import {
  haveRegistryTools,
  jsonBlob,
  manifestBlob,
  startProxy,
  type RunningRegistry,
} from './helpers/registry.js';

const verifyPublished = cliCommand('verify-published');
const FULL = 'proof/catalog';

describe.skipIf(!haveRegistryTools)('proof of publication through the App server', () => {
  let publishing: PublishingApp;
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

  const image = () => `${registry.host}/proof`;

  /** A pull request branch off main with these files; the fake GitHub knows it as `number`. */
  function openPull(number: number, files: Record<string, string>): string {
    gitAt(work, 'fetch', '-q', bare, 'main');
    gitAt(work, 'checkout', '-q', '-B', `pr-${number}`, 'FETCH_HEAD');
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(work, path, '..'), { recursive: true });
      writeFileSync(join(work, path), text);
    }
    gitAt(work, 'add', '-A');
    gitAt(work, 'commit', '-qm', `change ${number}`);
    const head = gitAt(work, 'rev-parse', 'HEAD');
    gitAt(work, 'push', '-q', bare, `HEAD:refs/heads/pr-${number}`);
    gh.addPull(repo, { number, head, author: 'alice' });
    return head;
  }

  /** Merge on the fake GitHub (a real merge commit in the bare repository) and deliver the push. */
  async function mergeAndPush(number: number): Promise<string> {
    const before = gitAt(bare, 'rev-parse', 'main');
    const sha = await publishing.merge(number);
    await pushDelivery(before, sha);
    return sha;
  }

  async function pushDelivery(before: string, after: string): Promise<void> {
    expect(await app.send('push', pushPayload(repo, before, after), `proof-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  const publishRuns = (sha: string) => gh.runsFor(FULL, sha, 'catalog-bot/publish');
  const digestOf = async (tag: string) =>
    (await client.headManifest({ registry: registry.host, repository: 'proof' }, tag))?.digest;
  const releaseComments = (issue: number) =>
    gh.comments.filter((c) => c.issue === issue && c.body.startsWith('<!-- catalog-bot:release '));

  /**
   * Another App on the same fake GitHub and registry, with its own mirrors, whose publish
   * watchdog looks back an hour as soon as it starts (and reconciles no sooner than hourly).
   */
  async function startWatchdogApp(mirrors: string, options: Partial<AppOptions> = {}) {
    const watchQueue = new InProcessQueue();
    const watchApp = await startAppServer(
      gh,
      {
        queue: watchQueue,
        workDir: join(dir, mirrors),
        registry: () => client,
        reconcileEveryMs: 3_600_000,
        publishWatchdog: { afterMs: 0, lookBackMs: 3_600_000, maxCommits: 10 },
        ...options,
      },
      { CATALOG_BOT_WRITE_PACING: 'off' },
    );
    return { queue: watchQueue, app: watchApp };
  }

  beforeAll(async () => {
    publishing = await startPublishingApp({
      image: 'proof',
      id: 990_017,
      roots: ['catalogs/v4.21'],
      // One try after a refused connection, so a registry that is down fails fast.
      client: { retries: 1, backoffMs: 50 },
      env: { CATALOG_BOT_WRITE_PACING: 'off' },
    });
    ({ dir, registry, client, bare, work, gh, repo, queue, app } = publishing);
  }, 60_000);

  afterAll(() => publishing?.stop());

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
    await pushDelivery(gitAt(bare, 'rev-parse', 'main^'), merge);
    expect(publishRuns(merge).map((r) => r.conclusion)).toEqual(['success', 'success']);
    expect(patches()).toBe(before);
    // A comment that says something else (an older run's) is edited, not duplicated.
    comment!.body = `<!-- catalog-bot:release ${merge} -->\nstale`;
    await pushDelivery(gitAt(bare, 'rev-parse', 'main^'), merge);
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
    const { queue: q2, app: second } = await startWatchdogApp('mirrors-2', { metrics });
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
    gitAt(work, 'fetch', '-q', bare, 'main');
    gitAt(work, 'checkout', '-q', '-B', 'pr-5', 'FETCH_HEAD');
    const ahead = new Date(Date.now() + 365 * 86_400_000).toISOString();
    for (let i = 0; i < 12; i++) {
      writeFileSync(join(work, 'README.md'), `docs ${i}\n`);
      gitAt(work, 'add', '-A');
      execFileSync(
        'git',
        ['-C', work, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-qm', `docs ${i}`],
        {
          env: { ...process.env, GIT_AUTHOR_DATE: ahead, GIT_COMMITTER_DATE: ahead },
        },
      );
    }
    const head = gitAt(work, 'rev-parse', 'HEAD');
    gitAt(work, 'push', '-q', bare, `HEAD:refs/heads/pr-5`);
    gh.addPull(repo, { number: 5, head, author: 'alice' });
    const later = await mergeAndPush(5);
    expect(publishRuns(later)).toEqual([]);

    await registry.resume();
    const { queue: q3, app: third } = await startWatchdogApp('mirrors-3');
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
    const config = jsonBlob(OCI_CONFIG, { rootfs: { diff_ids: [layer.diffId] } });
    const layerDescriptor = { mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size };
    const manifest = (annotation: string) =>
      manifestBlob(config.descriptor, [layerDescriptor], { which: annotation });
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
