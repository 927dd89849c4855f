// Property values that `validate` only type-checks are checked by the fast reader as it reads
// them, and not built (fastyaml.ts, CheckedValues). Against building every value: the same
// documents, problems and lines, and the placeholder exactly where the built value passes
// Go's type check. On every real catalog file, and on mutants aimed at the check (wrong types,
// other spellings of fields, of `type` and `value`, another schema, repeated keys).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { decodeFile, lineOf, type LineTable } from '../src/catalog/fbc/decode.js';
import { GO_PROPERTY_VALUES } from '../src/catalog/fbc/declcfg.js';
import type { CheckedValues } from '../src/catalog/fbc/fastyaml.js';
import { checkGo, goRaw, type GoType } from '../src/catalog/go/gojson.js';
import { SHARED_DATA } from './helpers/oracle.js';

const PLACEHOLDER = Object.freeze({ '<checked>': true });

function shape(type: string): GoType | undefined {
  if (type === 'olm.package' || type === 'olm.bundle.object') return undefined;
  return GO_PROPERTY_VALUES[type] ?? goRaw;
}

const CHECKED: CheckedValues = { schema: 'olm.bundle', shape, placeholder: PLACEHOLDER };

type Obj = Record<string, unknown>;

/** Lines of the collections down to depth 5 in both readings, side by side; none inside a placeholder. */
function linePairs(
  built: unknown,
  builtLines: LineTable | undefined,
  checked: unknown,
  checkedLines: LineTable | undefined,
  depth = 1,
  out: [number | undefined, number | undefined][] = [],
): [number | undefined, number | undefined][] {
  if (checked === PLACEHOLDER || typeof built !== 'object' || built === null || depth > 5) return out;
  out.push([lineOf(builtLines, built), lineOf(checkedLines, checked)]);
  for (const key of Object.keys(built))
    linePairs((built as Obj)[key], builtLines, (checked as Obj)[key], checkedLines, depth + 1, out);
  return out;
}

interface Tally {
  /** Values replaced by the placeholder. */
  checked: number;
  /** Values that fail Go's check, built. */
  failing: number;
}

/** Decode with and without CHECKED; everything must agree. */
function expectSameAsBuilt(bytes: Buffer, name: string, tally: Tally): void {
  const built = decodeFile(bytes);
  const checked = decodeFile(bytes, { checkedValues: CHECKED });
  expect(checked.problems, name).toEqual(built.problems);
  expect(checked.notes, name).toEqual(built.notes);
  expect(checked.values.length, name).toBe(built.values.length);
  built.values.forEach((b, i) => {
    const c = checked.values[i]!;
    expect([c.line, c.column], name).toEqual([b.line, b.column]);
    const pairs = linePairs(b.value, b.lines, c.value, c.lines);
    if (pairs.some(([x, y]) => x !== y)) expect(pairs, name).toEqual(pairs.map(([x]) => [x, x]));
    // Put the built values back where the placeholder stands: then both are equal.
    const blob = b.value as Obj | null;
    const items = (c.value as Obj | null)?.properties;
    let restored = c.value;
    if (Array.isArray(items) && blob !== null) {
      const builtItems = blob.properties as Obj[];
      restored = {
        ...(c.value as Obj),
        properties: items.map((item: Obj, j) => {
          const builtItem = builtItems[j]!;
          const type = builtItem.type as string;
          const goType = typeof type === 'string' ? shape(type) : undefined;
          const passes = goType !== undefined && checkGo(builtItem.value, goType) === undefined;
          if (item.value === PLACEHOLDER) {
            // The whole point: a placeholder only where Go's check passes, and only in bundles
            // (other blobs keep their property values).
            expect(passes, `${name}: property ${j} (${type})`).toBe(true);
            expect(blob.schema, name).toBe('olm.bundle');
            tally.checked++;
            return { ...item, value: builtItem.value };
          }
          if (goType !== undefined && !passes && blob.schema === 'olm.bundle') tally.failing++;
          return item;
        }),
      };
    }
    if (!isDeepStrictEqual(restored, b.value)) expect(restored, name).toEqual(b.value);
  });
}

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
