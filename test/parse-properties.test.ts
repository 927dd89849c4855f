// parseProperties, the one reader of property values (src/catalog/property.ts), on a real
// catalog as opm loads it and on values of the wrong shape.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../src/catalog/fbc/load.js';
import { DirectorySource } from '../src/catalog/fbc/source.js';
import {
  bundleObjectTexts,
  maxOpenShiftVersions,
  packageVersion,
  parseProperties,
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CSV_METADATA,
  PROPERTY_GVK,
  PROPERTY_PACKAGE,
} from '../src/catalog/property.js';
import { SHARED_DATA } from './helpers/oracle.js';

const v421 = join(SHARED_DATA, 'real-catalogs', 'community-operators-prod', 'catalogs', 'v4.21');

describe('parseProperties', () => {
  it('sorts every property of a real catalog into its typed list, in order, with nothing malformed', async () => {
    const { config } = await loadCatalog(new DirectorySource(v421));
    expect(config.bundles.length).toBeGreaterThan(500);
    for (const b of config.bundles) {
      const parsed = parseProperties(b.properties);
      const ofType = (type: string): unknown[] =>
        b.properties.filter((p) => p.type === type).map((p) => p.value);
      expect(parsed.malformed).toEqual([]);
      expect(parsed.packages).toEqual(ofType(PROPERTY_PACKAGE));
      expect(parsed.gvks).toEqual(ofType(PROPERTY_GVK));
      expect(parsed.csvMetadatas).toEqual(ofType(PROPERTY_CSV_METADATA));
      expect(parsed.bundleObjects).toEqual(ofType(PROPERTY_BUNDLE_OBJECT));
      const listed =
        parsed.packages.length +
        parsed.packagesRequired.length +
        parsed.gvks.length +
        parsed.gvksRequired.length +
        parsed.bundleObjects.length +
        parsed.csvMetadatas.length +
        parsed.others.length;
      expect(listed).toBe(b.properties.length);
      expect(parsed.packages[0]?.packageName).toBe(b.package);
      expect(parsed.packages[0]?.version).toBe(packageVersion(b.properties));
    }
  });

  it('sets aside a value of the wrong shape with its place, and keeps other types as written', () => {
    const properties = [
      { type: PROPERTY_PACKAGE, value: { packageName: 'etcd', version: 1 } },
      { type: PROPERTY_GVK, value: [] },
      { type: 'olm.maxOpenShiftVersion', value: '4.18' },
      { type: PROPERTY_PACKAGE, value: { packageName: 'etcd', version: '0.9.4' } },
      { type: PROPERTY_BUNDLE_OBJECT, value: { data: 42 } },
      { type: PROPERTY_CSV_METADATA, value: ['not', 'a', 'map'] },
    ];
    const parsed = parseProperties(properties);
    expect(parsed.malformed.map((m) => m.index)).toEqual([0, 1, 4, 5]);
    expect(parsed.packages).toEqual([{ packageName: 'etcd', version: '0.9.4' }]);
    expect(parsed.others).toEqual([properties[2]]);
    expect(bundleObjectTexts(properties)).toEqual([]);
    const manifest = '{"kind":"ConfigMap"}';
    const withObject = [
      ...properties,
      { type: PROPERTY_BUNDLE_OBJECT, value: { data: Buffer.from(manifest).toString('base64') } },
    ];
    expect(bundleObjectTexts(withObject)).toEqual([manifest]);
    expect(maxOpenShiftVersions(properties).fromCsv).toEqual([]);
  });

  it('reads olm.maxOpenShiftVersion from the CSV metadata annotation through it', () => {
    const properties = [
      {
        type: PROPERTY_CSV_METADATA,
        value: { annotations: { 'olm.properties': '[{"type":"olm.maxOpenShiftVersion","value":"4.16"}]' } },
      },
    ];
    expect(parseProperties(properties).csvMetadatas).toHaveLength(1);
    expect(maxOpenShiftVersions(properties).fromCsv).toEqual(['4.16']);
  });
});
