// The single-catalog upgrade-graph checks (olm-semantics.md section 9: 5-9, 11, 15-20).
// Each check gets a tiny FBC catalog that trips it and one that does not; catalogs are
// written to disk and loaded with the real loader and validator, like the other tests.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog, type Diagnostic } from '../src/catalog/index.js';
import { upgradeGraphCheck } from '../src/checks/upgrade-graph/index.js';
import { singleCatalogFindings, type GraphCheckOptions } from '../src/checks/upgrade-graph/single.js';
import {
  bundle,
  channel,
  deprecations,
  pkg,
  SKIPS_LADDER,
  v,
  versionEntry,
  yamlStream,
  type Edges,
  type Obj,
} from './helpers/catalogs.js';
import { haveOpm, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

/** Channel entries keyed by version; `replaces` and `skips` name versions too. */
type Entries = Record<string, Edges>;

interface CatalogSpec {
  /** Channel name -> entries. The first channel is the default one. */
  channels: Record<string, Entries>;
  /** Extra fields per bundle version (e.g. more properties). */
  bundles?: Record<string, Obj>;
  extra?: Obj[];
}

interface Run {
  findings: Diagnostic[];
  /** Our validator's verdict (equal to opm's). */
  valid: boolean;
  validatorRules: string[];
  dir: string;
}

async function run(spec: CatalogSpec, options: GraphCheckOptions = {}): Promise<Run> {
  const channelNames = Object.keys(spec.channels);
  const versions = new Set<string>();
  const channels = Object.entries(spec.channels).map(([name, entries]) => {
    Object.keys(entries).forEach((k) => versions.add(k));
    return channel(
      Object.entries(entries).map(([version, e]) => versionEntry(version, e)),
      { name },
    );
  });
  const bundles = [...versions].map((version) => {
    const extra = spec.bundles?.[version] ?? {};
    const base = bundle(version);
    const properties = [...(base.properties as Obj[]), ...((extra.properties as Obj[] | undefined) ?? [])];
    return { ...base, ...extra, properties };
  });
  const dir = writeTree({
    'foo/catalog.yaml': yamlStream(
      pkg('foo', { defaultChannel: channelNames[0] }),
      ...channels,
      ...bundles,
      ...(spec.extra ?? []),
    ),
  });
  dirs.push(dir);
  const report = await validateCatalog(new DirectorySource(dir));
  return {
    findings: singleCatalogFindings(report.model, options),
    valid: report.valid,
    validatorRules: report.diagnostics.filter((d) => d.level === 'error').map((d) => d.rule),
    dir,
  };
}

const stable = (entries: Entries, rest: Omit<CatalogSpec, 'channels'> = {}, options?: GraphCheckOptions) =>
  run({ channels: { stable: entries }, ...rest }, options);

const of = (r: Run, rule: string) => r.findings.filter((d) => d.rule === rule);

/** The one finding of `rule` (there must be exactly one). */
function onlyFinding(r: Run, rule: string): Diagnostic {
  const found = of(r, rule);
  expect(found, rule).toHaveLength(1);
  return found[0]!;
}

/** The line of a channel entry (its first `- name:`) in the written catalog. */
function lineOf(r: Run, version: string): number {
  const lines = readFileSync(join(r.dir, 'foo/catalog.yaml'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.trim() === `- name: ${v(version)}`);
  if (i < 0) throw new Error(`no entry ${v(version)}`);
  return i + 1;
}

/** Our verdict, and the real opm's where it is available. */
function expectOpm(r: Run, valid: boolean): void {
  expect(r.valid).toBe(valid);
  if (haveOpm) expect(opmValidate(r.dir).valid).toBe(valid);
}

const linear: Entries = {
  '1.0.0': {},
  '1.0.1': { replaces: '1.0.0' },
  '1.1.0': { replaces: '1.0.1', skipRange: '>=1.0.0 <1.1.0' },
};

describe('a clean channel', () => {
  it('has no findings at all', async () => {
    const r = await stable(linear);
    expectOpm(r, true);
    expect(r.findings).toEqual([]);
  });
});

describe('G5-CYCLE', () => {
  it('finds a replaces loop hidden behind skipped entries (opm passes, classic sortChannel fails)', async () => {
    const r = await stable({
      '1.0.0': { replaces: '1.5.0' },
      '1.5.0': { replaces: '1.0.0' },
      '2.0.0': { replaces: '1.0.0' },
      '3.0.0': { replaces: '2.0.0', skips: ['2.0.0', '1.0.0', '1.5.0'] },
    });
    expectOpm(r, true);
    const [f, ...rest] = of(r, 'G5-CYCLE');
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      level: 'error',
      package: 'foo',
      file: 'foo/catalog.yaml',
      line: lineOf(r, '1.0.0'),
    });
    expect(f!.message).toContain('foo.v1.5.0 -> foo.v1.0.0 -> foo.v1.5.0');
    expect(f!.message).toContain('a cycle exists');
    expect(f!.message).toContain('opm validate does not see this loop');
    // The edge to cut is the one from a lower version to a higher one.
    expect(f!.hint).toContain('remove `replaces: foo.v1.5.0` from foo.v1.0.0');
    // Classic cannot sort the channel, so the chain checks stay quiet.
    expect(of(r, 'G6-CLASSIC-DEAD-END')).toEqual([]);
  });

  it('reports a self-reference', async () => {
    const r = await stable({ '1.0.0': {}, '2.0.0': { replaces: '1.0.0', skips: ['2.0.0'] }, '3.0.0': {} });
    const f = onlyFinding(r, 'G5-CYCLE');
    expect(f.message).toContain('foo.v2.0.0 skips itself');
  });

  it('leaves a loop opm already reports (C-CYCLE) to the validator', async () => {
    const r = await stable({
      '1.0.0': { replaces: '2.0.0' },
      '2.0.0': { replaces: '1.0.0' },
      '3.0.0': { replaces: '2.0.0' },
    });
    expect(r.validatorRules).toContain('C-CYCLE');
    expect(of(r, 'G5-CYCLE')).toEqual([]);
  });

  it('passes an acyclic channel', async () => {
    const r = await stable(linear);
    expect(of(r, 'G5-CYCLE')).toEqual([]);
  });
});

