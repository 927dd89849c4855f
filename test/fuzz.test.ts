// Differential fuzzing: mutate a small catalog (lines and characters, YAML and JSON) with
// a fixed seed, and check that catalog-bot and opm agree on every mutant's verdict and
// that catalog-bot never throws.
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { haveOpm, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

const base =
  readFileSync(new URL('./fixtures/valid-catalog/example-operator/catalog.yaml', import.meta.url), 'utf8') +
  `---
schema: olm.channel
package: example-operator
name: fast
entries:
  - name: example-operator.v1.1.0
    skips:
      - example-operator.v1.0.0
---
schema: olm.deprecations
package: example-operator
entries:
  - reference: {schema: olm.channel, name: fast}
    message: use stable
`;
const jsonBase = loadAll(base)
  .map((d, i) => JSON.stringify(d, null, i % 2 ? 2 : 0))
  .join('\n');

const TOKENS = [
  '',
  '"1.0"',
  '1.0',
  'on',
  'example-operator.v1.0.0',
  'example-operator.v1.1.0',
  'v1.0.0',
  '[]',
  '{}',
  'null',
  "'>=1.0.0 <1.1.0'",
  '~1.0',
  'quay.io/X/y:v1',
  'stable',
  'fast',
  'olm.bundle',
  'olm.channel',
  'example-operator',
  '1.0.0+1',
  '1.0.0-01',
  '&a x',
  '*a',
  "'a''b'",
  '|',
  '-',
  'x: y',
  '[a, b',
];
const CHARS = [
  ' ',
  ':',
  '-',
  '#',
  '"',
  "'",
  '{',
  '}',
  '[',
  ']',
  ',',
  '\t',
  '\n',
  '&',
  '*',
  '!',
  '|',
  '>',
  '%',
  '@',
  '`',
  '\\',
  '?',
  '0',
  'x',
  '---\n',
  '\u00e9',
  '\ufeff',
];

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

function mutateLines(text: string, rnd: (n: number) => number): string {
  const lines = text.split('\n');
  for (let k = 1 + rnd(3); k > 0; k--) {
    const i = rnd(lines.length);
    const line = lines[i] ?? '';
    switch (rnd(7)) {
      case 0:
        lines.splice(i, 1);
        break;
      case 1:
        lines.splice(i, 0, lines[rnd(lines.length)] ?? '');
        break;
      case 2: {
        const j = rnd(lines.length);
        [lines[i], lines[j]] = [lines[j] ?? '', line];
        break;
      }
      case 3:
        lines[i] = (rnd(2) ? '  ' : '') + line.replace(/^ {0,2}/, '');
        break;
      case 4:
        lines[i] = line.replace(/: .*$/, ': ' + TOKENS[rnd(TOKENS.length)]);
        break;
      case 5:
        lines.splice(i, 0, '---');
        break;
      default:
        lines[i] = line.replace(/(\w+):/, (_m, w: string) => (rnd(2) ? w.toUpperCase() : w + 'x') + ':');
    }
  }
  return lines.join('\n');
}

function mutateChars(text: string, rnd: (n: number) => number): string {
  let t = text;
  for (let k = 1 + rnd(3); k > 0; k--) {
    const i = rnd(t.length);
    const c = CHARS[rnd(CHARS.length)] ?? '';
    const r = rnd(3);
    t =
      r === 0
        ? t.slice(0, i) + c + t.slice(i)
        : r === 1
          ? t.slice(0, i) + t.slice(i + 1 + rnd(3))
          : t.slice(0, i) + c + t.slice(i + 1);
  }
  return t;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

describe.skipIf(!haveOpm)('differential fuzzing against opm', () => {
  const runs: [string, string, (t: string, r: (n: number) => number) => string, string][] = [
    ['YAML, line mutations', base, mutateLines, 'catalog.yaml'],
    ['YAML, character mutations', base, mutateChars, 'catalog.yaml'],
    ['JSON, character mutations', jsonBase, mutateChars, 'catalog.json'],
  ];
  for (const [name, text, mutate, file] of runs) {
    it(name, async () => {
      const rnd = random(name.length * 7919);
      const disagreements: string[] = [];
      let valid = 0;
      for (let i = 0; i < 60; i++) {
        const mutant = mutate(text, rnd);
        const dir = writeTree({ [file]: mutant });
        dirs.push(dir);
        const opm = opmValidate(dir);
        const ours = await validateCatalog(new DirectorySource(dir));
        if (opm.valid) valid++;
        if (ours.valid !== opm.valid)
          disagreements.push(`${JSON.stringify(mutant)}\nopm: ${opm.valid} ${opm.message}`);
      }
      expect(disagreements).toEqual([]);
      expect(valid).toBeGreaterThan(0); // the mutants are not all trivially broken
    });
  }
});
