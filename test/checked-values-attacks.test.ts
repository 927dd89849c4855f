// Hostile property values against the check made as they are read (fastyaml.ts,
// CheckedValues): a pull request writes the catalog, and `catalog-bot validate` must report
// exactly what building every value reports. Each case below is read both ways and must agree
// (helpers/checked-values.ts); the whole set is then validated both ways as a catalog. Also:
// reading time stays in proportion to the text for what the check and the fast reader do.
import { describe, expect, it } from 'vitest';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import { GO_PROPERTY_VALUES } from '../src/catalog/fbc/declcfg.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { CHECKED, expectSameAsBuilt, PLACEHOLDER, type Obj, type Tally } from './helpers/checked-values.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const BUNDLE_HEAD = 'schema: olm.bundle\nname: a.v1.0.0\npackage: a\nimage: quay.io/a/b:v1\n';
const PACKAGE_ITEM = '- type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\n';

/** A bundle whose second property has type `type` and the block `value` (already indented). */
function bundle(type: string, value: string, head = BUNDLE_HEAD, tail = ''): string {
  return `${head}properties:\n${PACKAGE_ITEM}- type: ${type}\n  value:\n${value}${tail}`;
}

/** Lines indented by `n` spaces (a property value's block). */
function block(text: string, n = 4): string {
  return text.replace(/^(?=.)/gm, ' '.repeat(n)) + '\n';
}

const gvk = (body: string): string => bundle('olm.gvk', block(body));
const csv = (body: string): string => bundle('olm.csv.metadata', block(body));

const CASES: [string, string][] = [];
const add = (name: string, text: string): void => void CASES.push([name, text]);

// Scalars of every kind into a string field and into an int64 field.
const SCALARS = [
  '5',
  '~',
  'null',
  '""',
  '[]',
  '{}',
  'true',
  'yes',
  'x',
  "'x'",
  '1.5',
  '0x1F',
  '.inf',
  '.nan',
];
for (const v of [...SCALARS, '2001-01-01', '"\\t"'])
  add(`gvk group ${v}`, gvk(`group: ${v}\nkind: K\nversion: v1`));
for (const v of [...SCALARS, '1.0', '1e3', '1e21', '+1', '1_000', '0o17', '017', '"1"', '-.inf'])
  add(`priority ${v}`, bundle('olm.channel', block(`channelName: c\npriority: ${v}`)));
for (const v of ['9223372036854775807', '9223372036854775808', '-9223372036854775808'])
  add(`priority ${v}`, bundle('olm.channel', block(`channelName: c\npriority: ${v}`)));
