// `catalog-bot ocp-promote` against the real promotion commits of community-operators-prod:
// each test rebuilds the repository as it was before a promotion (history patches
// reverse-applied) and checks that the command writes what the real commit holds.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  BEFORE_V4_22_PROMOTION,
  haveRealRepo,
  JUMPSTARTER_AFTER_V4_22,
  newFileOfPatch,
  realRepoBefore,
} from './helpers/ocp-history.js';
import { removeTree } from './helpers/oracle.js';
import { runCommandOutput } from './helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const run = (args: string[]) => runCommandOutput('ocp-promote', args);

function before(patches: string[]): string {
  const dir = realRepoBefore(patches);
  dirs.push(dir);
  return dir;
}

const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

/** The real repository before `pkg` was promoted to v4.17: that catalog gone, `listed` (v4.17 as its ci.yaml lists it) cut. */
function notYetInV4_17(pkg: string, listed: string): { dir: string; ci: string; real: string } {
  const dir = before([]);
  const real = read(dir, `catalogs/v4.17/${pkg}/catalog.yaml`);
  rmSync(join(dir, `catalogs/v4.17/${pkg}`), { recursive: true });
  const ci = `operators/${pkg}/ci.yaml`;
  writeFileSync(join(dir, ci), read(dir, ci).replace(listed, ''));
  return { dir, ci, real };
}

