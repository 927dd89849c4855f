// The OLM v1 (operator-controller) resolver model. Catalogs are tiny FBC trees loaded with
// the real loader; v1 never validates, so several of them are invalid for opm on purpose.
// Cases marked "upstream" are ported from operator-controller v1.11
// (catalogmetadata/filter/successors_test.go, resolve/catalog_test.go).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import type { ModelPackage } from '../src/catalog/fbc/model.js';
import { parseVersion } from '../src/catalog/versions/semver.js';
import {
  InvalidVersionRangeError,
  v1Candidates,
  v1Chosen,
  v1Path,
  v1Successors,
  type InstalledBundle,
} from '../src/catalog/olm/v1.js';
import {
  bundle,
  channel,
  deprecations,
  olmPackageProp,
  pkg,
  yamlStream,
  type Obj,
} from './helpers/catalogs.js';
import { tempTrees } from './helpers/oracle.js';

const trees = tempTrees();

/** The bundle name of package foo at a version. */
const v = (version: string) => `foo.v${version}`;

/** What operator-controller records for an installed bundle (legacy: release in build metadata). */
const installed = (version: string, name = v(version)): InstalledBundle => ({
  name,
  version: parseVersion(version),
});

interface Edges {
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

interface Loaded {
  pkg: ModelPackage;
  /** opm's verdict (our validator equals it); v1 does not care. */
  valid: boolean;
}

/**
 * Load package foo. `channels` maps channel name to entries keyed by version (bundle
 * `foo.v<version>`, whose `olm.package` version is the key); `replaces` and `skips` name
 * versions too. `bundles` replaces generated bundle blobs of the same name; `blobs` are added.
 */
async function load(
  channels: Record<string, Record<string, Edges>>,
  extra: { bundles?: Obj[]; blobs?: Obj[] } = {},
): Promise<Loaded> {
  const versions = new Set<string>();
  const channelBlobs = Object.entries(channels).map(([name, entries]) =>
    channel(
      Object.entries(entries).map(([version, e]) => {
        versions.add(version);
        const entry: Obj = { name: v(version) };
        if (e.replaces !== undefined) entry.replaces = v(e.replaces);
        if (e.skips !== undefined) entry.skips = e.skips.map(v);
        if (e.skipRange !== undefined) entry.skipRange = e.skipRange;
        return entry;
      }),
      { name },
    ),
  );
  const overrides = new Map((extra.bundles ?? []).map((b) => [b.name as string, b]));
  // An image tag cannot hold the `+` of build metadata.
  const image = (version: string) => `quay.io/example/foo-bundle:v${version.replaceAll('+', '_')}`;
  const bundles = [...versions].map(
    (version) => overrides.get(v(version)) ?? bundle(version, { image: image(version) }),
  );
  const defaultChannel = Object.keys(channels)[0];
  const dir = trees.write({
    'foo/catalog.yaml': yamlStream(
      pkg('foo', { defaultChannel }),
      ...channelBlobs,
      ...bundles,
      ...(extra.blobs ?? []),
    ),
  });
  const report = await validateCatalog(new DirectorySource(dir));
  const loaded = report.model.get('foo');
  if (!loaded) throw new Error(`package foo did not load: ${JSON.stringify(report.diagnostics)}`);
  return { pkg: loaded, valid: report.valid };
}

const deprecateBundles = (...versions: string[]): Obj =>
  deprecations(
    versions.map((version) => ({ reference: { schema: 'olm.bundle', name: v(version) }, message: 'old' })),
  );

describe('v1 successors and choice', () => {
  it('walks the seed example v1.0.0 -> v2.0.0 -> v3.0.0 (classic has no update here)', async () => {
    const { pkg } = await load({
      stable: {
        '1.0.0': {},
        '2.0.0': { skipRange: '>=1.0.0 <2.0.0' },
        '3.0.0': { skips: ['2.0.0'] },
      },
    });
    expect(v1Successors(pkg, installed('1.0.0'))).toEqual([v('2.0.0')]);
    expect(v1Candidates(pkg, installed('1.0.0'))).toEqual([v('2.0.0'), v('1.0.0')]);
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('2.0.0'));
    expect(v1Chosen(pkg, installed('2.0.0'))).toBe(v('3.0.0'));
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([v('2.0.0'), v('3.0.0')]);
    expect(v1Path(pkg, installed('3.0.0'))).toEqual([]);
  });

  it('does not care about a skipRange-only bundle making a second channel head', async () => {
    const { pkg, valid } = await load({
      stable: { '1.0.0': {}, '1.1.0': { replaces: '1.0.0' }, '1.2.0': { skipRange: '>=1.0.0 <1.2.0' } },
    });
    expect(valid).toBe(false); // opm: multiple channel heads
    expect(v1Candidates(pkg, installed('1.0.0'))).toEqual([v('1.2.0'), v('1.1.0'), v('1.0.0')]);
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([v('1.2.0')]);
    expect(v1Path(pkg, installed('1.1.0'))).toEqual([v('1.2.0')]);
    expect(v1Chosen(pkg, null)).toBe(v('1.2.0'));
  });

  it('picks the highest version, not the channel head, and then stays there', async () => {
    // Chain 1.0.0 <- 1.5.0 <- 1.1.0: the head is 1.1.0, classic would install it.
    const { pkg, valid } = await load({
      stable: { '1.0.0': {}, '1.5.0': { replaces: '1.0.0' }, '1.1.0': { replaces: '1.5.0' } },
    });
    expect(valid).toBe(true);
    expect(v1Chosen(pkg, null)).toBe(v('1.5.0'));
    expect(v1Candidates(pkg, null)).toEqual([v('1.5.0'), v('1.1.0'), v('1.0.0')]);
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([v('1.5.0')]);
    // 1.1.0 replaces 1.5.0, so it is a successor, but the installed 1.5.0 ranks higher.
    expect(v1Successors(pkg, installed('1.5.0'))).toEqual([v('1.1.0')]);
    expect(v1Candidates(pkg, installed('1.5.0'))).toEqual([v('1.5.0'), v('1.1.0')]);
  });

  it('follows an edge to a lower version (no version check on successors)', async () => {
    const { pkg } = await load({ stable: { '1.5.0': { replaces: '2.0.0' } } });
    expect(v1Chosen(pkg, installed('2.0.0'))).toBe(v('1.5.0'));
  });

  it('unions edges from every channel and reads each edge kind', async () => {
    const { pkg } = await load({
      stable: { '1.0.0': {}, '1.1.0': { replaces: '1.0.0' } },
      fast: { '1.0.0': {}, '1.2.0': { skips: ['1.0.0'] } },
      candidate: { '1.0.0': {}, '1.3.0': { skipRange: '<1.0.1' } },
    });
    expect(v1Successors(pkg, installed('1.0.0'))).toEqual([v('1.3.0'), v('1.2.0'), v('1.1.0')]);
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('1.3.0'));
  });