// Collections where scalars go, and the other way round; nothing at all.
add('gvk field a mapping', gvk('group:\n  a: b\nkind: K'));
add('gvk field a list', gvk('group:\n- a\nkind: K'));
add('gvk field empty', gvk('group:\nkind: K'));
add('gvk a list', gvk('- a\n- b'));
add('gvk an indentless list', bundle('olm.gvk', '  - group: g\n'));
add('gvk a scalar below', gvk('5'));
add('value with nothing', bundle('olm.gvk', ''));
add('value with nothing, then a key', bundle('olm.gvk', '', BUNDLE_HEAD, '  x: 1\n'));
add('value less indented', bundle('olm.gvk', ' group: g\n'));
add('value indented by 2', bundle('olm.gvk', block('group: 5', 2)));
add('value indented by 3', bundle('olm.gvk', block('group: g', 3)));
add('value a list indented by 2', bundle('olm.gvk', block('- group: 5', 2)));
add('value after an empty line', bundle('olm.gvk', '\n' + block('group: g')));
add('value after a comment', bundle('olm.gvk', '    # c\n' + block('group: 5')));
// Keys: other spellings Go matches (case, Kelvin sign, long s), quoted, repeated, odd.
add('Kelvin sign, wrong type', gvk('group: g\n\u212aind: 5\nversion: v1'));
add('Kelvin sign', gvk('group: g\n\u212aind: K\nversion: v1'));
add('long s, wrong type', gvk('group: g\nkind: K\nver\u017fion: 5'));
add('upper case, wrong type', gvk('Group: 5\nkind: K'));
add('two spellings, wrong first', gvk('Group: 5\ngroup: g\nkind: K'));
add('two spellings, wrong last', gvk('group: g\nGroup: 5\nkind: K'));
add('quoted key, wrong type', gvk('"group": 5\nkind: K'));
add('quoted key', gvk("'group': g\nkind: K"));
add('repeated key', gvk('group: g\ngroup: h\nkind: K'));
add('merge key', gvk('<<: {a: 1}\nkind: K'));
add('anchor and alias', gvk('group: &a g\nkind: *a'));
add('__proto__', gvk('__proto__: 5\nkind: K'));
add('Object.prototype names', gvk('constructor: 5\ntoString: x\nhasOwnProperty: 1\nkind: K'));
add('empty key', gvk('"": 5\nkind: K'));
add('unknown fields', gvk('group: g\nother:\n  x: [1]\n  y:\n  - 1\n  - {}\nkind: K'));
add('a tab', gvk('group:\tg'));
// Scalars over lines, comments, literal and folded blocks.
add('comments', gvk('group: g # c\n# hello\nkind: K\n  # deeper'));
add('plain over lines', gvk('group: a\n  b\n\n  c\nkind: K'));
add('quoted over lines', gvk('group: "a\n  b"\nkind: K'));
add('literal', gvk('group: |\n  a\n  b\nkind: K'));
add('literal, strip', gvk('group: |-\n  a\nkind: K'));
add('literal, keep', csv('description: |+\n  a\n\ndisplayName: x'));
add('folded', csv('description: >\n  a\n  b'));
// olm.csv.metadata: maps, lists, nested structs down to crdDescriptions.
for (const v of ['5', 'true', '~', '[]', '{}', '"5"', 'x', '[a]', '{a: 1}']) {
  add(`annotation ${v}`, csv(`annotations:\n  a: ${v}\n  b: c`));
  add(`keyword ${v}`, csv(`keywords:\n- a\n- ${v}`));
  add(`installMode supported ${v}`, csv(`installModes:\n- type: OwnNamespace\n  supported: ${v}`));
  add(
    `specDescriptor x-descriptor ${v}`,
    csv(
      `crdDescriptions:\n  owned:\n  - name: a.b.c\n    version: v1\n    kind: K\n    specDescriptors:\n` +
        `    - path: p\n      x-descriptors:\n      - ${v}\n      value: ${v}`,
    ),
  );
  add(
    `crd resource ${v}`,
    csv(`crdDescriptions:\n  owned:\n  - name: a\n    resources:\n    - kind: ${v}\n      version: ${v}`),
  );
}
add('annotations empty', csv('annotations:\nkeywords: []'));
add('indentless list then a map', csv('keywords:\n- a\n- b\nannotations:\n  x: y'));
add('keywords a mapping', csv('keywords:\n  a: b'));
add('keywords a list of lists', csv('keywords:\n- - a'));
add('keywords with nulls', csv('keywords:\n- ~\n- null\n- ""'));
add('label key Kelvin sign', csv('labels:\n  \u212a: 5'));
add('provider url', csv('provider:\n  name: n\n  url: 5'));
add('maintainer email', csv('maintainers:\n- name: a\n  email: 5'));
add('maintainer a scalar', csv('maintainers:\n- a'));
add(
  'statusDescriptor',
  csv('crdDescriptions:\n  owned:\n  - statusDescriptors:\n    - path: a\n      displayName: 5'),
);
const nested = (levels: number): string =>
  'x:\n' + Array.from({ length: levels }, (_, i) => ' '.repeat(2 * i + 2) + `k${i}:`).join('\n') + ' 1';
