// Differential fuzzing: mutate a small catalog (lines and characters, YAML and JSON) with
// a fixed seed, and check that catalog-bot and opm agree on every mutant's verdict and
// that catalog-bot never throws.
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { mutateLines as mutateLinesBy, random, type Rnd } from './helpers/mutate.js';
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
// Characters (and a separator) YAML or JSON give a meaning to, in the order the seeded mutants pick them.
const CHARS = [...' :-#"\'{}[],\t\n&*!|>%@`\\?0x', '---\n', '\u00e9', '\ufeff'];

const mutateLines = (text: string, rnd: Rnd): string =>
  mutateLinesBy(text, rnd, {
    maxEdits: 3,
    kinds: ['drop', 'duplicate', 'swap', 'indent', 'retype', 'split', 'rename'],
    tokens: TOKENS,
  });

function mutateChars(text: string, rnd: Rnd): string {
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