/** `after` is `before` with only `inserted` (and separators) added: the rest of the layout kept. */
function onlyInserted(beforeText: string, afterText: string, inserted: string): boolean {
  let p = 0;
  while (p < beforeText.length && beforeText[p] === afterText[p]) p++;
  let s = 0;
  while (
    s < beforeText.length - p &&
    beforeText[beforeText.length - 1 - s] === afterText[afterText.length - 1 - s]
  )
    s++;
  if (p + s !== beforeText.length) return false;
  const added = afterText.slice(p, afterText.length - s);
  return added.replace(inserted, '').replace(/[\s,"'-]/g, '') === '' && added.includes(inserted);
}

interface RealPromotion {
  patch: string;
  /** Newer patches of the package, reverse-applied first (newest first). */
  newer: string[];
  pkg: string;
  from: string;
  to: string;
  /** Not `always`: promoted by naming it. */
  named: boolean;
}

/** The real commit `<pkg>-promote-<to>` that promoted `pkg` from `from` to `to`. */
function promotion(pkg: string, from: string, to: string, named: boolean, newer: string[] = []) {
  return { patch: `${pkg}-promote-${to}`, newer, pkg, from, to, named };
}

const REAL: RealPromotion[] = [
  promotion('clusterpulse', 'v4.21', 'v4.22', true),
  promotion('rabbitmq-messaging-topology-operator', 'v4.21', 'v4.22', true),
  promotion('ecr-secret-operator', 'v4.21', 'v4.22', false),
  promotion('jumpstarter-operator', 'v4.21', 'v4.22', true, JUMPSTARTER_AFTER_V4_22),
  promotion('visionone-containersecurity', 'v4.20', 'v4.21', true),
];

describe.skipIf(!haveRealRepo)('catalog-bot ocp-promote reproduces the real promotion commits', () => {
  for (const c of REAL) {
    it(`${c.patch}: catalog byte for byte, ci.yaml equal as YAML with its layout kept`, async () => {
      const dir = before([...c.newer, c.patch]);
      const catalog = `catalogs/${c.to}/${c.pkg}/catalog.yaml`;
      const ci = `operators/${c.pkg}/ci.yaml`;
      const ciBefore = read(dir, ci);
      const ciReal = newFileOfPatch(c.patch, ci, dir);
      const { code, output } = await run([
        c.from,
        c.to,
        '--repo',
        dir,
        ...(c.named ? ['--package', c.pkg] : []),
      ]);
      expect(output).toMatch(new RegExp(`promoted +${c.pkg}: `));
      expect(code).toBe(0);
      expect(read(dir, catalog) === newFileOfPatch(c.patch, catalog)).toBe(true);
      const ciAfter = read(dir, ci);
      expect(parseYaml(ciAfter)).toEqual(parseYaml(ciReal));
      expect(onlyInserted(ciBefore, ciAfter, c.to)).toBe(true);
    });
  }

  it('v4.22 of 2026-07: promotes the one `always` package, lists the rest with why', async () => {
    const dir = before(BEFORE_V4_22_PROMOTION);
    const { code, output } = await run(['v4.21', 'v4.22', '--repo', dir, '--format', 'json']);
    expect(code).toBe(0);
    const result = JSON.parse(output) as {
      packages: { package: string; status: string; reason: string; notes: string[] }[];
      written: string[];
    };
    expect(result.packages.map((p) => [p.package, p.status])).toEqual([
      ['clusterpulse', 'skipped'],
      ['dotvirt-operator', 'skipped'],
      ['ecr-secret-operator', 'promoted'],
      ['jumpstarter-operator', 'skipped'],
      ['rabbitmq-messaging-topology-operator', 'skipped'],
      ['visionone-containersecurity', 'skipped'],
    ]);
    // dotvirt-operator is review-needed, but was already in v4.22 at the time.
    expect(result.packages[1]!.reason).toBe('already in catalogs/v4.22');
    expect(result.packages[0]!.reason).toMatch(/strategy is never \(the default\)/);
    expect(result.written).toEqual([
      'catalogs/v4.22/ecr-secret-operator/catalog.yaml',
      'operators/ecr-secret-operator/ci.yaml',
    ]);
    // Its template names bundles its catalogs lack (a real inconsistency): copied as committed.
    expect(result.packages[2]!.notes.join(' ')).toMatch(
      /catalogs\/v4\.21\/ecr-secret-operator\/catalog\.yaml is not the render of operators\/ecr-secret-operator\/catalog-templates\/basic\.yaml; copied/,
    );
  });

  it('review-needed packages are listed, not written, unless named', async () => {
    const dir = before([]);
    rmSync(join(dir, 'catalogs/v4.22/dotvirt-operator'), { recursive: true });
    const ci = 'operators/dotvirt-operator/ci.yaml';
    writeFileSync(join(dir, ci), read(dir, ci).replace('        - v4.22\n', ''));
    const listed = await run(['v4.21', 'v4.22', '--repo', dir]);
    expect(listed.code).toBe(0);
    expect(listed.output).toMatch(
      /needs review +dotvirt-operator: fbc.version_promotion_strategy is review-needed/,
    );
    expect(listed.output).toMatch(/nothing to do: no package to promote to v4.22/);
    const named = await run(['v4.21', 'v4.22', '--repo', dir, '--package', 'dotvirt-operator']);
    expect(named.code).toBe(0);
    expect(read(dir, 'catalogs/v4.22/dotvirt-operator/catalog.yaml')).toBe(
      read(dir, 'catalogs/v4.21/dotvirt-operator/catalog.yaml'),
    );
    expect(read(dir, ci)).toMatch(/- v4\.21\n {8}- v4\.22\n/);
  });

  it('the v4.21 race: the real commit copied v4.20 from before 1.0.0; from the merged state v4.21 holds 1.0.0', async () => {
    const dir = before([
      'clusterpulse-promote-v4.22',
      'clusterpulse-1.0.2-catalog',
      'clusterpulse-1.0.2-template',
      'clusterpulse-1.0.1-catalog',
      'clusterpulse-1.0.1-template',
      'clusterpulse-promote-v4.21',
    ]);
    const ciReal = newFileOfPatch('clusterpulse-promote-v4.21', 'operators/clusterpulse/ci.yaml', dir);
    const { code } = await run(['v4.20', 'v4.21', '--repo', dir, '--package', 'clusterpulse']);
    expect(code).toBe(0);
    const ours = read(dir, 'catalogs/v4.21/clusterpulse/catalog.yaml');
    const real = newFileOfPatch('clusterpulse-promote-v4.21', 'catalogs/v4.21/clusterpulse/catalog.yaml');
    expect(ours).toBe(read(dir, 'catalogs/v4.20/clusterpulse/catalog.yaml'));
    expect(ours).toMatch(/name: clusterpulse\.v1\.0\.0\n/);
    expect(real).not.toMatch(/clusterpulse\.v1\.0\.0/);
    expect(real).toMatch(/defaultChannel: fast-v0\n/);
    expect(ours).toMatch(/defaultChannel: fast-v1\n/);
    const ci = read(dir, 'operators/clusterpulse/ci.yaml');
    expect(parseYaml(ci)).toEqual(parseYaml(ciReal));
  });

  it('crossing into olm.csv.metadata: v4.16 -> v4.17 renders the template and equals the real v4.17', async () => {
    const pkg = 'visionone-containersecurity';
    const { dir, ci, real } = notYetInV4_17(pkg, '"v4.17", ');
    expect(read(dir, `catalogs/v4.16/${pkg}/catalog.yaml`)).toMatch(/olm\.bundle\.object/);
    const { code, output } = await run(['v4.16', 'v4.17', '--repo', dir, '--package', pkg]);
    expect(output).toMatch(/promoted +visionone-containersecurity/);
    expect(code).toBe(0);
    expect(read(dir, `catalogs/v4.17/${pkg}/catalog.yaml`) === real).toBe(true);
    // inserted in version order
    expect(read(dir, ci)).toMatch(/"v4\.16", v4\.17, "v4\.18"/);
  });

  it('bundles.renderer.csvMetadataFrom of the repository config moves the migration', async () => {
    const pkg = 'visionone-containersecurity';
    const { dir } = notYetInV4_17(pkg, '"v4.17", ');
    mkdirSync(join(dir, '.github'));
    writeFileSync(
      join(dir, '.github/catalog-bot.yml'),
      'bundles:\n  renderer:\n    csvMetadataFrom: v4.18\n',
    );
    const { code } = await run(['v4.16', 'v4.17', '--repo', dir, '--package', pkg]);
    expect(code).toBe(0);
    // Not yet migrated at v4.17 here: a byte copy of v4.16, olm.bundle.object and all.
    expect(read(dir, `catalogs/v4.17/${pkg}/catalog.yaml`)).toBe(
      read(dir, `catalogs/v4.16/${pkg}/catalog.yaml`),
    );
  });

  it('refuses (and writes nothing) when v4.17 needs a render the template cannot give', async () => {
    const pkg = 'ecr-secret-operator';
    const { dir, ci } = notYetInV4_17(pkg, '        - v4.17\n');
    const ciBefore = read(dir, ci);
    const { code, output } = await run(['v4.16', 'v4.17', '--repo', dir, '--package', pkg]);
    expect(code).toBe(1);
    expect(output).toMatch(
      /refused +ecr-secret-operator: v4\.17 needs olm\.csv\.metadata but v4\.16 does not carry it, and catalogs\/v4\.16\/ecr-secret-operator\/catalog\.yaml is not the render of/,
    );
    expect(output).toMatch(/refused: nothing written/);
    expect(read(dir, ci)).toBe(ciBefore);
    expect(() => read(dir, `catalogs/v4.17/${pkg}/catalog.yaml`)).toThrow();
  });
});

describe('catalog-bot ocp-promote: ci.yaml comments and refusals', () => {
  const files = {
    'operators/demo/ci.yaml': [
      '---',
      '# who reviews',
      'reviewers:',
      '- alice # lead',
      'fbc:',
      '  enabled: true',
      '  version_promotion_strategy: always  # promote with every new OpenShift',
      '  catalog_mapping:',
      '  # the one template',
      '  - template_name: basic.yaml',
      '    catalog_names:',
      '    - v4.20   # first',
      '    - v4.21',
      '    # newer ones go here',
      '    type: olm.template.basic',
      '',
    ].join('\n'),
    'catalogs/v4.21/demo/catalog.yaml': 'hand: written\n',
    'catalogs/v4.21/plain/catalog.json': '{"schema":"olm.package","name":"plain"}\n',
    'catalogs/v4.21/plain/more/bundles.json': '{}\n',
  };

  it('keeps comments and layout, copies a package without template when named', async () => {
    const { writeTree } = await import('./helpers/oracle.js');
    const dir = writeTree(files);
    dirs.push(dir);
    const { code, output } = await run(['v4.21', 'v4.22', '--repo', dir, '--package', 'plain']);
    expect(code).toBe(0);
    expect(output).toMatch(/note: operators\/demo\/catalog-templates\/basic\.yaml does not exist; copied/);
    const ci = read(dir, 'operators/demo/ci.yaml');
    expect(ci).toBe(files['operators/demo/ci.yaml'].replace('    - v4.21\n', '    - v4.21\n    - v4.22\n'));
    expect(read(dir, 'catalogs/v4.22/demo/catalog.yaml')).toBe('hand: written\n');
    expect(read(dir, 'catalogs/v4.22/plain/more/bundles.json')).toBe('{}\n');
    expect(output).toMatch(
      /promoted +plain: named with --package \(operators\/plain\/ci\.yaml does not exist/,
    );
  });

  it('usage and refusals', async () => {
    const { writeTree } = await import('./helpers/oracle.js');
    const dir = writeTree(files);
    dirs.push(dir);
    expect((await run(['v4.21'])).code).toBe(2);
    expect((await run(['v4.21', 'v4.22', '--format', 'xml', '--repo', dir])).code).toBe(2);
    expect((await run(['v4.21', 'v4.22', '--repo', join(dir, 'nope')])).code).toBe(2);
    const back = await run(['v4.21', 'v4.20', '--repo', dir]);
    expect(back).toEqual({
      code: 1,
      output: 'catalog-bot ocp-promote: refused: v4.20 is not a later OpenShift version than v4.21\n',
      stdout: '',
    });
    expect((await run(['../v4.21', 'v4.22', '--repo', dir])).output).toMatch(
      /is not an OpenShift catalog name/,
    );
    expect((await run(['v4.19', 'v4.22', '--repo', dir])).output).toMatch(
      /catalogs\/v4\.19 holds no packages/,
    );
    const broken = writeTree({
      'operators/bad/ci.yaml': 'fbc:\n  version_promotion_strategy: always\n  catalog_mapping: [\n',
      'catalogs/v4.21/bad/catalog.yaml': 'x: 1\n',
    });
    dirs.push(broken);
    const refused = await run(['v4.21', 'v4.22', '--repo', broken]);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/refused +bad: operators\/bad\/ci\.yaml: YAML: /);
    expect(() => readFileSync(join(broken, 'catalogs/v4.22/bad/catalog.yaml'))).toThrow();
    const unknown = await run(['v4.21', 'v4.22', '--repo', dir, '--package', 'ghost', '--format', 'json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error).toBe('refused: package ghost is not in catalogs/v4.21');
  });
});
