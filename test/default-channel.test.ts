// `catalog-bot default-channel` on real repository data: plain catalogs and an
// olm.template.basic template (re-rendered), exact results, and opm validate on each.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { REAL_REPO, writeRealPackage } from './helpers/ocp-history.js';
import { haveOpm, opmValidate, tempTrees } from './helpers/oracle.js';
import { runCommandOutput } from './helpers/cli.js';

const trees = tempTrees();

const run = (args: string[]) => runCommandOutput('default-channel', args);

const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

describe('catalog-bot default-channel', () => {
  it('plain catalog (clusterpulse v4.21): exact edit, --dry-run writes nothing, opm validates', async () => {
    const { dir, files } = writeRealPackage(trees, 'clusterpulse', false);
    const path = 'catalogs/v4.21/clusterpulse/catalog.yaml';
    const root = ['--repo', dir, '--root', 'catalogs/v4.21'];
    const dry = await run(['clusterpulse', 'fast-v0', ...root, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.output).toContain(
      '--- a/catalogs/v4.21/clusterpulse/catalog.yaml\n+++ b/catalogs/v4.21/clusterpulse/catalog.yaml\n@@ -1,5 +1,5 @@\n ---\n-defaultChannel: fast-v1\n+defaultChannel: fast-v0\n name: clusterpulse\n schema: olm.package\n ---\n',
    );
    expect(dry.output).toContain(
      'catalogs/v4.21: default channel of clusterpulse: fast-v1 -> fast-v0. Classic OLM: a new Subscription without a channel installs clusterpulse.v0.3.0 (was clusterpulse.v1.0.2).',
    );
    expect(read(dir, path)).toBe(files[path]);

    const done = await run(['clusterpulse', 'fast-v0', ...root]);
    expect(done.code).toBe(0);
    expect(read(dir, path)).toBe(
      files[path]!.replace('defaultChannel: fast-v1\n', 'defaultChannel: fast-v0\n'),
    );
    expect(read(dir, 'catalogs/v4.22/clusterpulse/catalog.yaml')).toBe(
      files['catalogs/v4.22/clusterpulse/catalog.yaml'],
    );
    const report = await validateCatalog(new DirectorySource(join(dir, 'catalogs/v4.21')));
    expect(report.model.get('clusterpulse')!.defaultChannel!.name).toBe('fast-v0');
    if (haveOpm) expect(opmValidate(join(dir, 'catalogs/v4.21')).valid).toBe(true);

    const again = await run(['clusterpulse', 'fast-v0', ...root]);
    expect(again.code).toBe(0);
    expect(again.output).toBe(
      'catalog-bot default-channel: nothing to do: catalogs/v4.21: the default channel of clusterpulse is already "fast-v0"\n',
    );
  });

  it('without --root: every catalog that has the package; one already set is left as it is', async () => {
    const { dir, files } = writeRealPackage(trees, 'clusterpulse', false);
    const v421 = 'catalogs/v4.21/clusterpulse/catalog.yaml';
    expect((await run(['clusterpulse', 'fast-v0', '--repo', dir, '--root', 'catalogs/v4.21'])).code).toBe(0);
    const all = await run(['clusterpulse', 'fast-v0', '--repo', dir]);
    expect(all.code).toBe(0);
    const roots = Object.keys(files).map((p) => p.split('/').slice(0, 2).join('/'));
    expect(roots).toEqual([
      'catalogs/v4.17',
      'catalogs/v4.18',
      'catalogs/v4.19',
      'catalogs/v4.20',
      'catalogs/v4.21',
      'catalogs/v4.22',
    ]);
    expect(all.output).toContain(
      'catalogs/v4.21: the default channel of clusterpulse is already "fast-v0" (left as it is)\n',
    );
    expect(all.output).toContain('5 file(s) written');
    for (const [p, text] of Object.entries(files))
      expect(read(dir, p), p).toBe(text.replace('defaultChannel: fast-v1\n', 'defaultChannel: fast-v0\n'));
    expect(read(dir, v421)).not.toBe(files[v421]);
  });

  it('keeps comments and layout around the value', async () => {
    const real = readFileSync(join(REAL_REPO, 'catalogs/v4.21/clusterpulse/catalog.yaml'), 'utf8');
    const commented = real.replace(
      'defaultChannel: fast-v1\n',
      '# the channel new installs get\ndefaultChannel: "fast-v1" # see ci.yaml\n',
    );
    expect(commented).not.toBe(real);
    const dir = trees.write({ 'catalogs/v4.21/clusterpulse/catalog.yaml': commented });
    expect((await run(['clusterpulse', 'fast-v0', '--repo', dir])).code).toBe(0);
    expect(read(dir, 'catalogs/v4.21/clusterpulse/catalog.yaml')).toBe(
      real.replace(
        'defaultChannel: fast-v1\n',
        '# the channel new installs get\ndefaultChannel: "fast-v0" # see ci.yaml\n',
      ),
    );
  });

  it('olm.template.basic (visionone-containersecurity): edits the template, re-renders every catalog', async () => {
    const { dir, files } = writeRealPackage(trees, 'visionone-containersecurity', true);
    const template = 'operators/visionone-containersecurity/catalog-templates/basic.yaml';
    const r = await run(['visionone-containersecurity', 'alpha', '--repo', dir]);
    expect(r.code).toBe(0);
    expect(r.output).toContain(
      'edited operators/visionone-containersecurity/catalog-templates/basic.yaml and re-rendered its outputs',
    );
    expect(read(dir, template)).toBe(
      files[template]!.replace('  defaultChannel: stable\n', '  defaultChannel: alpha\n'),
    );
    const outputs = Object.keys(files).filter((p) => p.startsWith('catalogs/'));
    expect(outputs).toHaveLength(10);
    for (const o of outputs)
      expect(read(dir, o), o).toBe(files[o]!.replace(/^defaultChannel: stable$/m, 'defaultChannel: alpha'));
    expect(r.output.match(/^\+defaultChannel: alpha$/gm)).toHaveLength(10);
    if (haveOpm)
      for (const v of ['v4.12', 'v4.21']) expect(opmValidate(join(dir, 'catalogs', v)).valid).toBe(true);
  });

  it('refusals say what is wrong and what would work; nothing is written', async () => {
    const { dir, files } = writeRealPackage(trees, 'visionone-containersecurity', true);
    const unknownChannel = await run(['visionone-containersecurity', 'beta', '--repo', dir]);
    expect(unknownChannel.code).toBe(1);
    expect(unknownChannel.output).toMatch(
      /^catalog-bot default-channel: refused: package visionone-containersecurity has no channel "beta" in catalogs\/v4\.12; its channels: alpha, stable \(add the channel first/,
    );
    const unknownPackage = await run(['no-such-operator', 'alpha', '--repo', dir]);
    expect(unknownPackage.code).toBe(1);
    expect(unknownPackage.output).toContain(
      'refused: package no-such-operator is in no catalog root (searched catalogs/v4.12,',
    );
    for (const [p, text] of Object.entries(files)) expect(read(dir, p)).toBe(text);

    const semver = writeRealPackage(trees, 'clusterpulse', true);
    const s = await run(['clusterpulse', 'fast-v0', '--repo', semver.dir]);
    expect(s.code).toBe(1);
    expect(s.output).toContain(
      'refused: operators/clusterpulse/catalog-templates/semver.yaml is an olm.semver template: opm derives the default channel itself',
    );
    for (const [p, text] of Object.entries(semver.files)) expect(read(semver.dir, p)).toBe(text);

    expect((await run(['only-one', '--repo', dir])).code).toBe(2);
    expect((await run(['a', 'b', '--repo', join(dir, 'missing')])).code).toBe(2);
  });
});
