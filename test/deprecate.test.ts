// `catalog-bot deprecate` on real repository data: bundle, channel and package deprecations
// in plain catalogs and through olm.template.basic templates (re-rendered), exact results,
// opm validate on each; every refusal says why and writes nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDeprecationText, removeDeprecationText } from '../src/catalog/edits/deprecate.js';
import { changedLines } from '../src/catalog/edits/promote.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { parseComment } from '../src/handlers/commands.js';
import { writeRealPackage } from './helpers/ocp-history.js';
import { haveOpm, opmValidate, tempTrees } from './helpers/oracle.js';
import { runCommandOutput } from './helpers/cli.js';

const trees = tempTrees();

const run = (args: string[]) => runCommandOutput('deprecate', args);

const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

/** A package's olm.deprecations blob as opm writes it: keys sorted, so entries before package. */
const deprecationsBlob = (pkg: string, entryLines: string[]): string =>
  ['---', 'entries:', ...entryLines, `package: ${pkg}`, 'schema: olm.deprecations', ''].join('\n');

function expectUnchanged(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) expect(read(dir, p), p).toBe(text);
}

/** The file at `path` is what it was with `added` after it (the new blob goes last). */
function expectAppended(dir: string, files: Record<string, string>, path: string, added: string): void {
  expect(read(dir, path), path).toBe(files[path] + added);
}

/** Runs `args` on a written package: refused (exit 1), the output says `reason`, nothing written. */
async function expectRefused(
  written: { dir: string; files: Record<string, string> },
  args: string[],
  reason: string,
): Promise<void> {
  const r = await run([...args, '--repo', written.dir]);
  expect(r.code, r.output).toBe(1);
  expect(r.output).toContain(reason);
  expectUnchanged(written.dir, written.files);
}

async function deprecationsOf(dir: string, root: string, pkg: string) {
  const report = await validateCatalog(new DirectorySource(join(dir, root)));
  expect(report.valid, `${root}: ${report.diagnostics.map((d) => d.message).join('; ')}`).toBe(true);
  if (haveOpm) expect(opmValidate(join(dir, root)), root).toEqual({ valid: true, message: '' });
  return report.config.deprecations.filter((d) => d.package === pkg).flatMap((d) => d.entries);
}

