// Old catalog vs new catalog (olm-semantics.md section 9, checks 12 to 14): a change must
// not strand anyone already installed. Each case writes a tiny old and new FBC catalog,
// loads both with the real loader (using the model even when opm would reject the
// catalog), and compares.
import { chmodSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import type { Diagnostic } from '../src/catalog/diagnostics.js';
import type { Model } from '../src/catalog/fbc/model.js';
import { compareFindings, differingPackages } from '../src/checks/upgrade-graph/compare.js';
import { skipRangeFindings } from '../src/checks/upgrade-graph/index.js';
import { bundle, channel, pkg, yamlStream, type Obj } from './helpers/catalogs.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const v = (version: string) => `foo.v${version}`;

/** Load a one-package catalog (foo/catalog.yaml) and return its model, valid or not. */
async function load(...objs: Obj[]): Promise<{ model: Model; valid: boolean; dir: string }> {
  const dir = writeTree({ 'foo/catalog.yaml': yamlStream(...objs) });
  dirs.push(dir);
  const report = await validateCatalog(new DirectorySource(dir));
  return { model: report.model, valid: report.valid, dir };
}

async function compare(oldObjs: Obj[], newObjs: Obj[]): Promise<Diagnostic[]> {
  const before = await load(...oldObjs);
  const after = await load(...newObjs);
  return compareFindings(before.model, after.model);
}

/** The 1-based line of the first line of `foo/catalog.yaml` in `dir` that contains `text`. */
function lineOf(dir: string, text: string, nth = 0): number {
  const lines = readFileSync(join(dir, 'foo/catalog.yaml'), 'utf8').split('\n');
  const found = lines.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  return found[nth]!;
}

/** The line where the YAML document holding the nth line with `text` starts (a blob's position). */
function docLineOf(dir: string, text: string, nth = 0): number {
  const lines = readFileSync(join(dir, 'foo/catalog.yaml'), 'utf8').split('\n');
  let line = lineOf(dir, text, nth);
  while (line > 1 && lines[line - 2] !== '---') line--;
  return line;
}

const rules = (findings: Diagnostic[]) => findings.map((d) => d.rule);

/** Package foo with one channel, stable, of `entries`, and foo's bundles of `versions` (not always the entries'). */
function fooCatalog(entries: (string | Obj)[], versions: string[]): Obj[] {
  return [pkg(), channel(entries), ...versions.map((version) => bundle(version))];
}

// A three-bundle replaces chain, 1.0.0 <- 1.1.0 <- 1.2.0.
const chain3 = (): Obj[] =>
  fooCatalog(
    [v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }, { name: v('1.2.0'), replaces: v('1.1.0') }],
    ['1.0.0', '1.1.0', '1.2.0'],
  );

// The smallest valid catalog, 1.0.0 <- 1.1.0.
const chain2 = (): Obj[] =>
  fooCatalog([v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }], ['1.0.0', '1.1.0']);

