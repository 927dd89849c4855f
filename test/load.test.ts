import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFile, lineOf } from '../src/catalog/fbc/decode.js';
import { goJsonSyntaxError } from '../src/catalog/go/gojsonsyntax.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { fooBundle, fooChannel } from './helpers/foo-repo.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

describe('decodeFile', () => {
  it('tags blobs and channel entries with their lines in YAML', () => {
    const text =
      '---\n# comment\nschema: olm.channel\nname: stable\nentries:\n  - name: a\n\n  - name: b\n    replaces: a\n';
    const out = decodeFile(Buffer.from(text));
    expect(out.problems).toEqual([]);
    expect(out.values.map((v) => [v.line, v.column])).toEqual([[3, 1]]);
    const { value, lines } = out.values[0]!;
    const entries = (value as { entries: object[] }).entries;
    expect(entries.map((e) => lineOf(lines, e))).toEqual([6, 8]);
    // Asked out of order, or for something else, it still answers right.
    expect([...entries].reverse().map((e) => lineOf(lines, e))).toEqual([8, 6]);
    expect(lineOf(lines, {})).toBeUndefined();
  });

  it('tags blobs and entries with their lines in a JSON stream', () => {
    const text =
      '{"schema":"olm.package","name":"a"}\n\n{\n  "schema": "olm.channel",\n  "entries": [\n    {"name": "x"},\n    {"name": "y"}\n  ]\n}\n';
    const out = decodeFile(Buffer.from(text));
    expect(out.values.map((v) => v.line)).toEqual([1, 3]);
    const { value, lines } = out.values[1]!;
    const entries = (value as { entries: object[] }).entries;
    expect(entries.map((e) => lineOf(lines, e))).toEqual([6, 7]);
  });

  it('reads YAML 1.1 scalars as go-yaml v2 does', () => {
    const out = decodeFile(
      Buffer.from('a: on\nb: 4.10\nc: 0777\nd: 1_000\ne: 2021-01-01\nf: ~\ng: 09\nh: .5\ni: "on"\n'),
    );
    expect(out.values[0]?.value).toEqual({
      a: true,
      b: 4.1,
      c: 511,
      d: 1000,
      e: '2021-01-01',
      f: null,
      g: 9,
      h: 0.5,
      i: 'on',
    });
  });

  it('stops an alias bomb quickly', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const started = Date.now();
    const out = decodeFile(Buffer.from(levels.join('\n') + '\n'));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(out.problems.map((p) => p.rule)).toEqual(['L-ALIASES']);
  });
});

describe('Go JSON syntax errors', () => {
  const err = (s: string) => goJsonSyntaxError(Buffer.from(s), 0);
  it('uses encoding/json wording and offsets', () => {
    expect(err('{"a": 1 "b": 2}')).toEqual({
      offset: 9,
      message: `invalid character '"' after object key:value pair`,
    });
    expect(err('{"a": 1,}')).toEqual({
      offset: 9,
      message: `invalid character '}' looking for beginning of object key string`,
    });
    expect(err('[1, tru]')?.message).toBe(`invalid character ']' in literal true (expecting 'e')`);
    expect(err('{"a" 1}')?.message).toBe(`invalid character '1' after object key`);
    expect(err('[1.]')?.message).toBe(`invalid character ']' after decimal point in numeric literal`);
    expect(err('{"a": [1, 2}')?.message).toBe(`invalid character '}' after array element`);
    expect(err('{"a": "\\x"}')?.message).toBe(`invalid character 'x' in string escape code`);
    expect(err('{"a": ')?.message).toBe('unexpected EOF');
    expect(err('{"a": {"b": [true, false, null, -1.5e+3, "\\u00e9"]}}')).toBeUndefined();
  });
});

describe('knock-on findings', () => {
  it('leaves out model findings for packages of a file that did not load, with a notice', async () => {
    const dir = writeTree({
      // The channel's only entry carries a mis-indented key: a YAML syntax error on line 11.
      'foo.yaml': fooChannel(['1.0.0'], '   bad: indentation\n') + fooBundle('1.0.0'),
    });
    dirs.push(dir);
    const report = await validateCatalog(new DirectorySource(dir));
    expect(report.valid).toBe(false);
    expect(report.diagnostics.map((d) => [d.rule, d.level, d.line])).toEqual([
      ['L-INCOMPLETE', 'notice', undefined],
      ['L-YAML-SYNTAX', 'error', 11],
    ]);
  });
});

describe('files that cannot be read', () => {
  it('reports a file that vanished between listing and reading as L-FS, and reads the rest', async () => {
    const dir = writeTree({ 'a.yaml': 'schema: olm.package\nname: foo\n', 'b.yaml': 'schema: x.custom\n' });
    dirs.push(dir);
    class VanishingSource extends DirectorySource {
      override async read(paths: string[]) {
        rmSync(join(dir, 'b.yaml'), { force: true });
        return super.read(paths);
      }
    }
    const report = await validateCatalog(new VanishingSource(dir));
    const fs = report.diagnostics.find((d) => d.rule === 'L-FS');
    expect(fs).toMatchObject({ level: 'error', file: 'b.yaml' });
    expect(fs?.message).toMatch(/^read b\.yaml: /);
    expect(report.config.packages.map((p) => p.name)).toEqual(['foo']);
  });
});

describe('hints', () => {
  it('suggests the concrete edge that rescues a stranded bundle', async () => {
    const bundle = (v: number) =>
      `---\nschema: olm.bundle\npackage: foo\nname: foo.v${v}.0.0\nimage: quay.io/x/foo:v${v}\nproperties:\n  - {type: olm.package, value: {packageName: foo, version: ${v}.0.0}}\n`;
    const dir = writeTree({
      'c.yaml':
        'schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n' +
        '  - name: foo.v1.0.0\n  - name: foo.v2.0.0\n    replaces: foo.v1.0.0\n  - name: foo.v3.0.0\n    replaces: foo.v2.0.0\n    skips: [foo.v2.0.0]\n' +
        bundle(1) +
        bundle(2) +
        bundle(3),
    });
    dirs.push(dir);
    const [finding] = (await validateCatalog(new DirectorySource(dir))).diagnostics;
    expect(finding).toMatchObject({ rule: 'C-STRANDED', file: 'c.yaml', line: 9 });
    expect(finding?.hint).toContain('add `foo.v1.0.0` to the `skips` of foo.v3.0.0');
  });
});
