// opm's `--migrate-level bundle-object-to-csv-metadata` (alpha/action/migrations): a
// bundle's `olm.bundle.object` properties are dropped and an `olm.csv.metadata` property
// built from its CSV is appended, encoded as Go encodes property.CSVMetadata.
import { goStringCompare } from '../go/gostrings.js';
import { csvOfBundle } from './bundle-object.js';
import { goJsonEncode, RawJson } from '../go/gojsonencode.js';
import type { JsonObject } from './write.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from '../property.js';

type GoT = 'string' | 'bool' | 'int' | 'raw' | 'stringMap' | { struct: Field[] } | { slice: GoT };
type Field = [name: string, type: GoT, omitempty: boolean];

const descriptor: GoT = {
  struct: [
    ['path', 'string', false],
    ['displayName', 'string', true],
    ['description', 'string', true],
    ['x-descriptors', { slice: 'string' }, true],
    ['value', 'raw', true],
  ],
};
const descriptorLists: Field[] = [
  [
    'resources',
    {
      slice: {
        struct: [
          ['name', 'string', false],
          ['kind', 'string', false],
          ['version', 'string', false],
        ],
      },
    },
    true,
  ],
  ['statusDescriptors', { slice: descriptor }, true],
  ['specDescriptors', { slice: descriptor }, true],
  ['actionDescriptors', { slice: descriptor }, true],
];
const crdDescription: GoT = {
  struct: [
    ['name', 'string', false],
    ['version', 'string', false],
    ['kind', 'string', false],
    ['displayName', 'string', true],
    ['description', 'string', true],
    ...descriptorLists,
  ],
};
const apiServiceDescription: GoT = {
  struct: [
    ['name', 'string', false],
    ['group', 'string', false],
    ['version', 'string', false],
    ['kind', 'string', false],
    ['deploymentName', 'string', true],
    ['containerPort', 'int', true],
    ['displayName', 'string', true],
    ['description', 'string', true],
    ...descriptorLists,
  ],
};
const appLink: GoT = {
  struct: [
    ['name', 'string', true],
    ['url', 'string', true],
  ],
};

/** property.CSVMetadata, field by field, with the CSV path each value comes from. */
const CSV_METADATA: [Field, (csv: JsonObject) => unknown][] = [
  [['annotations', 'stringMap', true], (c) => obj(c.metadata).annotations],
  [
    [
      'apiServiceDefinitions',
      {
        struct: [
          ['owned', { slice: apiServiceDescription }, true],
          ['required', { slice: apiServiceDescription }, true],
        ],
      },
      true,
    ],
    (c) => obj(c.spec).apiservicedefinitions,
  ],
  [
    [
      'crdDescriptions',
      {
        struct: [
          ['owned', { slice: crdDescription }, true],
          ['required', { slice: crdDescription }, true],
        ],
      },
      true,
    ],
    (c) => obj(c.spec).customresourcedefinitions,
  ],
  [['description', 'string', true], (c) => obj(c.spec).description],
  [['displayName', 'string', true], (c) => obj(c.spec).displayName],
  [
    [
      'installModes',
      {
        slice: {
          struct: [
            ['type', 'string', false],
            ['supported', 'bool', false],
          ],
        },
      },
      true,
    ],
    (c) => obj(c.spec).installModes,
  ],
  [['keywords', { slice: 'string' }, true], (c) => obj(c.spec).keywords],
  [['labels', 'stringMap', true], (c) => obj(c.metadata).labels],
  [['links', { slice: appLink }, true], (c) => obj(c.spec).links],
  [
    [
      'maintainers',
      {
        slice: {
          struct: [
            ['name', 'string', true],
            ['email', 'string', true],
          ],
        },
      },
      true,
    ],
    (c) => obj(c.spec).maintainers,
  ],
  [['maturity', 'string', true], (c) => obj(c.spec).maturity],
  [['minKubeVersion', 'string', true], (c) => obj(c.spec).minKubeVersion],
  [
    [
      'nativeAPIs',
      {
        slice: {
          struct: [
            ['group', 'string', false],
            ['version', 'string', false],
            ['kind', 'string', false],
          ],
        },
      },
      true,
    ],
    (c) => obj(c.spec).nativeAPIs,
  ],
  [['provider', appLink, true], (c) => obj(c.spec).provider],
];

function obj(v: unknown): JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};
}

/** encoding/json field lookup: exact name first, then any case. */
function field(o: JsonObject, name: string): unknown {
  if (name in o) return o[name];
  const k = Object.keys(o).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : o[k];
}

/** Go's decode-then-encode of a value of type `t`; undefined when omitempty drops it. */
function encode(v: unknown, t: GoT, omitempty: boolean): unknown {
  if (t === 'string') {
    const s = typeof v === 'string' ? v : '';
    return omitempty && s === '' ? undefined : s;
  }
  if (t === 'bool') {
    const b = v === true;
    return omitempty && !b ? undefined : b;
  }
  if (t === 'int') {
    const n = typeof v === 'number' ? Math.trunc(v) : 0;
    return omitempty && n === 0 ? undefined : n;
  }
  if (t === 'raw') return v === undefined || (omitempty && v === null) ? undefined : v;
  if (t === 'stringMap') {
    const m = obj(v);
    const keys = Object.keys(m).sort(goStringCompare);
    if (keys.length === 0) return omitempty ? undefined : Array.isArray(v) || v === undefined ? null : {};
    const entries = keys.map((k) => [k, typeof m[k] === 'string' ? m[k] : ''] as const);
    // JavaScript objects put integer-like keys first; Go sorts all keys bytewise.
    if (keys.some((k) => /^(0|[1-9]\d*)$/.test(k)))
      return new RawJson(goJsonEncode(Object.fromEntries(entries), { sortKeys: true, escapeHtml: false }));
    return Object.fromEntries(entries);
  }
  if ('slice' in t) {
    const list = Array.isArray(v) ? v : [];
    if (list.length === 0) return omitempty ? undefined : null;
    return list.map((x) => encode(x, t.slice, false));
  }
  // Structs are never empty for omitempty.
  const o = obj(v);
  const out: JsonObject = {};
  for (const [name, ft, omit] of t.struct) {
    const x = encode(field(o, name), ft, omit);
    if (x !== undefined) out[name] = x;
  }
  return out;
}

/** property.MustBuildCSVMetadata of a CSV. */
export function csvMetadata(csv: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [[name, t, omit], from] of CSV_METADATA) {
    const x = encode(from(csv), t, omit);
    if (x !== undefined) out[name] = x;
  }
  return out;
}

/** bundleObjectToCSVMetadata for one bundle blob (returned unchanged when it does not apply). */
export function migrateBundleObjectToCsvMetadata(blob: JsonObject): JsonObject {
  const props = Array.isArray(blob.properties) ? (blob.properties as JsonObject[]) : [];
  const csv = csvOfBundle(blob);
  if (!blob.image || !csv || props.some((p) => p.type === PROPERTY_CSV_METADATA)) return blob;
  return {
    ...blob,
    properties: [
      ...props.filter((p) => p.type !== PROPERTY_BUNDLE_OBJECT),
      { type: PROPERTY_CSV_METADATA, value: csvMetadata(csv) },
    ],
  };
}
