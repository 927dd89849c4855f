// The CRD upgrade rules (src/catalog/olm/crd-diff.ts), each with a CRD pair OLM refuses and one it
// applies, plus the changes operator-controller's docs (docs/concepts/crd-upgrade-safety.md)
// and preflight tests (crdupgradesafety_test.go and its testdata) list as safe and unsafe.
import { describe, expect, it } from 'vitest';
import {
  bundleCrds,
  compareKubeAwareVersions,
  diffBundleCrds,
  diffCrd,
  flattenSchema,
  parseCrd,
  type Crd,
  type CrdChange,
} from '../src/catalog/olm/crd-diff.js';

type Obj = Record<string, unknown>;

interface V {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: Obj;
}

/** A v1 CRD manifest; versions default to served, the last one is storage unless said. */
function crdManifest(
  versions: V[],
  extra: { scope?: string; status?: Obj; conversion?: Obj; name?: string } = {},
): Obj {
  const anyStorage = versions.some((v) => v.storage !== undefined);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: extra.name ?? 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope: extra.scope ?? 'Namespaced',
      versions: versions.map((v, i) => ({
        name: v.name,
        served: v.served ?? true,
        storage: anyStorage ? (v.storage ?? false) : i === versions.length - 1,
        ...(v.schema ? { schema: { openAPIV3Schema: v.schema } } : {}),
      })),
      ...(extra.conversion ? { conversion: extra.conversion } : {}),
    },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

/** The openAPIV3Schema of an object with `spec` holding these properties. */
function specSchema(properties: Obj, specExtra: Obj = {}): Obj {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: { type: 'object', properties, ...specExtra },
    },
  };
}

const one = (schema: Obj, extra = {}): Obj => crdManifest([{ name: 'v1', schema }], extra);
const parse = (o: Obj): Crd => parseCrd(o)!;
const diff = (a: Obj, b: Obj): CrdChange[] => diffCrd(parse(a), parse(b));
const unsafe = (a: Obj, b: Obj): CrdChange[] => diff(a, b).filter((c) => !c.safe);
/** From `a` to `b`, one unsafe change: served v1 and v2 disagree at `path`, the message saying `says`. */
function expectOnlyServedIncompatible(a: Obj, b: Obj, path: string, says: string): void {
  const changes = unsafe(a, b);
  expect(changes.map((c) => [c.rule, c.version, c.path])).toEqual([
    ['CRD-SERVED-INCOMPATIBLE', 'v1 -> v2', path],
  ]);
  expect(changes[0]!.message).toContain(says);
}
const rulesOf = (changes: CrdChange[]): string[] => changes.map((c) => c.rule).sort();
const field = (props: Obj): Obj => one(specSchema(props));

describe('CRD-SCOPE-CHANGED', () => {
  it('fails when the scope changes, in either direction', () => {
    const [c] = unsafe(one(specSchema({})), one(specSchema({}), { scope: 'Cluster' }));
    expect(c).toMatchObject({ rule: 'CRD-SCOPE-CHANGED', crd: 'widgets.example.com', safe: false });
    expect(c!.message).toBe('scope changed from "Namespaced" to "Cluster"');
    expect(c!.hint).toContain('Keep `scope: Namespaced`');
    expect(rulesOf(unsafe(one(specSchema({}), { scope: 'Cluster' }), one(specSchema({}))))).toEqual([
      'CRD-SCOPE-CHANGED',
    ]);
  });

  it('passes when the scope stays', () => {
    expect(
      unsafe(one(specSchema({}), { scope: 'Cluster' }), one(specSchema({}), { scope: 'Cluster' })),
    ).toEqual([]);
  });
});

