// The catalog pages the App serves (docs/site.md, "Served by the App"), through the real
// Probot server on 127.0.0.1 with GitHub's API as the stateful fake held to GitHub's OpenAPI
// description, real git repositories and a real check worker:
// - a public community-operators-prod repository: the index, catalog, package and bundle
//   pages of its default branch are the pages `catalog-bot site` writes for the same
//   catalogs, byte for byte, and the package page draws OLM v1's edges;
// - a pull request: its check runs' "Details" is its impact page, which shows the impact
//   the checks computed (the same as `catalog-bot impact`), a graph per changed channel
//   with the added and removed edges marked; its names, hostile ones, are shown as text
//   there and on the default branch's pages;
// - a private repository: every page answers 404, as for a repository the App is not on,
//   and no check run links to a page;
// - bounded work: one page rendered at a time, made-up paths of a known commit answered
//   without a worker, repositories looked up on GitHub at most so many a minute.
import { execFileSync } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { v1Chosen } from '../src/catalog/olm/v1.js';
import { catalogRoots } from '../src/checks/changes.js';
import { impactOf } from '../src/flows/impact/impact.js';
import { pagesRoutes } from '../src/flows/pages/routes.js';
import { buildSite, type SiteCatalog } from '../src/site/site.js';
import { InProcessQueue } from '../src/queue.js';
import { bareOrigin } from './helpers/app-harness.js';
import { startAppServer } from './helpers/app-server.js';
import { bundle, channel, pkg, yamlStream } from './helpers/catalogs.js';
import { COP_CONFIG, haveRealRepo, makeCopRepo } from './helpers/cop-repo.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { WorkRepo } from './helpers/foo-repo.js';
import { webhookExample } from './helpers/github.js';

vi.setConfig({ testTimeout: 120_000 });

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const PUBLIC_URL = 'https://catalog-bot.example.com';
const PAGES = '/catalog-bot/pages/Codertocat/Hello-World/';
const ROOTS = ['catalogs/v4.20', 'catalogs/v4.21'];

/** The App on 127.0.0.1 for pull request 2 of `bare`. */
async function startApp(
  bare: string,
  head: string,
  author: string,
  isPrivate = false,
  workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-')),
) {
  const gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
  gh.isPrivate = isPrivate;
  gh.addPull({ number: 2, head, author });
  made.push(workDir);
  const queue = new InProcessQueue();
  const server = await startAppServer(gh, { queue, workDir, announceAfterMs: 60_000, publicUrl: PUBLIC_URL });
  return {
    gh,
    workDir,
    url: server.url,
    get: async (path: string) => {
      const res = await fetch(`${server.url}${path}`, { redirect: 'manual' });
      return { status: res.status, headers: res.headers, body: await res.text() };
    },
    async opened(sha: string) {
      const payload = webhookExample('pull_request', 'opened');
      payload.installation = { id: 4242 };
      payload.repository.clone_url = bare;
      payload.repository.private = isPrivate;
      payload.number = payload.pull_request.number = 2;
      payload.pull_request.user.login = author;
      payload.pull_request.head.sha = sha;
      expect(await server.send('pull_request', payload, `d-${sha}`)).toBe(200);
      await queue.onIdle();
    },
    async stop() {
      await server.stop();
      await queue.close();
    },
  };
}
type App = Awaited<ReturnType<typeof startApp>>;