describe('G12-NO-WAY-FORWARD', () => {
  it('adding a head that replaces the old head is fine', async () => {
    const findings = await compare(chain2(), chain3());
    expect(findings).toEqual([]);
  });

  it('adding a head with only a skipRange strands everyone under classic (two heads), not under v1', async () => {
    const after = await load(
      ...fooCatalog(
        [
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), skipRange: '>=1.0.0 <1.2.0' },
        ],
        ['1.0.0', '1.1.0', '1.2.0'],
      ),
    );
    expect(after.valid).toBe(false); // opm: multiple channel heads
    const findings = compareFindings((await load(...chain2())).model, after.model);
    expect(findings).toHaveLength(1);
    const [f] = findings;
    expect(f).toMatchObject({
      rule: 'G12-NO-WAY-FORWARD',
      level: 'error',
      package: 'foo',
      file: 'foo/catalog.yaml',
      line: lineOf(after.dir, `name: ${v('1.2.0')}`),
    });
    // One finding for the whole channel: both old bundles, classic only (v1 follows the skipRange).
    expect(f!.message).toContain(`installed bundles (2) ${v('1.0.0')} (1.0.0), ${v('1.1.0')} (1.1.0)`);
    expect(f!.message).toContain('channel "stable"');
    expect(f!.message).toContain('stranded by classic OLM:');
    expect(f!.message).toContain('a unique replacement chain within a channel is required');
    expect(f!.hint).toBe(
      `Make ${v('1.2.0')} the only head: add \`replaces: ${v('1.1.0')}\` to ${v('1.2.0')}.`,
    );
  });

  it('the fix for a skipRange-only head (replaces plus skipRange) is fine', async () => {
    const findings = await compare(
      chain2(),
      fooCatalog(
        [
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.0.0 <1.2.0' },
        ],
        ['1.0.0', '1.1.0', '1.2.0'],
      ),
    );
    // 1.0.0 now jumps straight to 1.2.0 under classic: further ahead, so no G13 warning either.
    expect(findings).toEqual([]);
  });

  it('removing a middle bundle without covering it strands its predecessor under both OLMs', async () => {
    const after = await load(
      ...fooCatalog([v('1.0.0'), { name: v('1.2.0'), replaces: v('1.1.0') }], ['1.0.0', '1.2.0']),
    );
    const findings = compareFindings((await load(...chain3())).model, after.model);
    expect(rules(findings)).toEqual(['G12-NO-WAY-FORWARD', 'G12-NO-WAY-FORWARD']);
    const both = findings.find((d) => d.message.includes(`bundle ${v('1.0.0')} (1.0.0)`))!;
    expect(both.message).toContain('stranded by both classic OLM and OLM v1');
    expect(both.message).toContain('OLM v1 stays on it: nothing in the channel replaces');
    expect(both.hint).toBe(
      `Make ${v('1.2.0')} the only head: add \`${v('1.0.0')}\` to the \`skips\` of ${v('1.2.0')}.`,
    );
    expect(both.line).toBe(lineOf(after.dir, `name: ${v('1.2.0')}`));
    // The removed bundle's users still reach 1.2.0 under v1 (it replaces them), but classic
    // cannot order the channel; its old position is named.
    const removed = findings.find((d) => d !== both)!;
    expect(removed.message).toContain(
      `bundle ${v('1.1.0')} (1.1.0; removed from the channel by this change, it was at foo/catalog.yaml:`,
    );
    expect(removed.message).toContain('stranded by classic OLM:');
  });

  // Changes to chain3 that leave every installed bundle a way forward.
  const fineAfterChain3: [name: string, after: Obj[]][] = [
    [
      'removing a middle bundle that the next bundle skips is fine',
      fooCatalog(
        [v('1.0.0'), { name: v('1.2.0'), replaces: v('1.0.0'), skips: [v('1.1.0')] }],
        ['1.0.0', '1.2.0'],
      ),
    ],
    [
      'applying the suggested fix (skip the orphaned predecessor) is fine',
      fooCatalog(
        [v('1.0.0'), { name: v('1.2.0'), replaces: v('1.1.0'), skips: [v('1.0.0')] }],
        ['1.0.0', '1.2.0'],
      ),
    ],
    [
      'removing the tail is fine while the next entry still replaces it',
      fooCatalog(
        [
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), replaces: v('1.1.0') },
        ],
        ['1.1.0', '1.2.0'],
      ),
    ],
  ];
  it.each(fineAfterChain3)('%s', async (_name, after) => {
    expect(await compare(chain3(), after)).toEqual([]);
  });

  it('removing the tail together with the edge to it strands its users', async () => {
    const after = await load(
      ...fooCatalog([v('1.1.0'), { name: v('1.2.0'), replaces: v('1.1.0') }], ['1.1.0', '1.2.0']),
    );
    const findings = compareFindings((await load(...chain3())).model, after.model);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain(`bundle ${v('1.0.0')} (1.0.0; removed from the channel`);
    expect(findings[0]!.message).toContain('stranded by both classic OLM and OLM v1');
    expect(findings[0]!.message).toContain('OLM v1 finds no bundle to move to');
    expect(findings[0]!.hint).toBe(
      `Give its users a way forward: add \`replaces: ${v('1.0.0')}\` to ${v('1.1.0')}.`,
    );
    expect(findings[0]!.line).toBe(lineOf(after.dir, `name: ${v('1.1.0')}`));
  });

  it('bundles that need an edge from the same entry share one finding and one edit', async () => {
    const findings = await compare(chain3(), fooCatalog([v('1.2.0')], ['1.2.0']));
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toMatch(
      /^installed bundles \(2\) foo\.v1\.0\.0 \(1\.0\.0; removed .*\), foo\.v1\.1\.0 \(1\.1\.0; removed .*\) in channel "stable" of package "foo" would be stranded by both classic OLM and OLM v1: /,
    );
    expect(findings[0]!.hint).toBe(
      `Give their users a way forward: add \`${v('1.0.0')}\` and \`${v('1.1.0')}\` to the \`skips\` of ${v('1.2.0')} ` +
        "(or give it `skipRange: '>=1.0.0 <1.2.0'`).",
    );
  });

  it("re-pointing the tail's replaces strands the old tail", async () => {
    const findings = await compare(
      fooCatalog(
        [
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.1.0 <1.2.0' },
        ],
        ['1.0.0', '1.1.0', '1.2.0'],
      ),
      fooCatalog(
        [
          { name: v('1.1.0'), replaces: v('0.9.0') },
          { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.1.0 <1.2.0' },
        ],
        ['1.1.0', '1.2.0'],
      ),
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]!.hint).toBe(
      `Give its users a way forward: add \`${v('1.0.0')}\` to the \`skips\` of ${v('1.1.0')}.`,
    );
  });

  it('suggests widening a skipRange that almost covers a removed bundle', async () => {
    const before = fooCatalog(
      [
        v('1.0.0'),
        { name: v('1.1.0'), replaces: v('1.0.0') },
        { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.1.0 <1.2.0' },
      ],
      ['1.0.0', '1.1.0', '1.2.0'],
    );
    const pruned = (skipRange: string): Obj[] =>
      fooCatalog([{ name: v('1.2.0'), replaces: v('1.1.0'), skipRange }], ['1.2.0']);
    const findings = await compare(before, pruned('>=1.1.0 <1.2.0'));
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain(`bundle ${v('1.0.0')} (1.0.0; removed from the channel`);
    expect(findings[0]!.hint).toBe(
      `Give its users a way forward: add \`${v('1.0.0')}\` to the \`skips\` of ${v('1.2.0')} ` +
        `(or widen the skipRange of ${v('1.2.0')}, \`>=1.1.0 <1.2.0\`, to cover 1.0.0).`,
    );
    expect(await compare(before, pruned('>=1.0.0 <1.2.0'))).toEqual([]);
  });

  it('the seed example as an edit: v3 skips v2, so 1.0.0 (covered only by v2) is stranded under classic', async () => {
    const before = fooCatalog(
      [v('1.0.0'), { name: v('2.0.0'), replaces: v('1.0.0'), skipRange: '>=1.0.0 <2.0.0' }],
      ['1.0.0', '2.0.0'],
    );
    const after = await load(
      ...fooCatalog(
        [
          v('1.0.0'),
          { name: v('2.0.0'), replaces: v('1.0.0'), skipRange: '>=1.0.0 <2.0.0' },
          { name: v('3.0.0'), replaces: v('2.0.0'), skips: [v('2.0.0')] },
        ],
        ['1.0.0', '2.0.0', '3.0.0'],
      ),
    );
    const findings = compareFindings((await load(...before)).model, after.model);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      rule: 'G12-NO-WAY-FORWARD',
      line: lineOf(after.dir, `name: ${v('3.0.0')}`),
      hint: `Give its users a way forward: add \`${v('1.0.0')}\` to the \`skips\` of ${v('3.0.0')}.`,
    });
    expect(findings[0]!.message).toBe(
      `installed bundle ${v('1.0.0')} (1.0.0) in channel "stable" of package "foo" would be stranded by classic OLM: ` +
        `classic OLM has no update for it: ${v('2.0.0')} upgrades it, but classic only picks entries on the ` +
        `head's replaces chain minus skipped entries (${v('3.0.0')} -> ${v('1.0.0')})`,
    );
    // With the fix, nobody is stranded.
    const fixed = await compare(
      before,
      fooCatalog(
        [
          v('1.0.0'),
          { name: v('2.0.0'), replaces: v('1.0.0'), skipRange: '>=1.0.0 <2.0.0' },
          { name: v('3.0.0'), replaces: v('2.0.0'), skips: [v('2.0.0'), v('1.0.0')] },
        ],
        ['1.0.0', '2.0.0', '3.0.0'],
      ),
    );
    expect(fixed).toEqual([]);
  });

  it('does not report users who were already stranded before the change', async () => {
    // The seed catalog strands 1.0.0 under classic already; adding 4.0.0 changes nothing for it.
    const seed = (extra: Obj[] = [], bundles: Obj[] = []): Obj[] => [
      pkg(),
      channel([
        v('1.0.0'),
        { name: v('2.0.0'), replaces: v('1.0.0'), skipRange: '>=1.0.0 <2.0.0' },
        { name: v('3.0.0'), replaces: v('2.0.0'), skips: [v('2.0.0')] },
        ...extra,
      ]),
      bundle('1.0.0'),
      bundle('2.0.0'),
      bundle('3.0.0'),
      ...bundles,
    ];
    const findings = await compare(
      seed(),
      seed([{ name: v('4.0.0'), replaces: v('3.0.0') }], [bundle('4.0.0')]),
    );
    expect(findings).toEqual([]);
  });

  it('renaming a bundle strands its users under classic (v1 takes the same version)', async () => {
    const findings = await compare(chain2(), [
      pkg(),
      channel([v('1.0.0'), { name: 'foo.v1.1.0-rebuilt', replaces: v('1.0.0') }]),
      bundle('1.0.0'),
      { ...bundle('1.1.0'), name: 'foo.v1.1.0-rebuilt' },
    ]);
    // Classic now sends 1.0.0 to the renamed bundle: same version, so not "further ahead".
    expect(rules(findings)).toEqual(['G12-NO-WAY-FORWARD', 'G13-CLASSIC-NEXT-CHANGED']);
    expect(findings[0]!.message).toContain(`bundle ${v('1.1.0')} (1.1.0; removed from the channel`);
    expect(findings[0]!.message).toContain('stranded by classic OLM:');
    expect(findings[0]!.hint).toBe(
      `Give its users a way forward: add \`${v('1.1.0')}\` to the \`skips\` of foo.v1.1.0-rebuilt.`,
    );
  });
});