describe('CRD-STORED-VERSION-REMOVED', () => {
  const s = specSchema({ a: { type: 'string' } });

  it("fails when the old bundle's storage version disappears", () => {
    const old = crdManifest([{ name: 'v1alpha1', schema: s }]);
    const next = crdManifest([{ name: 'v1', schema: s }]);
    const changes = unsafe(old, next);
    expect(rulesOf(changes)).toEqual(['CRD-STORED-VERSION-REMOVED']);
    expect(changes[0]).toMatchObject({ version: 'v1alpha1', message: 'stored version "v1alpha1" removed' });
  });

  it('fails for a version the manifest lists in status.storedVersions, though not storage any more', () => {
    const old = crdManifest(
      [
        { name: 'v1alpha1', served: false, storage: false, schema: s },
        { name: 'v1', storage: true, schema: s },
      ],
      { status: { storedVersions: ['v1alpha1', 'v1'] } },
    );
    const next = crdManifest([{ name: 'v1', schema: s }]);
    expect(unsafe(old, next).map((c) => [c.rule, c.version])).toEqual([
      ['CRD-STORED-VERSION-REMOVED', 'v1alpha1'],
    ]);
  });

  it('passes when the old storage version stays listed (served: false, storage moved on)', () => {
    const old = crdManifest([{ name: 'v1alpha1', schema: s }]);
    const next = crdManifest([
      { name: 'v1alpha1', served: false, storage: false, schema: s },
      { name: 'v1', storage: true, schema: s },
    ]);
    expect(unsafe(old, next)).toEqual([]);
    expect(rulesOf(diff(old, next))).toEqual(['CRD-VERSION-ADDED']);
  });
});

describe('CRD-VERSION-REMOVED (classic OLM: a served version is first unserved, then removed)', () => {
  const s = specSchema({ a: { type: 'string' } });

  it('fails when a served version is removed in one step', () => {
    const old = crdManifest([
      { name: 'v1alpha1', storage: false, schema: s },
      { name: 'v1', storage: true, schema: s },
    ]);
    const next = crdManifest([{ name: 'v1', schema: s }]);
    const changes = unsafe(old, next);
    expect(changes.map((c) => [c.rule, c.version])).toEqual([['CRD-VERSION-REMOVED', 'v1alpha1']]);
    expect(changes[0]!.hint).toContain('served: false');
  });

  it('passes when the version was already not served', () => {
    const old = crdManifest([
      { name: 'v1alpha1', served: false, storage: false, schema: s },
      { name: 'v1', storage: true, schema: s },
    ]);
    expect(unsafe(old, crdManifest([{ name: 'v1', schema: s }]))).toEqual([]);
  });
});

describe('CRD-REMOVED', () => {
  const a = parse(one(specSchema({})));
  const b = parse(one(specSchema({}), { name: 'gadgets.example.com' }));

  it('fails when the new bundle no longer ships a CRD the old one had', () => {
    const result = diffBundleCrds(
      new Map([
        [a.name, a],
        [b.name, b],
      ]),
      new Map([[a.name, a]]),
    );
    expect(result.compared).toEqual(['widgets.example.com']);
    expect(result.changes.map((c) => [c.rule, c.crd, c.safe])).toEqual([
      ['CRD-REMOVED', 'gadgets.example.com', false],
    ]);
  });

  it('passes when every CRD is still there; a new CRD is a safe addition', () => {
    const result = diffBundleCrds(
      new Map([[a.name, a]]),
      new Map([
        [a.name, a],
        [b.name, b],
      ]),
    );
    expect(result.changes.map((c) => [c.rule, c.safe])).toEqual([['CRD-ADDED', true]]);
  });
});

describe('CRD-FIELD-REMOVED', () => {
  it('fails when a field goes, reporting the top-most removed field once', () => {
    const old = field({
      keep: { type: 'string' },
      gone: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'integer' } } },
    });
    const changes = unsafe(old, field({ keep: { type: 'string' } }));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      rule: 'CRD-FIELD-REMOVED',
      version: 'v1',
      path: '^.spec.gone',
      message: 'field removed (with 2 nested fields)',
    });
  });

  it('fails for a field removed under an array item', () => {
    const list = (item: Obj) =>
      field({ list: { type: 'array', items: { type: 'object', properties: item } } });
    const changes = unsafe(
      list({ a: { type: 'string' }, b: { type: 'string' } }),
      list({ a: { type: 'string' } }),
    );
    expect(changes.map((c) => c.path)).toEqual(['^.spec.list.items.b']);
  });

  it('passes when fields are only added (an optional field, even with required children)', () => {
    const old = field({ keep: { type: 'string' } });
    const next = field({
      keep: { type: 'string' },
      added: { type: 'object', required: ['x'], properties: { x: { type: 'string' } } },
    });
    expect(unsafe(old, next)).toEqual([]);
    expect(diff(old, next).map((c) => [c.rule, c.path])).toEqual([['CRD-FIELD-ADDED', '^.spec.added']]);
  });
});