describe('catalog-bot deprecate: plain catalogs', () => {
  it('bundle, then package (added to the same blob), then undo each: exact edits, opm validates', async () => {
    const { dir, files } = writeRealPackage(trees, 'clusterpulse', false);
    const path = 'catalogs/v4.21/clusterpulse/catalog.yaml';
    const root = ['--repo', dir, '--root', 'catalogs/v4.21'];

    const bundle = await run(['bundle', 'clusterpulse.v1.0.1', ...root]);
    expect(bundle.code, bundle.output).toBe(0);
    const bundleBlob = deprecationsBlob('clusterpulse', [
      '- message: clusterpulse.v1.0.1 is deprecated. Upgrade to clusterpulse.v1.0.2 (1.0.2), the head of channel fast-v1.',
      '  reference:',
      '    name: clusterpulse.v1.0.1',
      '    schema: olm.bundle',
    ]);
    // opm writes keys sorted, so the new blob does too; it goes after the package's last object.
    expectAppended(dir, files, path, bundleBlob);
    expect(bundle.output).toContain(
      '@@ -5823,3 +5823,11 @@\n' +
        ' - image: quay.io/community-operator-pipeline-prod/clusterpulse:1.0.2\n' +
        '   name: ""\n' +
        ' schema: olm.bundle\n+---\n+entries:\n',
    );
    expect(bundle.output).toContain(
      'bundle clusterpulse.v1.0.1 of package clusterpulse in catalogs/v4.21 is deprecated: classic OLM shows BundleDeprecated',
    );
    expect(await deprecationsOf(dir, 'catalogs/v4.21', 'clusterpulse')).toEqual([
      expect.objectContaining({ reference: { schema: 'olm.bundle', name: 'clusterpulse.v1.0.1' } }),
    ]);
    // Only the root asked for.
    expect(read(dir, 'catalogs/v4.22/clusterpulse/catalog.yaml')).toBe(
      files['catalogs/v4.22/clusterpulse/catalog.yaml'],
    );

    const pkg = await run(['package', 'clusterpulse', ...root, '--message', 'Moved to clusterpulse-ng.']);
    expect(pkg.code, pkg.output).toBe(0);
    expect(changedLines(files[path] + bundleBlob, read(dir, path))).toEqual([
      '+- message: Moved to clusterpulse-ng.',
      '+  reference:',
      '+    schema: olm.package',
    ]);
    expect(await deprecationsOf(dir, 'catalogs/v4.21', 'clusterpulse')).toHaveLength(2);

    const undoBundle = await run(['bundle', 'clusterpulse.v1.0.1', '--undo', ...root]);
    expect(undoBundle.code, undoBundle.output).toBe(0);
    expectAppended(
      dir,
      files,
      path,
      deprecationsBlob('clusterpulse', [
        '- message: Moved to clusterpulse-ng.',
        '  reference:',
        '    schema: olm.package',
      ]),
    );
    expect(await deprecationsOf(dir, 'catalogs/v4.21', 'clusterpulse')).toEqual([
      { reference: { schema: 'olm.package', name: '' }, message: 'Moved to clusterpulse-ng.', line: 5828 },
    ]);
    // The last entry takes the blob with it: the file is byte for byte what it was.
    const undoPackage = await run(['package', 'clusterpulse', '--undo', ...root]);
    expect(undoPackage.code, undoPackage.output).toBe(0);
    expect(read(dir, path)).toBe(files[path]);
  });

  it('channel (visionone-containersecurity alpha): users move to stable, the message says so', async () => {
    const { dir, files } = writeRealPackage(trees, 'visionone-containersecurity', false);
    const path = 'catalogs/v4.21/visionone-containersecurity/catalog.yaml';
    const root = ['--repo', dir, '--root', 'catalogs/v4.21'];
    const r = await run(['channel', 'visionone-containersecurity/alpha', ...root, '--dry-run']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('(dry run: nothing written)');
    expectUnchanged(dir, files);
    const done = await run(['channel', 'alpha', '--package', 'visionone-containersecurity', ...root]);
    expect(done.code, done.output).toBe(0);
    expectAppended(
      dir,
      files,
      path,
      deprecationsBlob('visionone-containersecurity', [
        '- message: Channel alpha is deprecated. Switch your subscription to channel stable (the default channel), whose head is visionone-containersecurity.v0.0.5 (0.0.5).',
        '  reference:',
        '    name: alpha',
        '    schema: olm.channel',
      ]),
    );
    expect(await deprecationsOf(dir, 'catalogs/v4.21', 'visionone-containersecurity')).toHaveLength(1);
  });

  it('--format json: what was written, or why not', async () => {
    const { dir } = writeRealPackage(trees, 'clusterpulse', false);
    const ok = await run(['bundle', 'clusterpulse.v1.0.0', '--repo', dir, '--format', 'json']);
    expect(ok.code, ok.output).toBe(0);
    const result = JSON.parse(ok.output) as { done: boolean; files: { path: string; added: number }[] };
    expect(result.done).toBe(true);
    // Every catalog that has the bundle, 8 lines each.
    expect(result.files.map((f) => [f.path, f.added])).toEqual(
      ['v4.17', 'v4.18', 'v4.19', 'v4.20', 'v4.21', 'v4.22'].map((v) => [
        `catalogs/${v}/clusterpulse/catalog.yaml`,
        8,
      ]),
    );
    // Already as asked: nothing to do, exit 0, nothing written.
    const again = await run(['bundle', 'clusterpulse.v1.0.0', '--repo', dir, '--format', 'json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      done: true,
      written: false,
      error: null,
      notes: [
        'bundle clusterpulse.v1.0.0 of package clusterpulse is already deprecated in catalogs/v4.17 (remove the entry with undeprecate to change its message) (and likewise in 5 other catalog roots)',
      ],
      files: [],
    });
  });
});

describe('catalog-bot deprecate: olm.template.basic templates, re-rendered', () => {
  it('jumpstarter-operator: a bundle, then the package, in the template and all five catalogs', async () => {
    const { dir, files } = writeRealPackage(trees, 'jumpstarter-operator', true);
    const template = 'operators/jumpstarter-operator/catalog-templates/basic.yaml';
    const outputs = Object.keys(files).filter((p) => p.startsWith('catalogs/'));
    expect(outputs).toHaveLength(5);
    const r = await run(['bundle', 'jumpstarter-operator.v0.8.1-rc.1', '--repo', dir]);
    expect(r.code, r.output).toBe(0);
    const message =
      'jumpstarter-operator.v0.8.1-rc.1 is deprecated. Upgrade to jumpstarter-operator.v0.9.0 (0.9.0), the head of channel alpha.';
    // The template is written as it is (Go's field order), at the end of its entries.
    expect(read(dir, template)).toBe(
      files[template] +
        [
          '- schema: olm.deprecations',
          '  package: jumpstarter-operator',
          '  entries:',
          '  - reference:',
          '      schema: olm.bundle',
          '      name: jumpstarter-operator.v0.8.1-rc.1',
          `    message: ${message}`,
          '',
        ].join('\n'),
    );
    // Each output as opm renders it: the blob last, keys sorted, long lines folded as go-yaml does.
    const rendered = deprecationsBlob('jumpstarter-operator', [
      '- message: jumpstarter-operator.v0.8.1-rc.1 is deprecated. Upgrade to jumpstarter-operator.v0.9.0',
      '    (0.9.0), the head of channel alpha.',
      '  reference:',
      '    name: jumpstarter-operator.v0.8.1-rc.1',
      '    schema: olm.bundle',
    ]);
    for (const o of outputs) expectAppended(dir, files, o, rendered);
    expect(r.output).toContain(`edited ${template} and re-rendered its outputs`);
    expect(await deprecationsOf(dir, 'catalogs/v4.18', 'jumpstarter-operator')).toEqual([
      expect.objectContaining({
        reference: { schema: 'olm.bundle', name: 'jumpstarter-operator.v0.8.1-rc.1' },
        message,
      }),
    ]);

    const pkg = await run(['package', 'jumpstarter-operator', '--repo', dir]);
    expect(pkg.code, pkg.output).toBe(0);
    expect(changedLines(files[template]!, read(dir, template)).slice(-4)).toEqual([
      `+    message: ${message}`,
      '+  - reference:',
      '+      schema: olm.package',
      '+    message: jumpstarter-operator is deprecated and gets no further updates. Plan to uninstall it or move to a replacement.',
    ]);
    expect(await deprecationsOf(dir, 'catalogs/v4.22', 'jumpstarter-operator')).toHaveLength(2);

    // Undo both: template and catalogs as they were.
    expect((await run(['package', 'jumpstarter-operator', '--undo', '--repo', dir])).code).toBe(0);
    expect((await run(['bundle', 'jumpstarter-operator.v0.8.1-rc.1', '--undo', '--repo', dir])).code).toBe(0);
    expectUnchanged(dir, files);
  });

  it('visionone-containersecurity: the alpha channel, in the template and all ten catalogs', async () => {
    const { dir, files } = writeRealPackage(trees, 'visionone-containersecurity', true);
    const template = 'operators/visionone-containersecurity/catalog-templates/basic.yaml';
    const r = await run(['channel', 'visionone-containersecurity/alpha', '--repo', dir]);
    expect(r.code, r.output).toBe(0);
    expect(changedLines(files[template]!, read(dir, template))).toEqual([
      '+- schema: olm.deprecations',
      '+  package: visionone-containersecurity',
      '+  entries:',
      '+  - reference:',
      '+      schema: olm.channel',
      '+      name: alpha',
      '+    message: Channel alpha is deprecated. Switch your subscription to channel stable (the default channel), whose head is visionone-containersecurity.v0.0.5 (0.0.5).',
    ]);
    const outputs = Object.keys(files).filter((p) => p.startsWith('catalogs/'));
    expect(outputs).toHaveLength(10);
    for (const o of outputs)
      expect(changedLines(files[o]!, read(dir, o)), o).toEqual([
        '+---',
        '+entries:',
        '+- message: Channel alpha is deprecated. Switch your subscription to channel stable',
        '+    (the default channel), whose head is visionone-containersecurity.v0.0.5 (0.0.5).',
        '+  reference:',
        '+    name: alpha',
        '+    schema: olm.channel',
        '+package: visionone-containersecurity',
        '+schema: olm.deprecations',
      ]);
    for (const v of ['v4.12', 'v4.21'])
      expect(await deprecationsOf(dir, `catalogs/${v}`, 'visionone-containersecurity')).toHaveLength(1);
  });
});

describe('catalog-bot deprecate: refusals say what is wrong and what would work; nothing is written', () => {
  it('on a plain catalog (clusterpulse v4.21)', async () => {
    const { dir, files } = writeRealPackage(trees, 'clusterpulse', false);
    const refused = async (args: string[], expected: string) => {
      const r = await run([...args, '--repo', dir, '--root', 'catalogs/v4.21']);
      expect(r.code, r.output).toBe(1);
      expect(r.output).toBe(`catalog-bot deprecate: refused: ${expected}\n`);
      expectUnchanged(dir, files);
    };
    await refused(
      ['bundle', 'clusterpulse.v9.9.9'],
      'bundle clusterpulse.v9.9.9 is not in catalog root catalogs/v4.21',
    );
    await refused(
      ['bundle', 'clusterpulse.v9.9.9', '--package', 'clusterpulse'],
      'package clusterpulse has no bundle clusterpulse.v9.9.9 in catalogs/v4.21; its bundles: clusterpulse.v0.1.1, clusterpulse.v0.2.0, clusterpulse.v0.2.1, clusterpulse.v0.2.2, clusterpulse.v0.2.3, clusterpulse.v0.3.0, clusterpulse.v1.0.0, clusterpulse.v1.0.1, clusterpulse.v1.0.2',
    );
    await refused(
      ['channel', 'clusterpulse/stable'],
      'package clusterpulse has no channel "stable" in catalogs/v4.21; its channels: fast-v0, fast-v1',
    );
    await refused(
      ['package', 'no-such-operator'],
      'package no-such-operator is not in catalog root catalogs/v4.21',
    );
    await refused(
      ['channel', 'no-such-operator/stable'],
      'package no-such-operator is not in catalog root catalogs/v4.21',
    );
    await refused(
      ['channel', 'fast-v0'],
      'channel names are not unique across packages: name the package of channel "fast-v0" (`<package>/fast-v0`, or --package <package>)',
    );
    // Undeprecating what is not deprecated: already as asked, nothing to do (exit 0).
    const undo = await run([
      'bundle',
      'clusterpulse.v1.0.1',
      '--undo',
      '--repo',
      dir,
      '--root',
      'catalogs/v4.21',
    ]);
    expect(undo).toEqual({
      code: 0,
      output:
        'catalog-bot deprecate: nothing to do: bundle clusterpulse.v1.0.1 of package clusterpulse is not deprecated in catalogs/v4.21: there is no olm.deprecations entry to remove\n',
      stdout: '',
    });
    // No way forward: v0.3.0 heads fast-v0, and no bundle anywhere replaces, skips or skipRanges it.
    await refused(
      ['bundle', 'clusterpulse.v0.3.0'],
      'deprecating bundle clusterpulse.v0.3.0 of package clusterpulse in catalogs/v4.21 would leave users of clusterpulse.v0.3.0 no way forward that is not deprecated: every upgrade they can take (replaces, skips, skipRange, in any channel) ends on deprecated bundles. To do it, publish a bundle that replaces or skips clusterpulse.v0.3.0 (or whose skipRange holds its version) first; to retire the whole package, deprecate the package instead',
    );
    // ...and fast-v0 has no edge into fast-v1, so its users would all be stranded.
    await refused(
      ['channel', 'clusterpulse/fast-v0'],
      'deprecating channel fast-v0 of package clusterpulse in catalogs/v4.21 would leave users of clusterpulse.v0.1.1, clusterpulse.v0.2.0, clusterpulse.v0.2.1, clusterpulse.v0.2.2, clusterpulse.v0.2.3 and 1 more no way forward that is not deprecated: every upgrade they can take (replaces, skips, skipRange, in any channel) ends on deprecated bundles. To do it, give those bundles an upgrade edge into another channel that is not deprecated first (an entry there that replaces, skips or skipRanges them); to retire the whole package, deprecate the package instead',
    );
    await refused(
      ['bundle', 'clusterpulse.v1.0.2'],
      `clusterpulse.v1.0.2 is the only head of clusterpulse's default channel "fast-v1" in catalogs/v4.21: classic OLM installs it on every new Subscription without a channel, so new users would start on a deprecated bundle. Publish a newer bundle that replaces it first, or change the default channel to one whose head is not deprecated`,
    );
    await refused(
      ['channel', 'clusterpulse/fast-v1'],
      'channel "fast-v1" is the default channel of clusterpulse in catalogs/v4.21: every new Subscription without a channel would start on a deprecated channel. Change the default channel first (e.g. `default-channel clusterpulse fast-v0`), then deprecate "fast-v1"',
    );

    // Already deprecated: the second time has nothing to do (exit 0) and leaves the first as it was.
    expect(
      (await run(['bundle', 'clusterpulse.v1.0.1', '--repo', dir, '--root', 'catalogs/v4.21'])).code,
    ).toBe(0);
    const once = read(dir, 'catalogs/v4.21/clusterpulse/catalog.yaml');
    const again = await run(['bundle', 'clusterpulse.v1.0.1', '--repo', dir, '--root', 'catalogs/v4.21']);
    expect(again.code).toBe(0);
    expect(again.output).toBe(
      'catalog-bot deprecate: nothing to do: bundle clusterpulse.v1.0.1 of package clusterpulse is already deprecated in catalogs/v4.21 (remove the entry with undeprecate to change its message)\n',
    );
    expect(read(dir, 'catalogs/v4.21/clusterpulse/catalog.yaml')).toBe(once);

    // Usage errors: exit 2.
    for (const args of [
      ['release', 'x'],
      ['bundle'],
      ['package', 'clusterpulse', '--undo', '--message', 'm'],
    ])
      expect((await run([...args, '--repo', dir])).code, args.join(' ')).toBe(2);
  });

  it('through templates: an olm.semver template has no place for the entry; the default channel of a basic one', async () => {
    await expectRefused(
      writeRealPackage(trees, 'clusterpulse', true),
      ['bundle', 'clusterpulse.v1.0.1'],
      'refused: operators/clusterpulse/catalog-templates/semver.yaml is an olm.semver template, and opm alpha render-template renders nothing but its bundles and derived channels from it',
    );
    await expectRefused(
      writeRealPackage(trees, 'visionone-containersecurity', true),
      ['channel', 'visionone-containersecurity/stable'],
      'refused: channel "stable" is the default channel of visionone-containersecurity in catalogs/v4.12: every new Subscription without a channel would start on a deprecated channel. Change the default channel first (e.g. `default-channel visionone-containersecurity alpha`)',
    );
  });
});

describe('the text edit keeps what it does not change', () => {
  it('hand-written YAML: comments, flow lists and quoting stay; undo gives the bytes back', () => {
    const text = [
      '# foo, kept by hand',
      'schema: olm.package',
      'name: foo # the package',
      'defaultChannel: stable',
      '---',
      'schema: olm.deprecations',
      'package: foo',
      'entries: [] # none yet',
      '---',
      '# a comment about bar',
      'schema: olm.package',
      'name: bar',
      '',
    ].join('\n');
    const ref = { schema: 'olm.bundle', name: 'foo.v1.0.0' };
    const added = addDeprecationText('c.yaml', text, 'foo', ref, "don't: use it");
    expect(added).toBe(
      text.replace(
        'entries: [] # none yet',
        `entries: [{ reference: { schema: olm.bundle, name: foo.v1.0.0 }, message: "don't: use it" }] # none yet`,
      ),
    );
    // Its last entry gone, the blob goes too (an empty one says nothing).
    expect(removeDeprecationText('c.yaml', added, 'foo', ref)).toBe(
      text.replace('schema: olm.deprecations\npackage: foo\nentries: [] # none yet\n---\n', ''),
    );
    // A package with no blob yet: one after the package's last object, before the next package.
    const bar = addDeprecationText('c.yaml', text, 'bar', { schema: 'olm.package', name: '' }, 'gone');
    expect(bar).toBe(
      text +
        [
          '---',
          'schema: olm.deprecations',
          'package: bar',
          'entries:',
          '- reference:',
          '    schema: olm.package',
          '  message: gone',
          '',
        ].join('\n'),
    );
    expect(removeDeprecationText('c.yaml', bar, 'bar', { schema: 'olm.package', name: '' })).toBe(text);
  });

  it('JSON (as opm writes it): a new object after the package, removed again exactly', () => {
    const text =
      '{\n    "schema": "olm.package",\n    "name": "foo",\n    "defaultChannel": "stable"\n}\n{\n    "schema": "olm.channel",\n    "name": "stable",\n    "package": "foo",\n    "entries": []\n}\n';
    const ref = { schema: 'olm.channel', name: 'stable' };
    const added = addDeprecationText('c.json', text, 'foo', ref, 'use fast');
    const objects = added
      .trim()
      .split(/\n(?=\{)/)
      .map((o) => JSON.parse(o) as Record<string, unknown>);
    expect(objects.at(-1)).toEqual({
      schema: 'olm.deprecations',
      package: 'foo',
      entries: [{ reference: { schema: 'olm.channel', name: 'stable' }, message: 'use fast' }],
    });
    expect(added).toBe(
      text +
        '{\n    "schema": "olm.deprecations",\n    "package": "foo",\n    "entries": [\n        {\n            "reference": {\n                "schema": "olm.channel",\n                "name": "stable"\n            },\n            "message": "use fast"\n        }\n    ]\n}\n',
    );
    expect(removeDeprecationText('c.json', added, 'foo', ref)).toBe(text);
  });
});

describe('/deprecate and /undeprecate comment lines', () => {
  it('read the kind, the name and the message after --; refuse anything else with the usage', () => {
    const parsed = parseComment(
      [
        '/deprecate bundle etcd.v0.9.4',
        '/deprecate channel etcd/alpha --   use  stable instead ',
        '/undeprecate package etcd',
        '/deprecate Package etcd -- gone',
      ].join('\n'),
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.commands.map((c) => ({ ...c, text: undefined, line: undefined }))).toEqual([
      { name: 'deprecate', kind: 'bundle', target: 'etcd.v0.9.4' },
      { name: 'deprecate', kind: 'channel', target: 'etcd/alpha', message: 'use stable instead' },
      { name: 'undeprecate', kind: 'package', target: 'etcd' },
      { name: 'deprecate', kind: 'package', target: 'etcd', message: 'gone' },
    ]);
    const bad = parseComment(
      [
        '/deprecate etcd.v0.9.4',
        '/deprecate operator etcd',
        '/deprecate bundle ../../etc',
        '/deprecate bundle a b',
        '/deprecate bundle etcd.v0.9.4 --',
        `/deprecate bundle etcd.v0.9.4 -- ${'x'.repeat(501)}`,
        '/undeprecate bundle etcd.v0.9.4 -- why',
        '/deprecate bundle etcd.v0.9.4 -- see ``` here',
      ].join('\n'),
    );
    expect(bad.commands).toEqual([]);
    expect(bad.problems.map((p) => p.reason)).toEqual([
      'usage: `/deprecate <bundle|channel|package> <name> [-- message]` (a channel as `<package>/<channel>`)',
      'usage: `/deprecate <bundle|channel|package> <name> [-- message]` (a channel as `<package>/<channel>`)',
      '`../../etc` is not a bundle, channel or package name',
      'usage: `/deprecate <bundle|channel|package> <name> [-- message]` (a channel as `<package>/<channel>`)',
      'the message after `--` must be 1 to 500 characters',
      'the message after `--` must be 1 to 500 characters',
      '`/undeprecate` takes no message',
      'the message after `--` may not contain backticks',
    ]);
  });
});
