// `catalog-bot site` (docs/site.md) run in this process on small catalogs written to temp
// directories: the graph contract of design.md, hostile names escaped everywhere and kept
// inside the output directory, a failing catalog still getting pages, the OpenShift matrix.
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundle, channel, deprecations, pkg, yamlStream } from './helpers/catalogs.js';
import { runCommand } from './helpers/cli.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));
const tree = (files: Record<string, string>): string => {
  const dir = writeTree(files);
  dirs.push(dir);
  return dir;
};
const outDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-site-'));
  dirs.push(dir);
  return join(dir, 'out');
};

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    statSync(join(dir, f)).isFile(),
  );
}

const unescape = (s: string): string =>
  s
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The channel's SVG as design.md describes it: node names and `from kind to` edges. */
function drawnGraph(html: string, channelName: string): { nodes: string[]; edges: string[] } {
  const sections = [...html.matchAll(/<section data-channel="([^"]*)"[^>]*>([\s\S]*?)<\/section>/g)];
  const section = sections.find((m) => unescape(m[1]!) === channelName);
  if (!section) throw new Error(`no section for channel ${channelName}`);
  const svg = /<svg[\s\S]*<\/svg>/.exec(section[2]!)![0];
  const nodes = [...svg.matchAll(/data-bundle="([^"]*)"/g)].map((m) => unescape(m[1]!)).sort();
  const edges = [...svg.matchAll(/data-from="([^"]*)" data-to="([^"]*)" data-kind="([^"]*)"/g)]
    .map((m) => `${unescape(m[1]!)} ${m[3]} ${unescape(m[2]!)}`)
    .sort();
  return { nodes, edges };
}

/** Every relative href of every page resolves to a file of the site (fragments and all). */
function brokenLinks(site: string): string[] {
  const broken: string[] = [];
  for (const f of files(site).filter((x) => x.endsWith('.html'))) {
    const html = readFileSync(join(site, f), 'utf8');
    for (const m of html.matchAll(/(?:href|src)="([^"]*)"/g)) {
      const url = unescape(m[1]!);
      if (url.startsWith('data:')) continue;
      const [path, fragment] = url.split('#') as [string, string | undefined];
      const target = path === '' ? join(site, f) : resolve(dirname(join(site, f)), decodeURIComponent(path));
      if (!existsSync(target)) broken.push(`${f} -> ${url}`);
      else if (fragment && !readFileSync(target, 'utf8').includes(`id="${fragment}"`))
        broken.push(`${f} -> ${url} (no #${fragment})`);
    }
  }
  return broken;
}

// stable: a <- b <- c by replaces; y skips x and c skips y; c's skipRange holds b's version
// (an edge beside the replaces one); c skips a bundle the channel does not list. Classic
// OLM's chain is c, b, a: y is offered c by its skips, but x is named only by y, which is
// off the chain, so x is stranded. b is deprecated.
const graphCatalog = (): string =>
  tree({
    'foo/catalog.yaml': yamlStream(
      pkg('foo'),
      channel([
        'foo.v1.0.0',
        { name: 'foo.v2.0.0', replaces: 'foo.v1.0.0' },
        'foo.v1.5.0',
        { name: 'foo.v1.6.0', skips: ['foo.v1.5.0'] },
        {
          name: 'foo.v3.0.0',
          replaces: 'foo.v2.0.0',
          skips: ['foo.v1.6.0', 'foo.v0.9.0'],
          skipRange: '=2.0.0',
        },
      ]),
      channel(['foo.v3.0.0'], { name: 'fast' }),
      ...['1.0.0', '1.5.0', '1.6.0', '2.0.0', '3.0.0'].map((v) => bundle(v)),
      deprecations([{ reference: { schema: 'olm.bundle', name: 'foo.v2.0.0' }, message: 'use 3' }]),
    ),
  });