describe('G13', () => {
  it('warns about a second entry replacing the same bundle (and G12 reports the two heads)', async () => {
    const after = await load(
      ...fooCatalog(
        [v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }, { name: v('1.1.1'), replaces: v('1.0.0') }],
        ['1.0.0', '1.1.0', '1.1.1'],
      ),
    );
    const findings = compareFindings((await load(...chain2())).model, after.model);
    const multiple = findings.filter((d) => d.rule === 'G13-MULTIPLE-REPLACERS');
    expect(multiple).toHaveLength(1);
    expect(multiple[0]).toMatchObject({
      level: 'warning',
      line: lineOf(after.dir, `name: ${v('1.1.1')}`),
      message: `${v('1.0.0')} is the \`replaces\` target of 2 entries in channel "stable" of package "foo" (${v('1.1.0')}, ${v('1.1.1')}): the graph branches, which gives the channel two heads unless one branch skips the other`,
      hint: `Keep one replacement chain: let ${v('1.1.1')} have \`replaces: ${v('1.1.0')}\` (and add \`${v('1.0.0')}\` to its \`skips\` if users of ${v('1.0.0')} should jump straight to it).`,
    });
    // Two heads: classic cannot resolve the channel; v1 keeps 1.1.0 users on 1.1.0 (nothing replaces it).
    const stranded = findings.filter((d) => d.rule === 'G12-NO-WAY-FORWARD').map((d) => d.message);
    expect(stranded).toHaveLength(2);
    expect(stranded.find((m) => m.includes(`bundle ${v('1.0.0')}`))).toContain('stranded by classic OLM:');
    expect(stranded.find((m) => m.includes(`bundle ${v('1.1.0')}`))).toContain('both classic OLM and OLM v1');
  });

  it('warns when classic now sends an old bundle elsewhere, not further ahead', async () => {
    // 1.0.0 used to go to 1.2.0 (skipRange); now 1.1.0 replaces it and 1.2.0 no longer covers it.
    const after = await load(
      ...fooCatalog(
        [v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }, { name: v('1.2.0'), replaces: v('1.1.0') }],
        ['1.0.0', '1.1.0', '1.2.0'],
      ),
    );
    const before = await load(
      ...fooCatalog(
        [
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.0.0 <1.2.0' },
        ],
        ['1.0.0', '1.1.0', '1.2.0'],
      ),
    );
    const findings = compareFindings(before.model, after.model);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'G13-CLASSIC-NEXT-CHANGED',
        level: 'warning',
        line: lineOf(after.dir, `name: ${v('1.1.0')}`),
        message: `classic OLM now upgrades ${v('1.0.0')} to ${v('1.1.0')} (1.1.0) instead of ${v('1.2.0')} (1.2.0) in channel "stable" of package "foo"`,
      }),
    ]);
  });
});