describe('G6-CLASSIC-DEAD-END', () => {
  it('key finding 1: opm passes, but an install of v1 has no classic update', async () => {
    const r = await stable(SKIPS_LADDER);
    expectOpm(r, true);
    const f = onlyFinding(r, 'G6-CLASSIC-DEAD-END');
    // It points at the entry to change (the one the hint names), not at the stranded one.
    expect(f).toMatchObject({ level: 'error', file: 'foo/catalog.yaml', line: lineOf(r, '3.0.0') });
    expect(f.message).toContain('classic OLM has no update from foo.v1.0.0');
    expect(f.message).toContain('foo.v2.0.0 (which skips it) is skipped by foo.v3.0.0');
    expect(f.message).toContain('OLM v1 does move it on (to foo.v2.0.0)');
    expect(f.message).toContain('opm validate accepts this channel');
    expect(f.hint).toBe('add `foo.v1.0.0` to the `skips` of foo.v3.0.0, so classic OLM offers it an update.');
  });

  it('the seed example: classic dead end (also opm-stranded) and a divergence notice', async () => {
    const r = await stable({
      '1.0.0': {},
      '2.0.0': { replaces: '1.0.0', skipRange: '>=1.0.0 <2.0.0' },
      '3.0.0': { replaces: '2.0.0', skips: ['2.0.0'] },
    });
    expectOpm(r, false);
    expect(r.validatorRules).toEqual(['C-STRANDED']);
    const dead = of(r, 'G6-CLASSIC-DEAD-END');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.level).toBe('error');
    expect(dead[0]!.message).toContain('foo.v1.0.0');
    expect(dead[0]!.message).toContain('opm validate also rejects it as stranded');
    expect(dead[0]!.hint).toContain('add `foo.v1.0.0` to the `skips` of foo.v3.0.0');
    const div = of(r, 'G11-DIVERGENCE');
    expect(div).toHaveLength(1);
    expect(div[0]).toMatchObject({ level: 'notice', line: lineOf(r, '1.0.0') });
    expect(div[0]!.message).toBe(
      'package "foo", channel "stable": an install of foo.v1.0.0 upgrades differently: classic OLM stays (no update); ' +
        'OLM v1 foo.v1.0.0 -> foo.v2.0.0 -> foo.v3.0.0.',
    );
    // The shape that causes it: v3 replaces and skips v2, which has its own predecessor.
    const shape = of(r, 'G16-ZSTREAM-SHAPE');
    expect(shape.map((d) => d.line)).toEqual([lineOf(r, '3.0.0')]);
    expect(shape[0]!.hint).toContain('Remove `foo.v2.0.0` from the `skips` of foo.v3.0.0');
  });

  it('reports a dead end once, naming the installs that end there', async () => {
    // The chain is 3.0.0, 1.0.0, 0.5.0 (2.0.0 is skipped); 0.5.0 moves to 1.0.0, which is stuck.
    const r = await stable({
      '0.5.0': {},
      '1.0.0': { replaces: '0.5.0' },
      '2.0.0': { replaces: '1.0.0' },
      '3.0.0': { replaces: '2.0.0', skips: ['2.0.0'] },
    });
    const f = onlyFinding(r, 'G6-CLASSIC-DEAD-END');
    expect(f.line).toBe(lineOf(r, '3.0.0'));
    expect(f.message).toContain('no update from foo.v1.0.0');
    expect(f.message).toContain('Installs of foo.v0.5.0 end up there too');
    expect(f.hint).toContain('add `foo.v1.0.0` to the `skips` of foo.v3.0.0');
  });

  it('passes a channel where every install reaches the head', async () => {
    const r = await stable({
      '1.0.0': {},
      '2.0.0': { skips: ['1.0.0'] },
      '3.0.0': { replaces: '2.0.0', skips: ['1.0.0'] },
    });
    expectOpm(r, true);
    expect(of(r, 'G6-CLASSIC-DEAD-END')).toEqual([]);
    expect(of(r, 'G11-DIVERGENCE')).toEqual([]);
  });
});