add('nested 60 deep', csv(nested(60)));
add('nested 120 deep', csv(nested(120)));
// Types opm does not know (any JSON), and type names that are Object.prototype's.
add('unknown type', bundle('my.type', block('a:\n  b: [1]\n  c: {}\n  d:\n  - 1\n  - x: y')));
add('unknown type, repeated key', bundle('my.type', block('a: 1\na: 2')));
add('unknown type, a list', bundle('my.type', block('- 1\n- a: b')));
for (const t of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
  add(`type ${t}`, bundle(t, block('a: 1')));
// The property item: `type` and `value` spelled, placed and quoted every way.
add(
  'type after value',
  bundle('olm.gvk', block('group: 5')).replace(
    '- type: olm.gvk\n  value:\n    group: 5\n',
    '- value:\n    group: 5\n  type: olm.gvk\n',
  ),
);
add('Type after', gvk('group: g') + '  Type: olm.channel\n');
add('TYPE before', gvk('group: g').replace('- type: olm.gvk\n', '- TYPE: olm.channel\n  type: olm.gvk\n'));
add('Value after', gvk('group: g') + '  Value: {}\n');
add('vAlue after, wrong type', gvk('group: g') + '  vAlue:\n    group: 5\n');
add('quoted value key', gvk('group: g').replace('  value:\n', '  "value":\n'));
add('quoted type', gvk('group: 5').replace('- type: olm.gvk', '- type: "olm.gvk"'));
add('type a number', bundle('5', block('group: 5')));
add('type null', bundle('~', block('group: 5')));
add('type with a comment', bundle('olm.gvk # c', block('group: 5')));
add('type over lines', bundle('olm.gvk\n    x', block('group: 5')));
add('item with more keys', gvk('group: g') + '  other: 1\n');
add('two items', gvk('group: g') + '- type: olm.gvk\n  value:\n    group: g\n');
// The root: `properties` and `schema` spelled, placed and repeated every way.
add('Properties', gvk('group: g').replace('properties:', 'Properties:'));
add('quoted properties', gvk('group: 5').replace('properties:', '"properties":'));
add(
  'properties and propertieſ',
  gvk('group: g') + 'propertie\u017f:\n- type: olm.gvk\n  value:\n    group: 5\n',
);
add(
  'propertieſ and properties',
  gvk('group: 5') + 'propertie\u017f:\n- type: olm.gvk\n  value:\n    group: g\n',
);
add('properties twice', gvk('group: g') + 'properties: []\n');
add(
  'properties a mapping',
  'schema: olm.bundle\nproperties:\n  x:\n    type: olm.gvk\n    value:\n      group: g\n',
);
add(
  'properties a mapping, wrong type',
  'schema: olm.bundle\nproperties:\n  x:\n    type: olm.gvk\n    value:\n      group: 5\n',
);
add(
  'items in an item',
  'schema: olm.bundle\nproperties:\n- type: olm.gvk\n  value:\n    group: g\n  more:\n  - type: olm.gvk\n    value:\n      group: 5\n',
);
add(
  'type and value in relatedImages',
  'schema: olm.bundle\nrelatedImages:\n- type: olm.gvk\n  value:\n    group: g\n',
);
add(
  'schema last',
  bundle('olm.gvk', block('group: g'), 'name: a.v1.0.0\npackage: a\n') + 'schema: olm.bundle\n',
);
add(
  'schema last, a package',
  bundle('olm.gvk', block('group: g'), 'name: a.v1.0.0\npackage: a\n') + 'schema: olm.package\n',
);
add('Schema', bundle('olm.gvk', block('group: g'), 'Schema: olm.bundle\nname: a\n'));
add('schema and Schema', bundle('olm.gvk', block('group: g'), 'schema: olm.bundle\nSchema: olm.package\n'));
add('schema quoted', bundle('olm.gvk', block('group: g'), "schema: 'olm.bundle'\n"));
add('no schema', bundle('olm.gvk', block('group: g'), ''));
add('bundle properties indentless', bundle('olm.gvk', '  group: g\n'));
// Documents and files.
add(
  'several documents',
  [
    gvk('group: g'),
    'schema: olm.package\nname: a\nproperties:\n- type: olm.gvk\n  value:\n    group: g\n',
    gvk('group: 5'),
    gvk('group: g'),
  ].join('---\n'),
);
add('document end marker', gvk('group: g') + '...\n');
add('a flow collection after', gvk('group: g') + 'x: [1, 2]\n');
add('CRLF', gvk('group: g').replace(/\n/g, '\r\n'));
add('byte order mark', '\ufeff' + gvk('group: g'));
add('trailing comment', gvk('group: g') + '# end\n');
add('trailing line of spaces', gvk('group: g') + '   \n');
add(
  'JSON',
  JSON.stringify({
    schema: 'olm.bundle',
    properties: [
      { type: 'olm.gvk', value: { group: 5 } },
      { type: 'olm.gvk', value: { group: 'g' } },
    ],
  }),
);

describe('property values checked as read, against hostile input', () => {
  it('agree with building every value', () => {
    const tally: Tally = { checked: 0, failing: 0 };
    for (const [name, text] of CASES) expectSameAsBuilt(Buffer.from(text), name, tally);
    // Both ways were taken many times: checked and left as a placeholder, failing and built.
    expect(tally.checked).toBeGreaterThan(40);
    expect(tally.failing).toBeGreaterThan(60);
  });

  it('are checked only in the items of the root properties list', () => {
    // A mapping of items is no list (Go fails on it as a whole): its values are kept.
    for (const [name, text] of CASES.filter(([n]) => n.startsWith('properties a mapping'))) {
      const value = decodeFile(Buffer.from(text), { checkedValues: CHECKED }).values[0]?.value as Obj;
      expect((value.properties as Record<string, Obj>).x?.value, name).toEqual({
        group: name.endsWith('wrong type') ? 5 : 'g',
      });
    }
    const items = (name: string): Obj[] => {
      const text = CASES.find(([n]) => n === name)![1];
      return (decodeFile(Buffer.from(text), { checkedValues: CHECKED }).values[0]?.value as Obj)
        .properties as Obj[];
    };
    expect(items('items in an item')[0]?.value).toBe(PLACEHOLDER);
    expect((items('items in an item')[0]?.more as Obj[])[0]?.value).toEqual({ group: 5 });
  });

  it('give the report of a plain validation, as a catalog', async () => {
    const tree: Record<string, string> = {};
    CASES.forEach(([name, text], i) => {
      const p = `p${i}`;
      if (name === 'JSON') {
        tree[`${p}/catalog.json`] = text;
        return;
      }
      const own = text
        .replace(/\bpackage: a\b/g, `package: ${p}`)
        .replace(/packageName: a\b/g, `packageName: ${p}`);
      tree[`${p}/catalog.yaml`] =
        `schema: olm.package\nname: ${p}\ndefaultChannel: s\n---\n` +
        `schema: olm.channel\npackage: ${p}\nname: s\nentries:\n- name: a.v1.0.0\n---\n${own}`;
    });
    const dir = writeTree(tree);
    try {
      const plain = await validateCatalog(new DirectorySource(dir));
      const checked = await validateCatalog(new DirectorySource(dir), { validationOnly: true });
      expect(checked.diagnostics).toEqual(plain.diagnostics);
      expect(checked.stats).toEqual(plain.stats);
      // Property values that fail their type are what most of the cases are about.
      expect(plain.diagnostics.filter((d) => d.rule === 'PR-PARSE').length).toBeGreaterThan(60);
    } finally {
      removeTree(dir);
    }
  });

  it('take time in proportion to a long list of scalars with no mapping after it', () => {
    // Each item asks whether it starts a `key: value`: searching for the next `: ` from each
    // one to the end of the text took quadratic time (minutes for a few megabytes).
    const items = '    - a\n'.repeat(1_000_000);
    const text = `schema: olm.bundle\nproperties:\n- type: olm.csv.metadata\n  value:\n    keywords:\n${items}`;
    const started = performance.now();
    const decoded = decodeFile(Buffer.from(text), { checkedValues: CHECKED });
    const root = decodeFile(Buffer.from('x:\n' + items.replace(/^ {4}/gm, '')));
    expect(((decoded.values[0]?.value as Obj).properties as Obj[])[0]?.value).toBe(PLACEHOLDER);
    expect(((root.values[0]?.value as Obj).x as unknown[]).length).toBe(1_000_000);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('property types named like Object members', () => {
  it('find no Go type: their values are kept as read, not checked against a prototype', () => {
    for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect(GO_PROPERTY_VALUES[type], type).toBeUndefined();
    expect(GO_PROPERTY_VALUES['olm.gvk']).toBeDefined();
  });
});
