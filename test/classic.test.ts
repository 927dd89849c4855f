// The OLM classic (v0) resolver model: sortChannel and "what does an install upgrade to".
// Cases marked "upstream" are ported from operator-lifecycle-manager v0.46.0
// pkg/controller/registry/resolver (resolver_test.go, step_resolver_test.go), expected
// values and error texts included. FBC cases load a real catalog, and where the real opm
// is available they also check opm's verdict, since the interesting cases are the ones
// opm accepts and classic cannot use.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  classicCandidates,
  classicChannel,
  classicChannelEntries,
  classicNext,
  classicPath,
  type InstalledBundle,
} from '../src/catalog/olm/classic.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import type { ModelBundle, ModelChannel } from '../src/catalog/fbc/model.js';
import { parseVersion } from '../src/catalog/versions/semver.js';
import {
  bundle,
  channel,
  pkg,
  SKIPS_LADDER,
  v,
  versionEntry,
  yamlStream,
  type Edges,
} from './helpers/catalogs.js';
import { haveOpm, opmValidate, tempTrees } from './helpers/oracle.js';

const trees = tempTrees();

interface Loaded {
  channel: ModelChannel;
  /** Our validator's verdict, which equals opm's. */
  valid: boolean;
  dir: string;
}

/**
 * Load package foo with one channel `stable`. Keys are versions (bundle `foo.v<key>`);
 * `replaces` and `skips` also name versions, so `replaces: '1.0.0'` means `foo.v1.0.0`.
 */
async function stable(entries: Record<string, Edges>): Promise<Loaded> {
  const channelEntries = Object.entries(entries).map(([version, e]) => versionEntry(version, e));
  const bundles = Object.keys(entries).map((version) => bundle(version));
  const dir = trees.write({ 'foo/catalog.yaml': yamlStream(pkg(), channel(channelEntries), ...bundles) });
  const report = await validateCatalog(new DirectorySource(dir));
  const loaded = report.model.get('foo')?.channels.get('stable');
  if (!loaded) throw new Error(`channel not in the model: ${JSON.stringify(report.diagnostics)}`);
  return { channel: loaded, valid: report.valid, dir };
}

/** Our verdict, checked against the real opm when it is available. */
function expectOpmVerdict(loaded: Loaded, valid: boolean): void {
  expect(loaded.valid).toBe(valid);
  if (haveOpm) expect(opmValidate(loaded.dir).valid).toBe(valid);
}

interface DirectEntry extends Edges {
  name: string;
  version?: string;
}

/** A ModelChannel built by hand, for catalogs opm cannot even load (upstream test shapes). */
function direct(entries: DirectEntry[], name = 'channel', packageName = 'package'): ModelChannel {
  const bundles = new Map<string, ModelBundle>();
  for (const e of entries) {
    const edges = { replaces: e.replaces ?? '', skips: e.skips ?? [], skipRange: e.skipRange ?? '' };
    bundles.set(e.name, {
      name: e.name,
      package: packageName,
      channel: name,
      ...edges,
      entry: { name: e.name, ...edges },
      image: '',
      properties: [],
      relatedImages: [],
      release: [],
      ...(e.version !== undefined ? { version: parseVersion(e.version) } : {}),
    });
  }
  return { name, package: packageName, bundles };
}

const installed = (name: string, version?: string): InstalledBundle =>
  version === undefined ? { name } : { name, version: parseVersion(version) };