// 1.5.0 replaces 2.0.0: a downgrade edge, and the head (1.5.0) is not the highest version.
const downgrade: Entries = {
  '1.0.0': {},
  '2.0.0': { replaces: '1.0.0' },
  '1.5.0': { replaces: '2.0.0' },
};

describe('G7-V1-NO-PROGRESS', () => {
  it('warns when v1 only stays (nothing higher, or only a lower successor)', async () => {
    // The head 1.5.0 has no successor at all; 2.0.0 (the highest) needs none.
    const r = await stable(downgrade);
    expectOpm(r, true);
    expect(of(r, 'G7-V1-NO-PROGRESS').map((d) => [d.level, d.line])).toEqual([
      ['warning', lineOf(r, '1.5.0')],
    ]);
    // With 3.0.0 on top, 2.0.0's only successor is the lower 1.5.0.
    const r2 = await stable({ ...downgrade, '3.0.0': { replaces: '1.5.0' } });
    const f2 = of(r2, 'G7-V1-NO-PROGRESS');
    expect(f2).toHaveLength(1);
    expect(f2[0]).toMatchObject({ level: 'warning', line: lineOf(r2, '2.0.0') });
    expect(f2[0]!.message).toContain('OLM v1 keeps foo.v2.0.0 (2.0.0) installed although foo.v3.0.0 (3.0.0)');
    expect(f2[0]!.message).toContain('Classic OLM moves it to foo.v1.5.0 (1.5.0, a downgrade)');
    expect(f2[0]!.hint).toBe('Add `skips: [foo.v2.0.0]` to foo.v3.0.0 (the next higher version, 3.0.0).');
  });

  it('is an error when v1 moves down (a deprecated install, a lower non-deprecated successor)', async () => {
    const r = await stable(
      { ...downgrade, '3.0.0': { replaces: '1.5.0' } },
      { extra: [deprecations([{ reference: { schema: 'olm.bundle', name: v('2.0.0') }, message: 'old' }])] },
    );
    const f = of(r, 'G7-V1-NO-PROGRESS');
    const down = f.filter((d) => d.level === 'error');
    expect(down).toHaveLength(1);
    expect(down[0]!.message).toContain('OLM v1 moves foo.v2.0.0 (2.0.0) down to foo.v1.5.0 (1.5.0)');
    expect(down[0]!.message).toContain('foo.v2.0.0 is deprecated');
    // Key finding 6: 1.0.0 stays rather than move up to the deprecated 2.0.0.
    const stays = f.filter((d) => d.level === 'warning');
    expect(stays).toHaveLength(1);
    expect(stays[0]!.message).toContain(
      'its higher successors (foo.v2.0.0) are deprecated, and OLM v1 prefers staying on a non-deprecated bundle',
    );
    expect(stays[0]!.hint).toContain('to foo.v1.5.0 (the next higher version, 1.5.0)');
  });
});

