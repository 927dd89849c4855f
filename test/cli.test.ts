import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { githubAnnotation } from '../src/commands/output.js';
import { removeTree, SHARED_DATA, writeTree } from './helpers/oracle.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const cliJs = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const capture = () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = capture();
  const err = capture();
  const code = await main(args, out.stream, err.stream);
  return { code, out: out.text(), err: err.text() };
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

describe('catalog-bot validate', () => {
  it('exits 0 and says valid for a valid root', async () => {
    const { code, out } = await run(['validate', fixtures + 'valid-catalog']);
    expect(code).toBe(0);
    expect(out).toMatch(/^valid: .*valid-catalog: 0 errors/m);
  });

  it('exits 1 and prints file:line, rule, message and hint for an invalid root', async () => {
    const { code, out } = await run(['validate', fixtures + 'invalid-catalog']);
    expect(code).toBe(1);
    expect(out).toMatch(
      /invalid-catalog\/example-operator\/catalog\.yaml:15: error C-MULTIPLE-HEADS: .*multiple channel heads found in graph: example-operator\.v1\.1\.0, example-operator\.v1\.2\.0/,
    );
    expect(out).toMatch(
      /hint: Make example-operator\.v1\.2\.0 the only head: add `replaces: example-operator\.v1\.1\.0`/,
    );
    expect(out).toMatch(/other-operator\/catalog\.json:14:1: error PR-VERSION/);
  });

  it('prints the JSON contract', async () => {
    const { code, out } = await run([
      'validate',
      '--format',
      'json',
      fixtures + 'valid-catalog',
      fixtures + 'invalid-catalog',
    ]);
    expect(code).toBe(1);
    const parsed = JSON.parse(out) as { valid: boolean; errors: Record<string, unknown>[] };
    expect(parsed.valid).toBe(false);
    expect(parsed.errors.map((e) => e.rule).sort()).toEqual(['C-MULTIPLE-HEADS', 'PR-VERSION']);
    for (const e of parsed.errors) {
      expect(Object.keys(e)).toEqual(expect.arrayContaining(['rule', 'message', 'file', 'line', 'package']));
      expect(String(e.file)).toContain('invalid-catalog/');
    }
    expect(parsed.errors.find((e) => e.rule === 'PR-VERSION')?.package).toBe('other-operator');
  });

  it('prints GitHub workflow commands', async () => {
    const { code, out } = await run(['validate', '--format', 'github', fixtures + 'invalid-catalog']);
    expect(code).toBe(1);
    expect(out).toMatch(
      /^::error file=.*example-operator\/catalog\.yaml,line=15,title=C-MULTIPLE-HEADS::invalid package/m,
    );
  });

  it('escapes annotation text and properties', () => {
    expect(
      githubAnnotation({ rule: 'X', level: 'warning', message: 'a%b\nc', file: 'd,e:f', line: 3, hint: 'h' }),
    ).toBe('::warning file=d%2Ce%3Af,line=3,title=X::a%25b%0Ac%0Ah');
  });

  it('exits 2 on usage and I/O errors', async () => {
    const missing = await run(['validate']);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      'catalog-bot validate: validate needs at least one catalog root (usage: catalog-bot validate --help)\n',
    );
    expect((await run(['validate', '--format', 'xml', fixtures + 'valid-catalog'])).code).toBe(2);
    const absent = await run(['validate', '/nonexistent/catalog']);
    expect(absent.code).toBe(2);
    expect(absent.err).toBe('catalog-bot validate: /nonexistent/catalog: no such file or directory\n');
    expect((await run(['validate', fileURLToPath(import.meta.url)])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
  });

  it('works as an installed command (the built bin)', () => {
    const r = spawnSync(
      process.execPath,
      [cliJs, 'validate', '--format', 'json', fixtures + 'valid-catalog'],
      {
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, errors: [] });
  });

  // A short run goes faster without Node's optimizing compiler; a large one needs it, and so
  // does YAML only the full reader reads (catalog/fbc/fast/short-run.ts). V8 says what it
  // optimizes with --trace-opt.
  it('keeps the optimizing compiler off for a catalog of usual size, and on past the limit', () => {
    const v421 = join(SHARED_DATA, 'real-catalogs', 'community-operators-prod', 'catalogs', 'v4.21');
    const optimized = (roots: string[]): number => {
      const r = spawnSync(
        process.execPath,
        ['--trace-opt', cliJs, 'validate', '--format', 'json', ...roots],
        {
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split('\n').filter((l) => l.startsWith('[completed optimizing')).length;
    };
    // 14 MB: nothing optimized. The same root twice (28 MB in all): the second is optimized.
    expect(optimized([v421])).toBe(0);
    expect(optimized([v421, v421])).toBeGreaterThan(0);
    // The same catalog with a comment after each `schema:`, which only the full YAML reader reads.
    const commented = writeTree(
      Object.fromEntries(
        readdirSync(v421).map((pkg) => [
          `${pkg}/catalog.yaml`,
          readFileSync(join(v421, pkg, 'catalog.yaml'), 'utf8').replace(
            /^schema: (.*)$/gm,
            'schema: $1 # note',
          ),
        ]),
      ),
    );
    dirs.push(commented);
    expect(optimized([commented])).toBeGreaterThan(0);
  }, 120_000); // three runs over 14 to 28 MB
});

describe('catalog-bot range', () => {
  it('prints the JSON contract with blang semantics', async () => {
    const { code, out } = await run(['range', '>=1.0.0 <2.0.0', '1.5.0-rc.1', '2.0.0', '1.0.0+build']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      valid: true,
      error: null,
      matches: { '1.5.0-rc.1': true, '2.0.0': false, '1.0.0+build': true },
    });
  });

  it('shows what a quirky range really means', async () => {
    const { out } = await run(['range', '1.0.0 - 2.0.0', '1.5.0']);
    expect(JSON.parse(out)).toMatchObject({
      valid: true,
      meaning: '=1.0.0 =2.0.0',
      matches: { '1.5.0': false },
    });
  });

  it("exits 1 with blang's error for an invalid range, 2 without arguments", async () => {
    const bad = await run(['range', '~1.2', '1.2.0']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error).toBe(
      'Could not parse Range "~1.2": Could not parse comparator "~" in "~1.2"',
    );
    expect((await run(['range'])).code).toBe(2);
  });
});

describe('catalog-bot render', () => {
  it('prints package, channels, bundles in opm order', async () => {
    const dir = writeTree({
      'b.json': JSON.stringify({
        schema: 'olm.bundle',
        package: 'foo',
        name: 'foo.v1',
        image: 'quay.io/x/foo:v1',
        properties: [{ type: 'olm.package', value: { version: '1.0.0', packageName: 'foo' } }],
      }),
      'a.yaml':
        'schema: olm.channel\npackage: foo\nname: stable\nentries: [{name: foo.v1}]\n---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n',
    });
    dirs.push(dir);
    const { code, out } = await run(['render', dir]);
    expect(code).toBe(0);
    const objects = out.split(/\n(?=\{)/).map((s) => JSON.parse(s) as { schema: string });
    expect(objects.map((o) => o.schema)).toEqual(['olm.package', 'olm.channel', 'olm.bundle']);
    expect(Object.keys(objects[2] as object)).toEqual(['schema', 'name', 'package', 'image', 'properties']);
    expect(out).toContain(
      '"value": {\n                "packageName": "foo",\n                "version": "1.0.0"',
    );
  });

  it('fails on files opm cannot load', async () => {
    const dir = writeTree({ 'bad.yaml': 'schema: olm.package\n  name: [' });
    dirs.push(dir);
    const result = await run(['render', dir]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/bad\.yaml:2:7: error L-YAML-SYNTAX/);
  });
});
