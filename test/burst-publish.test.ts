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
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCatalogLayer } from '../src/publish/published-catalog.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { startAppServer, type AppServer } from './helpers/app-server.js';
import { sleep, until } from './helpers/fleet.js';
import { webhookExample } from './helpers/github.js';
import { GitHubServer, isWrite, type ServerRepo } from './helpers/github-server.js';
import { haveRegistryTools, pushTestBase, startRegistry, type RunningRegistry } from './helpers/registry.js';

const validCatalog = fileURLToPath(new URL('./fixtures/valid-catalog/', import.meta.url));
const PRS = Number(process.env.BURST_PUBLISH_PRS ?? 12);
const GAP_MS = Number(process.env.BURST_PUBLISH_GAP_MS ?? 250);
const MERGE_MS = Number(process.env.BURST_PUBLISH_MERGE_MS ?? 300);
const batches = process.env.BURST_PUBLISH_BATCHES !== 'off';
const FULL = 'burst/catalog';
const ROOTS = ['catalogs/v4.20', 'catalogs/v4.21'];
const DEADLINE_MS = Math.max(90_000, PRS * 8_000);

/** A package with one bundle: what one release-bot pull request adds. */
function onePackage(name: string, k: number): string {
  const digest = k.toString(16).padStart(64, '0');
  return [
    'schema: olm.package',
    `name: ${name}`,
    'defaultChannel: stable',
    '---',
    'schema: olm.channel',
    `package: ${name}`,
    'name: stable',
    'entries:',
    `  - name: ${name}.v1.0.0`,
    '---',
    'schema: olm.bundle',
    `package: ${name}`,
    `name: ${name}.v1.0.0`,
    `image: quay.io/example/${name}-bundle@sha256:${digest}`,
    'properties:',
    '  - type: olm.package',
    '    value:',
    `      packageName: ${name}`,
    '      version: 1.0.0',
    '',
  ].join('\n');
}

describe.skipIf(!haveRegistryTools)('a burst of merges published in batches (issue 35)', () => {
  let dir: string;
  let registry: RunningRegistry;
  let client: RegistryClient;
  let gh: GitHubServer;
  let repo: ServerRepo;
  let bare: string;
  let app: AppServer;
  let queue: InProcessQueue;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  const rootOf = (k: number) => ROOTS[k % ROOTS.length]!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-bot-burst-publish-'));
    registry = await startRegistry();
    client = new RegistryClient({ insecureHosts: [registry.host], privateHosts: ['127.0.0.1'] });
    await pushTestBase(client, { registry: registry.host, repository: 'base', tag: '1' });

    bare = join(dir, 'origin.git');
    const work = join(dir, 'work');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    for (const root of ROOTS) cpSync(validCatalog, join(work, root), { recursive: true });
    mkdirSync(join(work, '.github'));
    writeFileSync(
      join(work, '.github/catalog-bot.yml'),
      [
        'catalogs: [catalogs/*]',
        'publish:',
        `  baseImage: ${registry.host}/base:1`,
        '  images:',
        `    - ${registry.host}/burst:{root}`,
        `    - ${registry.host}/burst:{root}-{sha}`,
        '',
      ].join('\n'),
    );
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', 'base');
    git(work, 'push', '-q', bare, 'HEAD:refs/heads/main');
    gh = await GitHubServer.start();
    gh.paceWrites({ minGapMs: GAP_MS, toleranceMs: Math.min(100, GAP_MS / 4) });
    repo = gh.addRepo({ owner: 'burst', name: 'catalog', id: 990_035, bare });
    // Every pull request off the same main, as a release bot opens them at once.
    const base = git(work, 'rev-parse', 'HEAD');
    // One more, merged after the burst by the attack test.
    for (let k = 1; k <= PRS + 1; k++) {
      git(work, 'checkout', '-q', '-B', `pr-${k}`, base);
      const file = join(work, rootOf(k), `burst-${k}`, 'catalog.yaml');
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, onePackage(`burst-${k}`, k));
      git(work, 'add', '-A');
      git(work, 'commit', '-qm', `burst-${k} v1.0.0`);
      git(work, 'push', '-q', bare, `HEAD:refs/heads/pr-${k}`);
      gh.addPull(repo, { number: k, head: git(work, 'rev-parse', 'HEAD'), author: 'release-bot' });
    }
    queue = new InProcessQueue();
    app = await startAppServer(
      gh,
      { queue, workDir: join(dir, 'mirrors'), registry: () => client, publishBatches: batches },
      { CATALOG_BOT_WRITE_PACING: String(GAP_MS) },
    );
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    await gh?.close();
    client?.close();
    await registry?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function pushDelivery(before: string, after: string, id: string): Promise<void> {
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
    expect(await app.send('push', payload, id)).toBe(200);
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
        const before = git(bare, 'rev-parse', 'main');
        const res = await fetch(`${gh.baseUrl}/repos/${FULL}/pulls/${k}/merge`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ merge_method: 'merge' }),
        });
        expect(res.status).toBe(200);
        const { sha } = (await res.json()) as { sha: string };
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
        if (!catalogs.has(digest)) {
          const read = await readCatalogLayer(client, `${image}@${digest}`);
          catalogs.set(digest, [...new Set(read.files.map(([path]) => path.split('/')[0]!))]);
        }
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
      const head = git(bare, 'rev-parse', 'main');
      for (const root of ROOTS) {
        const tag = root.split('/')[1]!;
        const moving = await digestOf(tag);
        expect(moving, root).toBeDefined();
        const atHead = git(bare, 'ls-tree', '--name-only', `${head}:${root}`).split('\n').filter(Boolean);
        expect((await packagesIn(`${registry.host}/burst`, moving!)).sort(), root).toEqual(atHead.sort());
      }
    },
    DEADLINE_MS + 60_000,
  );
  it("a run that another App or a workflow names like a batch's does not keep a merge from being published", async () => {
    const k = PRS + 1;
    const before = git(bare, 'rev-parse', 'main');
    const res = await fetch(`${gh.baseUrl}/repos/${FULL}/pulls/${k}/merge`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merge_method: 'merge' }),
    });
    const { sha } = (await res.json()) as { sha: string };
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
