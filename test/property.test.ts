// The readers of property values (src/catalog/property.ts): where each value lives and what
// a value of the wrong shape reads as.
import { describe, expect, it } from 'vitest';
import { maxOpenShiftVersions, packageNames, packageVersion } from '../src/catalog/property.js';

const csvWith = (annotation: string) => ({
  type: 'olm.csv.metadata',
  value: { annotations: { 'olm.properties': annotation } },
});

describe('property readers', () => {
  it("packageVersion: the first olm.package's version, only when it is a string", () => {
    expect(
      packageVersion([
        { type: 'olm.gvk', value: {} },
        { type: 'olm.package', value: { version: '1.2.3' } },
      ]),
    ).toBe('1.2.3');
    expect(packageVersion([{ type: 'olm.package', value: { version: 1.2 } }])).toBeUndefined();
    expect(packageVersion([{ type: 'olm.package', value: null }])).toBeUndefined();
    expect(
      packageVersion([{ type: 'olm.package' }, { type: 'olm.package', value: { version: '2.0.0' } }]),
    ).toBe(undefined);
    expect(packageVersion([])).toBeUndefined();
  });

  it('packageNames: every olm.package with a packageName', () => {
    expect(
      packageNames([
        { type: 'olm.package', value: { packageName: 'a' } },
        { type: 'olm.package', value: { packageName: 7 } },
        { type: 'olm.package.required', value: { packageName: 'c' } },
        { type: 'olm.package', value: { packageName: 'b' } },
      ]),
    ).toEqual(['a', 'b']);
  });

  it("maxOpenShiftVersions: the bundle's own properties and its CSV's olm.properties annotation, as written", () => {
    const own = { type: 'olm.maxOpenShiftVersion', value: '4.18' };
    const read = maxOpenShiftVersions([
      own,
      csvWith(
        JSON.stringify([
          { type: 'olm.maxOpenShiftVersion', value: 4.17 },
          { type: 'other', value: 1 },
        ]),
      ),
    ]);
    expect(read.own).toEqual([own]);
    expect(read.fromCsv).toEqual([4.17]);
    // A broken or non-list annotation declares nothing (validation reports it).
    expect(
      maxOpenShiftVersions([csvWith('[not json'), csvWith('{"type":"olm.maxOpenShiftVersion"}')]),
    ).toEqual({
      own: [],
      fromCsv: [],
    });
    expect(maxOpenShiftVersions([{ type: 'olm.csv.metadata', value: null }])).toEqual({
      own: [],
      fromCsv: [],
    });
  });
});