  it('ignores a skipRange blang cannot parse or evaluate', async () => {
    const { pkg } = await load({
      stable: {
        '1.0.0': {},
        '1.5.0': {},
        '2.0.0': { skipRange: '~1.0' }, // a parse error for blang
        '3.0.0': { skipRange: '1.0.0 || || 2.0.0' }, // blang panics on reaching the empty group
      },
    });
    // For 1.0.0 the first group matches before the empty one is reached.
    expect(v1Successors(pkg, installed('1.0.0'))).toEqual([v('3.0.0')]);
    expect(v1Successors(pkg, installed('1.5.0'))).toEqual([]);
    expect(v1Chosen(pkg, installed('1.5.0'))).toBe(v('1.5.0'));
  });

  it('never chooses a bundle whose version does not parse', async () => {
    const { pkg, valid } = await load(
      { stable: { '1.0.0': {}, '2.0.0': { replaces: '1.0.0' } } },
      { bundles: [bundle('2.0.0', { properties: [olmPackageProp('v2.0.0')] })] },
    );
    expect(valid).toBe(false);
    expect(v1Candidates(pkg, installed('1.0.0'))).toEqual([v('1.0.0')]);
    expect(v1Chosen(pkg, null)).toBe(v('1.0.0'));
  });

  it('respects replaces, skips, skipRange and exact versions (upstream TestSuccessorsPredicate)', async () => {
    const { pkg } = await load({
      stable: {
        '2.0.0': {},
        '2.1.0': { replaces: '2.0.0' },
        '2.2.0': { replaces: '2.1.0', skips: ['2.0.0+1'] },
        '2.2.1': {},
        '2.3.0': { replaces: '2.2.0', skips: ['2.2.1'] },
        '2.4.0': { skipRange: '>=2.3.0 <2.4.0' },
      },
      // Upstream 2.0.0+1 is in no channel; a model only holds bundles that are.
      other: { '2.0.0+1': {} },
    });
    const candidates = (version: string) => v1Candidates(pkg, installed(version)).sort();
    expect(candidates('2.0.0')).toEqual([v('2.0.0'), v('2.1.0')]);
    expect(candidates('2.2.1')).toEqual([v('2.2.1'), v('2.3.0')]);
    expect(candidates('2.3.0')).toEqual([v('2.3.0'), v('2.4.0')]);
    // 2.1.0 replaces 2.0.0, not 2.0.0+1: with a legacy release they are different versions.
    expect(candidates('2.0.0+1')).toEqual([v('2.0.0+1'), v('2.2.0')]);
    expect(candidates('9.0.0')).toEqual([]);
  });
});

