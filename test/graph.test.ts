import { afterAll, describe, expect, it } from 'vitest';
import { runCli as run } from './helpers/cli.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const bundle = (v: string) =>
  `---\nschema: olm.bundle\npackage: foo\nname: foo.v${v}\nimage: quay.io/x/foo:v${v}\nproperties:\n  - {type: olm.package, value: {packageName: foo, version: "${v}"}}\n`;

// The seed example (olm-semantics.md key finding 1 and section 5): v3 skips v2, v2 covers
// v1 only by skipRange. opm accepts the catalog.
const seed = writeTree({
  'foo.yaml':
    'schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n' +
    '  - name: foo.v1.0.0\n  - name: foo.v2.0.0\n    skipRange: ">=1.0.0 <2.0.0"\n    replaces: foo.v1.0.0\n' +
    '  - name: foo.v3.0.0\n    replaces: foo.v2.0.0\n    skips: [foo.v2.0.0]\n' +
    bundle('1.0.0') +
    bundle('2.0.0') +
    bundle('3.0.0'),
});
dirs.push(seed);

describe('catalog-bot graph', () => {
  it('prints the design.md JSON contract, classic and v1 diverging on the seed example', async () => {
    const { code, out } = await run(['graph', seed, 'foo', '--channel', 'stable', '--format', 'json']);
    expect(code).toBe(0);
    const g = JSON.parse(out);
    expect(g).toMatchObject({
      heads: ['foo.v3.0.0'],
      head: 'foo.v3.0.0',
      classicError: null,
      classicInstall: 'foo.v3.0.0',
    });
    // Classic walks through the skipped v2 but leaves it out of the chain, so v1.0.0 has
    // no candidate; v1 takes the highest successor of v1.0.0 and then moves on to v3.
    expect(g.classicChain).toEqual(['foo.v3.0.0', 'foo.v1.0.0']);
    expect(g.entries['foo.v1.0.0']).toMatchObject({
      version: '1.0.0',
      classicNext: null,
      v1Chosen: 'foo.v2.0.0',
    });
    expect(g.entries['foo.v2.0.0']).toMatchObject({ classicNext: 'foo.v3.0.0', v1Chosen: 'foo.v3.0.0' });
    expect(g.entries['foo.v3.0.0']).toMatchObject({ classicNext: null, v1Chosen: 'foo.v3.0.0' });
    expect(g.valid).toBe(false); // v1.0.0 is stranded for opm too
  });

  it('answers for bundles installed on clusters but absent from the catalog', async () => {
    const { out } = await run(['graph', seed, 'foo', '--format', 'json', '--installed', 'foo.v1.5.0=1.5.0']);
    expect(JSON.parse(out).entries['foo.v1.5.0']).toMatchObject({
      version: '1.5.0',
      installedOnly: true,
      classicNext: null,
      v1Successors: ['foo.v2.0.0'],
      v1Chosen: 'foo.v2.0.0',
    });
  });

  it('applies an OLM v1 version range', async () => {
    const { out } = await run(['graph', seed, 'foo', '--format', 'json', '--v1-version-range', '<3.0.0']);
    const g = JSON.parse(out);
    expect(g.v1Install).toBe('foo.v2.0.0');
    expect(g.entries['foo.v2.0.0'].v1Chosen).toBe('foo.v2.0.0');
  });

  it('v1Successors lists every legacy successor, unfiltered by range and deprecations, highest first', async () => {
    // v1.5.0 is deprecated; v1.0.0 has successors 1.2.0 (replaces), 1.5.0 (skips) and 2.0.0 (skipRange).
    const dir = writeTree({
      'foo.yaml':
        'schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n' +
        '  - name: foo.v1.0.0\n  - name: foo.v1.2.0\n    replaces: foo.v1.0.0\n' +
        '  - name: foo.v1.5.0\n    replaces: foo.v1.2.0\n    skips: [foo.v1.0.0]\n' +
        '  - name: foo.v2.0.0\n    replaces: foo.v1.5.0\n    skipRange: ">=1.0.0 <1.1.0"\n' +
        '---\nschema: olm.deprecations\npackage: foo\nentries:\n  - reference: {schema: olm.bundle, name: foo.v1.5.0}\n    message: use 2.0.0\n' +
        bundle('1.0.0') +
        bundle('1.2.0') +
        bundle('1.5.0') +
        bundle('2.0.0'),
    });
    dirs.push(dir);
    const { code, out } = await run([
      'graph',
      dir,
      'foo',
      '--format',
      'json',
      '--v1-version-range',
      '<2.0.0',
    ]);
    expect(code).toBe(0);
    const entry = JSON.parse(out).entries['foo.v1.0.0'];
    expect(entry.v1Successors).toEqual(['foo.v2.0.0', 'foo.v1.5.0', 'foo.v1.2.0']);
    // What v1 then picks: the range drops 2.0.0, the deprecation ranks 1.5.0 last.
    expect(entry.v1Chosen).toBe('foo.v1.2.0');
  });

  it('draws text, mermaid and dot', async () => {
    expect((await run(['graph', seed, 'foo'])).out).toContain('foo.v1.0.0 (1.0.0): stays | foo.v2.0.0');
    const m = (await run(['graph', seed, 'foo', '--format', 'mermaid'])).out;
    expect(m).toMatch(/^flowchart LR\n/);
    expect(m).toContain('-.->|skips|');
    expect((await run(['graph', seed, 'foo', '--format', 'dot'])).out).toContain(
      '"foo.v2.0.0" -> "foo.v3.0.0" [label="skips", style=dashed];',
    );
  });

  it('exits 2 for unknown packages, channels, bad --installed and bad version ranges', async () => {
    expect((await run(['graph', seed, 'bar'])).err).toMatch(/no package "bar" \(packages: foo\)/);
    expect((await run(['graph', seed, 'foo', '--channel', 'beta'])).code).toBe(2);
    expect((await run(['graph', seed, 'foo', '--installed', 'x'])).code).toBe(2);
    const bad = await run(['graph', seed, 'foo', '--v1-version-range', '1.0.0 - 2.0.0']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('spec.source.catalog.version');
  });
});