describe('G8-DOWNGRADE-EDGE', () => {
  it('flags replaces/skips of a higher version and a skipRange covering the own version', async () => {
    const r = await stable({
      ...downgrade,
      '3.0.0': { replaces: '1.5.0', skips: ['4.0.0'] },
      '4.0.0': { replaces: '3.0.0', skipRange: '>=1.0.0 <=4.0.0' },
    });
    const f = of(r, 'G8-DOWNGRADE-EDGE');
    expect(f.map((d) => [d.level, d.line])).toEqual([
      ['warning', lineOf(r, '1.5.0')],
      ['warning', lineOf(r, '3.0.0')],
      ['warning', lineOf(r, '4.0.0')],
    ]);
    expect(f[0]!.message).toContain(
      'foo.v1.5.0 (1.5.0) replaces foo.v2.0.0 (2.0.0), which is higher: classic OLM follows this edge',
    );
    expect(f[0]!.hint).toContain('remove `replaces: foo.v2.0.0`');
    expect(f[1]!.hint).toContain('remove `foo.v4.0.0` from its `skips`');
    expect(f[2]!.message).toContain('covers its own version 4.0.0');
    expect(f[2]!.hint).toContain('upper bound `<4.0.0`');
  });
});

describe('G9-HEAD-NOT-HIGHEST', () => {
  it('warns when the head is lower than another entry', async () => {
    const r = await stable(downgrade);
    const f = onlyFinding(r, 'G9-HEAD-NOT-HIGHEST');
    expect(f).toMatchObject({ level: 'warning', line: lineOf(r, '2.0.0') });
    expect(f.message).toContain(
      'the head foo.v1.5.0 (1.5.0) is not the highest version; foo.v2.0.0 (2.0.0) is higher',
    );
    expect(f.message).toContain('classic OLM but foo.v2.0.0 from OLM v1');
    expect(f.hint).toBe(
      'Make foo.v2.0.0 the head: remove foo.v2.0.0 from the `replaces`/`skips` of foo.v1.5.0 and add `skips: [foo.v1.5.0]` to foo.v2.0.0.',
    );
  });
});

describe('G11-DIVERGENCE', () => {
  it('notes where classic (nearest the head) and v1 (highest version) take different hops', async () => {
    // 1.0.0 has two successors: 1.2.0 (nearer the head: classic's pick) and 1.3.0 (higher: v1's).
    const r = await stable({
      '1.0.0': {},
      '1.3.0': { replaces: '1.0.0' },
      '1.2.0': { replaces: '1.3.0', skips: ['1.0.0'] },
      '2.0.0': { replaces: '1.2.0' },
    });
    const f = of(r, 'G11-DIVERGENCE').filter((d) => d.message.includes('install of foo.v1.0.0'));
    expect(f).toHaveLength(1);
    expect(f[0]!.level).toBe('notice');
    expect(f[0]!.message).toContain('classic OLM foo.v1.0.0 -> foo.v1.2.0 -> foo.v2.0.0');
    expect(f[0]!.message).toContain('OLM v1 foo.v1.0.0 -> foo.v1.3.0');
  });
});

// The rules above pass a linear channel: upward edges, the highest version as the head, where
// classic OLM and OLM v1 agree, and every install making progress.
describe('a linear channel passes the edge and head rules', () => {
  it.each([
    ['G7-V1-NO-PROGRESS', 'a linear channel'],
    ['G8-DOWNGRADE-EDGE', 'upward edges'],
    ['G9-HEAD-NOT-HIGHEST', 'when the head is the highest'],
    ['G11-DIVERGENCE', 'a channel where both agree'],
  ])('%s passes %s', async (rule) => {
    expect(of(await stable(linear), rule)).toEqual([]);
  });
});

