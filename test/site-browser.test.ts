// The catalog site (docs/site.md) in a real browser: the built CLI writes the site for the
// real community v4.21 catalog, a static file server on 127.0.0.1 serves it, and Debian's
// chromium (driven by puppeteer-core; .ci/run installs it) visits the index, the catalog,
// every package page and a sample of the bundle pages (every bundle page would take
// minutes on two cores; their links are still all fetched). On each visited page: no
// console error, failed request or error status; each channel's SVG holds exactly the
// channel's entries and edges, computed here from the catalog; axe-core finds no serious or
// critical violation (on a sample: see AUDIT_EVERY). Every link of every visited page resolves. Screenshots go to
// docs/images/ for the README and docs/site.md. The pull-request impact page of the real
// clusterpulse 1.0.2 release is visited the same way, written beside the site.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import type { Model } from '../src/catalog/fbc/model.js';
import { tryParseRange } from '../src/catalog/versions/range.js';
import { groupRoots } from '../src/catalog/olm/impact-report.js';
import { impactOf } from '../src/flows/impact/impact.js';
import { impactPage, impactPath } from '../src/site/impact-page.js';
import { haveRealRepo, makeCopRepo } from './helpers/cop-repo.js';
import { removeTree, SHARED_DATA } from './helpers/oracle.js';

const CHROMIUM = '/usr/bin/chromium';
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const images = fileURLToPath(new URL('../docs/images/', import.meta.url));
const v421 = join(SHARED_DATA, 'real-catalogs', 'community-operators-prod', 'catalogs', 'v4.21');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const BUNDLE_SAMPLE = 12;
// axe-core takes seconds on a page of a few hundred rows and boxes: it audits the index, the
// catalog page, every sixth package page and every other sampled bundle page (the pages share
// one template; every page is still loaded and its graphs and links checked).
const AUDIT_EVERY = 6;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/** A static file server for `root` on 127.0.0.1, like any web server publishing the site. */
function serve(root: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    let file = join(root, path);
    if (!file.startsWith(root + sep) && file !== root) return void res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : readFileSync(file));
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

/** What design.md says the SVG of a channel holds, computed from the catalog itself. */
function expectedGraphs(
  model: Model,
  packageName: string,
): Record<string, { nodes: string[]; edges: string[] }> {
  const out: Record<string, { nodes: string[]; edges: string[] }> = {};
  for (const ch of model.get(packageName)!.channels.values()) {
    const nodes = [...ch.bundles.keys()];
    const edges = new Set<string>();
    for (const b of ch.bundles.values()) {
      if (ch.bundles.has(b.replaces)) edges.add(`${b.name} replaces ${b.replaces}`);
      for (const s of b.skips) if (ch.bundles.has(s)) edges.add(`${b.name} skips ${s}`);
      const range = b.skipRange ? tryParseRange(b.skipRange) : undefined;
      if (range?.ok)
        for (const other of ch.bundles.values())
          if (other !== b && other.version && range.range.covers(other.version))
            edges.add(`${b.name} skipRange ${other.name}`);
    }
    out[ch.name] = { nodes: nodes.sort(), edges: [...edges].sort() };
  }
  return out;
}

interface Visit {
  problems: string[];
  links: string[];
}

let site: string;
let server: Server;
let base: string;
let browser: Browser;
let page: Page;
let model: Model;
let buildMs: number;
const problems: string[] = [];
const timing = { load: 0, axe: 0 };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run npm run build first');
  site = mkdtempSync(join(tmpdir(), 'catalog-bot-site-browser-'));
  const started = performance.now();
  const r = spawnSync(process.execPath, [cli, 'site', v421, '-o', site], { encoding: 'utf8' });
  buildMs = performance.now() - started;
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  model = (await validateCatalog(new DirectorySource(v421))).model;
  server = await serve(site);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  if (site) removeTree(site);
});