/** The status of a GET of `path` exactly as written. */
function rawStatus(base: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A bare repository holding the given refs of `repo`, removed after the file. */
function bareOf(repo: string, refspecs: string[]): string {
  const origin = bareOrigin(repo, refspecs);
  made.push(origin.bare);
  return origin.bare;
}

/** The static site `catalog-bot site` writes for the catalog roots of a work tree. */
async function staticSite(repo: string): Promise<Map<string, string>> {
  const catalogs: SiteCatalog[] = [];
  for (const root of await catalogRoots(repo, 'HEAD', ROOTS)) {
    const report = await validateCatalog(new DirectorySource(join(repo, root)), { maxDiagnostics: 1000 });
    catalogs.push({
      name: basename(root),
      valid: report.valid,
      diagnostics: report.diagnostics,
      ...(report.omitted ? { omitted: report.omitted } : {}),
      model: report.model,
      packages: report.config.packages,
    });
  }
  return buildSite(catalogs);
}

/** Elements of a kind with their data attributes, in document order. */
function dataOf(html: string, attrs: string[]): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const m of html.matchAll(/<g class="[^"]*"((?: data-[a-z0-9-]+="[^"]*")+)/g)) {
    const found = Object.fromEntries(
      [...m[1]!.matchAll(/ (data-[a-z0-9-]+)="([^"]*)"/g)].map((a) => [a[1]!, unescape(a[2]!)]),
    );
    if (attrs.every((a) => a in found)) out.push(Object.fromEntries(attrs.map((a) => [a, found[a]!])));
  }
  return out;
}
const unescape = (s: string): string =>
  s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