describe('v1 installed bundle', () => {
  it('matches the installed bundle by version, not by name, and handles one absent from the catalog', async () => {
    const { pkg } = await load({
      stable: { '1.0.0': { replaces: '0.9.0', skipRange: '>=0.5.0 <0.9.0' } },
    });
    expect(v1Chosen(pkg, installed('0.9.0'))).toBe(v('1.0.0'));
    expect(v1Chosen(pkg, installed('0.8.0', 'foo.v0.8.0-gone'))).toBe(v('1.0.0'));
    expect(v1Chosen(pkg, installed('0.1.0'))).toBeNull(); // "no bundles found for package"
    expect(v1Path(pkg, installed('0.1.0'))).toEqual([]);
    // Same version under another name: that bundle is the "stay" candidate.
    expect(v1Candidates(pkg, installed('1.0.0', 'renamed'))).toEqual([v('1.0.0')]);
    expect(v1Successors(pkg, installed('1.0.0', 'renamed'))).toEqual([]);
    expect(v1Path(pkg, installed('1.0.0', 'renamed'))).toEqual([v('1.0.0')]);
  });

  it('orders legacy releases in build metadata, and ignores other build metadata', async () => {
    const { pkg, valid } = await load({
      stable: {
        '1.0.0': {},
        '1.0.0+1': { replaces: '1.0.0' },
        '1.0.0+2': { replaces: '1.0.0+1' },
        // `001` has a leading zero, so it is no release: plain build metadata.
        '1.1.0+001': { replaces: '1.0.0+2' },
      },
    });
    expect(valid).toBe(true); // versions differ as strings, which is all opm asks
    expect(v1Candidates(pkg, null)).toEqual([v('1.1.0+001'), v('1.0.0+2'), v('1.0.0+1'), v('1.0.0')]);
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([v('1.0.0+1'), v('1.0.0+2'), v('1.1.0+001')]);
    // 1.0.0+1 is release 1: only that bundle has its version.
    expect(v1Candidates(pkg, installed('1.0.0+1', 'other'))).toEqual([v('1.0.0+1')]);
    // Build metadata that is no release is ignored when comparing with the installed version.
    expect(v1Candidates(pkg, installed('1.1.0', 'other'))).toEqual([v('1.1.0+001')]);
    expect(v1Candidates(pkg, installed('1.1.0+002', 'other'))).toEqual([v('1.1.0+001')]);
  });

  it('uses the explicit release field only with BundleReleaseSupport', async () => {
    const release = (version: string, rel: string): Obj => ({
      ...bundle(version),
      name: `foo-v${version}-${rel}`,
      properties: [olmPackageProp(version, 'foo', { release: rel })],
    });
    const dir = trees.write({
      'foo/catalog.yaml': yamlStream(
        pkg(),
        channel(['foo-v1.0.0-a', { name: 'foo-v1.0.0-b', replaces: 'foo-v1.0.0-a' }]),
        release('1.0.0', 'a'),
        release('1.0.0', 'b'),
      ),
    });
    const foo = (await validateCatalog(new DirectorySource(dir))).model.get('foo')!;
    // Gate off: both are plain 1.0.0, a tie broken by name.
    expect(v1Candidates(foo, null)).toEqual(['foo-v1.0.0-a', 'foo-v1.0.0-b']);
    expect(v1Candidates(foo, null, { bundleReleaseSupport: true })).toEqual(['foo-v1.0.0-b', 'foo-v1.0.0-a']);
    const onA: InstalledBundle = { name: 'foo-v1.0.0-a', version: parseVersion('1.0.0'), release: ['a'] };
    expect(v1Path(foo, onA, { bundleReleaseSupport: true })).toEqual(['foo-v1.0.0-b']);
    expect(v1Candidates(foo, { ...onA, name: 'x' }, { bundleReleaseSupport: true })).toEqual([
      'foo-v1.0.0-a',
    ]);
  });
});

