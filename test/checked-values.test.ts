// Property values that `validate` only type-checks are checked by the fast reader as it reads
// them, and not built (fastyaml.ts, CheckedValues). Against building every value: the same
// documents, problems and lines, and the placeholder exactly where the built value passes
// Go's type check. On every real catalog file, and on mutants aimed at the check (wrong types,
// other spellings of fields, of `type` and `value`, another schema, repeated keys).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import { CHECKED, expectSameAsBuilt, PLACEHOLDER, type Obj, type Tally } from './helpers/checked-values.js';
import { SHARED_DATA } from './helpers/oracle.js';

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

const catalogs = join(SHARED_DATA, 'real-catalogs');
const kepler = join(
  catalogs,
  'community-operators-prod',
  'catalogs',
  'v4.21',
  'kepler-operator',
  'catalog.yaml',
);

const VALUES = ['5', 'true', 'null', '~', '[]', '{}', '"x"', 'on', '1.5', '0x1F', '[a]', '{a: 1}', 'AAA='];

/** Kepler's catalog with a few lines inside its property values changed. */
function mutant(text: string, rnd: (n: number) => number): string {
  const lines = text.split('\n');
  // Lines deeper than a property item's keys: inside the values.
  const inside = lines.flatMap((l, i) => (/^ {4,}[-\w]/.test(l) ? [i] : []));
  for (let k = 1 + rnd(3); k > 0; k--) {
    const i = inside[rnd(inside.length)]!;
    const line = lines[i]!;
    switch (rnd(7)) {
      case 0:
      case 1: // another value, often of another type
        lines[i] = line.replace(/: .*$|:$/, ': ' + VALUES[rnd(VALUES.length)]);
        break;
      case 2: // another spelling of the key (a field Go still matches), or an unknown one
        lines[i] = line.replace(/^( *(?:- )?)(\w)(\w*):/, (_m, pre: string, first: string, rest: string) =>
          rnd(2) ? `${pre}${first.toUpperCase()}${rest}:` : `${pre}${first}${rest}x:`,
        );
        break;
      case 3: // a repeated line (a repeated key, or one more list item)
        lines.splice(i, 0, line);
        break;
      case 4: {
        // another spelling of `type` or `value` in a property item
        const item = lines.findIndex((l, j) => j >= i && /^- type: /.test(l));
        if (item >= 0) lines.splice(item + 1, 0, rnd(2) ? '  TYPE: olm.gvk' : '  Value: {}');
        break;
      }
      case 5: // a bundle that is no bundle any more
        lines[lines.findIndex((l, j) => j >= i && l === 'schema: olm.bundle')] = 'schema: olm.package';
        break;
      default: // a value's collection becomes a scalar
        lines[i] = line.replace(/:$/, ': x');
    }
  }
  return lines.join('\n');
}

describe('property values checked as read', () => {
  it('agree with building every value on every real catalog file', () => {
    const tally: Tally = { checked: 0, failing: 0 };
    for (const dir of ['certified-operators/catalogs/v4.22', 'community-operators-prod/catalogs/v4.21']) {
      for (const pkg of readdirSync(join(catalogs, dir))) {
        const file = join(catalogs, dir, pkg, 'catalog.yaml');
        expectSameAsBuilt(readFileSync(file), file, tally);
      }
    }
    // Real catalogs are valid: every value is checked, none built.
    expect(tally.checked).toBeGreaterThan(5000);
    expect(tally.failing).toBe(0);
  });

  it('find a repeated key among many, and take time in proportion to the keys', () => {
    const bundle = (keys: string[]): Buffer =>
      Buffer.from(
        'name: a.v1.0.0\npackage: a\nproperties:\n- type: olm.csv.metadata\n  value:\n    annotations:\n' +
          keys.map((k) => `      ${k}: x\n`).join('') +
          'schema: olm.bundle\n',
      );
    const tally: Tally = { checked: 0, failing: 0 };
    const many = Array.from({ length: 20 }, (_, i) => `k${i}`);
    expectSameAsBuilt(bundle(many), 'distinct keys', tally);
    expectSameAsBuilt(bundle([...many, 'k3']), 'a repeated key past the first sixteen', tally);
    expect(tally.checked).toBe(1); // the first; the second was left to the full reader
    // A pull request may write a hundred thousand keys: checked in well under a second
    // (comparing each with every other would take minutes).
    const started = performance.now();
    const huge = decodeFile(bundle(Array.from({ length: 100_000 }, (_, i) => `k${i}`)), {
      checkedValues: CHECKED,
    });
    expect(((huge.values[0]?.value as Obj).properties as Obj[])[0]?.value).toBe(PLACEHOLDER);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('agree with building every value on mutants aimed at the check', () => {
    const text = readFileSync(kepler, 'utf8');
    const rnd = random(20261126);
    const tally: Tally = { checked: 0, failing: 0 };
    for (let i = 0; i < 150; i++) {
      const t = mutant(text, rnd);
      expectSameAsBuilt(Buffer.from(t), `mutant ${i}`, tally);
    }
    // Both ways were taken many times: checked and left, failing and built.
    expect(tally.checked).toBeGreaterThan(100);
    expect(tally.failing).toBeGreaterThan(20);
  });
});
