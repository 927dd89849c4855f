// `catalog-bot validate` loads with validationOnly (values validation only type-checks are
// dropped when read) on two threads (load-threads.ts). Both must give exactly the findings
// and model of a plain validateCatalog: checked here on real catalogs and on catalogs of
// mutated real packages (every kind of loading and conversion error, in many files).
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog, type CatalogSource } from '../src/catalog/index.js';
import type { LoadResult } from '../src/catalog/fbc/load.js';
import { startLoadHelper, type LoadHelper } from '../src/catalog/fbc/fast/load-threads.js';
import { main } from '../src/cli.js';
import { githubAnnotation } from '../src/commands/output.js';
import { mutateLines, random, type Rnd } from './helpers/mutate.js';
import { removeTree, SHARED_DATA, writeTree } from './helpers/oracle.js';

const catalogs = join(SHARED_DATA, 'real-catalogs');
const community = join(catalogs, 'community-operators-prod', 'catalogs');
const realPackages = [
  join(community, 'v4.21', 'kepler-operator', 'catalog.yaml'), // olm.csv.metadata
  join(community, 'v4.21', 'trident-operator', 'catalog.yaml'),
  join(community, 'v4.16', 'libredb-studio-operator', 'catalog.yaml'), // olm.bundle.object
  join(community, 'v4.16', 'odf-node-recovery-operator', 'catalog.yaml'),
].map((p) => readFileSync(p, 'utf8'));

const TOKENS = ['5', '[]', '{}', 'null', 'on', '"1.0"', '1.0', 'x: y', '[a, b', '|', '&a x', '*a', 'AAA='];

/** A real package file with a few lines changed: moved, dropped, retyped, split by `---`. */
const mutate = (text: string, rnd: Rnd): string =>
  mutateLines(text, rnd, {
    maxEdits: 4,
    kinds: ['drop', 'duplicate', 'retype', 'split', 'rename', 'indent'],
    tokens: TOKENS,
  });