describe('G14', () => {
  it('re-versioning a published bundle is an error at the bundle blob', async () => {
    const after = await load(
      pkg(),
      channel([v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }]),
      bundle('1.0.0'),
      { ...bundle('1.1.1'), name: v('1.1.0') },
    );
    const findings = compareFindings((await load(...chain2())).model, after.model);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'G14-BUNDLE-CHANGED',
        level: 'error',
        file: 'foo/catalog.yaml',
        line: docLineOf(after.dir, `name: ${v('1.1.0')}`, 1),
        message: `bundle ${v('1.1.0')} of package "foo" is already published, but its version changes from 1.1.0 to 1.1.1 and its image changes from "quay.io/example/foo-bundle:v1.1.0" to "quay.io/example/foo-bundle:v1.1.1": clusters that installed it keep the old content under the same name`,
      }),
    ]);
  });

  it('changing the image of a published bundle is an error', async () => {
    const findings = await compare(chain2(), [
      pkg(),
      channel([v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }]),
      bundle('1.0.0'),
      bundle('1.1.0', { image: 'quay.io/example/foo-bundle@sha256:' + 'a'.repeat(64) }),
    ]);
    expect(rules(findings)).toEqual(['G14-BUNDLE-CHANGED']);
    expect(findings[0]!.message).toContain('its image changes from "quay.io/example/foo-bundle:v1.1.0" to');
  });

  it('a head with a lower version than the old head is an error', async () => {
    const after = await load(
      ...fooCatalog([v('1.0.0'), { name: v('1.0.1'), replaces: v('1.0.0') }], ['1.0.0', '1.0.1']),
    );
    const findings = compareFindings((await load(...chain2())).model, after.model);
    expect(findings).toEqual([
      // Classic now sends 1.0.0 to 1.0.1 instead of 1.1.0.
      expect.objectContaining({ rule: 'G13-CLASSIC-NEXT-CHANGED', level: 'warning' }),
      expect.objectContaining({
        rule: 'G14-HEAD-REGRESSED',
        level: 'error',
        line: lineOf(after.dir, `name: ${v('1.0.1')}`),
        message: `the head of channel "stable" of package "foo" goes back from ${v('1.1.0')} (1.1.0) to ${v('1.0.1')} (1.0.1): classic OLM installs the lower version, and users of the old head have nothing to upgrade to`,
      }),
    ]);
  });

  it('removing a channel is a warning at its old position', async () => {
    const before = await load(
      pkg(),
      channel([v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }]),
      channel([v('1.1.0')], { name: 'fast' }),
      bundle('1.0.0'),
      bundle('1.1.0'),
    );
    const after = await load(...chain2());
    const findings = compareFindings(before.model, after.model);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'G14-CHANNEL-REMOVED',
        level: 'warning',
        file: 'foo/catalog.yaml',
        line: docLineOf(before.dir, 'name: fast'),
      }),
    ]);
    expect(findings[0]!.message).toContain(
      'channel "fast" of package "foo" is removed (it was at foo/catalog.yaml:',
    );
  });

  it('changing the default channel is a warning at the package', async () => {
    const withFast = (defaultChannel: string): Obj[] => [
      pkg('foo', { defaultChannel }),
      channel([v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }]),
      channel([v('1.1.0')], { name: 'fast' }),
      bundle('1.0.0'),
      bundle('1.1.0'),
    ];
    const after = await load(...withFast('fast'));
    const findings = compareFindings((await load(...withFast('stable'))).model, after.model);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'G14-DEFAULT-CHANNEL-CHANGED',
        level: 'warning',
        line: lineOf(after.dir, 'schema: olm.package'),
        package: 'foo',
      }),
    ]);
    expect(findings[0]!.message).toContain('changes from "stable" to "fast"');
  });

  it('removing a package is a warning', async () => {
    const before = writeTree({
      'foo/catalog.yaml': yamlStream(...chain2()),
      'bar/catalog.yaml': yamlStream(
        pkg('bar'),
        channel(['bar.v1.0.0'], { package: 'bar' }),
        bundle('1.0.0', {}, 'bar'),
      ),
    });
    dirs.push(before);
    const oldModel = (await validateCatalog(new DirectorySource(before))).model;
    const findings = compareFindings(oldModel, (await load(...chain2())).model);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'G14-PACKAGE-REMOVED',
        level: 'warning',
        file: 'bar/catalog.yaml',
        line: 1,
        package: 'bar',
      }),
    ]);
  });
});