describe('G15-EDGES-DIFFER-ACROSS-CHANNELS', () => {
  it('warns once per package, naming the bundle, channels and edges', async () => {
    const r = await run({
      channels: {
        stable: { '1.0.0': {}, '2.0.0': { replaces: '1.0.0' } },
        fast: { '1.0.0': {}, '2.0.0': { replaces: '1.0.0', skipRange: '>=1.0.0 <2.0.0' } },
      },
    });
    expectOpm(r, true);
    const f = onlyFinding(r, 'G15-EDGES-DIFFER-ACROSS-CHANNELS');
    expect(f.level).toBe('warning');
    expect(f.message).toContain(
      'foo.v2.0.0 ("fast": `replaces: foo.v1.0.0` + `skipRange: ">=1.0.0 <2.0.0"`; "stable": `replaces: foo.v1.0.0`)',
    );
    expect(f.hint).toContain(
      'in channel "stable" give foo.v2.0.0 `replaces: foo.v1.0.0` + `skipRange: ">=1.0.0 <2.0.0"` as in "fast"',
    );
  });

  it('passes identical edges', async () => {
    const r = await run({ channels: { stable: linear, fast: linear } });
    expect(of(r, 'G15-EDGES-DIFFER-ACROSS-CHANNELS')).toEqual([]);
  });
});

describe('G16-ZSTREAM-SHAPE', () => {
  it('asks the new z-stream head to skip the earlier z-streams of its minor', async () => {
    const r = await stable({
      '1.0.0': {},
      '1.0.1': { replaces: '1.0.0' },
      '1.0.2': { replaces: '1.0.1' },
      '1.0.3': { replaces: '1.0.2' },
    });
    const f = onlyFinding(r, 'G16-ZSTREAM-SHAPE');
    expect(f.message).toContain('foo.v1.0.0, foo.v1.0.1, so their installs reach it one z-stream at a time');
    expect(f.hint).toContain('add `skipRange: ">=1.0.0 <1.0.3"` to foo.v1.0.3');
  });

  it('asks the head to replace the previous highest version', async () => {
    const r = await stable({
      '1.0.0': {},
      '1.1.0': { replaces: '1.0.0' },
      '1.0.5': { replaces: '1.1.0' },
      '1.2.0': { replaces: '1.0.5' },
    });
    const f = onlyFinding(r, 'G16-ZSTREAM-SHAPE');
    expect(f.message).toContain(
      'the head foo.v1.2.0 (1.2.0) has no direct edge from the previous highest version foo.v1.1.0 (1.1.0)',
    );
  });

  it('passes the semver-template shape', async () => {
    const r = await stable({
      '1.0.0': {},
      '1.0.1': { replaces: '1.0.0' },
      '1.0.2': { replaces: '1.0.1', skips: ['1.0.0'] },
      '1.1.0': { replaces: '1.0.2', skipRange: '>=1.0.0 <1.1.0' },
    });
    expect(of(r, 'G16-ZSTREAM-SHAPE')).toEqual([]);
  });
});

describe('G17-PRERELEASE-IN-CHAIN', () => {
  it('flags a `-1` revision that sorts below the GA it replaces (instead of G8)', async () => {
    const r = await stable({ '1.0.0': {}, '1.0.1': { replaces: '1.0.0' }, '1.0.1-1': { replaces: '1.0.1' } });
    const f = onlyFinding(r, 'G17-PRERELEASE-IN-CHAIN');
    expect(f.message).toContain(
      'foo.v1.0.1-1 (1.0.1-1) is a prerelease, which sorts below foo.v1.0.1 (1.0.1)',
    );
    expect(f.hint).toContain('`1.0.1+1`');
    expect(of(r, 'G8-DOWNGRADE-EDGE')).toEqual([]);
  });

  it('flags GA installs whose only way up is a prerelease', async () => {
    const r = await stable({
      '1.0.0': {},
      '1.1.0-rc.1': { replaces: '1.0.0' },
      '1.1.0': { replaces: '1.1.0-rc.1' },
    });
    const f = onlyFinding(r, 'G17-PRERELEASE-IN-CHAIN');
    expect(f).toMatchObject({ level: 'warning', line: lineOf(r, '1.1.0') });
    expect(f.hint).toContain('add `skips: [foo.v1.0.0]` to foo.v1.1.0');
  });

  it('passes when GA installs can jump over the prerelease', async () => {
    const r = await stable({
      '1.0.0': {},
      '1.1.0-rc.1': { replaces: '1.0.0' },
      '1.1.0': { replaces: '1.1.0-rc.1', skips: ['1.0.0'] },
    });
    expect(of(r, 'G17-PRERELEASE-IN-CHAIN')).toEqual([]);
  });
});