describe('CRD-REQUIRED-ADDED', () => {
  const props = { a: { type: 'string' }, b: { type: 'string' } };

  it('fails when an existing field becomes required, or a new required field appears', () => {
    const changes = unsafe(
      one(specSchema(props)),
      one(specSchema({ ...props, c: { type: 'string' } }, { required: ['a', 'c'] })),
    );
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      rule: 'CRD-REQUIRED-ADDED',
      path: '^.spec',
      message: 'new required fields: [a, c]',
    });
    expect(changes[0]!.hint).toContain('`^.spec.a`, `^.spec.c` optional');
  });

  it('passes when a required field becomes optional (safe)', () => {
    const changes = diff(one(specSchema(props, { required: ['a'] })), one(specSchema(props)));
    expect(changes.map((c) => [c.rule, c.safe])).toEqual([['CRD-REQUIRED-REMOVED', true]]);
  });
});

describe('CRD-ENUM', () => {
  const e = (values?: string[]) => field({ mode: { type: 'string', ...(values ? { enum: values } : {}) } });

  it('fails when enum values are removed', () => {
    const [c, ...rest] = unsafe(e(['a', 'b', 'c']), e(['a', 'b']));
    expect(rest).toEqual([]);
    expect(c).toMatchObject({
      rule: 'CRD-ENUM',
      path: '^.spec.mode',
      message: 'allowed enum values removed: ["c"]',
    });
  });

  it('fails when an enum is added to a field that had none', () => {
    expect(unsafe(e(), e(['a'])).map((c) => c.message)).toEqual([
      'enum constraint added when there was none previously: ["a"]',
    ]);
  });

  it('passes when values are only added (OLM v1 allows it)', () => {
    expect(unsafe(e(['a']), e(['a', 'b']))).toEqual([]);
    expect(diff(e(['a']), e(['a', 'b'])).map((c) => [c.rule, c.safe, c.message])).toEqual([
      ['CRD-ENUM', true, 'allowed enum values added: ["b"]'],
    ]);
  });
});

describe('CRD-LIMIT-TIGHTENED', () => {
  const cases: [string, string, number, number][] = [
    // key, base type, old value, tighter value
    ['maximum', 'integer', 10, 5],
    ['maxLength', 'string', 10, 5],
    ['maxItems', 'array', 10, 5],
    ['maxProperties', 'object', 10, 5],
    ['minimum', 'integer', 1, 2],
    ['minLength', 'string', 1, 2],
    ['minItems', 'array', 1, 2],
    ['minProperties', 'object', 1, 2],
  ];
  const f = (key: string, type: string, value?: number) =>
    field({
      x: {
        type,
        ...(type === 'array' ? { items: { type: 'string' } } : {}),
        ...(value === undefined ? {} : { [key]: value }),
      },
    });

  for (const [key, type, before, tighter] of cases) {
    it(`${key}: fails when tightened or added, passes when loosened or removed`, () => {
      expect(unsafe(f(key, type, before), f(key, type, tighter)).map((c) => [c.rule, c.path])).toEqual([
        ['CRD-LIMIT-TIGHTENED', '^.spec.x'],
      ]);
      expect(unsafe(f(key, type), f(key, type, before)).map((c) => c.message)).toEqual([
        `${key} constraint added when there was none previously: ${before}`,
      ]);
      // The opposite direction is a loosening, and so is dropping the limit.
      expect(unsafe(f(key, type, tighter), f(key, type, before))).toEqual([]);
      expect(diff(f(key, type, before), f(key, type)).map((c) => [c.rule, c.safe])).toEqual([
        ['CRD-LIMIT-LOOSENED', true],
      ]);
    });
  }
});

