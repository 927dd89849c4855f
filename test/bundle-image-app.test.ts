// The bundle image after a merge, through the App: a signed push webhook for a merge that adds a
// real bundle directory, a real bare repository, a real docker-registry on 127.0.0.1,
// GitHub's API as a stateful fake (as test/publish-job.test.ts). The image lands at the tag
// `bundles.imageTemplate` gives and its digest is reported on the merge commit; a tag that
// already holds another image is left alone and reported.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitTreeSource } from '../src/catalog/fbc/source.js';
import { buildBundleImage, pushBundleImage, readBundleImageFiles } from '../src/publish/bundle-image.js';
import { commitTime } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { checkRunRerunPayload, pushPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { webhookExample } from './helpers/github.js';
import { SHARED_DATA } from './helpers/oracle.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';

const OPERATORS = join(SHARED_DATA, 'real-repo/community-operators-prod/operators');
const PKG = 'jumpstarter-operator';

describe.skipIf(!haveRegistryTools)('the App pushes the bundle image of a merge', () => {
  let root: string;
  let work: string;
  let bare: string;
  let registry: RunningRegistry;
  let client: RegistryClient;
  let gh: FakeGitHub;
  let server: AppServer;
  let queue: InProcessQueue;
  let delivery = 0;

  const git = (...args: string[]) =>
    execFileSync('git', ['-C', work, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  /** Commit the bundle directories (copied from the real repository) and push main. */
  function commit(message: string, versions: string[], files: Record<string, string> = {}): string {
    for (const v of versions)
      cpSync(join(OPERATORS, PKG, v), join(work, 'operators', PKG, v), { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(work, path, '..'), { recursive: true });
      execFileSync('sh', ['-c', 'cat > "$1"', 'sh', join(work, path)], { input: text });
    }
    git('add', '-A');
    git('commit', '-qm', message);
    git('push', '-q', bare, 'HEAD:refs/heads/main');
    return git('rev-parse', 'HEAD');
  }
  const imageTag = (version: string) => `${registry.host}/bundles/${PKG}:${version}`;
  const digestAt = async (version: string) =>
    (await client.headManifest({ registry: registry.host, repository: `bundles/${PKG}` }, version))?.digest;

  async function push(before: string, after: string): Promise<void> {
    expect(await server.send('push', pushPayload(bare, before, after), `push-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'catalog-bot-bundle-app-'));
    work = join(root, 'work');
    bare = join(root, 'origin.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    registry = await startRegistry();
    // 127.0.0.1 is internal: listed as private, so that the registry may be reached.
    client = new RegistryClient({ insecureHosts: [registry.host], privateHosts: ['127.0.0.1'] });
    gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
    queue = new InProcessQueue();
    server = await startAppServer(gh, { queue, workDir: join(root, 'mirrors'), registry: () => client });
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await registry?.stop();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a merge adding a bundle pushes its image to bundles.imageTemplate and reports the digest in one write', async () => {
    const config = [
      'bundles:',
      '  pushImages: true',
      `  imageTemplate: "${registry.host}/bundles/{package}:{version}"`,
      '',
    ].join('\n');
    const first = commit('base with a released bundle', ['0.8.1'], { '.github/catalog-bot.yml': config });
    const merge = commit('Add jumpstarter-operator 0.9.0', ['0.9.0']);
    const runsBefore = gh.checkRuns.length;
    await push(first, merge);

    const runs = gh.runsFor(merge, 'catalog-bot/bundle-image');
    expect(runs.map((r) => [r.status, r.conclusion])).toEqual([['completed', 'success']]);
    const digest = await digestAt('0.9.0');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(runs[0]!.output?.summary).toContain(digest!);
    expect(runs[0]!.output?.summary).toContain(imageTag('0.9.0'));
    // Only the bundle the merge adds: the released one is not this merge's to push.
    expect(await digestAt('0.8.1')).toBeUndefined();
    // Nothing else is written: one run, created complete (no catalog publishing is configured).
    expect(gh.checkRuns.slice(runsBefore).map((r) => r.name)).toEqual(['catalog-bot/bundle-image']);
    // The same image a build of that commit gives anywhere: the digest is the content's.
    const dir = `operators/${PKG}/0.9.0`;
    const rebuilt = await buildBundleImage(await readBundleImageFiles(new GitTreeSource(bare, merge, dir)), {
      created: await commitTime(bare, merge),
      bundleDir: dir,
      repoUrl: webhookExample('push').repository.html_url,
      commit: merge,
    });
    expect(rebuilt.manifest.descriptor.digest).toBe(digest);

    // Re-run: the image is already there; the check says so and nothing is pushed over it.
    const rerun = checkRunRerunPayload(bare, 'catalog-bot/bundle-image', merge);
    expect(await server.send('check_run', rerun, `rerun-${++delivery}`)).toBe(200);
    await queue.onIdle();
    const again = gh.runsFor(merge, 'catalog-bot/bundle-image');
    expect(again.map((r) => r.conclusion)).toEqual(['success', 'success']);
    expect(again[1]!.output?.summary).toContain('already there');
    expect(await digestAt('0.9.0')).toBe(digest);
  }, 120_000);

  it('a tag that already holds another image is never overwritten: the check fails and says so', async () => {
    const before = git('rev-parse', 'HEAD');
    // Someone pushed another image at the tag of the version this merge adds.
    const other = await buildBundleImage(
      await readBundleImageFiles(new GitTreeSource(bare, before, `operators/${PKG}/0.9.0`)),
    );
    expect((await pushBundleImage(client, other, imageTag('0.9.0-rc.2'))).status).toBe('pushed');
    const held = await digestAt('0.9.0-rc.2');
    const merge = commit('Add jumpstarter-operator 0.9.0-rc.2', ['0.9.0-rc.2']);
    await push(before, merge);
    const [run] = gh.runsFor(merge, 'catalog-bot/bundle-image');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run!.output?.summary).toContain(`${imageTag('0.9.0-rc.2')} already holds ${held}`);
    expect(run!.output?.summary).toContain('released bundle images never change');
    expect(await digestAt('0.9.0-rc.2')).toBe(held);
  }, 120_000);
});