describe('G18-HEAD-DEPRECATED', () => {
  const dep = (name: string) =>
    deprecations([{ reference: { schema: 'olm.bundle', name }, message: 'use 2.x' }]);

  it('warns when the head is deprecated', async () => {
    const r = await stable(linear, { extra: [dep(v('1.1.0'))] });
    const f = onlyFinding(r, 'G18-HEAD-DEPRECATED');
    expect(f).toMatchObject({ level: 'warning', line: lineOf(r, '1.1.0') });
    expect(f.message).toContain('a fresh install gets foo.v1.0.1');
  });

  it('passes a deprecated non-head', async () => {
    const r = await stable(linear, { extra: [dep(v('1.0.0'))] });
    expect(of(r, 'G18-HEAD-DEPRECATED')).toEqual([]);
  });
});

describe('G19-DEPENDENCIES-ON-V1-CANDIDATE', () => {
  const gvkRequired = {
    type: 'olm.gvk.required',
    value: { group: 'cert-manager.io', kind: 'Certificate', version: 'v1' },
  };

  it('warns at the property of a bundle v1 may pick', async () => {
    const r = await stable(linear, { bundles: { '1.1.0': { properties: [gvkRequired] } } });
    const f = onlyFinding(r, 'G19-DEPENDENCIES-ON-V1-CANDIDATE');
    expect(f.message).toContain('foo.v1.1.0 declares olm.gvk.required');
    expect(f.message).toContain('a fresh install in channel "stable"');
    expect(f.message).toContain('the upgrade from foo.v1.0.0');
    // The property's own line in the bundle blob.
    expect(f.line).toBeGreaterThan(30);
  });

  it('passes dependencies on a bundle v1 never picks', async () => {
    const r = await stable(linear, { bundles: { '1.0.0': { properties: [gvkRequired] } } });
    expect(of(r, 'G19-DEPENDENCIES-ON-V1-CANDIDATE')).toEqual([]);
  });
});

describe('G20-MAX-OPENSHIFT-VERSION', () => {
  const max = (value: unknown) => ({ properties: [{ type: 'olm.maxOpenShiftVersion', value }] });

  it('warns when the head blocks cluster upgrades from the OCP version the catalog serves', async () => {
    const r = await stable(linear, { bundles: { '1.1.0': max('4.21') } }, { openShiftVersion: 'v4.21' });
    const f = onlyFinding(r, 'G20-MAX-OPENSHIFT-VERSION');
    expect(f.message).toContain('at or below the OpenShift 4.21 this catalog serves');
  });

  it('warns on a number (4.10 reads as 4.1), a patch, and two declarations', async () => {
    const r = await stable(linear, {
      bundles: {
        '1.0.0': max(4.1),
        '1.0.1': {
          properties: [
            { type: 'olm.maxOpenShiftVersion', value: '4.12.1' },
            { type: 'olm.maxOpenShiftVersion', value: '4.13' },
          ],
        },
      },
    });
    const f = of(r, 'G20-MAX-OPENSHIFT-VERSION');
    expect(f).toHaveLength(2);
    expect(f.map((d) => d.message).join('\n')).toMatch(/not a string/);
    expect(f.map((d) => d.message).join('\n')).toMatch(/2 times/);
    expect(f.map((d) => d.message).join('\n')).toMatch(/"4.12.1" is not "<major>.<minor>"/);
  });

  it('passes a well-formed max above the served version', async () => {
    const r = await stable(linear, { bundles: { '1.1.0': max('4.22') } }, { openShiftVersion: '4.21' });
    expect(of(r, 'G20-MAX-OPENSHIFT-VERSION')).toEqual([]);
  });
});

