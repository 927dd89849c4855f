// The bundle image after a merge, through the App: a signed push webhook for a merge that adds a
// real bundle directory, a real bare repository, a real docker-registry on 127.0.0.1,
// GitHub's API as a stateful fake (as test/publish-job.test.ts). The image lands at the tag
// `bundles.imageTemplate` gives and its digest is reported on the merge commit; a tag that
// already holds another image is left alone and reported.
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitTreeSource } from '../src/catalog/fbc/source.js';
import { buildBundleImage, pushBundleImage, readBundleImageFiles } from '../src/publish/bundle-image.js';
import { commitTime } from '../src/publish/publish.js';
import { startAppHarness, type AppHarness } from './helpers/app-harness.js';
import { checkRunRerunPayload, pushPayload } from './helpers/app-server.js';
import { WorkRepo } from './helpers/foo-repo.js';
import { webhookExample } from './helpers/github.js';
import { SHARED_DATA } from './helpers/oracle.js';
import { haveRegistryTools, registryForSuite } from './helpers/registry.js';

const OPERATORS = join(SHARED_DATA, 'real-repo/community-operators-prod/operators');
const PKG = 'jumpstarter-operator';

describe.skipIf(!haveRegistryTools)('the App pushes the bundle image of a merge', () => {
  // 127.0.0.1 is internal: listed as private, so that the registry may be reached.
  const local = registryForSuite({ privateHosts: ['127.0.0.1'] });
  let repo: WorkRepo;
  let app: AppHarness;

  /** Commit the bundle directories (copied from the real repository) and `files`, and push main. */
  function commit(message: string, versions: string[], files: Record<string, string> = {}): string {
    for (const v of versions)
      cpSync(join(OPERATORS, PKG, v), join(repo.work, 'operators', PKG, v), { recursive: true });
    const sha = repo.commit(message, files);
    repo.push(sha, 'refs/heads/main');
    return sha;
  }
  const imageTag = (version: string) => `${local.registry.host}/bundles/${PKG}:${version}`;
  const digestAt = async (version: string) =>
    (
      await local.client.headManifest(
        { registry: local.registry.host, repository: `bundles/${PKG}` },
        version,
      )
    )?.digest;

  const push = (before: string, after: string) => app.deliver('push', pushPayload(repo.bare, before, after));

  beforeAll(async () => {
    repo = new WorkRepo('catalog-bot-bundle-app-');
    app = await startAppHarness(repo.bare, [], { registry: () => local.client });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    repo?.cleanup();
  });

  it('a merge adding a bundle pushes its image to bundles.imageTemplate and reports the digest in one write', async () => {
    const config = [
      'bundles:',
      '  pushImages: true',
      `  imageTemplate: "${local.registry.host}/bundles/{package}:{version}"`,
      '',
    ].join('\n');
    const first = commit('base with a released bundle', ['0.8.1'], { '.github/catalog-bot.yml': config });
    const merge = commit('Add jumpstarter-operator 0.9.0', ['0.9.0']);
    const { gh } = app;
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
    const rebuilt = await buildBundleImage(
      await readBundleImageFiles(new GitTreeSource(repo.bare, merge, dir)),
      {
        created: await commitTime(repo.bare, merge),
        bundleDir: dir,
        repoUrl: webhookExample('push').repository.html_url,
        commit: merge,
      },
    );
    expect(rebuilt.manifest.descriptor.digest).toBe(digest);

    // Re-run: the image is already there; the check says so and nothing is pushed over it.
    await app.deliver('check_run', checkRunRerunPayload(repo.bare, 'catalog-bot/bundle-image', merge));
    const again = gh.runsFor(merge, 'catalog-bot/bundle-image');
    expect(again.map((r) => r.conclusion)).toEqual(['success', 'success']);
    expect(again[1]!.output?.summary).toContain('already there');
    expect(await digestAt('0.9.0')).toBe(digest);
  }, 120_000);

  it('a tag that already holds another image is never overwritten: the check fails and says so', async () => {
    const before = repo.git('rev-parse', 'HEAD');
    // Someone pushed another image at the tag of the version this merge adds.
    const other = await buildBundleImage(
      await readBundleImageFiles(new GitTreeSource(repo.bare, before, `operators/${PKG}/0.9.0`)),
    );
    expect((await pushBundleImage(local.client, other, imageTag('0.9.0-rc.2'))).status).toBe('pushed');
    const held = await digestAt('0.9.0-rc.2');
    const merge = commit('Add jumpstarter-operator 0.9.0-rc.2', ['0.9.0-rc.2']);
    await push(before, merge);
    const [run] = app.gh.runsFor(merge, 'catalog-bot/bundle-image');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run!.output?.summary).toContain(`${imageTag('0.9.0-rc.2')} already holds ${held}`);
    expect(run!.output?.summary).toContain('released bundle images never change');
    expect(await digestAt('0.9.0-rc.2')).toBe(held);
  }, 120_000);
});