describe('CRD-DEFAULT-CHANGED', () => {
  const d = (value?: unknown) =>
    field({ x: { type: 'object', ...(value === undefined ? {} : { default: value }) } });

  it('fails when a default is added, changed or removed', () => {
    expect(unsafe(d(), d({ a: 1 })).map((c) => c.message)).toEqual([
      'default added when there was none previously: {"a":1}',
    ]);
    expect(unsafe(d({ a: 1 }), d({ a: 2 })).map((c) => c.message)).toEqual([
      'default value changed: {"a":1} -> {"a":2}',
    ]);
    expect(unsafe(d({ a: 1 }), d()).map((c) => [c.rule, c.message])).toEqual([
      ['CRD-DEFAULT-CHANGED', 'default value removed: {"a":1}'],
    ]);
  });

  it('passes when the default is the same value (key order does not matter)', () => {
    expect(unsafe(d({ a: 1, b: [1, 2] }), d({ b: [1, 2], a: 1 }))).toEqual([]);
  });
});

describe('CRD-TYPE-CHANGED', () => {
  it('fails when a type changes', () => {
    const [c] = unsafe(field({ x: { type: 'string' } }), field({ x: { type: 'integer' } }));
    expect(c).toMatchObject({ rule: 'CRD-TYPE-CHANGED', message: 'type changed: "string" -> "integer"' });
  });

  it('passes when it stays', () => {
    expect(unsafe(field({ x: { type: 'string' } }), field({ x: { type: 'string' } }))).toEqual([]);
  });
});

describe('CRD-PATTERN and CRD-NULLABLE (crdify validations OLM v1 enforces)', () => {
  const p = (pattern?: string) => field({ x: { type: 'string', ...(pattern ? { pattern } : {}) } });
  const n = (nullable?: boolean) =>
    field({ x: { type: 'string', ...(nullable === undefined ? {} : { nullable }) } });

  it('fails when a pattern is added, changed or removed', () => {
    expect(unsafe(p(), p('^a$')).map((c) => c.message)).toEqual(['pattern added: "^a$"']);
    expect(unsafe(p('^a$'), p('^b$')).map((c) => c.message)).toEqual(['pattern changed: "^a$" -> "^b$"']);
    expect(unsafe(p('^a$'), p()).map((c) => c.rule)).toEqual(['CRD-PATTERN']);
  });

  it('passes with the same pattern', () => {
    expect(unsafe(p('^a$'), p('^a$'))).toEqual([]);
  });

  it('fails when nullable is added or removed; false equals absent', () => {
    expect(unsafe(n(), n(true)).map((c) => c.message)).toEqual(['nullable added: false -> true']);
    expect(unsafe(n(true), n(false)).map((c) => c.rule)).toEqual(['CRD-NULLABLE']);
    expect(unsafe(n(false), n())).toEqual([]);
  });
});

describe('CRD-ONEOF', () => {
  const o = (schemas?: Obj[]) => field({ x: { ...(schemas ? { oneOf: schemas } : {}) } });

  it('fails when a oneOf is added, or schemas are removed from or added to it', () => {
    expect(unsafe(o(), o([{ required: ['a'] }, { required: ['b'] }])).map((c) => c.rule)).toContain(
      'CRD-ONEOF',
    );
    expect(
      unsafe(o([{ required: ['a'] }, { required: ['b'] }]), o([{ required: ['a'] }])).map((c) => c.message),
    ).toContain('allowed oneOf schemas removed (1)');
    expect(
      unsafe(o([{ required: ['a'] }]), o([{ required: ['a'] }, { required: ['b'] }])).map((c) => c.message),
    ).toContain('allowed oneOf schemas added (1)');
  });

  it('passes when only the descriptions of oneOf schemas change', () => {
    const before = o([{ required: ['a'], description: 'one' }]);
    const after = o([{ required: ['a'], description: 'two' }]);
    expect(unsafe(before, after)).toEqual([]);
  });
});

describe('CRD-UNHANDLED (OLM v1 fails closed on changes no validation handles)', () => {
  it('fails on a format change (operator-controller crd-unhandled-old/new)', () => {
    const [c, ...rest] = unsafe(
      field({ field: { type: 'string' } }),
      field({ field: { type: 'string', format: 'email' } }),
    );
    expect(rest).toEqual([]);
    expect(c).toMatchObject({ rule: 'CRD-UNHANDLED', path: '^.spec.field' });
    expect(c!.message).toBe('unhandled changes found (format <empty> -> "email")');
  });

  it('fails on x-kubernetes-* changes', () => {
    const list = (extra: Obj) => field({ l: { type: 'array', items: { type: 'string' }, ...extra } });
    expect(unsafe(list({}), list({ 'x-kubernetes-list-type': 'set' })).map((c) => c.rule)).toEqual([
      'CRD-UNHANDLED',
    ]);
  });

  it('passes on description changes (operator-controller crd-description-changed), at any depth', () => {
    const s = (d: string) => field({ x: { type: 'string', description: d } });
    expect(unsafe(s('one'), s('two'))).toEqual([]);
    expect(diff(s('one'), s('two')).map((c) => c.rule)).toEqual(['CRD-DESCRIPTION-CHANGED']);
  });
});