function mutantCatalog(seed: number, files: number): string {
  const rnd = random(seed);
  const tree: Record<string, string | Buffer> = {};
  for (let i = 0; i < files; i++) {
    const text = realPackages[i % realPackages.length] as string;
    // Half of them renamed, so not every package is a duplicate of another.
    const renamed = i % 2 ? text.replace(/\b(kepler-operator|trident-operator)\b/g, `$1-${i}`) : text;
    tree[`p${String(i).padStart(2, '0')}/catalog.yaml`] = i % 5 === 0 ? renamed : mutate(renamed, rnd);
  }
  // Values validation only type-checks, wrong: the first failing property is the finding.
  const kepler = realPackages[0] as string;
  tree['typed/catalog.yaml'] = kepler
    .replace(/\bkepler-operator\b/g, 'kepler-typed')
    .replace(/^( {4}keywords:)\n(?: {4}- .*\n)+/m, '$1 5\n');
  tree['icon/catalog.yaml'] = kepler
    .replace(/\bkepler-operator\b/g, 'kepler-icon')
    .replace(/(base64data: )\S+/, '$1not*base64');
  tree['json/catalog.json'] =
    '{"schema": "olm.package", "name": "json-a"}\n{"schema": "olm.package", "name": "json-b"}\n{"schema": olm.channel}\n';
  tree['fallback/catalog.json'] = '{"schema": "olm.package", "name": "json-c"}\n{"schema": olm.channel}\n';
  tree['latin1/catalog.yaml'] = Buffer.from([0x73, 0x3a, 0x20, 0xe9, 0x0a]);
  tree['other/catalog.yaml'] = 'schema: example.custom\npackage: kepler-operator\nvalue: {a: 1}\n';
  tree['empty/catalog.yaml'] = '---\n# nothing\n---\n';
  const dir = writeTree(tree);
  mkdirSync(join(dir, 'links'));
  symlinkSync('/nonexistent/catalog.yaml', join(dir, 'links', 'dangling.yaml'));
  symlinkSync('../p00/catalog.yaml', join(dir, 'links', 'inside.yaml'));
  return dir;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

/** A helper that counts the files it loaded, so the test knows both threads worked. */
function countingHelper(): { helper: LoadHelper<LoadResult>; loaded: () => number } {
  const helper = startLoadHelper<LoadResult>();
  let loaded = 0;
  return {
    helper: {
      start(job) {
        const running = helper.start(job);
        return {
          async finish(): Promise<Map<number, LoadResult>> {
            const results = await running.finish();
            loaded += results.size;
            return results;
          },
        };
      },
    },
    loaded: () => loaded,
  };
}

async function expectSameReport(source: () => CatalogSource, helper: LoadHelper<LoadResult>) {
  const plain = await validateCatalog(source());
  const threads = await validateCatalog(source(), { validationOnly: true, helper });
  expect(threads.diagnostics).toEqual(plain.diagnostics);
  expect(threads.valid).toBe(plain.valid);
  expect(threads.stats).toEqual(plain.stats);
  const shape = (r: typeof plain) =>
    [...r.model.values()].map((p) => ({
      name: p.name,
      defaultChannel: p.defaultChannel?.name,
      channels: [...p.channels.values()].map((c) => ({
        name: c.name,
        bundles: [...c.bundles.values()].map((b) => [b.name, b.version, b.release, b.replaces, b.image]),
      })),
    }));
  expect(shape(threads)).toEqual(shape(plain));
  return plain;
}

describe('validate on two threads, validation only', () => {
  it('gives the findings and model of a plain load on catalogs of mutated real packages', async () => {
    const { helper, loaded } = countingHelper();
    for (const seed of [1, 2, 3]) {
      const dir = mutantCatalog(seed, 36);
      dirs.push(dir);
      const plain = await expectSameReport(() => new DirectorySource(dir), helper);
      // The mutants are broken in many ways, each kind showing up.
      const rules = new Set(plain.diagnostics.map((d) => d.rule));
      for (const rule of [
        'L-YAML-SYNTAX',
        'PR-PARSE',
        'L-PARSE-PACKAGE',
        'L-JSON-SYNTAX',
        'L-FS',
        'L-ENCODING',
      ])
        expect(rules).toContain(rule);
    }
    expect(loaded()).toBeGreaterThan(0);
  });

  // One real catalog (the one with the most olm.csv.metadata per byte); the mutants above are
  // real packages too, and loading each catalog twice more would cost CI seconds.
  it('gives the findings and model of a plain load on a real catalog', async () => {
    const { helper, loaded } = countingHelper();
    const root = join(catalogs, 'certified-operators', 'catalogs', 'v4.22');
    expect(readdirSync(root).length).toBeGreaterThan(40);
    const plain = await expectSameReport(() => new DirectorySource(root), helper);
    expect(plain.valid).toBe(true);
    expect(loaded()).toBeGreaterThan(0);
  });

  it('catalog-bot validate prints what a plain load finds', async () => {
    const dir = mutantCatalog(4, 12);
    dirs.push(dir);
    writeFileSync(join(dir, 'README.md'), '# not a catalog file\n');
    const plain = await validateCatalog(new DirectorySource(dir));
    const out = new PassThrough();
    const code = await main(['validate', '--format', 'github', dir], out, new PassThrough());
    const lines = String(out.read()).trimEnd().split('\n');
    const expected = plain.diagnostics.map((d) =>
      githubAnnotation(d.file === undefined ? d : { ...d, file: join(dir, d.file) }),
    );
    expect(lines.slice(0, -1)).toEqual(expected.flatMap((a) => a.split('\n')));
    expect(lines.at(-1)).toMatch(new RegExp(`^invalid: ${dir}: \\d+ errors?, \\d+ warnings? \\(`));
    expect(code).toBe(1);
  });
});