describe('sortChannel (upstream TestSortChannel and TestDisjointChannelGraph)', () => {
  it('wrinkle-free: the head first, then back along replaces', () => {
    const c = classicChannel(direct([{ name: 'b' }, { name: 'a', replaces: 'b' }]));
    expect(c).toEqual({ heads: ['a'], chain: ['a', 'b'], error: null, install: 'a' });
  });

  it('empty: no chain and no error', () => {
    expect(classicChannel(direct([]))).toEqual({ heads: [], chain: [], error: null, install: null });
  });

  it('replacement cycle without a head', () => {
    const c = classicChannel(
      direct([
        { name: 'a', replaces: 'b' },
        { name: 'b', replaces: 'a' },
      ]),
    );
    expect(c).toEqual({
      heads: [],
      chain: [],
      error:
        'no channel heads (entries not replaced by another entry) found in channel "channel" of package "package"',
      install: null,
    });
  });

  it('replacement cycle below the head', () => {
    const c = classicChannel(
      direct([
        { name: 'a', replaces: 'b' },
        { name: 'b', replaces: 'c' },
        { name: 'c', replaces: 'b' },
      ]),
    );
    expect(c.heads).toEqual(['a']);
    expect(c.chain).toEqual([]);
    expect(c.install).toBeNull();
    expect(c.error).toBe(
      'a cycle exists in the chain of replacement beginning with "a" in channel "channel" of package "package"',
    );
  });

  it('an entry both skipped and replaced is left out', () => {
    const c = classicChannel(direct([{ name: 'a', replaces: 'b', skips: ['b'] }, { name: 'b' }]));
    expect(c.chain).toEqual(['a']);
  });

  it('a skipped entry is left out, the walk goes on past it', () => {
    const c = classicChannel(
      direct([{ name: 'a', replaces: 'b', skips: ['c'] }, { name: 'b', replaces: 'c' }, { name: 'c' }]),
    );
    expect(c.chain).toEqual(['a', 'b']);
  });

  it('two replaces chains', () => {
    const c = classicChannel(direct([{ name: 'a' }, { name: 'b', replaces: 'c' }, { name: 'c' }]));
    expect(c.heads).toEqual(['a', 'b']);
    expect(c.error).toBe(
      'a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "channel" of package "package": a, b...c',
    );
  });

  it('disjoint channel graph: heads in name order, as opm serves them', () => {
    const c = classicChannel(
      direct(
        [
          { name: 'test-package.side2.v2', replaces: 'test-package.side2.v1' },
          { name: 'test-package.side1.v1' },
          { name: 'test-package.side1.v2', replaces: 'test-package.side1.v1' },
          { name: 'test-package.side2.v1' },
        ],
        'alpha',
        'test-package',
      ),
    );
    expect(c.error).toBe(
      'a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "alpha" of package "test-package": test-package.side1.v2...test-package.side1.v1, test-package.side2.v2...test-package.side2.v1',
    );
  });

  it('a channel with skips over a replaces chain (TestSolveOperators_WithSkipsAndStartingCSV)', () => {
    const ch = direct([
      { name: 'test-package.v1' },
      { name: 'test-package.v2', replaces: 'test-package.v1' },
      { name: 'test-package.v3', replaces: 'test-package.v2' },
      { name: 'test-package.v4', replaces: 'test-package.v3', skips: ['test-package.v3'] },
      {
        name: 'test-package.v5',
        replaces: 'test-package.v4',
        skips: ['test-package.v2', 'test-package.v3', 'test-package.v4'],
      },
      { name: 'test-package.v6', replaces: 'test-package.v5' },
    ]);
    const c = classicChannel(ch);
    expect(c.chain).toEqual(['test-package.v6', 'test-package.v5', 'test-package.v1']);
    // The upstream test resolves a fresh dependency on this package to v6.
    expect(c.install).toBe('test-package.v6');
    expect(classicChannelEntries(ch).map((b) => b.name)).toEqual(c.chain);
  });

  it('a self-reference counts as replaced', () => {
    const c = classicChannel(direct([{ name: 'a', replaces: 'a' }]));
    expect(c.heads).toEqual([]);
    expect(c.error).toMatch(/^no channel heads/);
  });

  it('heads are ordered by Go string order (UTF-8 bytes), not UTF-16 units', () => {
    const c = classicChannel(direct([{ name: '\u{1F600}' }, { name: '\uFF21' }]));
    expect(c.heads).toEqual(['\uFF21', '\u{1F600}']);
  });
});