describe.skipIf(!haveRealRepo)('pages of a public repository', () => {
  let app: App | undefined;
  afterEach(async () => app?.stop());

  it("serves the default branch's site as `catalog-bot site` writes it, with OLM v1's edges drawn", async () => {
    // Two OpenShift catalogs (the matrix needs two) keep the test short.
    const cop = makeCopRepo(
      'clusterpulse/1.0.2',
      COP_CONFIG.replace('[catalogs/*]', `[${ROOTS.join(', ')}]`),
    );
    expect(cop.git('show', 'main:.github/catalog-bot.yml')).toContain(ROOTS[0]);
    made.push(cop.repo);
    const bare = bareOf(cop.repo, ['main:refs/heads/main']);
    app = await startApp(bare, cop.git('rev-parse', 'main'), cop.reviewer);

    // The default branch's pages: the same bytes as the static site of the same catalogs.
    const site = await staticSite(cop.repo);
    const sample = [
      'index.html',
      'v4.21/index.html',
      'v4.21/clusterpulse/index.html',
      [...site.keys()].find((p) => p.startsWith('v4.21/clusterpulse/bundles/'))!,
      'matrix.html',
      'assets/site.css',
    ];
    for (const path of sample) {
      const page = await app.get(`${PAGES}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.body, path).toBe(site.get(path));
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    expect((await app.get(PAGES)).body).toBe(site.get('index.html'));
    // The repository's directory ends in a slash, so the pages' relative links resolve.
    const bare301 = await app.get(PAGES.slice(0, -1));
    expect([bare301.status, bare301.headers.get('location')]).toEqual([301, 'Hello-World/']);
    expect((await app.get(`${PAGES}v4.21/no-such-package/index.html`)).status).toBe(404);
    // A path that climbs out (sent as is: fetch would resolve the dots first).
    expect(await rawStatus(app.url, `${PAGES}v4.21/../../../../index.html`)).toBe(404);
    expect(await rawStatus(app.url, `${PAGES}v4.21/%2e%2e/index.html`)).toBe(404);
    expect((await app.get(`${PAGES}pull/2/${'0'.repeat(40)}`)).status).toBe(404);

    // OLM v1 on the package page: one edge per entry v1 moves, to the bundle it picks.
    const model = (await validateCatalog(new DirectorySource(join(cop.repo, 'catalogs/v4.21')))).model;
    const clusterpulse = model.get('clusterpulse')!;
    const expectedV1 = [...clusterpulse.channels.values()].flatMap((ch) =>
      [...ch.bundles.values()].flatMap((b) => {
        const next = v1Chosen(clusterpulse, { name: b.name, version: b.version! }, { channels: [ch.name] });
        return next && next !== b.name ? [{ 'data-v1-from': next, 'data-v1-to': b.name }] : [];
      }),
    );
    expect(expectedV1.length).toBeGreaterThan(0);
    const sorted = (xs: object[]) => xs.map((x) => JSON.stringify(x)).sort();
    const packagePage = site.get('v4.21/clusterpulse/index.html')!;
    expect(sorted(dataOf(packagePage, ['data-v1-from', 'data-v1-to']))).toEqual(sorted(expectedV1));
  });
});

const evilPkg = '<img src=x onerror=alert(1)>';
const evilChannel = '"><script>alert(2)</script>';
const evilBundle = '../../escaped-<b>x</b>';
const evilNew = '[x](javascript:alert(3))<svg onload=alert(4)>';

/** A catalog repository of one package with hostile names; its pull request (2, branch pr) adds an entry. */
function hostileRepo(): { bare: string; repo: string; head: string } {
  const repo = new WorkRepo('pages-hostile-');
  made.push(repo.root);
  const catalog = (entries: (string | Record<string, unknown>)[], bundles: Record<string, unknown>[]) => ({
    'catalogs/v4.21/evil/catalog.yaml': yamlStream(
      pkg(evilPkg, { defaultChannel: evilChannel }),
      channel(entries, { package: evilPkg, name: evilChannel }),
      ...bundles,
    ),
  });
  const head = repo.pullRequest(
    2,
    {
      '.github/catalog-bot.yml': 'catalogs: [catalogs/*]\n',
      ...catalog([evilBundle], [bundle('1.0.0', { name: evilBundle }, evilPkg)]),
    },
    catalog(
      [evilBundle, { name: evilNew, replaces: evilBundle }],
      [bundle('1.0.0', { name: evilBundle }, evilPkg), bundle('1.1.0', { name: evilNew }, evilPkg)],
    ),
  );
  return { bare: repo.bare, repo: repo.work, head };
}

describe('the impact page of a pull request', () => {
  let app: App | undefined;
  afterEach(async () => app?.stop());

  it("is every check run's Details, shows what the checks computed, and keeps hostile names text", async () => {
    const { bare, repo, head } = hostileRepo();
    app = await startApp(bare, head, 'someone');
    await app.opened(head);
    const runs = app.gh.checkRuns.filter((r) => r.head_sha === head);
    expect(runs.length).toBeGreaterThan(0);
    expect([...new Set(runs.map((r) => r.details_url))]).toEqual([`${PUBLIC_URL}${PAGES}pull/2/${head}`]);
    const impactPage = await app.get(`${PAGES}pull/2/${head}`);
    expect(impactPage.status).toBe(200);
    // The impact `catalog-bot impact` computes, every changed channel drawn with its changes marked.
    const impact = await impactOf(repo, 'main', head);
    const channels = Object.values(impact).flatMap((root) =>
      Object.values(root.packages).flatMap((p) => Object.values(p.channels)),
    );
    expect(channels.length).toBe(1);
    const drawn = (attrs: string[]) => dataOf(impactPage.body, attrs);
    expect(drawn(['data-from', 'data-to', 'data-kind', 'data-change'])).toEqual(
      channels.flatMap((c) => [
        ...c.edgesAdded.map((e) => ({
          'data-from': e.from,
          'data-to': e.to,
          'data-kind': e.kind,
          'data-change': 'added',
        })),
        ...c.edgesRemoved.map((e) => ({
          'data-from': e.from,
          'data-to': e.to,
          'data-kind': e.kind,
          'data-change': 'removed',
        })),
      ]),
    );
    expect(drawn(['data-bundle', 'data-change'])).toEqual(
      channels.flatMap((c) => c.bundlesAdded.map((b) => ({ 'data-bundle': b, 'data-change': 'added' }))),
    );
    // Hostile names: text on the impact page and on the default branch's pages.
    const index = await app.get(PAGES);
    const packageHref = /href="(v4\.21\/_[0-9a-f]+\/index\.html)"/.exec(index.body)?.[1];
    expect(packageHref).toBeDefined();
    const packagePage = await app.get(`${PAGES}${packageHref}`);
    expect(packagePage.status).toBe(200);
    for (const html of [impactPage.body, index.body, packagePage.body]) {
      for (const raw of [evilPkg, evilChannel, evilBundle, evilNew, '<svg onload', '<b>'])
        expect(html).not.toContain(raw);
      expect([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual(
        html === index.body ? ['<script src="assets/search.js" defer>'] : [],
      );
    }
    expect(impactPage.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(drawn(['data-from'])).toEqual([{ 'data-from': evilNew }]);
  });
});

describe('pages of a private repository', () => {
  let app: App | undefined;
  afterEach(async () => app?.stop());

  it('answer 404, as for a repository the App is not installed on, and no check run links to a page', async () => {
    const { bare, head } = hostileRepo();
    // Public, the repository's pages are there; made private, the same work directory
    // (the impact stored, the mirror fetched) serves none of them.
    app = await startApp(bare, head, 'someone');
    await app.opened(head);
    const paths = ['', 'index.html', 'v4.21/index.html', 'assets/site.css', `pull/2/${head}`];
    for (const path of paths) expect((await app.get(`${PAGES}${path}`)).status, path).toBe(200);
    const workDir = app.workDir;
    await app.stop();
    app = await startApp(bare, head, 'someone', true, workDir);
    await app.opened(head);
    const runs = app.gh.checkRuns.filter((r) => r.head_sha === head);
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.map((r) => r.details_url)).toEqual(runs.map(() => undefined));
    const elsewhere = await app.get('/catalog-bot/pages/someone/else/index.html');
    expect(elsewhere.status).toBe(404);
    for (const path of paths) {
      const page = await app.get(`${PAGES}${path}`);
      expect([page.status, page.body], path).toEqual([404, elsewhere.body]);
    }
  });
});

describe('bounded work for whoever asks', () => {
  it('renders one page at a time, answers unknown paths of a known commit without a worker, and limits lookups of GitHub', async () => {
    const { bare } = hostileRepo();
    const sha = execFileSync('git', ['-C', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    made.push(workDir);
    let running = 0;
    let most = 0;
    const rendered: string[] = [];
    const looked: string[] = [];
    const work = await import('../src/flows/pages/work.js');
    const handler = pagesRoutes({
      workDir,
      lookupsPerMinute: 5,
      repository: async (owner, repo) => {
        looked.push(`${owner}/${repo}`);
        return { repoId: 7, private: false, cloneUrl: bare, defaultBranch: 'main', sha };
      },
      // The real page work, in this thread, counted.
      render: async (input) => {
        rendered.push(input.path);
        most = Math.max(most, ++running);
        try {
          // As slow as a large catalog: requests overlap.
          await new Promise((done) => setTimeout(done, 300));
          return await work.renderPage(input);
        } finally {
          running--;
        }
      },
    });
    const server = createServer((req, res) => {
      void handler(req, res).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog-bot/pages/o/r/`;
    try {
      // Many pages at once: one render at a time.
      const index = await fetch(base);
      expect(index.status).toBe(200);
      const links = [...(await index.text()).matchAll(/href="(v4\.21\/[^"]+)"/g)].map((m) => m[1]!);
      expect(links.length).toBeGreaterThan(1);
      const statuses = await Promise.all(
        [...links, ...links].map(async (l) => (await fetch(base + l)).status),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(most).toBe(1);
      // The commit's paths are known now: made-up ones cost no render.
      const before = rendered.length;
      for (let i = 0; i < 20; i++) {
        expect((await fetch(`${base}v4.21/nothing-${i}/index.html`)).status).toBe(404);
        expect((await fetch(`${base}no-root-${i}/index.html`)).status).toBe(404);
      }
      expect(rendered.length).toBe(before);
      // Repositories asked of GitHub: at most 5 new ones a minute here; the rest wait.
      const others = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => (await fetch(base.replace('/o/r/', `/o/r${i}/`))).status),
      );
      expect(looked.length).toBe(5);
      expect(others.filter((s) => s === 503).length).toBe(4);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
