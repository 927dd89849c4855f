// Issue 35: a burst of merges published in batches (docs/publishing.md, "Batches"). Small
// pull requests (one new package with one bundle each, as a release bot sends them, into
// two catalogs in turn) are merged one after another on the fake GitHub API server, each
// push delivered as GitHub does, to the real Probot server with a real docker-registry, under
// GitHub's write pacing (the fake refuses writes that come too soon; the App paces itself).
// Every merge must be published: its release comment names an image (tag and digest) whose
// catalog holds its package, and each catalog's moving tag names a build from the newest
// commit that changed it. With batches there are fewer image builds than merges; with
// BURST_PUBLISH_BATCHES=off (the behaviour before batches) one build per merge.
//
// The figures (builds, GitHub writes, minutes) are printed as `burst-publish: {...}`; the
// bench part `BENCH_ONLY=burst-publish npm run bench` runs this file with 64 pull requests,
// with and without batches. Knobs: BURST_PUBLISH_PRS (default 12), BURST_PUBLISH_GAP_MS (the
// write gap, default 250 ms: github.com's pace four times faster, as test/burst.test.ts),
// BURST_PUBLISH_MERGE_MS (between merges, default 300).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { pushPayload, type AppServer } from './helpers/app-server.js';
import { sleep, until } from './helpers/fleet.js';
import { GitHubServer, isWrite, type ServerRepo } from './helpers/github-server.js';
import {
  entriesAt,
  entriesInImage,
  gitAt,
  onePackage,
  startPublishingApp,
  type PublishingApp,
} from './helpers/publish-origin.js';
import { haveRegistryTools, type RunningRegistry } from './helpers/registry.js';

const PRS = Number(process.env.BURST_PUBLISH_PRS ?? 12);
const GAP_MS = Number(process.env.BURST_PUBLISH_GAP_MS ?? 250);
const MERGE_MS = Number(process.env.BURST_PUBLISH_MERGE_MS ?? 300);
const batches = process.env.BURST_PUBLISH_BATCHES !== 'off';
const FULL = 'burst/catalog';
const ROOTS = ['catalogs/v4.20', 'catalogs/v4.21'];
const DEADLINE_MS = Math.max(90_000, PRS * 8_000);

