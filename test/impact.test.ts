// `catalog-bot impact` on real history: the recorded release of clusterpulse 1.0.2 to five
// catalogs of community-operators-prod, a release edited by hand so it strands a version, a
// package removed from a catalog, and a change no cluster sees (layout only).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { CatalogsImpact } from '../src/catalog/olm/impact-report.js';
import { impactSection, MAX_IMPACT_SECTION } from '../src/flows/impact/section.js';
import { runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, strandingRelease } from './helpers/cop-repo.js';
import { outsideCode } from './helpers/markdown.js';

describe.skipIf(!haveRealRepo)('catalog-bot impact on community-operators-prod history', () => {
  const cop = makeCopRepo('clusterpulse/1.0.2');
  afterAll(() => cop.cleanup());
  const CATALOGS = ['v4.17', 'v4.18', 'v4.19', 'v4.20', 'v4.21'];
  const release = cop.branch('release', () => cop.applyRelease());
  const impact = async (head: string, format = 'json') => {
    const r = await runCommand('impact', [
      '--repo',
      cop.repo,
      '--base',
      'main',
      '--head',
      head,
      '--format',
      format,
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    return r.out;
  };
  const v = (n: string): string => `clusterpulse.v${n}`;
  const released = {
    status: 'changed',
    defaultChannel: null,
    channels: {
      'fast-v1': {
        status: 'changed',
        headOld: v('1.0.1'),
        headNew: v('1.0.2'),
        bundlesAdded: [v('1.0.2')],
        bundlesRemoved: [],
        // The semver template moves the skips to the new head.
        edgesAdded: [
          { from: v('1.0.2'), to: v('1.0.0'), kind: 'skips' },
          { from: v('1.0.2'), to: v('1.0.1'), kind: 'skips' },
        ],
        edgesRemoved: [{ from: v('1.0.1'), to: v('1.0.0'), kind: 'skips' }],
        skipRangeChanged: [],
        stranded: [],
        newlyReachable: [],
      },
    },
  };

  it('the release of 1.0.2: one new head in fast-v1 of five catalogs, nobody stranded', async () => {
    const json = JSON.parse(await impact(release));
    expect(Object.keys(json.catalogs)).toEqual(CATALOGS.map((c) => `catalogs/${c}`));
    for (const c of CATALOGS)
      expect(json.catalogs[`catalogs/${c}`].packages).toEqual({ clusterpulse: released });
    const md = await impact(release, 'markdown');
    // Five identical catalogs are shown once, with the channel's graph.
    expect(md).toContain('### `v4.17-v4.21, 5 catalogs`');
    expect(md.match(/^### /gm)).toHaveLength(1);
    expect(md).toMatch(/```mermaid\ngraph LR\n/);
    expect(md).toContain('-.->|skips removed|');
    expect(md).toContain('==>|skips added|');
  });

  it('a release edited by hand to skip only 1.0.1: 1.0.0 heads the channel too, so classic OLM strands everyone in v4.21', async () => {
    const head = strandingRelease(cop);
    const json = JSON.parse(await impact(head));
    const channel = json.catalogs['catalogs/v4.21'].packages.clusterpulse.channels['fast-v1'];
    // Nothing replaces or skips 1.0.0 any more: two heads, which classic OLM cannot sort.
    expect(channel.headNew).toBeNull();
    expect(channel.stranded).toEqual([v('1.0.0'), v('1.0.1')]);
    expect(channel.edgesAdded).toEqual([{ from: v('1.0.2'), to: v('1.0.1'), kind: 'skips' }]);
    expect(json.catalogs['catalogs/v4.20'].packages).toEqual({ clusterpulse: released });
    const text = await impact(head, 'text');
    expect(text).toContain(
      `! stranded (clusters on these lose their way to the head): ${v('1.0.0')}, ${v('1.0.1')}`,
    );
    expect(text).toContain(`head ${v('1.0.1')} -> (none)`);
    expect(text).toContain('v4.17-v4.20, 4 catalogs:');
  });

  it('a package removed from a catalog: every entry stranded, the default channel gone', async () => {
    const head = cop.branch(
      'remove',
      () => rmSync(join(cop.repo, 'catalogs/v4.21/clusterpulse'), { recursive: true }),
      false,
    );
    const json = JSON.parse(await impact(head));
    expect(Object.keys(json.catalogs)).toEqual(['catalogs/v4.21']);
    const pkg = json.catalogs['catalogs/v4.21'].packages.clusterpulse;
    expect(pkg.status).toBe('removed');
    expect(pkg.defaultChannel.new).toBeNull();
    for (const c of Object.values(pkg.channels) as {
      status: string;
      stranded: string[];
      bundlesRemoved: string[];
    }[]) {
      expect(c.status).toBe('removed');
      expect(c.stranded).toEqual(c.bundlesRemoved);
      expect(c.stranded.length).toBeGreaterThan(0);
    }
  });

  it('a change no cluster sees (a catalog re-written as JSON) has no impact', async () => {
    const head = cop.branch(
      'layout',
      () => {
        const dir = join(cop.repo, 'catalogs/v4.20/clusterpulse');
        const text = readFileSync(join(dir, 'catalog.yaml'), 'utf8');
        // Same blobs, another file: YAML documents -> one JSON stream.
        const json = parseAllDocuments(text)
          .map((d) => JSON.stringify(d.toJS()))
          .join('\n');
        rmSync(join(dir, 'catalog.yaml'));
        writeFileSync(join(dir, 'catalog.json'), `${json}\n`);
      },
      false,
    );
    const json = JSON.parse(await impact(head));
    expect(json.catalogs).toEqual({});
    expect(await impact(head, 'text')).toBe('no change that clusters would see\n');
  });
});

describe('catalog-bot impact with hostile names', () => {
  it('escapes Markdown, HTML and Mermaid syntax in every name it prints', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'impact-hostile-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args]);
    const channel = 's`](x)<img src=x onerror=alert(1)>';
    const v1 = 'evil.v1"]-->x["a';
    const v2 = 'evil.v2|*_<b>';
    const bundle = (name: string, version: string) =>
      JSON.stringify({
        schema: 'olm.bundle',
        package: 'evil',
        name,
        image: `q/e:${version}`,
        properties: [{ type: 'olm.package', value: { packageName: 'evil', version } }],
      });
    const write = (entries: object[], bundles: string[]) =>
      writeFileSync(
        join(dir, 'catalogs/v4.20/evil/catalog.json'),
        [
          JSON.stringify({ schema: 'olm.package', name: 'evil', defaultChannel: channel }),
          JSON.stringify({ schema: 'olm.channel', package: 'evil', name: channel, entries }),
          ...bundles,
        ].join('\n') + '\n',
      );
    mkdirSync(join(dir, 'catalogs/v4.20/evil'), { recursive: true });
    git('init', '-q', '-b', 'main');
    write([{ name: v1 }], [bundle(v1, '1.0.0')]);
    git('add', '-A');
    git('commit', '-qm', 'base');
    write([{ name: v1 }, { name: v2, replaces: v1 }], [bundle(v1, '1.0.0'), bundle(v2, '2.0.0')]);
    git('add', '-A');
    git('commit', '-qm', 'head');
    // The impact of the last commit, in `format`.
    const lastCommitImpact = (format: string) =>
      runCommand('impact', ['--repo', dir, '--base', 'HEAD~1', '--head', 'HEAD', '--format', format]);
    try {
      const r = await lastCommitImpact('markdown');
      expect(r.code).toBe(0);
      const md = r.out;
      // Outside code spans and fences nothing of the names is left: no HTML, link or mention.
      const prose = outsideCode(md);
      expect(prose).not.toMatch(/<(img|b)|\]\(x\)|onerror/);
      // The channel name (with a backtick) is one whole code span.
      expect(md).toContain('``s`](x)<img src=x onerror=alert(1)>``');
      // Mermaid labels hold no quote, bracket or arrow.
      const mermaid = md.slice(md.indexOf('```mermaid'));
      for (const label of mermaid.matchAll(/\["([^"]*)"\]/g)) expect(label[1]).not.toMatch(/["[\]<>|*]|-->/);
      expect(mermaid).toContain('#60;b#62;');
      const json = JSON.parse((await lastCommitImpact('json')).out);
      // JSON keeps the names exactly.
      expect(json.catalogs['catalogs/v4.20'].packages.evil.channels[channel].bundlesAdded).toEqual([v2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the status comment's impact section and the impact page", () => {
  it('names the page only when the section had to be summarised', () => {
    const page = 'https://catalog-bot.example.com/catalog-bot/pages/o/r/pull/2/' + 'a'.repeat(40);
    const channel = (i: number) => ({
      status: 'changed' as const,
      headOld: `p.v${i}.0.0`,
      headNew: `p.v${i}.1.0`,
      bundlesAdded: [`p.v${i}.1.0`],
      bundlesRemoved: [],
      edgesAdded: [{ from: `p.v${i}.1.0`, to: `p.v${i}.0.0`, kind: 'replaces' as const }],
      edgesRemoved: [],
      skipRangeChanged: [],
      stranded: [],
      newlyReachable: [],
    });
    const impact = (packages: number): CatalogsImpact => ({
      'catalogs/v4.21': {
        packages: Object.fromEntries(
          Array.from({ length: packages }, (_, i) => [
            `package-${i}`,
            { status: 'changed' as const, defaultChannel: null, channels: { stable: channel(i) } },
          ]),
        ),
      },
    });
    const small = impactSection(impact(1), 'b'.repeat(40), 'a'.repeat(40), MAX_IMPACT_SECTION, page);
    expect(small).toContain('`p.v0.1.0`');
    expect(small).not.toContain(page);
    const large = impactSection(impact(2000), 'b'.repeat(40), 'a'.repeat(40), MAX_IMPACT_SECTION, page);
    expect(large.length).toBeLessThanOrEqual(MAX_IMPACT_SECTION);
    expect(large).toContain('a summary');
    expect(large).toContain(`The whole impact, with a graph per changed channel: ${page}`);
  });
});
