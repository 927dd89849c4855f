// Publishing after a merge, end to end through the App: a signed push webhook, a real bare
// repository, a real docker-registry on 127.0.0.1, GitHub's API as a stateful fake.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_BATCH_RETARGETS } from '../src/publish/batch.js';
import { RegistryClient } from '../src/publish/registry.js';
import { jobRunner } from '../src/jobs.js';
import { InProcessQueue } from '../src/queue.js';
import { reconcile } from '../src/reconcile.js';
import { checkRunRerunPayload, pushPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { testProbot } from './helpers/github.js';
import {
  catalogOrigin,
  entriesAt,
  entriesInImage,
  gitAt,
  onePackage,
  publishConfig,
  registryWithBase,
  VALID_CATALOG,
} from './helpers/publish-origin.js';
import { haveRegistryTools, type RunningRegistry } from './helpers/registry.js';

describe.skipIf(!haveRegistryTools)('publishing after a merge', () => {
  let registry: RunningRegistry;
  let client: RegistryClient;
  let root: string;
  let bare: string;
  let work: string;
  let workDir: string;
  let gh: FakeGitHub;
  let queue: InProcessQueue;
  let server: AppServer;
  let delivery = 0;
  // Each test pushes to its own repository of the shared registry.
  let image = 'catalog';
  let tests = 0;

  beforeAll(async () => {
    // 127.0.0.1 is internal: listed as private, so that an unreachable port is just that.
    ({ registry, client } = await registryWithBase());
  });
  afterAll(async () => {
    client.close();
    await registry.stop();
  });

  const config = (extra = '') => publishConfig(registry.host, image, extra);

  /** A repository whose main has the valid fixture at catalogs/v4.21; returns commit shas. */
  function commit(message: string, files: Record<string, string> = {}): string {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(work, path, '..'), { recursive: true });
      writeFileSync(join(work, path), text);
    }
    gitAt(work, 'add', '-A');
    gitAt(work, 'commit', '-qm', message, '--allow-empty');
    const sha = gitAt(work, 'rev-parse', 'HEAD');
    gitAt(work, 'push', '-q', bare, 'HEAD:refs/heads/main');
    return sha;
  }

  beforeEach(async () => {
    image = `catalog-${++tests}`;
    root = mkdtempSync(join(tmpdir(), 'catalog-bot-publish-'));
    workDir = join(root, 'mirrors');
    ({ bare, work } = catalogOrigin(root, ['catalogs/v4.21']));
    gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
    queue = new InProcessQueue();
    server = await startAppServer(gh, { queue, workDir, registry: () => client });
  });
  afterEach(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function push(before: string, after: string, ref = 'refs/heads/main') {
    expect(await server.send('push', pushPayload(bare, before, after, ref), `p-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }
  /** Main with `configText` as the config, then `files` merged onto it: that push delivered; the merge's sha. */
  async function mergeOnBase(configText: string, files: Record<string, string>): Promise<string> {
    const base = commit('base', { '.github/catalog-bot.yml': configText });
    const merge = commit('change', files);
    await push(base, merge);
    return merge;
  }
  /**
   * A fresh App's reconciliation (what a restart runs), with its jobs on a queue of its own:
   * each pass resolves to its report once the jobs it queued are done.
   */
  function reconciler() {
    const app = testProbot();
    const q = new InProcessQueue();
    const options = { queue: q, workDir, appSlug: async () => 'catalog-bot', registry: () => client };
    q.start(jobRunner(app, options));
    return async () => {
      const report = await reconcile(app, options);
      await q.onIdle();
      return report;
    };
  }
  const digestOf = async (tag: string) =>
    (await client.headManifest({ registry: registry.host, repository: image }, tag, true))?.digest;
  const publishRun = (sha: string) => gh.runsFor(sha, 'catalog-bot/publish').at(-1);

  it('builds the changed root and pushes every tag, reporting the digest on the commit', async () => {
    const second = await mergeOnBase(config(), { 'catalogs/v4.21/.indexignore': '# part of the image\n' });
    const run = publishRun(second)!;
    expect(run.conclusion).toBe('success');
    const moving = await digestOf('v4.21');
    const pinned = await digestOf(`v4.21-${second.slice(0, 12)}`);
    expect(moving).toMatch(/^sha256:/);
    expect(pinned).toBe(moving);
    expect(run.output?.summary).toContain(moving);
    // "Re-run" on the check publishes that commit again: same content, same digest.
    const rerun = checkRunRerunPayload(bare, 'catalog-bot/publish', second);
    expect(await server.send('check_run', rerun, `p-${++delivery}`)).toBe(200);
    await queue.onIdle();
    expect(gh.runsFor(second, 'catalog-bot/publish').map((r) => r.conclusion)).toEqual([
      'success',
      'success',
    ]);
    expect(await digestOf('v4.21')).toBe(moving);
  });

  it('an older commit never puts an older catalog on a moving tag: its {sha} tag from itself, the moving one from the head', async () => {
    const first = commit('base', { '.github/catalog-bot.yml': config() });
    const older = commit('older', { 'catalogs/v4.21/.indexignore': '# one\n' });
    const newer = commit('newer', { 'catalogs/v4.21/.indexignore': '# two\n' });
    await push(older, newer);
    const newest = await digestOf('v4.21');
    await push(first, older); // arrives late
    expect(await digestOf('v4.21')).toBe(newest);
    const olderDigest = await digestOf(`v4.21-${older.slice(0, 12)}`);
    expect(olderDigest).toMatch(/^sha256:/);
    expect(olderDigest).not.toBe(newest);
    // Its moving tag was built again, from the head then: the run names that commit.
    expect(publishRun(older)!.output?.summary).toContain('has moved past this commit');
    expect(publishRun(older)!.output?.summary).toContain(`were built from \`${newer}\``);
    // Whoever may re-run a check cannot roll the moving tag back: "Re-run" on the older
    // commit's check builds its moving tag from the head again.
    const rerun = checkRunRerunPayload(bare, 'catalog-bot/publish', older);
    expect(await server.send('check_run', rerun, `p-${++delivery}`)).toBe(200);
    await queue.onIdle();
    expect(publishRun(older)!.conclusion).toBe('success');
    expect(await digestOf('v4.21')).toBe(newest);
  });

  // The race behind burst-publish's stale tag (docs/publishing.md, "When main moves during a
  // publish"): #12 lands while #11's job runs, after the job read the head (#11) when it
  // started (`lookup` 2 with batches: the batch's look comes first) and before it asks again
  // for its build. #12 changes the other catalog, so #12's own job never builds #11's.
  it.each([
    { batches: true, lookup: 2 },
    { batches: false, lookup: 1 },
  ])(
    'a merge landing during the job (batches $batches): the moving tag still gets the first merge',
    async ({ batches, lookup }) => {
      // An App of its own: stopping the other one takes the fake's interceptors away.
      await server.stop();
      gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
      queue = new InProcessQueue();
      server = await startAppServer(gh, { queue, workDir, registry: () => client, publishBatches: batches });
      cpSync(VALID_CATALOG, join(work, 'catalogs/v4.20'), { recursive: true });
      const base = commit('base', { '.github/catalog-bot.yml': config() });
      await push('0'.repeat(40), base);
      const before = { v20: await digestOf('v4.20'), v21: await digestOf('v4.21') };
      const first = commit('#11', { 'catalogs/v4.21/pkg-11/catalog.yaml': onePackage('pkg-11', 11) });
      let second = '';
      let lookups = 0;
      gh.onBranch = () => {
        if (++lookups === lookup)
          second = commit('#12', { 'catalogs/v4.20/pkg-12/catalog.yaml': onePackage('pkg-12', 12) });
      };
      await push(base, first);
      gh.onBranch = undefined;
      expect(second, 'the hook merged #12 during the job').not.toBe('');
      await push(first, second);

      expect(publishRun(first)!.conclusion).toBe('success');
      expect(publishRun(second)!.conclusion).toBe('success');
      // Each moving tag holds main's catalog: v4.21 has #11's package, v4.20 #12's.
      const main = gitAt(bare, 'rev-parse', 'main');
      for (const [tag, root, pkg] of [
        ['v4.21', 'catalogs/v4.21', 'pkg-11'],
        ['v4.20', 'catalogs/v4.20', 'pkg-12'],
      ] as const) {
        expect(entriesAt(bare, main, root)).toContain(pkg);
        expect(await entriesInImage(client, `${registry.host}/${image}:${tag}`), tag).toEqual(
          entriesAt(bare, main, root),
        );
      }
      expect(await digestOf('v4.21')).not.toBe(before.v21);
      expect(await digestOf('v4.20')).not.toBe(before.v20);
      // The {sha} tags as before: each merge's build of the catalog it changed, and only those.
      const pinned = (sha: string, tag: string) => `${registry.host}/${image}:${tag}-${sha.slice(0, 12)}`;
      expect(await entriesInImage(client, pinned(first, 'v4.21'))).toEqual(
        entriesAt(bare, first, 'catalogs/v4.21'),
      );
      expect(await entriesInImage(client, pinned(second, 'v4.20'))).toEqual(
        entriesAt(bare, second, 'catalogs/v4.20'),
      );
      const tags = (await (await fetch(`http://${registry.host}/v2/${image}/tags/list`)).json()) as {
        tags: string[];
      };
      expect(tags.tags.sort()).toEqual(
        [
          'v4.20',
          'v4.21',
          `v4.20-${base.slice(0, 12)}`,
          `v4.21-${base.slice(0, 12)}`,
          `v4.21-${first.slice(0, 12)}`,
          `v4.20-${second.slice(0, 12)}`,
        ].sort(),
      );
    },
    60_000,
  );

  // A batch follows the head only so far (MAX_BATCH_RETARGETS moves); when main moves on once
  // more, the batch's roots still get the head's catalog at their moving tags.
  it('a batch that main outruns: the moving tags still get the head catalog', async () => {
    cpSync(VALID_CATALOG, join(work, 'catalogs/v4.20'), { recursive: true });
    const base = commit('base', { '.github/catalog-bot.yml': config() });
    await push('0'.repeat(40), base);
    const first = commit('#11', { 'catalogs/v4.21/pkg-11/catalog.yaml': onePackage('pkg-11', 11) });
    // Every look at the branch during #11's job lands one more merge into the other catalog:
    // the batch moves with the first ones, then takes no more.
    const landed: string[] = [];
    gh.onBranch = () => {
      if (landed.length === MAX_BATCH_RETARGETS + 2) return;
      const k = 12 + landed.length;
      landed.push(commit(`#${k}`, { [`catalogs/v4.20/pkg-${k}/catalog.yaml`]: onePackage(`pkg-${k}`, k) }));
    };
    await push(base, first);
    gh.onBranch = undefined;
    const newest = landed.at(-1)!;
    await push(landed.at(-2)!, newest);

    const main = gitAt(bare, 'rev-parse', 'main');
    expect(main).toBe(newest);
    for (const root of ['catalogs/v4.21', 'catalogs/v4.20']) {
      const tag = root.split('/')[1]!;
      expect(await entriesInImage(client, `${registry.host}/${image}:${tag}`), tag).toEqual(
        entriesAt(bare, main, root),
      );
    }
    expect(entriesAt(bare, main, 'catalogs/v4.21')).toContain('pkg-11');
    for (const sha of [first, ...landed]) expect(publishRun(sha)?.conclusion, sha).toBe('success');
  }, 60_000);

  it('does not publish a catalog that does not validate, and says why', async () => {
    const broken = await mergeOnBase(config(), { 'catalogs/v4.21/bad.json': '{"schema": "olm.package"' });
    const run = publishRun(broken)!;
    expect(run.conclusion).toBe('failure');
    expect(JSON.stringify(run)).toContain('does not validate');
    expect(await digestOf('v4.21')).toBeUndefined();
  });

  it('hands publishing to a workflow in dispatch mode', async () => {
    const second = await mergeOnBase(config('  dispatch: {eventType: catalog-changed}'), {
      'catalogs/v4.21/.indexignore': '# x\n',
    });
    expect(gh.dispatches).toEqual([
      { event_type: 'catalog-changed', client_payload: { sha: second, roots: ['catalogs/v4.21'] } },
    ]);
    expect(publishRun(second)!.conclusion).toBe('success');
    expect(await digestOf('v4.21')).toBeUndefined();
  });

  it('ignores pushes to other branches and changes outside the catalogs', async () => {
    const first = commit('base', { '.github/catalog-bot.yml': config() });
    const docs = commit('docs', { 'README.md': 'docs\n' });
    await push(first, docs);
    await push(first, docs, 'refs/heads/feature');
    expect(gh.checkRuns).toEqual([]);
  });

  it('reconciliation publishes a default branch whose push was missed', async () => {
    commit('base', { '.github/catalog-bot.yml': config() });
    const missed = commit('change', { 'catalogs/v4.21/.indexignore': '# missed\n' });
    const reconcilePass = reconciler();
    expect(await reconcilePass()).toMatchObject({ publishQueued: 1 });
    expect(publishRun(missed)!.conclusion).toBe('success');
    expect(await digestOf(`v4.21-${missed.slice(0, 12)}`)).toMatch(/^sha256:/);
    expect(await reconcilePass()).toMatchObject({ publishQueued: 0 });
  });

  it('reports an unreachable registry as a failed publish, with the reason', async () => {
    const second = await mergeOnBase(config().replaceAll(registry.host, '127.0.0.1:1'), {
      'catalogs/v4.21/.indexignore': '# x\n',
    });
    const failed = publishRun(second)!;
    expect(failed.conclusion).toBe('failure');
    expect(JSON.stringify(failed.output)).toMatch(/cannot reach registry 127\.0\.0\.1:1/);
    // Reconciliation tries a failed publish again later (once per failed run).
    const reconcilePass = reconciler();
    expect(await reconcilePass()).toMatchObject({ publishQueued: 1 });
    expect(gh.runsFor(second, 'catalog-bot/publish').map((r) => r.conclusion)).toEqual([
      'failure',
      'failure',
    ]);
  });
});