describe('choosing the next bundle (upstream step_resolver_test.go cases)', () => {
  // The installed CSVs of these tests have spec.version 0.0.0 and are not in the catalog.
  it('InstalledSub/UpdateInHead/SkipRange', () => {
    const ch = direct(
      [{ name: 'a.v3', replaces: 'a.v2', version: '1.0.0', skipRange: '< 1.0.0' }],
      'alpha',
      'a',
    );
    expect(classicNext(ch, installed('a.v1', '0.0.0'))).toBe('a.v3');
  });

  it('InstalledSub/UpdatesAvailable/SkipRangeNotInHead: the nearest candidate to the head wins', () => {
    const ch = direct(
      [
        { name: 'a.v2', version: '1.0.0', skipRange: '< 1.0.0' },
        { name: 'a.v3', replaces: 'a.v2', version: '1.0.0', skipRange: '< 1.0.0' },
        { name: 'a.v4', replaces: 'a.v3', version: '1.0.0', skipRange: '< 1.0.0 !0.0.0' },
      ],
      'alpha',
      'a',
    );
    expect(classicCandidates(ch, installed('a.v1', '0.0.0'))).toEqual(['a.v3', 'a.v2']);
    expect(classicNext(ch, installed('a.v1', '0.0.0'))).toBe('a.v3');
  });

  it('InstalledSub/UpdatesAvailable/SpecifiedSkips', () => {
    const ch = direct(
      [
        { name: 'a.v2', version: '1.0.0', skips: ['a.v1'] },
        { name: 'a.v3', replaces: 'a.v2', version: '1.0.0', skips: ['a.v1'] },
      ],
      'alpha',
      'a',
    );
    expect(classicNext(ch, installed('a.v1', '0.0.0'))).toBe('a.v3');
  });

  it('TestSolveOperators_FindLatestVersion: an installed CSV outside the catalog, matched by replaces', () => {
    const ch = direct([{ name: 'test-package.v1.0.1', replaces: 'test-package.v1', version: '1.0.1' }]);
    expect(classicNext(ch, installed('test-package.v1', '0.0.0'))).toBe('test-package.v1.0.1');
  });
});