describe('CRD-SERVED-INCOMPATIBLE (served versions of the new CRD, without a conversion webhook)', () => {
  // operator-controller testdata crd-conversion-webhook-old.json, crd-conversion-no-webhook.json
  const foo = (values: string[], extra: Obj = {}) =>
    specSchema({ foobarbaz: { type: 'string', enum: values }, ...extra });
  const old = crdManifest([{ name: 'v1', storage: false, schema: foo(['foo', 'bar', 'baz']) }]);
  const noWebhook = crdManifest([
    { name: 'v2', storage: false, schema: foo(['bark', 'woof']) },
    { name: 'v1', storage: false, schema: foo(['foo', 'bar', 'baz']) },
  ]);

  it('fails when a new served version drops enum values and nothing converts', () => {
    expectOnlyServedIncompatible(
      old,
      noWebhook,
      '^.spec.foobarbaz',
      'CRD-ENUM: allowed enum values removed: ["bar", "baz", "foo"]',
    );
  });

  it('passes with a webhook conversion strategy', () => {
    const webhook = {
      ...noWebhook,
      spec: { ...(noWebhook.spec as Obj), conversion: { strategy: 'Webhook' } },
    };
    expect(unsafe(old, webhook)).toEqual([]);
  });

  it('passes when the CSV declares a ConversionWebhook for the CRD (OLM adds the webhook)', () => {
    const csv = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name: 'x.v1' },
      spec: { webhookdefinitions: [{ type: 'ConversionWebhook', conversionCRDs: ['widgets.example.com'] }] },
    };
    const crds = bundleCrds([JSON.stringify(csv), JSON.stringify(noWebhook)]).crds;
    expect(crds.get('widgets.example.com')!.webhookConversion).toBe(true);
    expect(diffCrd(parse(old), crds.get('widgets.example.com')!).filter((c) => !c.safe)).toEqual([]);
  });

  it('ignores issues the old CRD already had, reports only a new one (crd-conversion-no-webhook-extra-issue)', () => {
    expect(unsafe(noWebhook, noWebhook)).toEqual([]);
    const extra = crdManifest([
      { name: 'v2', storage: false, schema: foo(['bark', 'woof'], { extraField: { type: 'string' } }) },
      { name: 'v1', storage: false, schema: foo(['foo', 'bar', 'baz'], { extraField: { type: 'boolean' } }) },
    ]);
    expectOnlyServedIncompatible(
      noWebhook,
      extra,
      '^.spec.extraField',
      'type changed: "boolean" -> "string"',
    );
  });
});