describe('catalog-bot site', () => {
  it('draws each channel with one node per entry and the replaces, skips and skipRange edges (design.md)', async () => {
    const out = outDir();
    const r = await runCommand('site', [graphCatalog(), '-o', out]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const root = files(out).find((f) => f.endsWith('/foo/index.html'))!;
    expect(root).toBeDefined();
    const html = readFileSync(join(out, root), 'utf8');
    expect(drawnGraph(html, 'stable')).toEqual({
      nodes: ['foo.v1.0.0', 'foo.v1.5.0', 'foo.v1.6.0', 'foo.v2.0.0', 'foo.v3.0.0'],
      edges: [
        'foo.v1.6.0 skips foo.v1.5.0',
        'foo.v2.0.0 replaces foo.v1.0.0',
        'foo.v3.0.0 replaces foo.v2.0.0',
        'foo.v3.0.0 skipRange foo.v2.0.0',
        'foo.v3.0.0 skips foo.v1.6.0',
      ],
    });
    expect(drawnGraph(html, 'fast')).toEqual({ nodes: ['foo.v3.0.0'], edges: [] });
    // Marks: the head, the stranded entry, the deprecated one; the missing skip told in words.
    const node = (name: string): string =>
      new RegExp(`<g class="([^"]*)" data-bundle="${name}"`).exec(html)![1]!;
    expect(node('foo.v3.0.0')).toBe('node head');
    expect(node('foo.v1.5.0')).toBe('node stranded');
    expect(node('foo.v2.0.0')).toBe('node deprecated');
    expect(node('foo.v1.6.0')).toBe('node');
    expect(html).toContain('<code>foo.v3.0.0</code> skips <code>foo.v0.9.0</code> (not in this channel)');
    // A text alternative: the SVG is named and described; the edge list is beside it.
    expect(html).toMatch(/<svg [^>]*role="img" aria-labelledby="g0-title g0-desc"/);
    expect(brokenLinks(out)).toEqual([]);
    // Every bundle has a page; no matrix for one catalog.
    expect(files(out).filter((f) => f.includes('/bundles/')).length).toBe(5);
    expect(existsSync(join(out, 'matrix.html'))).toBe(false);
  });

  it("shows a bundle's image, related images, owned CRDs, provided APIs and which bundles require it", async () => {
    const gvk = { group: 'foo.example.com', version: 'v1', kind: 'Foo' };
    const catalog = tree({
      'foo/catalog.yaml': yamlStream(
        pkg('foo'),
        channel(['foo.v1.0.0', { name: 'foo.v2.0.0', replaces: 'foo.v1.0.0' }]),
        bundle('1.0.0'),
        bundle('2.0.0', {
          relatedImages: [{ name: 'operator', image: 'quay.io/example/foo-operator:v2' }],
          properties: [
            { type: 'olm.package', value: { packageName: 'foo', version: '2.0.0' } },
            { type: 'olm.gvk', value: gvk },
            {
              type: 'olm.csv.metadata',
              value: {
                displayName: 'Foo Operator',
                crdDescriptions: { owned: [{ name: 'foos.foo.example.com', ...gvk, displayName: 'Foo' }] },
              },
            },
          ],
        }),
      ),
      'bar/catalog.yaml': yamlStream(
        pkg('bar'),
        channel(['bar.v1.0.0'], { package: 'bar' }),
        bundle(
          '1.0.0',
          {
            properties: [
              { type: 'olm.package', value: { packageName: 'bar', version: '1.0.0' } },
              { type: 'olm.package.required', value: { packageName: 'foo', versionRange: '>=2.0.0' } },
            ],
          },
          'bar',
        ),
        bundle(
          '1.0.0',
          {
            name: 'baz.v1.0.0',
            properties: [
              { type: 'olm.package', value: { packageName: 'baz', version: '1.0.0' } },
              { type: 'olm.gvk.required', value: gvk },
            ],
          },
          'baz',
        ),
        pkg('baz'),
        channel(['baz.v1.0.0'], { package: 'baz' }),
      ),
    });
    const out = outDir();
    const r = await runCommand('site', [catalog, '-o', out]);
    expect(r.code, r.err).toBe(0);
    const page = (b: string): string =>
      readFileSync(
        join(
          out,
          files(out).find((f) => f.endsWith(`/bundles/${b}.html`))!,
        ),
        'utf8',
      );
    const v2 = page('foo.v2.0.0');
    expect(v2).toContain('<code>quay.io/example/foo-bundle:v2.0.0</code>');
    expect(v2).toContain(
      '<td><code>operator</code></td><td><code>quay.io/example/foo-operator:v2</code></td>',
    );
    expect(v2).toContain(
      '<td><code>foos.foo.example.com</code></td><td><code>Foo</code></td><td><code>v1</code></td>',
    );
    expect(v2).toContain('<dd>Foo Operator</dd>');
    expect(v2).toContain('<li><code>Foo v1 (foo.example.com)</code></li>');
    const users = /What requires it in this catalog:<\/p><ul>(.*?)<\/ul>/.exec(v2)![1]!;
    expect(
      [...users.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map((m) => [
        m[1]!.split('/').slice(-3).join('/'),
        m[2],
      ]),
    ).toEqual([
      ['bar/bundles/bar.v1.0.0.html', 'bar.v1.0.0'],
      ['baz/bundles/baz.v1.0.0.html', 'baz.v1.0.0'],
    ]);
    // foo.v1.0.0 is outside bar's range and provides no API: nothing requires it.
    expect(page('foo.v1.0.0')).toMatch(/What requires it in this catalog:<\/p><p>Nothing\.<\/p>/);
    expect(page('bar.v1.0.0')).toMatch(/What it requires:<\/p><ul><li>[^<]*foo[^<]*&gt;=2\.0\.0/);
    expect(brokenLinks(out)).toEqual([]);
  });

  it('escapes hostile names everywhere, keeps every file inside the output directory, and says the catalog fails', async () => {
    const evilPkg = '<img src=x onerror=alert(1)>';
    const evilChannel = '"><script>alert(2)</script>';
    const evilBundle = '../../../../escaped-<b>x</b>';
    const evilMessage = '[click](javascript:alert(3)) <iframe src=//evil>';
    const catalog = tree({
      'evil/catalog.yaml': yamlStream(
        pkg(evilPkg, { defaultChannel: evilChannel, description: '<style>*{display:none}</style>' }),
        channel([evilBundle], { package: evilPkg, name: evilChannel }),
        {
          ...bundle(
            '1.0.0',
            { name: evilBundle, relatedImages: [{ name: '<svg onload=alert(4)>', image: 'x' }] },
            evilPkg,
          ),
        },
        deprecations([{ reference: { schema: 'olm.package' }, message: evilMessage }], { package: evilPkg }),
      ),
    });
    const out = outDir();
    const r = await runCommand('site', [catalog, '-o', out]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('failing validation');
    const written = files(out);
    for (const f of written) expect(resolve(out, f).startsWith(`${resolve(out)}/`)).toBe(true);
    expect(readdirSync(dirname(out))).toEqual(['out']);
    const pages = written.filter((f) => f.endsWith('.html'));
    expect(pages.length).toBe(4); // index, catalog, package, bundle
    for (const f of pages) {
      const html = readFileSync(join(out, f), 'utf8');
      for (const raw of [evilPkg, evilChannel, evilBundle, evilMessage, '<style>', '<svg onload', '<iframe'])
        expect(html, f).not.toContain(raw);
      // The only script is the site's own search, and only on the index.
      expect([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual(
        f === 'index.html' ? ['<script src="assets/search.js" defer>'] : [],
      );
      expect(html).toContain("script-src 'self'");
    }
    const packagePage = pages.find((f) => f.split('/').length === 3)!;
    const html = readFileSync(join(out, packagePage), 'utf8');
    expect(html).toContain('This catalog fails validation');
    // The names are shown as text and kept exactly in the data attributes.
    expect(html).toContain(`<h1>${evilPkg.replace('<', '&lt;').replace('>', '&gt;')}</h1>`);
    expect(drawnGraph(html, evilChannel)).toEqual({ nodes: [evilBundle], edges: [] });
    expect(html).toContain('[click](javascript:alert(3)) &lt;iframe src=//evil&gt;');
    expect(brokenLinks(out)).toEqual([]);
  });

  it('lists, without drawing, a channel whose skipRanges would make a quadratic graph (bounded work)', async () => {
    // 150 entries, each replacing the one before and with a skipRange holding every version:
    // 150 x 149 skipRange edges.
    const versions = Array.from({ length: 150 }, (_, i) => `1.${i}.0`);
    const catalog = tree({
      'foo/catalog.yaml': yamlStream(
        pkg('foo'),
        channel(
          versions.map((v, i) => ({
            name: `foo.v${v}`,
            ...(i > 0 ? { replaces: `foo.v${versions[i - 1]}` } : {}),
            skipRange: '>=0.0.0',
          })),
        ),
        ...versions.map((v) => bundle(v)),
      ),
    });
    const out = outDir();
    const r = await runCommand('site', [catalog, '-o', out]);
    expect(r.code, r.err).toBe(0);
    const html = readFileSync(
      join(
        out,
        files(out).find((f) => f.endsWith('/foo/index.html'))!,
      ),
      'utf8',
    );
    expect(html).toContain('Too large to draw');
    expect(html).not.toContain('<svg');
    // Every entry is still listed with where it goes next; the page stays small.
    expect(html.match(/<tr><th scope="row"><a href="[^"]*\/bundles\//g)?.length).toBe(150);
    expect(html.length).toBeLessThan(200_000);
  });

  it('adds the package x OpenShift-version matrix for two OpenShift catalogs, each cell a link to the package', async () => {
    const parent = tree({
      'v4.20/foo/catalog.yaml': yamlStream(pkg('foo'), channel(['foo.v1.0.0']), bundle('1.0.0')),
      'v4.21/foo/catalog.yaml': yamlStream(
        pkg('foo'),
        channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]),
        bundle('1.0.0'),
        bundle('1.1.0'),
      ),
    });
    const out = outDir();
    const r = await runCommand('site', [join(parent, 'v4.20'), join(parent, 'v4.21'), '-o', out]);
    expect(r.code, r.err).toBe(0);
    const matrix = readFileSync(join(out, 'matrix.html'), 'utf8');
    const row = /<tr><th scope="row">foo<\/th>(.*?)<\/tr>/.exec(matrix)![1]!;
    expect([...row.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map((m) => [m[1], m[2]])).toEqual([
      ['v4.20/foo/index.html', '1.0.0'],
      ['v4.21/foo/index.html', '1.1.0'],
    ]);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('href="matrix.html"');
    expect(brokenLinks(out)).toEqual([]);
  });

  it("keeps a root named like the site's own files (assets, index.html) apart from them", async () => {
    const parent = tree({
      'assets/site.css/catalog.yaml': yamlStream(
        pkg('site.css'),
        channel(['site.css.v1.0.0'], { package: 'site.css' }),
        bundle('1.0.0', {}, 'site.css'),
      ),
      'index.html/foo/catalog.yaml': yamlStream(pkg('foo'), channel(['foo.v1.0.0']), bundle('1.0.0')),
    });
    const out = outDir();
    const r = await runCommand('site', [join(parent, 'assets'), join(parent, 'index.html'), '-o', out]);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(out, 'assets', 'site.css'), 'utf8')).toMatch(/^:root/);
    expect(statSync(join(out, 'index.html')).isFile()).toBe(true);
    expect(brokenLinks(out)).toEqual([]);
  });

  it('refuses two roots of one name and a missing -o, writing nothing', async () => {
    const parent = tree({ 'a/v4.21/x.yaml': '', 'b/v4.21/x.yaml': '' });
    const out = outDir();
    const twice = await runCommand('site', [join(parent, 'a/v4.21'), join(parent, 'b/v4.21'), '-o', out]);
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/both named v4\.21/);
    const noOut = await runCommand('site', [join(parent, 'a/v4.21')]);
    expect(noOut.code).toBe(2);
    expect(noOut.err).toMatch(/-o <dir>/);
    expect(existsSync(out)).toBe(false);
    expect(relative(parent, out).startsWith('..')).toBe(true);
  });
});