/** Loads one page; its problems (console, requests, and axe's when audited) and its links. */
async function visit(path: string, audit: boolean): Promise<Visit> {
  problems.length = 0;
  let t = performance.now();
  await page.goto(base + path, { waitUntil: 'load' });
  timing.load += performance.now() - t;
  t = performance.now();
  if (audit) await page.evaluate(axeSource);
  const axe = !audit
    ? []
    : await page.evaluate(async () => {
        const w = globalThis as unknown as {
          axe: {
            run(o: object): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }>;
          };
        };
        const result = await w.axe.run({ resultTypes: ['violations'] });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, count: v.nodes.length }));
      });
  timing.axe += performance.now() - t;
  const serious = axe.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const links = await page.$$eval('a[href], link[href], script[src], img[src]', (els) =>
    els.map((e) => {
      const link = e as unknown as { href?: string; src?: string };
      return link.href || link.src || '';
    }),
  );
  return {
    problems: [...problems, ...serious.map((v) => `axe ${v.impact} ${v.id} (${v.count} elements)`)],
    links: links.filter((l) => !l.startsWith('data:')),
  };
}

async function drawnGraphs(): Promise<Record<string, { nodes: string[]; edges: string[] }>> {
  return page.$$eval('[data-channel]', (sections) =>
    Object.fromEntries(
      sections.map((s) => [
        s.getAttribute('data-channel')!,
        {
          nodes: [...s.querySelectorAll('svg [data-bundle]')]
            .map((n) => n.getAttribute('data-bundle')!)
            .sort(),
          edges: [...s.querySelectorAll('svg [data-from]')]
            .map(
              (e) =>
                `${e.getAttribute('data-from')} ${e.getAttribute('data-kind')} ${e.getAttribute('data-to')}`,
            )
            .sort(),
        },
      ]),
    ),
  );
}

describe('the catalog site in chromium (community v4.21)', () => {
  it('loads every visited page cleanly, draws every graph exactly, and every link resolves', async () => {
    const links = new Set<string>();
    const failures: string[] = [];
    const record = (path: string, v: Visit): void => {
      for (const p of v.problems) failures.push(`${path}: ${p}`);
      for (const l of v.links) links.add(l);
    };

    record('index.html', await visit('index.html', true));
    // The search: typing filters the list (the script is an enhancement; the list is complete without it).
    const all = await page.$$eval('[data-search]', (els) => els.length);
    expect(all).toBe(model.size);
    await page.type('#search-input', 'rabbitmq');
    const shown = await page.$$eval('[data-search]', (els) =>
      els.filter((e) => !(e as unknown as { hidden: boolean }).hidden).map((e) => e.textContent),
    );
    expect(shown.length).toBe([...model.keys()].filter((n) => n.includes('rabbitmq')).length);
    await page.screenshot({ path: join(images, 'site-index.png') });

    record('v4.21/index.html', await visit('v4.21/index.html', true));
    const bundlePages: string[] = [];
    let graphs = 0;
    for (const [i, name] of [...model.keys()].sort().entries()) {
      const path = `v4.21/${name}/index.html`;
      record(path, await visit(path, i % AUDIT_EVERY === 0));
      expect(await drawnGraphs(), path).toEqual(expectedGraphs(model, name));
      graphs += model.get(name)!.channels.size;
      if (name === 'infinispan') await page.screenshot({ path: join(images, 'site-package.png') });
      bundlePages.push(
        ...(await page.$$eval('a[href*="/bundles/"], a[href^="bundles/"]', (els) =>
          els.map((e) => (e as unknown as { href: string }).href),
        )),
      );
    }
    expect(graphs).toBe([...model.values()].reduce((n, p) => n + p.channels.size, 0));
    const distinct = [...new Set(bundlePages)].sort();
    const step = Math.max(1, Math.floor(distinct.length / BUNDLE_SAMPLE));
    for (let i = 0; i < distinct.length; i += step) {
      const path = distinct[i]!.slice(base.length);
      record(path, await visit(path, (i / step) % 2 === 0));
      if (i === 0) await page.screenshot({ path: join(images, 'site-bundle.png') });
    }

    // Every link of every visited page, fetched, eight at a time (fragments: the id is on the page).
    const t = performance.now();
    const targets = [...new Set([...links].map((l) => l.split('#')[0]!))];
    for (const l of targets) if (!l.startsWith(base)) failures.push(`link leaves the site: ${l}`);
    const pages = new Map<string, string>();
    const queue = targets.filter((l) => l.startsWith(base));
    const fragmentPages = new Set([...links].filter((l) => l.includes('#')).map((l) => l.split('#')[0]!));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let url = queue.pop(); url !== undefined; url = queue.pop()) {
          const withFragment = fragmentPages.has(url);
          const res = await fetch(url, { method: withFragment ? 'GET' : 'HEAD' });
          if (withFragment) pages.set(url, res.ok ? await res.text() : '');
          if (!res.ok) failures.push(`${res.status}: ${url}`);
        }
      }),
    );
    for (const link of links) {
      const [url, fragment] = link.split('#') as [string, string | undefined];
      if (fragment && pages.has(url) && !pages.get(url)!.includes(`id="${fragment}"`))
        failures.push(`no #${fragment} in ${url}`);
    }
    const linkMs = performance.now() - t;
    expect(failures).toEqual([]);
    expect(links.size).toBeGreaterThan(model.size);
    process.stderr.write(
      `site-browser: built in ${(buildMs / 1000).toFixed(1)} s; visited ${2 + model.size + Math.ceil(distinct.length / step)} pages, ${graphs} graphs, ${links.size} links of ${distinct.length} bundle pages and more; loading ${(timing.load / 1000).toFixed(1)} s, axe ${(timing.axe / 1000).toFixed(1)} s, links ${(linkMs / 1000).toFixed(1)} s\n`,
    );
  }, 120_000);
});