describe('options.packages', () => {
  it('checks only the named packages', async () => {
    const r = await stable(downgrade, {}, { packages: new Set(['bar']) });
    expect(r.findings).toEqual([]);
    const all = await stable(downgrade, {}, { packages: new Set(['foo']) });
    expect(all.findings.length).toBeGreaterThan(0);
  });
});

// ---- The real catalogs: production data, which must not produce surprise errors ----

const realDir = fileURLToPath(new URL('../../shared/data/real-catalogs/', import.meta.url));
const realRoots = existsSync(realDir)
  ? readdirSync(realDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((repo) =>
        readdirSync(join(realDir, repo.name, 'catalogs')).map((version) => ({
          name: `${repo.name}/${version}`,
          root: join(realDir, repo.name, 'catalogs', version),
          version,
        })),
      )
  : [];

/**
 * Real classic dead ends in production (see the report): each channel has an entry that
 * both replaces and skips its predecessor, so older installs leave the classic chain. opm
 * accepts them; OLM v1 upgrades them. Pinned so any new error fails this test.
 */
const KNOWN_REAL_ERRORS: Record<string, string[]> = {
  'certified-operators/v4.22': ['G6-CLASSIC-DEAD-END kurrentdb-operator.v1.4.3'],
  'community-operators-prod/v4.16': [],
  'community-operators-prod/v4.21': [
    'G6-CLASSIC-DEAD-END clusterpulse.v0.1.1',
    'G6-CLASSIC-DEAD-END clusterpulse.v0.2.0',
    'G6-CLASSIC-DEAD-END clusterpulse.v0.2.1',
    'G6-CLASSIC-DEAD-END clusterpulse.v0.2.2',
    'G6-CLASSIC-DEAD-END kubernaut-operator.v1.3.2',
    'G6-CLASSIC-DEAD-END kubernaut-operator.v1.3.3',
    'G6-CLASSIC-DEAD-END kubernaut-operator.v1.3.4',
  ],
};

describe.skipIf(realRoots.length === 0)('the real catalogs', () => {
  const counts: Record<string, Record<string, number>> = {};
  afterAll(() => {
    console.log(`upgrade-graph single-catalog findings by rule:\n${JSON.stringify(counts, null, 2)}`);
  });

  for (const { name, root, version } of realRoots) {
    const key = name.replace('/catalogs', '');
    it(`${key}: no error beyond the known real dead ends`, async () => {
      const report = await validateCatalog(new DirectorySource(root));
      const start = performance.now();
      const findings = singleCatalogFindings(report.model, { openShiftVersion: version });
      const ms = performance.now() - start;
      const errors = findings
        .filter((d) => d.level === 'error')
        .map((d) => `${d.rule} ${/no update from (\S+):/.exec(d.message)?.[1] ?? d.message}`);
      expect(errors.sort()).toEqual(KNOWN_REAL_ERRORS[key] ?? []);
      const byRule: Record<string, number> = {};
      for (const d of findings) byRule[`${d.level} ${d.rule}`] = (byRule[`${d.level} ${d.rule}`] ?? 0) + 1;
      counts[`${key} (${Math.round(ms)} ms)`] = Object.fromEntries(Object.entries(byRule).sort());
      // Every finding says where to change what.
      for (const d of findings) {
        expect(d.file).toBeTruthy();
        expect(d.line).toBeGreaterThan(0);
        expect(d.package).toBeTruthy();
        expect(d.hint).toBeTruthy();
      }
    });

    it(`${key}: a pull request touching every package reports no error (the dead ends predate it)`, async () => {
      const report = await validateCatalog(new DirectorySource(root));
      const packages = new Set(report.model.keys());
      const check = upgradeGraphCheck([
        { path: 'catalogs/' + version, base: report, head: report, packages },
      ]);
      expect(check.findings.filter((d) => d.level === 'error')).toEqual([]);
      expect(check.conclusion).toBe('success');
      // The known dead ends are still reported, as warnings the change did not cause.
      const deadEnds = check.findings.filter((d) => d.rule === 'G6-CLASSIC-DEAD-END').length;
      expect(deadEnds).toBe((KNOWN_REAL_ERRORS[key] ?? []).length);
    });
  }
});