describe("operator-controller's documented changes (docs/concepts/crd-upgrade-safety.md)", () => {
  // The doc's starting CRD.
  const base = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: { type: 'object' },
    status: { type: 'object' },
    pollInterval: { type: 'string' },
  };
  const schema = (props: Obj, extra: Obj = {}) => ({ type: 'object', properties: props, ...extra });
  const start = crdManifest([{ name: 'v1alpha1', schema: schema(base) }], {
    name: 'example.test.example.com',
  });
  const { pollInterval: _gone, ...withoutPoll } = base;

  it('unsafe: scope, stored version, field removed, required added', () => {
    const scope = crdManifest([{ name: 'v1alpha1', schema: schema(base) }], {
      name: 'example.test.example.com',
      scope: 'Cluster',
    });
    expect(rulesOf(unsafe(start, scope))).toEqual(['CRD-SCOPE-CHANGED']);
    const stored = crdManifest([{ name: 'v1alpha2', schema: schema(base) }], {
      name: 'example.test.example.com',
    });
    expect(rulesOf(unsafe(start, stored))).toEqual(['CRD-STORED-VERSION-REMOVED']);
    const removed = crdManifest([{ name: 'v1alpha1', schema: schema(withoutPoll) }], {
      name: 'example.test.example.com',
    });
    expect(unsafe(start, removed).map((c) => [c.rule, c.path])).toEqual([
      ['CRD-FIELD-REMOVED', '^.pollInterval'],
    ]);
    const required = crdManifest(
      [{ name: 'v1alpha1', schema: schema(base, { required: ['pollInterval'] }) }],
      {
        name: 'example.test.example.com',
      },
    );
    expect(unsafe(start, required).map((c) => [c.rule, c.path, c.message])).toEqual([
      ['CRD-REQUIRED-ADDED', '^', 'new required fields: [pollInterval]'],
    ]);
  });

  it('safe: a new version added with no change to the existing ones', () => {
    const added = crdManifest(
      [
        { name: 'v1alpha1', storage: true, schema: schema(base) },
        { name: 'v1alpha2', storage: false, schema: schema(base) },
      ],
      { name: 'example.test.example.com' },
    );
    expect(unsafe(start, added)).toEqual([]);
    expect(rulesOf(diff(start, added))).toEqual(['CRD-VERSION-ADDED']);
  });
});

describe("operator-controller's preflight testdata", () => {
  // old-crd.json, trimmed: v1 and v2 served, v2 storage, both stored.
  const props = (extra: Obj = {}) => ({
    removedField: { type: 'integer' },
    enum: { type: 'string', enum: ['a', 'b', 'c'] },
    minMaxValue: { type: 'integer' },
    required: { type: 'integer' },
    minMaxItems: { type: 'array', items: { type: 'string' } },
    minMaxLength: { type: 'string' },
    defaultVal: { type: 'string' },
    requiredVal: { type: 'string' },
    ...extra,
  });
  const schema = (p: Obj, top: Obj = {}) => ({
    type: 'object',
    properties: { spec: { type: 'object', properties: p } },
    required: ['requiredVal'],
    ...top,
  });
  const old = crdManifest(
    [
      { name: 'v1', storage: false, schema: schema(props()) },
      { name: 'v2', storage: true, schema: schema(props()) },
    ],
    { scope: 'Cluster', status: { storedVersions: ['v1', 'v2'] } },
  );

  it('crd-invalid-upgrade.json: every validation fires (scope, stored version, enum, required, eight limits, default)', () => {
    const invalid = crdManifest(
      [
        {
          name: 'v2',
          storage: true,
          schema: schema(
            props({
              enum: { type: 'string', enum: ['a', 'b'] },
              minMaxValue: { type: 'integer', minimum: 2, maximum: 3 },
              minMaxItems: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string' } },
              minMaxLength: { type: 'string', minLength: 1, maxLength: 10 },
              defaultVal: { type: 'string', default: 'foo' },
            }),
            { maxProperties: 20, minProperties: 1, required: ['requiredVal', 'requiredAdded'] },
          ),
        },
      ],
      { scope: 'Namespaced' },
    );
    const changes = unsafe(old, invalid);
    expect(new Set(changes.map((c) => c.rule))).toEqual(
      new Set([
        'CRD-SCOPE-CHANGED',
        'CRD-STORED-VERSION-REMOVED',
        'CRD-ENUM',
        'CRD-REQUIRED-ADDED',
        'CRD-LIMIT-TIGHTENED',
        'CRD-DEFAULT-CHANGED',
      ]),
    );
    const limits = changes
      .filter((c) => c.rule === 'CRD-LIMIT-TIGHTENED')
      .map((c) => c.message.split(' ')[0]);
    expect(limits.sort()).toEqual(
      [
        'maxItems',
        'maxLength',
        'maxProperties',
        'maximum',
        'minItems',
        'minLength',
        'minProperties',
        'minimum',
      ].sort(),
    );
  });

  it('crd-field-removed.json: removing a field from an existing version fails', () => {
    const { removedField: _r, ...rest } = props();
    const next = crdManifest(
      [
        { name: 'v1', storage: true, schema: schema(props()) },
        { name: 'v2', storage: false, schema: schema(rest) },
      ],
      { scope: 'Cluster' },
    );
    expect(
      unsafe(old, next)
        .filter((c) => c.rule === 'CRD-FIELD-REMOVED')
        .map((c) => [c.version, c.path]),
    ).toEqual([['v2', '^.spec.removedField']]);
  });

  it('crd-valid-upgrade.json: enum value added, a third version, storage moved: safe', () => {
    const wider = props({ enum: { type: 'string', enum: ['a', 'b', 'c', 'adding-enum-is-allowed'] } });
    const next = crdManifest(
      [
        { name: 'v1', storage: false, schema: schema(wider) },
        { name: 'v2', storage: false, schema: schema(wider) },
        { name: 'v3', storage: true, schema: schema(wider) },
      ],
      { scope: 'Cluster' },
    );
    expect(unsafe(old, next)).toEqual([]);
  });

  it('crd-complex-breaking-changes: type removed, nullable added and oneOf added all fail', () => {
    const before = field({ port: { type: 'object', properties: { n: { type: 'integer' } } } });
    const after = field({
      port: { nullable: true, oneOf: [{ required: ['n'] }], properties: { n: { type: 'integer' } } },
    });
    expect(rulesOf(unsafe(before, after))).toEqual(['CRD-NULLABLE', 'CRD-ONEOF', 'CRD-TYPE-CHANGED']);
    expect(unsafe(before, after).find((c) => c.rule === 'CRD-TYPE-CHANGED')!.message).toBe(
      'type changed: "object" -> ""',
    );
  });
});