describe('v1 deprecation ranking', () => {
  const graph = { stable: { '1.0.0': {}, '1.1.0': { replaces: '1.0.0' } } };

  it('stays on a non-deprecated installed bundle rather than move to a deprecated one', async () => {
    const { pkg } = await load(graph, { blobs: [deprecateBundles('1.1.0')] });
    expect(v1Candidates(pkg, installed('1.0.0'))).toEqual([v('1.0.0'), v('1.1.0')]);
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('1.0.0'));
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([]);
    // A fresh install takes the lower, non-deprecated bundle.
    expect(v1Chosen(pkg, null)).toBe(v('1.0.0'));
  });

  it('leaves a deprecated installed bundle, and takes a deprecated one when nothing else is left', async () => {
    const { pkg } = await load(graph, { blobs: [deprecateBundles('1.0.0')] });
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('1.1.0'));
    const all = await load(graph, { blobs: [deprecateBundles('1.0.0', '1.1.0')] });
    expect(v1Chosen(all.pkg, null)).toBe(v('1.1.0'));
    expect(v1Chosen(all.pkg, installed('1.0.0'))).toBe(v('1.1.0'));
  });

  it('ranks only bundle deprecations, not channel or package ones', async () => {
    const { pkg } = await load(graph, {
      blobs: [
        deprecations([
          { reference: { schema: 'olm.package' }, message: 'gone' },
          { reference: { schema: 'olm.channel', name: 'stable' }, message: 'gone' },
        ]),
      ],
    });
    expect(pkg.deprecation).toBeDefined();
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('1.1.0'));
  });
});