describe.skipIf(!haveRegistryTools)('a burst of merges published in batches (issue 35)', () => {
  let publishing: PublishingApp;
  let registry: RunningRegistry;
  let client: RegistryClient;
  let gh: GitHubServer;
  let repo: ServerRepo;
  let bare: string;
  let app: AppServer;
  let queue: InProcessQueue;
  const rootOf = (k: number) => ROOTS[k % ROOTS.length]!;

  beforeAll(async () => {
    publishing = await startPublishingApp({
      image: 'burst',
      id: 990_035,
      roots: ROOTS,
      app: { publishBatches: batches },
      env: { CATALOG_BOT_WRITE_PACING: String(GAP_MS) },
    });
    ({ registry, client, bare, gh, repo, queue, app } = publishing);
    const work = publishing.work;
    gh.paceWrites({ minGapMs: GAP_MS, toleranceMs: Math.min(100, GAP_MS / 4) });
    // Every pull request off the same main, as a release bot opens them at once.
    const base = gitAt(work, 'rev-parse', 'HEAD');
    // One more, merged after the burst by the attack test.
    for (let k = 1; k <= PRS + 1; k++) {
      gitAt(work, 'checkout', '-q', '-B', `pr-${k}`, base);
      const file = join(work, rootOf(k), `burst-${k}`, 'catalog.yaml');
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, onePackage(`burst-${k}`, k));
      gitAt(work, 'add', '-A');
      gitAt(work, 'commit', '-qm', `burst-${k} v1.0.0`);
      gitAt(work, 'push', '-q', bare, `HEAD:refs/heads/pr-${k}`);
      gh.addPull(repo, { number: k, head: gitAt(work, 'rev-parse', 'HEAD'), author: 'release-bot' });
    }
  }, 60_000);

  afterAll(() => publishing?.stop());

  async function pushDelivery(before: string, after: string, id: string): Promise<void> {
    expect(await app.send('push', pushPayload(repo, before, after), id)).toBe(200);
  }

  const tagsOf = async (): Promise<string[]> =>
    ((await (await fetch(`http://${registry.host}/v2/burst/tags/list`)).json()) as { tags: string[] }).tags;
  const digestOf = async (tag: string) =>
    (await client.headManifest({ registry: registry.host, repository: 'burst' }, tag))?.digest;
  const releaseComment = (k: number) =>
    gh.comments.find(
      (c) => c.issue === k && c.user.type === 'Bot' && c.body.startsWith('<!-- catalog-bot:release '),
    );

  it(
    `${PRS} one-bundle pull requests merged in a burst: all published, ${batches ? 'fewer image builds than merges' : 'one build per merge'}`,
    async () => {
      const started = Date.now();
      const merges: string[] = [];
      for (let k = 1; k <= PRS; k++) {
        const before = gitAt(bare, 'rev-parse', 'main');
        const sha = await publishing.merge(k);
        merges.push(sha);
        await pushDelivery(before, sha, `burst-publish-${k}`);
        await sleep(MERGE_MS);
      }
      const published = await until(
        async () => queue.size === 0 && merges.every((_, i) => releaseComment(i + 1) !== undefined),
        DEADLINE_MS - (Date.now() - started),
        250,
      );
      await queue.onIdle();
      const tookMs = Date.now() - started;

      // One `{root}-{sha}` tag per image build (a build writes it whether or not it is the head).
      const builds = (await tagsOf()).filter((t) => /^v4\.2[01]-[0-9a-f]{12}$/.test(t));
      const writes = gh.writes.filter((w) => !/\/pulls\/\d+\/merge$/.test(w.path));
      const kinds = (re: RegExp) => writes.filter((w) => re.test(`${w.method} ${w.path}`)).length;
      const figures = {
        batches,
        pullRequests: PRS,
        pacing: `one write per ${GAP_MS} ms`,
        builds: builds.length,
        appWrites: writes.length,
        checkRunWrites: kinds(/check-runs/),
        commentWrites: kinds(/comments/),
        refusedWrites: gh.requests.filter((r) => isWrite(r.method, r.path) && r.status === 403).length,
        publishedInMs: tookMs,
        minutes: Number((tookMs / 60_000).toFixed(2)),
      };
      console.log(`burst-publish: ${JSON.stringify(figures)}`);
      expect(published, `not all published in ${DEADLINE_MS} ms`).toBe(true);

      if (batches) expect(builds.length).toBeLessThan(PRS);
      else expect(builds.length).toBe(PRS);

      // Every merge: a green publish run, and a release comment whose images hold its package.
      const catalogs = new Map<string, string[]>();
      const packagesIn = async (image: string, digest: string) => {
        if (!catalogs.has(digest)) catalogs.set(digest, await entriesInImage(client, `${image}@${digest}`));
        return catalogs.get(digest)!;
      };
      for (const [i, sha] of merges.entries()) {
        const k = i + 1;
        const runs = gh.runsFor(FULL, sha, 'catalog-bot/publish');
        expect(
          runs.map((r) => r.conclusion),
          `#${k}`,
        ).toEqual(['success']);
        const body = releaseComment(k)!.body;
        expect(body).toContain(sha);
        const root = rootOf(k);
        const rows = [...body.matchAll(/^\| `([^`]+)` \| `([^`@]+):[^`@:]+@(sha256:[0-9a-f]{64})` \|/gm)];
        // Its catalog's image: the moving tag when the build was the branch head then, and the
        // build's `{sha}` tag.
        expect(rows.length, `#${k}: ${body}`).toBeGreaterThan(0);
        expect(new Set(rows.map((r) => r[1])), `#${k}`).toEqual(new Set([root]));
        for (const [, , image, digest] of rows)
          expect(await packagesIn(image!, digest!), `#${k}`).toContain(`burst-${k}`);
      }

      // Each catalog's moving tag holds the catalog of the newest commit: every package the
      // branch head has under the root, none other (which build wrote it is not the point: two
      // builds of one catalog may share a digest, and the `{sha}` tag of a rebuild is kept).
      const head = gitAt(bare, 'rev-parse', 'main');
      for (const root of ROOTS) {
        const tag = root.split('/')[1]!;
        const moving = await digestOf(tag);
        expect(moving, root).toBeDefined();
        expect(await packagesIn(`${registry.host}/burst`, moving!), root).toEqual(
          entriesAt(bare, head, root),
        );
      }
    },
    DEADLINE_MS + 60_000,
  );
  it("a run that another App or a workflow names like a batch's does not keep a merge from being published", async () => {
    const k = PRS + 1;
    const before = gitAt(bare, 'rev-parse', 'main');
    const sha = await publishing.merge(k);
    // A workflow with `checks: write` marks the merge as published by a batch, before its job runs.
    const forged = {
      id: 9_000_001,
      repo: FULL,
      name: 'catalog-bot/publish',
      head_sha: sha,
      status: 'completed',
      conclusion: 'success',
      app: { slug: 'github-actions' },
      external_id: `catalog-bot:publish-batch:${sha}`,
      output: { title: 'Published in the build of ' + sha.slice(0, 12), summary: 'nothing to see' },
      createdAt: Date.now(),
    };
    gh.checkRuns.push(forged);
    await pushDelivery(before, sha, `burst-publish-forged-${k}`);
    expect(await until(async () => releaseComment(k) !== undefined && queue.size === 0, 60_000, 100)).toBe(
      true,
    );
    const tag = `${rootOf(k).split('/')[1]}-${sha.slice(0, 12)}`;
    expect(await tagsOf()).toContain(tag);
    const ours = gh.runsFor(FULL, sha, 'catalog-bot/publish').filter((r) => r.app.slug !== 'github-actions');
    expect(ours.map((r) => r.conclusion)).toEqual(['success']);
    expect(releaseComment(k)!.body).toContain(`@${(await digestOf(tag))!}`);
  }, 90_000);
});