describe('classic on FBC catalogs', () => {
  it('a linear chain moves one hop at a time up to the head', async () => {
    const l = await stable({ '1.0.0': {}, '2.0.0': { replaces: '1.0.0' }, '3.0.0': { replaces: '2.0.0' } });
    expectOpmVerdict(l, true);
    expect(classicChannel(l.channel)).toEqual({
      heads: [v('3.0.0')],
      chain: [v('3.0.0'), v('2.0.0'), v('1.0.0')],
      error: null,
      install: v('3.0.0'),
    });
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBe(v('2.0.0'));
    expect(classicNext(l.channel, { name: v('2.0.0') })).toBe(v('3.0.0'));
    expect(classicNext(l.channel, { name: v('3.0.0') })).toBeNull();
    expect(classicPath(l.channel, { name: v('1.0.0') })).toEqual([v('2.0.0'), v('3.0.0')]);
    expect(classicPath(l.channel, { name: v('3.0.0') })).toEqual([]);
    // The chain keeps file positions for diagnostics.
    expect(classicChannelEntries(l.channel).map((b) => typeof b.entry.line)).toEqual([
      'number',
      'number',
      'number',
    ]);
  });

  it('key finding 1: opm accepts the skips ladder, but an install of v1 has no update', async () => {
    const l = await stable(SKIPS_LADDER);
    expectOpmVerdict(l, true);
    const c = classicChannel(l.channel);
    expect(c.heads).toEqual([v('4.0.0')]);
    expect(c.chain).toEqual([v('4.0.0'), v('3.0.0')]);
    // v2 names v1, but v2 is skipped by v3, so it is not on the chain.
    expect(classicCandidates(l.channel, { name: v('1.0.0') })).toEqual([]);
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBeNull();
    expect(classicPath(l.channel, { name: v('1.0.0') })).toEqual([]);
    expect(classicPath(l.channel, { name: v('2.0.0') })).toEqual([v('3.0.0'), v('4.0.0')]);
  });

  it('key finding 2: replaces + skips of the same predecessor dead-ends what lies below it', async () => {
    const l = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0' },
      '3.0.0': { replaces: '2.0.0', skips: ['2.0.0'] },
    });
    // opm stops its walk at the skipped v2 and calls v1 stranded.
    expectOpmVerdict(l, false);
    // Classic walks on through v2, so v1 is on the chain, but nothing on the chain names it.
    const c = classicChannel(l.channel);
    expect(c.error).toBeNull();
    expect(c.chain).toEqual([v('3.0.0'), v('1.0.0')]);
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBeNull();
    expect(classicNext(l.channel, { name: v('2.0.0') })).toBe(v('3.0.0'));
  });

  it('key finding 2: a replaces cycle behind a skipped entry passes opm and breaks sortChannel', async () => {
    const l = await stable({
      '2.0.0': { replaces: '3.0.0' },
      '3.0.0': { replaces: '2.0.0' },
      '4.0.0': { replaces: '3.0.0', skips: ['3.0.0', '2.0.0'] },
    });
    expectOpmVerdict(l, true);
    const c = classicChannel(l.channel);
    expect(c.heads).toEqual([v('4.0.0')]);
    expect(c.error).toBe(
      'a cycle exists in the chain of replacement beginning with "foo.v4.0.0" in channel "stable" of package "foo"',
    );
    expect(c.install).toBeNull();
    // Resolution fails for the whole subscription: nothing moves.
    expect(classicNext(l.channel, { name: v('3.0.0') })).toBeNull();
    expect(classicPath(l.channel, { name: v('2.0.0') })).toEqual([]);
  });

  it('seed example: v3 skips [v2], v2 skipRange ">=1.0.0 <2.0.0"; installed v1.0.0 gets no update', async () => {
    const l = await stable({
      '2.0.0': { skipRange: '>=1.0.0 <2.0.0' },
      '3.0.0': { skips: ['2.0.0'] },
    });
    expectOpmVerdict(l, true);
    expect(classicChannel(l.channel).chain).toEqual([v('3.0.0')]);
    const v1 = installed(v('1.0.0'), '1.0.0');
    expect(classicCandidates(l.channel, v1)).toEqual([]);
    expect(classicNext(l.channel, v1)).toBeNull();
    expect(classicPath(l.channel, v1)).toEqual([]);
  });

  it('a skipRange-only successor: the head covers an installed version that was never in the catalog', async () => {
    const l = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0', skipRange: '>=0.5.0 <2.0.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicNext(l.channel, installed('foo.v0.7.3', '0.7.3'))).toBe(v('2.0.0'));
    // blang ranges include prereleases below the bound.
    expect(classicNext(l.channel, installed('foo.v2.0.0-rc.1', '2.0.0-rc.1'))).toBe(v('2.0.0'));
    expect(classicNext(l.channel, installed('foo.v0.4.0', '0.4.0'))).toBeNull();
    // Without a known version only names can match.
    expect(classicNext(l.channel, { name: 'foo.v0.7.3' })).toBeNull();
  });

  it('key finding 3: a skipRange-only new bundle is a second head, and classic fails the channel', async () => {
    const l = await stable({ '1.0.0': {}, '1.1.0': { skipRange: '>=1.0.0 <1.1.0' } });
    expectOpmVerdict(l, false);
    const c = classicChannel(l.channel);
    expect(c.heads).toEqual([v('1.0.0'), v('1.1.0')]);
    expect(c.error).toBe(
      'a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "stable" of package "foo": foo.v1.0.0, foo.v1.1.0',
    );
    expect(c.install).toBeNull();
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBeNull();
  });

  it('multiple heads with longer chains name each chain by its ends', async () => {
    const l = await stable({
      '1.0.0': {},
      '1.1.0': { replaces: '1.0.0' },
      '2.0.0': {},
      '2.1.0': { replaces: '2.0.0' },
      '2.2.0': { replaces: '2.1.0' },
    });
    expectOpmVerdict(l, false);
    expect(classicChannel(l.channel).error).toMatch(
      /2 replacement chains were found in channel "stable" of package "foo": foo\.v1\.1\.0\.\.\.foo\.v1\.0\.0, foo\.v2\.2\.0\.\.\.foo\.v2\.0\.0$/,
    );
  });

  it('off-chain bundles are never chosen', async () => {
    // v1.5 replaces v1 but is skipped by the head: it is off the chain.
    const l = await stable({
      '1.0.0': {},
      '1.5.0': { replaces: '1.0.0' },
      '2.0.0': { replaces: '1.0.0', skips: ['1.5.0'] },
    });
    expectOpmVerdict(l, true);
    expect(classicChannel(l.channel).chain).toEqual([v('2.0.0'), v('1.0.0')]);
    expect(classicCandidates(l.channel, { name: v('1.0.0') })).toEqual([v('2.0.0')]);
    for (const b of l.channel.bundles.keys())
      expect(classicNext(l.channel, { name: b })).not.toBe(v('1.5.0'));
  });

  it('an entry replaced only by a skipped entry is off the chain without being skipped (opm: stranded)', async () => {
    const l = await stable({
      '1.0.0': {},
      '1.5.0': { replaces: '1.0.0' },
      '2.0.0': { skips: ['1.5.0'] },
    });
    expectOpmVerdict(l, false);
    const c = classicChannel(l.channel);
    expect(c.error).toBeNull();
    expect(c.chain).toEqual([v('2.0.0')]);
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBeNull();
    expect(classicNext(l.channel, { name: v('1.5.0') })).toBe(v('2.0.0'));
  });

  it('downgrade edges are followed', async () => {
    const l = await stable({ '3.0.0': {}, '2.0.0': { replaces: '3.0.0' } });
    expectOpmVerdict(l, true);
    expect(classicChannel(l.channel).install).toBe(v('2.0.0'));
    expect(classicNext(l.channel, { name: v('3.0.0') })).toBe(v('2.0.0'));
  });

  it('a skipRange pointing back at a newer version makes classic loop, and classicPath shows the loop', async () => {
    const l = await stable({
      '1.0.0': { skipRange: '>=2.0.0' },
      '2.0.0': { replaces: '1.0.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicNext(l.channel, { name: v('2.0.0') })).toBe(v('1.0.0'));
    expect(classicPath(l.channel, { name: v('1.0.0') })).toEqual([v('2.0.0'), v('1.0.0')]);
  });

  it('an installed bundle absent from the catalog is matched by name (replaces, skips) or by version (skipRange)', async () => {
    const l = await stable({
      '1.0.0': { replaces: '0.9.0' },
      '1.1.0': { replaces: '1.0.0', skips: ['0.8.0'] },
      '1.2.0': { replaces: '1.1.0', skipRange: '>=0.1.0 <0.5.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicNext(l.channel, { name: v('0.9.0') })).toBe(v('1.0.0'));
    expect(classicNext(l.channel, { name: v('0.8.0') })).toBe(v('1.1.0'));
    expect(classicNext(l.channel, installed('foo.v0.3.0', '0.3.0'))).toBe(v('1.2.0'));
    expect(classicNext(l.channel, installed('foo.v0.6.0', '0.6.0'))).toBeNull();
    expect(classicPath(l.channel, { name: v('0.9.0') })).toEqual([v('1.0.0'), v('1.1.0'), v('1.2.0')]);
  });

  it('the candidate nearest the head wins, and each later hop uses the catalog version', async () => {
    const l = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0' },
      '3.0.0': { replaces: '2.0.0' },
      '4.0.0': { replaces: '3.0.0', skipRange: '>=2.0.0 <4.0.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicCandidates(l.channel, { name: v('2.0.0') })).toEqual([v('4.0.0'), v('3.0.0')]);
    expect(classicNext(l.channel, { name: v('2.0.0') })).toBe(v('4.0.0'));
    expect(classicPath(l.channel, { name: v('1.0.0') })).toEqual([v('2.0.0'), v('4.0.0')]);
    // The given version wins over the catalog's for the first hop.
    expect(classicNext(l.channel, installed(v('1.0.0'), '2.5.0'))).toBe(v('4.0.0'));
  });

  it("a skipRange covering the installed bundle's own version is a no-op", async () => {
    const l = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0', skipRange: '>=1.0.0 <=2.0.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicCandidates(l.channel, { name: v('2.0.0') })).toEqual([v('2.0.0')]);
    expect(classicNext(l.channel, { name: v('2.0.0') })).toBeNull();
    expect(classicPath(l.channel, { name: v('2.0.0') })).toEqual([]);
    expect(classicNext(l.channel, { name: v('1.0.0') })).toBe(v('2.0.0'));
  });

  it('a skipRange with an empty || group matches until evaluation reaches that group', async () => {
    const l = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0', skipRange: '0.5.0 || || 0.7.0' },
    });
    expectOpmVerdict(l, true);
    expect(classicNext(l.channel, installed('foo.v0.5.0', '0.5.0'))).toBe(v('2.0.0'));
    expect(classicNext(l.channel, installed('foo.v0.7.0', '0.7.0'))).toBeNull();
  });

  it('an unparsable skipRange counts as none', () => {
    const ch = direct([
      { name: 'a.v1', version: '1.0.0' },
      { name: 'a.v2', version: '2.0.0', replaces: 'a.v1', skipRange: '>=0.1 <2.0.0' },
    ]);
    expect(classicChannel(ch).error).toBeNull();
    expect(classicNext(ch, installed('a.v0', '0.5.0'))).toBeNull();
    expect(classicNext(ch, { name: 'a.v1' })).toBe('a.v2');
  });
});

describe('speed', () => {
  it('1000 channels of 100 entries, every entry skipRanged: sort all and walk from every entry', () => {
    const channels = Array.from({ length: 1000 }, (_, c) =>
      direct(
        Array.from({ length: 100 }, (_, i) => ({
          name: `p${c}.v1.0.${i}`,
          version: `1.0.${i}`,
          ...(i > 0 ? { replaces: `p${c}.v1.0.${i - 1}` } : {}),
          // Never matches, so every lookup scans all ranges between the head and the hit.
          skipRange: '>=0.0.1 <0.0.2',
        })),
        'stable',
        `p${c}`,
      ),
    );
    const started = performance.now();
    let hops = 0;
    for (const ch of channels) {
      expect(classicChannel(ch).chain).toHaveLength(100);
      for (const name of ch.bundles.keys()) hops += classicPath(ch, { name }).length;
    }
    expect(hops).toBe(1000 * ((99 * 100) / 2));
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('classic over the real catalogs (all pass opm)', () => {
  const catalogsDir = fileURLToPath(new URL('../../shared/data/real-catalogs/', import.meta.url));
  let roots: string[] = [];
  try {
    roots = readdirSync(catalogsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((repo) =>
        readdirSync(join(catalogsDir, repo.name, 'catalogs')).map((v) =>
          join(catalogsDir, repo.name, 'catalogs', v),
        ),
      );
  } catch {
    // The shared data is not there (e.g. on GitHub Actions).
  }

  for (const root of roots) {
    it(`every channel of ${root.slice(catalogsDir.length)} sorts to one chain starting at its head`, async () => {
      const report = await validateCatalog(new DirectorySource(root));
      expect(report.valid).toBe(true);
      const channels = [...report.model.values()].flatMap((p) => [...p.channels.values()]);
      expect(channels.length).toBeGreaterThan(10);

      const started = performance.now();
      const results = channels.map((c) => classicChannel(c));
      const elapsed = performance.now() - started;

      const broken = results
        .map((r, i) => ({ r, c: channels[i]! }))
        .filter(({ r }) => r.error !== null || r.heads.length !== 1 || r.chain[0] !== r.heads[0])
        .map(({ r, c }) => `${c.package}/${c.name}: ${r.error ?? r.heads.join(',')}`);
      expect(broken).toEqual([]);
      expect(results.every((r) => r.install === r.heads[0])).toBe(true);
      // The budget is 50 ms for the whole of v4.21 on the 2-core machine; leave room for a loaded CI.
      expect(elapsed).toBeLessThan(500);

      // classicNext's index agrees with the plain candidate filter for every entry.
      for (const c of channels) {
        for (const name of c.bundles.keys()) {
          const first = classicCandidates(c, { name })[0] ?? null;
          expect(classicNext(c, { name })).toBe(first === name ? null : first);
        }
      }
    });
  }
});
