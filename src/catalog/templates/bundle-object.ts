// Reading a rendered `olm.bundle` blob: the object opm's template writers emit for it, and
// the CSV among its `olm.bundle.object` properties. Apart from index.ts, which renders
// with them, so that migrate.ts can use them without importing the renderer back.
import { decodeFile } from '../fbc/decode.js';
import type { BundleObject } from './semver.js';
import type { JsonObject } from './write.js';
import { PROPERTY_BUNDLE_OBJECT, SCHEMA_BUNDLE } from '../property.js';

/** A field by name, or by a case-insensitive match as Go's encoding/json finds it. */
export const fieldOf = (o: JsonObject, name: string): unknown => {
  if (name in o) return o[name];
  const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : o[key];
};
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A rendered `olm.bundle` blob as declcfg.Bundle writes it (struct field order). */
export function bundleObject(blob: JsonObject): BundleObject {
  const props = fieldOf(blob, 'properties');
  const related = fieldOf(blob, 'relatedImages');
  const name = str(fieldOf(blob, 'name'));
  const pkg = str(fieldOf(blob, 'package'));
  return {
    schema: SCHEMA_BUNDLE,
    package: pkg,
    name,
    value: {
      schema: str(fieldOf(blob, 'schema')) || SCHEMA_BUNDLE,
      ...(name ? { name } : {}),
      ...(pkg ? { package: pkg } : {}),
      image: str(fieldOf(blob, 'image')),
      ...(Array.isArray(props) && props.length > 0
        ? {
            properties: props.map((p: JsonObject) => ({
              type: str(fieldOf(p, 'type')),
              value: fieldOf(p, 'value') ?? null,
            })),
          }
        : {}),
      ...(Array.isArray(related) && related.length > 0
        ? {
            relatedImages: related.map((r: JsonObject) => ({
              name: str(fieldOf(r, 'name')),
              image: str(fieldOf(r, 'image')),
            })),
          }
        : {}),
    },
  };
}

/** The CSV among a bundle's `olm.bundle.object` properties (what opm keeps as CsvJSON). */
export function csvOfBundle(blob: JsonObject): JsonObject | undefined {
  const props = fieldOf(blob, 'properties');
  if (!Array.isArray(props)) return undefined;
  for (const p of props as JsonObject[]) {
    if (fieldOf(p, 'type') !== PROPERTY_BUNDLE_OBJECT) continue;
    const data = fieldOf((fieldOf(p, 'value') ?? {}) as JsonObject, 'data');
    if (typeof data !== 'string') continue;
    const decoded = decodeFile(Buffer.from(data, 'base64')).values[0]?.value as JsonObject | undefined;
    if (decoded && typeof decoded === 'object' && decoded.kind === 'ClusterServiceVersion') return decoded;
  }
  return undefined;
}