describe('v1 channel and version filters', () => {
  const channels = {
    stable: { '1.0.0': {}, '2.0.0': {} },
    fast: { '1.0.0': {}, '2.0.0': { replaces: '1.0.0' } },
    candidate: { '1.0.0': {}, '3.0.0': { replaces: '1.0.0' } },
  };

  it('uses only the selected channels, for bundles and for edges', async () => {
    const { pkg } = await load(channels);
    expect(v1Chosen(pkg, installed('1.0.0'))).toBe(v('3.0.0'));
    expect(v1Chosen(pkg, installed('1.0.0'), { channels: [] })).toBe(v('3.0.0'));
    expect(v1Chosen(pkg, installed('1.0.0'), { channels: ['fast'] })).toBe(v('2.0.0'));
    // 2.0.0 is in stable, but its only edge is in fast.
    expect(v1Candidates(pkg, installed('1.0.0'), { channels: ['stable'] })).toEqual([v('1.0.0')]);
    expect(v1Successors(pkg, installed('1.0.0'), { channels: ['stable'] })).toEqual([]);
    expect(v1Chosen(pkg, installed('1.0.0'), { channels: ['stable', 'fast'] })).toBe(v('2.0.0'));
    expect(v1Chosen(pkg, null, { channels: ['stable'] })).toBe(v('2.0.0'));
    expect(v1Chosen(pkg, installed('1.0.0'), { channels: ['nope'] })).toBeNull();
  });

  it('filters by a Masterminds range, which excludes prereleases a plain range does not name', async () => {
    const { pkg } = await load({
      stable: { '1.0.0': {}, '1.1.0-rc.1': { replaces: '1.0.0' }, '1.1.0': { replaces: '1.1.0-rc.1' } },
    });
    expect(v1Path(pkg, installed('1.0.0'))).toEqual([v('1.1.0-rc.1'), v('1.1.0')]);
    // `>=1.0.0` silently blocks the hop through the release candidate: stuck on 1.0.0.
    expect(v1Path(pkg, installed('1.0.0'), { versionRange: '>=1.0.0' })).toEqual([]);
    expect(v1Chosen(pkg, installed('1.0.0'), { versionRange: '>=1.0.0' })).toBe(v('1.0.0'));
    expect(v1Path(pkg, installed('1.0.0'), { versionRange: '>=1.0.0-0' })).toEqual([
      v('1.1.0-rc.1'),
      v('1.1.0'),
    ]);
    // The installed bundle itself must match the range to be a "stay" candidate.
    expect(v1Chosen(pkg, installed('1.0.0'), { versionRange: '>=1.1.0' })).toBeNull();
    expect(v1Chosen(pkg, null, { versionRange: '~1.0' })).toBe(v('1.0.0'));
    expect(v1Chosen(pkg, null, { versionRange: '1.x' })).toBe(v('1.1.0'));
  });

  it('throws the user-visible error for a range the cluster would reject', async () => {
    const { pkg } = await load({ stable: { '1.0.0': {} } });
    expect(() => v1Chosen(pkg, null, { versionRange: '1.0.0 - 2.0.0' })).toThrow(InvalidVersionRangeError);
    expect(() => v1Chosen(pkg, null, { versionRange: '1.0.0 - 2.0.0' })).toThrow(
      'spec.source.catalog.version: Invalid value: "string": invalid version expression',
    );
    expect(() => v1Chosen(pkg, null, { versionRange: '1.2.3-01' })).toThrow(
      'desired version range "1.2.3-01" is invalid: constraint parser error',
    );
  });
});

const realCatalogs = fileURLToPath(new URL('../../shared/data/real-catalogs/', import.meta.url));
const realRoots = existsSync(realCatalogs)
  ? readdirSync(realCatalogs, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((repo) =>
        readdirSync(join(realCatalogs, repo.name, 'catalogs')).map((ver) =>
          join(realCatalogs, repo.name, 'catalogs', ver),
        ),
      )
  : [];

describe.skipIf(realRoots.length === 0)('v1 on the real catalogs', () => {
  it('chooses a bundle of the package from every channel entry, quickly', async () => {
    const started = performance.now();
    let entries = 0;
    const problems: string[] = [];
    for (const root of realRoots) {
      const { model } = await validateCatalog(new DirectorySource(root));
      for (const p of model.values()) {
        const names = new Set([...p.channels.values()].flatMap((c) => [...c.bundles.keys()]));
        const fresh = v1Chosen(p, null);
        if (fresh === null || !names.has(fresh)) problems.push(`${p.name}: fresh install chose ${fresh}`);
        for (const c of p.channels.values()) {
          for (const b of c.bundles.values()) {
            if (!b.version) continue;
            entries++;
            const from = { name: b.name, version: b.version };
            const chosen = v1Chosen(p, from);
            if (chosen === null || !names.has(chosen))
              problems.push(`${p.name} from ${b.name}: chose ${chosen}`);
            // The walk ends on a bundle v1 stays on.
            const path = v1Path(p, from);
            const last = path.at(-1);
            const lastBundle =
              last === undefined
                ? undefined
                : [...p.channels.values()].find((ch) => ch.bundles.has(last))?.bundles.get(last);
            if (
              lastBundle?.version &&
              v1Chosen(p, { name: lastBundle.name, version: lastBundle.version }) !== last
            ) {
              problems.push(
                `${p.name} from ${b.name}: path ${path.join(' -> ')} does not end where v1 stays`,
              );
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(entries).toBeGreaterThan(1_500);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
