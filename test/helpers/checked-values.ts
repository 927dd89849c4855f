// What `decodeFile` gives with property values checked as read (CheckedValues) against
// building every value: the same documents, problems and lines, and the placeholder exactly
// where the built value passes Go's type check (test/checked-values*.test.ts).
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { decodeFile, lineOf, type LineTable } from '../../src/catalog/fbc/decode.js';
import { GO_PROPERTY_VALUES } from '../../src/catalog/fbc/declcfg.js';
import type { CheckedValues } from '../../src/catalog/fbc/fast/fastyaml.js';
import { checkGo, goRaw, type GoType } from '../../src/catalog/go/gojson.js';

export const PLACEHOLDER = Object.freeze({ '<checked>': true });

function shape(type: string): GoType | undefined {
  if (type === 'olm.package' || type === 'olm.bundle.object') return undefined;
  return GO_PROPERTY_VALUES[type] ?? goRaw;
}

export const CHECKED: CheckedValues = { schema: 'olm.bundle', shape, placeholder: PLACEHOLDER };

export type Obj = Record<string, unknown>;

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

export interface Tally {
  /** Values replaced by the placeholder. */
  checked: number;
  /** Values that fail Go's check, built. */
  failing: number;
}

/** Decode with and without CHECKED; everything must agree. */
export function expectSameAsBuilt(bytes: Buffer, name: string, tally: Tally): void {
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
