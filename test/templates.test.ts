import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import { changedLines } from '../src/catalog/edits/promote-diff.js';
import { parseVersion, type Version } from '../src/catalog/versions/semver.js';
import {
  bundleResolverFromCatalog,
  parseTemplate,
  renderTemplate,
  renderTemplateText,
  semverOptionsForOpm,
  TemplateError,
} from '../src/catalog/templates/index.js';
import {
  generateSemverGraph,
  readSemverTemplate,
  type Archetype,
  type SemverEdgeRule,
  type SemverTemplate,
} from '../src/catalog/templates/semver.js';
import { encodeYaml, goYamlSortKeys, writeConfig } from '../src/catalog/templates/write.js';
import { haveOpm, OPM, removeTree, writeTree } from './helpers/oracle.js';
import { COP_TEMPLATES as C, REAL_TEMPLATES as T, type TemplatePair } from './helpers/real-templates.js';

const read = (path: string): string => readFileSync(path, 'utf8');

type Pair = TemplatePair;

const PAIRS: Pair[] = [
  {
    name: 'clusterpulse semver -> v4.18',
    template: join(C, 'clusterpulse/catalog-templates/semver.yaml'),
    output: join(C, 'clusterpulse/rendered/v4.18/clusterpulse/catalog.yaml'),
    format: 'yaml',
    // The community pipeline image (redhat-openshift-ecosystem/operator-pipelines
    // Dockerfile) installs opm v1.46.0: before a0e2cf85 (v1.57.0) and before v1.65.0's
    // package icon/description.
    opm: 'v1.46.0',
  },
  ...['v4.16', 'v4.17'].map((v): Pair => ({
    name: `kairos-operator semver -> ${v}`,
    template: join(C, 'kairos-operator/catalog-templates/semver.yaml'),
    output: join(C, `kairos-operator/rendered/${v}/kairos-operator/catalog.yaml`),
    format: 'yaml',
    opm: 'v1.73.0',
  })),
  {
    name: 'ecr-secret-operator deprecated.yaml (basic) -> v4.12',
    template: join(C, 'ecr-secret-operator/catalog-templates/deprecated.yaml'),
    output: join(C, 'ecr-secret-operator/rendered/v4.12/ecr-secret-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
  },
  ...['v4.16', 'v4.20'].map((v): Pair => ({
    name: `cluster-kube-descheduler-operator ${v} (basic, JSON output)`,
    template: join(T, `cluster-kube-descheduler-operator/${v}/catalog-template.yaml`),
    output: join(
      T,
      `cluster-kube-descheduler-operator/${v}/catalog/cluster-kube-descheduler-operator/catalog.json`,
    ),
    format: 'json',
    opm: 'v1.73.0',
  })),
  {
    name: 'mtv-fbc v4.20 (JSON basic template)',
    template: join(T, 'mtv-fbc/v4.20/catalog-template.json'),
    output: join(T, 'mtv-fbc/v4.20/catalog/mtv-operator/catalog.json'),
    format: 'json',
    opm: 'v1.73.0',
  },
];

describe('real template/output pairs re-render byte-identical', () => {
  for (const pair of PAIRS) {
    it(pair.name, async () => {
      const committed = read(pair.output);
      const out = await renderTemplateText(read(pair.template), pair.format, {
        resolveBundle: bundleResolverFromCatalog([committed]),
        ...semverOptionsForOpm(pair.opm),
      });
      expect(changedLines(committed, out)).toEqual([]);
      expect(out).toBe(committed);
    });
  }

  // The ecr-secret-operator basic.yaml at this commit lists two channel entries
  // (v0.6.0, v0.5.1) whose bundles it does not list yet; the committed outputs were
  // rendered before they were added. The re-render differs by exactly those entries.
  for (const v of ['v4.16', 'v4.17']) {
    it(`ecr-secret-operator basic.yaml -> ${v}: differs only by the two entries added since`, async () => {
      const committed = read(join(C, `ecr-secret-operator/rendered/${v}/ecr-secret-operator/catalog.yaml`));
      const text = read(join(C, 'ecr-secret-operator/catalog-templates/basic.yaml'));
      const resolveBundle = bundleResolverFromCatalog([committed]);
      const out = await renderTemplateText(text, 'yaml', { resolveBundle });
      expect(changedLines(committed, out)).toEqual([
        '+- name: ecr-secret-operator.v0.6.0',
        '+  replaces: ecr-secret-operator.v0.5.1',
        '+  skips:',
        '+  - ecr-secret-operator.v0.3.2',
        '+  - ecr-secret-operator.v0.4.0',
        '+  - ecr-secret-operator.v0.4.1',
        '+  - ecr-secret-operator.v0.5.0',
        '+- name: ecr-secret-operator.v0.5.1',
        '+  replaces: ecr-secret-operator.v0.5.0',
        '+  skips:',
        '+  - ecr-secret-operator.v0.3.2',
        '+  - ecr-secret-operator.v0.4.0',
        '+  - ecr-secret-operator.v0.4.1',
      ]);
      // Without those two entries the template renders to the committed bytes.
      const doc = parseTemplate(text) as { entries: { schema: string; entries?: { name: string }[] }[] };
      for (const e of doc.entries) {
        if (e.schema === 'olm.channel')
          e.entries = e.entries!.filter((x) => !/v0\.(6\.0|5\.1)$/.test(x.name));
      }
      expect(await renderTemplateText(JSON.stringify(doc), 'yaml', { resolveBundle })).toBe(committed);
    });
  }
});

describe('clusterpulse: rendered by an opm before v1.57.0 (semver edge rule of a0e2cf85)', () => {
  const committed = () => read(join(C, 'clusterpulse/rendered/v4.18/clusterpulse/catalog.yaml'));
  const channelsOf = (text: string): unknown[] =>
    decodeFile(Buffer.from(text))
      .values.map((v) => v.value as { schema: string })
      .filter((v) => v.schema === 'olm.channel');

  it('only the pre-v1.57 rule (Y head also skips the entry it replaces) reproduces its channels', async () => {
    const results: Record<SemverEdgeRule, boolean> = {
      'edge-scoped': false,
      'channel-scoped': false,
      'channel-scoped-skip-replaced': false,
    };
    for (const edgeRule of Object.keys(results) as SemverEdgeRule[]) {
      const out = await renderTemplateText(
        read(join(C, 'clusterpulse/catalog-templates/semver.yaml')),
        'yaml',
        {
          resolveBundle: bundleResolverFromCatalog([committed()]),
          edgeRule,
          packageMetadata: false,
        },
      );
      results[edgeRule] = JSON.stringify(channelsOf(out)) === JSON.stringify(channelsOf(committed()));
    }
    expect(results).toEqual({
      'edge-scoped': false,
      'channel-scoped': false,
      'channel-scoped-skip-replaced': true,
    });
  });

  it('opm v1.73.0 would write exactly these different lines', async () => {
    const out = await renderTemplateText(
      read(join(C, 'clusterpulse/catalog-templates/semver.yaml')),
      'yaml',
      {
        resolveBundle: bundleResolverFromCatalog([committed()]),
        ...semverOptionsForOpm('v1.73.0'),
      },
    );
    const diff = changedLines(committed(), out);
    // v1.65+ copies the head CSV's description into the package (here a long text).
    expect(diff[0]).toBe('+description: |');
    const edges = diff.filter((l) => /clusterpulse\.v/.test(l));
    expect(edges).toEqual([
      // v0.2.3 no longer skips v0.1.1, which it replaces
      '-  - clusterpulse.v0.1.1',
      // v0.3.0 no longer skips v0.2.3 (it replaces it) but skips every other earlier entry of fast-v0
      '-  - clusterpulse.v0.2.3',
      '+  - clusterpulse.v0.1.1',
      '+  - clusterpulse.v0.2.0',
      '+  - clusterpulse.v0.2.1',
      '+  - clusterpulse.v0.2.2',
    ]);
  });

  it('maps opm versions to behaviours', () => {
    expect(semverOptionsForOpm('v1.46.0')).toEqual({
      edgeRule: 'channel-scoped-skip-replaced',
      packageMetadata: false,
    });
    expect(semverOptionsForOpm('1.57.0')).toEqual({ edgeRule: 'channel-scoped', packageMetadata: false });
    expect(semverOptionsForOpm('v1.61.0')).toEqual({ edgeRule: 'edge-scoped', packageMetadata: false });
    expect(semverOptionsForOpm('v1.73.0')).toEqual({ edgeRule: 'edge-scoped', packageMetadata: true });
  });
});

// ---- semver generation rules (olm-semantics.md 6.2)

const vers = (...list: string[]): Map<string, Version> =>
  new Map(list.map((v) => [`op.v${v}`, parseVersion(v)]));
const template = (over: Partial<SemverTemplate> = {}): SemverTemplate => ({
  generateMajorChannels: true,
  generateMinorChannels: false,
  defaultChannelTypePreference: 'major',
  bundles: { candidate: [], fast: [], stable: [] },
  ...over,
});
const byArch = (
  over: Partial<Record<Archetype, Map<string, Version>>>,
): Record<Archetype, Map<string, Version>> => ({
  candidate: new Map(),
  fast: new Map(),
  stable: new Map(),
  ...over,
});

describe('olm.semver edges', () => {
  const stable = vers('1.0.0', '1.0.1', '1.1.0', '1.1.1', '1.2.0', '2.0.0', '2.0.1', '2.1.0');

  it('edge-scoped (v1.61+): Y heads replace the previous Y head and skip the rest; nothing across majors', () => {
    const g = generateSemverGraph(template(), byArch({ stable }), 'op');
    expect(g.channels.map((c) => [c.name, c.entries])).toEqual([
      [
        'stable-v1',
        [
          { name: 'op.v1.0.0' },
          { name: 'op.v1.0.1', replaces: '', skips: ['op.v1.0.0'] },
          { name: 'op.v1.1.0' },
          { name: 'op.v1.1.1', replaces: 'op.v1.0.1', skips: ['op.v1.0.0', 'op.v1.1.0'] },
          { name: 'op.v1.2.0', replaces: 'op.v1.1.1', skips: ['op.v1.0.0', 'op.v1.0.1', 'op.v1.1.0'] },
        ],
      ],
      [
        'stable-v2',
        [
          { name: 'op.v2.0.0' },
          { name: 'op.v2.0.1', replaces: '', skips: ['op.v2.0.0'] },
          { name: 'op.v2.1.0', replaces: 'op.v2.0.1', skips: ['op.v2.0.0'] },
        ],
      ],
    ]);
    for (const c of g.channels) {
      const major = c.name.slice('stable-v'.length);
      for (const e of c.entries) {
        for (const target of [e.replaces, ...(e.skips ?? [])].filter(Boolean)) {
          expect(target!.startsWith(`op.v${major}.`)).toBe(true);
        }
      }
    }
  });

  it('channel-scoped rules (before v1.61) link only within a channel', () => {
    for (const [rule, head] of [
      ['channel-scoped', { name: 'op.v1.2.0', replaces: 'op.v1.1.1' }],
      ['channel-scoped-skip-replaced', { name: 'op.v1.2.0', replaces: 'op.v1.1.1', skips: ['op.v1.1.1'] }],
    ] as const) {
      const g = generateSemverGraph(template(), byArch({ stable }), 'op', { edgeRule: rule });
      expect(g.channels[0]!.entries.at(-1)).toEqual(head);
    }
  });

  it('minor channels: each Y head replaces the previous Y head in another channel', () => {
    const g = generateSemverGraph(
      template({
        generateMajorChannels: false,
        generateMinorChannels: true,
        defaultChannelTypePreference: 'minor',
      }),
      byArch({ fast: vers('1.0.0', '1.0.1', '1.1.0', '2.0.0') }),
      'op',
    );
    expect(Object.fromEntries(g.channels.map((c) => [c.name, c.entries]))).toEqual({
      'fast-v1.0': [{ name: 'op.v1.0.0' }, { name: 'op.v1.0.1', replaces: '', skips: ['op.v1.0.0'] }],
      'fast-v1.1': [{ name: 'op.v1.1.0', replaces: 'op.v1.0.1', skips: ['op.v1.0.0'] }],
      'fast-v2.0': [{ name: 'op.v2.0.0' }],
    });
    expect(g.defaultChannel).toBe('fast-v2.0');
  });

  it('archetypes are linked separately', () => {
    const g = generateSemverGraph(
      template(),
      byArch({ candidate: vers('1.0.0', '1.1.0'), stable: vers('1.0.0', '1.1.0') }),
      'op',
    );
    expect(g.channels.map((c) => [c.name, c.entries.at(-1)])).toEqual([
      ['candidate-v1', { name: 'op.v1.1.0', replaces: 'op.v1.0.0' }],
      ['stable-v1', { name: 'op.v1.1.0', replaces: 'op.v1.0.0' }],
    ]);
  });

  it('default channel: most stable archetype first, then the version that opened the channel, then the preferred kind', () => {
    const both = { generateMajorChannels: true, generateMinorChannels: true };
    // stable wins over a higher fast version
    expect(
      generateSemverGraph(template(both), byArch({ fast: vers('3.0.0'), stable: vers('1.0.0') }), 'op', {})
        .defaultChannel,
    ).toBe('stable-v1');
    // same archetype: the channel opened by the higher version
    expect(
      generateSemverGraph(template(), byArch({ stable: vers('1.5.0', '2.0.0') }), 'op').defaultChannel,
    ).toBe('stable-v2');
    // version before kind: stable-v1.2 was opened by 1.2.0, stable-v1 by 1.0.0
    expect(
      generateSemverGraph(
        template({ ...both, defaultChannelTypePreference: 'major' }),
        byArch({ stable: vers('1.0.0', '1.2.0') }),
        'op',
      ).defaultChannel,
    ).toBe('stable-v1.2');
    // same version: the preferred kind
    for (const pref of ['minor', 'major'] as const) {
      expect(
        generateSemverGraph(
          template({ ...both, defaultChannelTypePreference: pref }),
          byArch({ stable: vers('1.0.0') }),
          'op',
        ).defaultChannel,
      ).toBe(pref === 'minor' ? 'stable-v1.0' : 'stable-v1');
    }
  });
});

describe('olm.semver template reading', () => {
  it('takes capitalised keys and applies the defaults', () => {
    const t = readSemverTemplate(
      parseTemplate(
        '---\nSchema: olm.semver\nGenerateMajorChannels: true\nStable:\n  Bundles:\n  - Image: a\n',
      ),
    );
    expect(t).toEqual({
      generateMajorChannels: true,
      generateMinorChannels: false,
      defaultChannelTypePreference: 'major',
      bundles: { candidate: [], fast: [], stable: ['a'] },
    });
    expect(readSemverTemplate({ schema: 'olm.semver' }).generateMinorChannels).toBe(true);
  });

  it('rejects what opm rejects', () => {
    expect(() => readSemverTemplate({ schema: 'olm.semver', Stabel: {} })).toThrow(/unknown field "Stabel"/);
    expect(() =>
      readSemverTemplate({ schema: 'olm.semver', stable: { bundles: [{ image: 'a', x: 1 }] } }),
    ).toThrow(/unknown field "x"/);
    expect(() => readSemverTemplate({ schema: 'olm.template.basic' })).toThrow(/unknown schema/);
    expect(() => readSemverTemplate({ schema: 'olm.semver', defaultChannelTypePreference: 'major' })).toThrow(
      /doesn't make sense/,
    );
  });

  it('refuses versions that differ only in build metadata, and bundles of two packages', async () => {
    const blob = (name: string, pkg: string, version: string) => ({
      schema: 'olm.bundle',
      name,
      package: pkg,
      image: `img/${name}`,
      properties: [{ type: 'olm.package', value: { packageName: pkg, version } }],
    });
    const resolver = (blobs: ReturnType<typeof blob>[]) => async (image: string) =>
      blobs.find((b) => b.image === image);
    const text = (names: string[]) =>
      JSON.stringify({
        schema: 'olm.semver',
        stable: { bundles: names.map((n) => ({ image: `img/${n}` })) },
      });
    await expect(
      renderTemplate(text(['a', 'b']), {
        resolveBundle: resolver([blob('a', 'p', '1.0.0+1'), blob('b', 'p', '1.0.0+2')]),
      }),
    ).rejects.toThrow(/differ only by build metadata/);
    await expect(
      renderTemplate(text(['a', 'b']), {
        resolveBundle: resolver([blob('a', 'p', '1.0.0'), blob('b', 'q', '1.1.0')]),
      }),
    ).rejects.toThrow(/does not belong to this package/);
    await expect(renderTemplate(text(['a']), { resolveBundle: resolver([]) })).rejects.toThrow(TemplateError);
  });
});

// ---- the writers against the real opm

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

describe.skipIf(!haveOpm)('writers match opm', () => {
  const tricky = {
    schema: 'olm.package',
    name: 'tricky',
    defaultChannel: 'stable',
    description: `A long description that goes well past eighty columns so that go-yaml folds it at a space, twice over, and then some more words.\nSecond line with trailing space \n\ttab line`,
    properties: [
      {
        type: 'custom.values',
        value: {
          a10: 'yes',
          a9: '2024-01-02',
          A: 'null',
          b: [
            '',
            ' lead',
            'trail ',
            '- dash',
            'a: b',
            '#x',
            'x #y',
            '0777',
            '1_000',
            '1:20',
            '.5',
            'é ü',
            '😀',
            '\u0085x',
          ],
          c: "it's a 'quoted' word in a line that is long enough to fold past the eighty column mark here",
          d: 'multi\nline\n',
          e: 'keep\n\n',
          f: '  indented\nblock',
          g: 'double "quoted" and \\ backslash that is long enough to need folding past eighty columns x',
          h: [1, 2.5, -3, 1e21, 0.000001, 1234567.5, true, null, {}, []],
          ['k'.repeat(130)]: 'long key',
          'key with\nnewline': 1,
          '2': 'numeric key',
          '10': 'numeric key',
        },
      },
    ],
  };
  const basic = {
    schema: 'olm.template.basic',
    entries: [
      tricky,
      {
        schema: 'olm.channel',
        package: 'tricky',
        name: 'stable',
        entries: [{ name: 'b', replaces: 'a', skips: ['z', 'y'], skipRange: '<1.0.0' }],
      },
      { schema: 'olm.channel', package: 'tricky', name: 'alpha', entries: [{ name: 'a' }] },
      {
        schema: 'olm.deprecations',
        package: 'tricky',
        entries: [{ reference: { schema: 'olm.package' }, message: 'm' }],
      },
      { schema: 'z.other', package: 'tricky', data: { y: 1, x: [2] } },
      { schema: 'a.other', package: 'tricky' },
      { schema: 'root.other', name: 'r' },
      {
        schema: 'olm.package',
        name: 'another',
        defaultChannel: 'x',
        icon: { base64data: 'aGk=', mediatype: 'image/png' },
      },
    ],
  };

  for (const format of ['yaml', 'json'] as const) {
    it(`basic template without bundle images: opm alpha render-template -o ${format}`, async () => {
      const dir = writeTree({ 't.yaml': JSON.stringify(basic) });
      dirs.push(dir);
      const opm = spawnSync(OPM, ['alpha', 'render-template', join(dir, 't.yaml'), '-o', format], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(opm.status).toBe(0);
      const ours = await renderTemplateText(JSON.stringify(basic), format, {
        resolveBundle: async () => undefined,
      });
      expect(changedLines(opm.stdout, ours)).toEqual([]);
    });
  }

  it('YAML of every object of a catalog equals opm render -o yaml', () => {
    const dir = writeTree({ 'c/catalog.json': JSON.stringify(tricky) });
    dirs.push(dir);
    const json = spawnSync(OPM, ['render', dir, '-o', 'json'], { encoding: 'utf8', timeout: 60_000 });
    const yaml = spawnSync(OPM, ['render', dir, '-o', 'yaml'], { encoding: 'utf8', timeout: 60_000 });
    expect(json.status).toBe(0);
    const ours = decodeFile(Buffer.from(json.stdout))
      .values.map((v) => encodeYaml(v.value))
      .join('');
    expect(changedLines(yaml.stdout, ours)).toEqual([]);
  });

  it('semver templates opm rejects are rejected too', async () => {
    for (const text of [
      'schema: olm.semver\nStabel: {}\n',
      'schema: olm.semver\ndefaultChannelTypePreference: major\n',
      'schema: olm.semver\ngenerateMinorChannels: "yes"\n',
    ]) {
      const dir = writeTree({ 't.yaml': text });
      dirs.push(dir);
      const opm = spawnSync(OPM, ['alpha', 'render-template', join(dir, 't.yaml')], { encoding: 'utf8' });
      expect(opm.status).not.toBe(0);
      await expect(renderTemplate(text, { resolveBundle: async () => undefined })).rejects.toThrow(
        TemplateError,
      );
    }
  });
});

describe('writer details', () => {
  it('sorts keys as go-yaml does (digits by value)', () => {
    expect(goYamlSortKeys(['a10', 'a9', 'b', 'A', '10', '2', 'a09'])).toEqual([
      '2',
      '10',
      'A',
      'a9',
      'a09',
      'a10',
      'b',
    ]);
  });

  it('groups by package and sorts channels and bundles by name', () => {
    const obj = (schema: string, pkg: string, name: string) => ({
      schema,
      package: pkg,
      name,
      value: { schema, name, ...(pkg ? { package: pkg } : {}) },
    });
    const out = writeConfig(
      {
        packages: [obj('olm.package', '', 'b'), obj('olm.package', '', 'a')].map((p) => ({
          ...p,
          name: p.name,
        })),
        channels: [obj('olm.channel', 'b', 'z'), obj('olm.channel', 'b', 'c')],
        bundles: [obj('olm.bundle', 'a', 'y'), obj('olm.bundle', '', 'dropped')],
        others: [obj('x.other', '', 'root')],
        deprecations: [],
      },
      'json',
    );
    const names = decodeFile(Buffer.from(out)).values.map((v) => (v.value as { name: string }).name);
    expect(names).toEqual(['a', 'y', 'b', 'c', 'z', 'root']);
  });
});

describe('--migrate-level bundle-object-to-csv-metadata', () => {
  it('kairos-operator: v4.16 bundles (olm.bundle.object) migrate to exactly the committed v4.17 output', async () => {
    const v416 = read(join(C, 'kairos-operator/rendered/v4.16/kairos-operator/catalog.yaml'));
    const v417 = read(join(C, 'kairos-operator/rendered/v4.17/kairos-operator/catalog.yaml'));
    const out = await renderTemplateText(
      read(join(C, 'kairos-operator/catalog-templates/semver.yaml')),
      'yaml',
      {
        resolveBundle: bundleResolverFromCatalog([v416]),
        migrateLevel: 'bundle-object-to-csv-metadata',
      },
    );
    expect(changedLines(v417, out)).toEqual([]);
  });

  it('ecr-secret-operator: v4.16 (objects) migrates to the committed v4.17 (metadata)', async () => {
    const v416 = read(join(C, 'ecr-secret-operator/rendered/v4.16/ecr-secret-operator/catalog.yaml'));
    const v417 = read(join(C, 'ecr-secret-operator/rendered/v4.17/ecr-secret-operator/catalog.yaml'));
    const doc = parseTemplate(read(join(C, 'ecr-secret-operator/catalog-templates/basic.yaml'))) as {
      entries: { schema: string; entries?: { name: string }[] }[];
    };
    for (const e of doc.entries) {
      if (e.schema === 'olm.channel') e.entries = e.entries!.filter((x) => !/v0\.(6\.0|5\.1)$/.test(x.name));
    }
    const out = await renderTemplateText(JSON.stringify(doc), 'yaml', {
      resolveBundle: bundleResolverFromCatalog([v416]),
      migrateLevel: 'bundle-object-to-csv-metadata',
    });
    expect(changedLines(v417, out)).toEqual([]);
  });
});