describe.skipIf(!haveRealRepo)('the pull-request impact page in chromium', () => {
  it('shows the real clusterpulse 1.0.2 release: loads cleanly, draws exactly the changed edges, passes axe', async () => {
    // The page the App serves at pull/<n>/<head>, written beside the site (its links are relative).
    const cop = makeCopRepo('clusterpulse/1.0.2');
    try {
      const release = cop.branch('release', () => cop.applyRelease());
      const catalogs = await impactOf(cop.repo, 'main', release);
      const path = `${impactPath(9837, release)}.html`;
      mkdirSync(join(site, 'pull', '9837'), { recursive: true });
      writeFileSync(
        join(site, path),
        impactPage({ number: 9837, head: release, base: cop.git('rev-parse', 'main'), catalogs }),
      );
      const v = await visit(path, true);
      expect(v.problems).toEqual([]);
      // The breadcrumb's link to the page itself is the App's path (no .html); every other resolves here.
      const own = base + impactPath(9837, release);
      expect(v.links).toContain(own);
      for (const l of v.links.filter((l) => l !== own))
        expect((await fetch(l, { method: 'HEAD' })).status, l).toBe(200);
      const drawn = await page.$$eval('[data-impact-channel] svg [data-change][data-from]', (els) =>
        els
          .map(
            (e) =>
              `${e.getAttribute('data-from')} ${e.getAttribute('data-kind')} ${e.getAttribute('data-to')} ${e.getAttribute('data-change')}`,
          )
          .sort(),
      );
      const groups = groupRoots(catalogs);
      const expected = groups.flatMap((g) =>
        Object.values(g.impact.packages).flatMap((p) =>
          Object.values(p.channels).flatMap((c) => [
            ...c.edgesAdded.map((e) => `${e.from} ${e.kind} ${e.to} added`),
            ...c.edgesRemoved.map((e) => `${e.from} ${e.kind} ${e.to} removed`),
          ]),
        ),
      );
      expect(expected.length).toBeGreaterThan(0);
      expect(drawn).toEqual(expected.sort());
      await page.screenshot({ path: join(images, 'site-impact.png'), fullPage: true });
    } finally {
      cop.cleanup();
    }
  }, 60_000);
});

mkdirSync(images, { recursive: true });