describe('parsing and walking', () => {
  it('reads a v1beta1 CRD: the top-level validation applies to every version, scope defaults to Namespaced', () => {
    const crd = parse({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'olds.example.com' },
      spec: {
        group: 'example.com',
        version: 'v1',
        validation: { openAPIV3Schema: specSchema({ a: { type: 'string' } }) },
      },
    });
    expect(crd.scope).toBe('Namespaced');
    expect(crd.versions.map((v) => [v.name, v.served, v.storage, v.schema !== undefined])).toEqual([
      ['v1', true, true, true],
    ]);
    expect(parseCrd({ apiVersion: 'v1', kind: 'ConfigMap' })).toBeUndefined();
  });

  it('compares an old v1beta1 manifest with its v1 successor by version name', () => {
    const s = specSchema({ a: { type: 'string' } });
    const old = {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', version: 'v1', validation: { openAPIV3Schema: s } },
    };
    expect(unsafe(old, one(s))).toEqual([]);
    expect(unsafe(old, one(specSchema({})))).toMatchObject([{ rule: 'CRD-FIELD-REMOVED', path: '^.spec.a' }]);
  });

  it("walks schemas with crdify's simple locations", () => {
    const paths = [
      ...flattenSchema({
        type: 'object',
        properties: {
          list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
          map: { type: 'object', additionalProperties: { type: 'string' } },
          either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        },
      }).keys(),
    ];
    expect(paths.sort()).toEqual(
      [
        '^',
        '^.either',
        '^.either.anyOf[0]',
        '^.either.anyOf[1]',
        '^.list',
        '^.list.items',
        '^.list.items.a',
        '^.map',
        '^.map.additionalProperties',
      ].sort(),
    );
  });

  it('orders versions as Kubernetes does: alpha < beta < GA, then by number; others below', () => {
    const sorted = ['v2', 'v1', 'v1beta1', 'v1alpha2', 'v1alpha1', 'v2beta1', 'foo'].sort(
      compareKubeAwareVersions,
    );
    expect(sorted).toEqual(['foo', 'v1alpha1', 'v1alpha2', 'v1beta1', 'v2beta1', 'v1', 'v2']);
  });
});

describe('fields Go holds as pointers', () => {
  it('additionalProperties: false added is an unhandled change; false and absent are equal elsewhere', () => {
    const m = (extra: Obj) => field({ m: { type: 'object', ...extra } });
    expect(unsafe(m({}), m({ additionalProperties: false })).map((c) => c.rule)).toEqual(['CRD-UNHANDLED']);
    expect(unsafe(m({ additionalProperties: false }), m({ additionalProperties: false }))).toEqual([]);
    expect(unsafe(m({}), m({ uniqueItems: false }))).toEqual([]);
  });
});