describe('scope', () => {
  it('by default only looks at packages whose graph data differs', async () => {
    const before = await load(...chain3());
    const after = await load(
      ...fooCatalog([v('1.0.0'), { name: v('1.2.0'), replaces: v('1.1.0') }], ['1.0.0', '1.2.0']),
    );
    expect(differingPackages(before.model, before.model)).toEqual(new Set());
    expect(differingPackages(before.model, after.model)).toEqual(new Set(['foo']));
    expect(compareFindings(before.model, after.model, { packages: new Set(['bar']) })).toEqual([]);
    expect(compareFindings(before.model, after.model, { packages: new Set(['foo']) })).toHaveLength(2);
  });
});

// ---- Real catalogs ----

const REAL = fileURLToPath(new URL('../../shared/data/real-catalogs/', import.meta.url));
const realRoots = (() => {
  try {
    return readdirSync(REAL, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((repo) =>
        readdirSync(join(REAL, repo.name, 'catalogs')).map((version) =>
          join(REAL, repo.name, 'catalogs', version),
        ),
      );
  } catch {
    return [];
  }
})();
const V421 = join(REAL, 'community-operators-prod/catalogs/v4.21');

function timed<T>(f: () => T): { result: T; ms: number } {
  const start = performance.now();
  const result = f();
  return { result, ms: performance.now() - start };
}

describe.skipIf(realRoots.length === 0)('real catalogs', () => {
  for (const root of realRoots) {
    it(`${root.slice(REAL.length)} compared with itself gives no findings`, async () => {
      const model = (await validateCatalog(new DirectorySource(root))).model;
      const again = (await validateCatalog(new DirectorySource(root))).model;
      const all = new Set(model.keys());
      const { result, ms } = timed(() => compareFindings(model, again, { packages: all }));
      expect(result).toEqual([]);
      expect(ms).toBeLessThan(1000);
      const quick = timed(() => compareFindings(model, again));
      expect(quick.result).toEqual([]);
      expect(quick.ms).toBeLessThan(100);
      console.log(
        `compare ${root.slice(REAL.length)} with itself: every package ${ms.toFixed(0)} ms, changed packages only ${quick.ms.toFixed(1)} ms`,
      );
    });
  }

  it('a one-package change to v4.21 is compared in well under 100 ms', async () => {
    const dir = join(tmpdir(), `catalog-bot-compare-${process.pid}`);
    cpSync(V421, dir, { recursive: true });
    dirs.push(dir);
    // The shared data is read-only, and so is the copy: make its directories writable so
    // that the file can be edited and the copy removed afterwards.
    chmodSync(dir, 0o755);
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (entry.isDirectory()) chmodSync(join(entry.parentPath, entry.name), 0o755);
    }
    // Take the middle entry out of a replaces chain of one package (entry and bundle blob).
    const file = join(dir, 'infinispan/catalog.yaml');
    chmodSync(file, 0o644);
    const docs = loadAll(readFileSync(file, 'utf8')) as Obj[];
    const stable = docs.find((d) => d.schema === 'olm.channel' && d.name === 'stable') as {
      entries: { name: string; replaces?: string }[];
    };
    const names = new Set(stable.entries.map((e) => e.name));
    const middle = stable.entries.find(
      (e) => e.replaces && names.has(e.replaces) && stable.entries.some((r) => r.replaces === e.name),
    )!;
    const inOtherChannels = docs.some(
      (d) =>
        d.schema === 'olm.channel' &&
        d !== (stable as unknown) &&
        (d.entries as { name: string }[]).some((e) => e.name === middle.name),
    );
    stable.entries = stable.entries.filter((e) => e !== middle);
    const edited = inOtherChannels
      ? docs
      : docs.filter((d) => !(d.schema === 'olm.bundle' && d.name === middle.name));
    writeFileSync(file, edited.map((d) => dump(d, { lineWidth: -1, noRefs: true })).join('---\n'));

    const before = (await validateCatalog(new DirectorySource(V421))).model;
    const after = (await validateCatalog(new DirectorySource(dir))).model;
    // Cold (first call: indexes built, JIT not warm), as in a one-shot CLI run, then warm.
    const cold = timed(() => compareFindings(before, after));
    const { result, ms } = timed(() => compareFindings(before, after));
    expect(cold.result).toEqual(result);
    expect(cold.ms).toBeLessThan(100);
    expect(new Set(result.map((d) => d.package))).toEqual(new Set(['infinispan']));
    expect(result.some((d) => d.rule === 'G12-NO-WAY-FORWARD' && d.message.includes(middle.replaces!))).toBe(
      true,
    );
    expect(ms).toBeLessThan(100);
    console.log(
      `one-package change (${middle.name} removed): ${cold.ms.toFixed(1)} ms cold, ${ms.toFixed(1)} ms warm, ${result.length} findings`,
    );
    for (const d of result) console.log(`  ${d.file}:${d.line} ${d.rule} ${d.message}\n    hint: ${d.hint}`);
  });
});

describe('skipRange lint on a change', () => {
  // 1.0.0 <- 1.1.0 (skipRange matching nothing ever published) <- 1.2.0
  const catalog = (head: Obj) =>
    fooCatalog(
      [v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0'), skipRange: '<0.5.0' }, head],
      ['1.0.0', '1.1.0', '1.2.0'],
    );
  const findings = async (oldObjs: Obj[], newObjs: Obj[]) => {
    const before = await load(...oldObjs);
    const after = await load(...newObjs);
    return skipRangeFindings(after.model, new Set(['foo']), before.model).filter(
      (d) => d.rule === 'R-MATCHES-NOTHING',
    );
  };

  it('is an error for a range the change writes, a warning for one the base already had', async () => {
    const old = catalog({ name: v('1.2.0'), replaces: v('1.1.0') });
    const changed = catalog({ name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '<0.9.0' });
    const found = await findings(old, changed);
    const levels = Object.fromEntries(found.map((d) => [/bundle "(\S+)"/.exec(d.message)![1], d.level]));
    expect(levels).toEqual({ [v('1.1.0')]: 'warning', [v('1.2.0')]: 'error' });
    expect(found.find((d) => d.level === 'warning')!.message).toContain('already so before this change');
    // A new package has no base: every range it writes is its own.
    const fresh = await load(...changed);
    expect(skipRangeFindings(fresh.model, new Set(['foo'])).map((d) => d.level)).toEqual(['error', 'error']);
  });
});
