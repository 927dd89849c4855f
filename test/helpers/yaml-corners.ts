// Generated YAML and JSON corners where two readers could disagree (docs/security.md, "The bot
// reads files exactly as opm does"). Every case is a catalog with package foo (the victim's)
// and one file of package bar's (the attacker's) that tries to read as something else:
// most try to slip a channel of foo past one of the readers. test/yaml-differential.test.ts
// feeds each to the real opm and to catalog-bot and requires the same verdict and the same
// rendered objects, or a refusal by catalog-bot.

import { fooBundle, fooChannel } from './foo-repo.js';

export interface Corner {
  name: string;
  /** Files of the catalog besides foo's and bar's own (path -> content). */
  files: Record<string, string | Buffer>;
}

const FOO = fooChannel(['1.0.0']) + fooBundle('1.0.0', 'quay.io/foo/foo-bundle:v1.0.0');

const BAR = FOO.replaceAll('foo', 'bar');

/** The catalog every case starts from: foo and bar, each with one bundle. */
export function cornerTree(corner: Corner): Record<string, string | Buffer> {
  return { 'foo/catalog.yaml': FOO, 'bar/catalog.yaml': BAR, ...corner.files };
}

// Keys of a channel of foo that no one owning only bar may add.
const EVIL = ['schema: olm.channel', 'package: foo', 'name: evil', 'entries: [{name: foo.v1.0.0}]'];
const EVIL_JSON = '{"schema":"olm.channel","package":"foo","name":"evil","entries":[{"name":"foo.v1.0.0"}]}';

const BREAKS: [string, string][] = [
  ['U+2028', '\u2028'],
  ['U+2029', '\u2029'],
  ['U+0085', '\u0085'],
];

const yaml = (name: string, text: string | Buffer): Corner => ({ name, files: { 'bar/notes.yaml': text } });
const json = (name: string, text: string | Buffer): Corner => ({ name, files: { 'bar/notes.json': text } });
/** A bar-owned document of a schema of bar's own: opm serves it as written. */
const notes = (body: string): string => `schema: bar.notes\npackage: bar\n${body}`;
/** A corner that is one such bar document, `body` below its schema and package. */
const barNotes = (name: string, body: string): Corner => yaml(name, notes(body));

function unicodeBreaks(): Corner[] {
  const out: Corner[] = [];
  for (const [label, b] of BREAKS) {
    const hidden = EVIL.join(b);
    out.push(
      yaml(`${label} in a comment line`, `# note${b}${hidden}\nnotes: |\n  hello\n`),
      yaml(`${label} in a trailing comment`, notes(`n: x # note${b}${hidden}\n`)),
      yaml(`${label} after ---`, `--- # c${b}${hidden}\nnotes: hi\n`),
      yaml(`${label} in a block scalar`, `notes: |\n  line${b}${hidden}\n`),
      yaml(`${label} in a folded scalar`, `notes: >\n  line${b}${hidden}\n`),
      yaml(`${label} in a plain scalar`, `notes: line${b}${hidden}\n`),
      yaml(`${label} in a double-quoted scalar`, notes(`n: "a${b}b"\n`)),
      yaml(`${label} in a single-quoted scalar`, notes(`n: 'a${b}b'\n`)),
      yaml(`${label} in a flow mapping`, notes(`n: {a: 1,${b}b: 2}\n`)),
      yaml(`${label} in a flow sequence`, notes(`n: [a,${b}b]\n`)),
      yaml(`${label} in a key`, notes(`n${b}x: 1\n`)),
      yaml(`${label} between documents`, `${notes('n: 1\n')}${b}---\n${EVIL.join('\n')}\n`),
      yaml(`${label} before a key`, notes(`n: 1${b}m: 2\n`)),
      yaml(`${label} at the end`, notes(`n: 1\n${b}`)),
      json(`${label} as JSON whitespace`, `{"schema":"bar.notes",${b}"package":"bar"}\n${EVIL_JSON}\n`),
      json(`${label} inside a JSON string`, `{"schema":"bar.notes","package":"bar","n":"a${b}b"}\n`),
      json(`${label} between JSON objects`, `{"schema":"bar.notes","package":"bar"}${b}\n${EVIL_JSON}\n`),
    );
  }
  return out;
}

function lineEnds(): Corner[] {
  const cr = (s: string): string => s.replaceAll('\n', '\r');
  return [
    yaml('CR-only line ends, one document', cr(notes('n: 1\n'))),
    yaml('CR-only line ends, two documents', cr(`${notes('n: 1\n')}---\n${EVIL.join('\n')}\n`)),
    yaml('CR-only line ends after a bar document', `${notes('n: 1\n')}---\r${EVIL.join('\r')}\r`),
    yaml('CR inside a comment', notes(`# c\r${EVIL[0]}\nn: 1\n`)),
    yaml('CR inside a plain scalar', notes('n: a\rb\n')),
    yaml('CR inside a block scalar', notes('n: |\n  a\rb\n')),
    yaml('CRLF line ends', notes('n: 1\nm: |\n  a\n  b\n').replaceAll('\n', '\r\n')),
    yaml('CRLF separators', `${notes('n: 1\n')}---\n${notes('m: 2\n')}`.replaceAll('\n', '\r\n')),
    yaml('CR before LF in a separator', `${notes('n: 1\n')}---\r\n${EVIL.join('\n')}\n`),
    json('CR-only line ends in JSON', `{"schema":"bar.notes","package":"bar"}\r${EVIL_JSON}\r`),
  ];
}

function documentMarkers(): Corner[] {
  return [
    yaml('... ends a document, text after', `${notes('n: 1\n')}...\n${EVIL.join('\n')}\n`),
    yaml('... then ---', `${notes('n: 1\n')}...\n---\n${notes('m: 1\n')}`),
    yaml('... alone at the end', `${notes('n: 1\n')}...\n`),
    yaml('... with a comment', `${notes('n: 1\n')}... # end\n`),
    yaml('--- with a comment', `--- # start\n${notes('n: 1\n')}`),
    yaml('--- followed by a value', `--- ${EVIL_JSON}\n`),
    yaml('---- is not a separator', `${notes('n: 1\n')}----\n${EVIL.join('\n')}\n`),
    yaml('indented ---', `${notes('n: 1\n')} ---\n`),
    yaml('--- with a tab after', `${notes('n: 1\n')}---\t\n${notes('m: 1\n')}`),
    yaml('--- with U+FEFF after', `${notes('n: 1\n')}---\ufeff\n${notes('m: 1\n')}`),
    yaml('two separators in a row', `${notes('n: 1\n')}---\n---\n${notes('m: 1\n')}`),
    yaml('%YAML directive', `%YAML 1.1\n---\n${notes('n: 1\n')}`),
    yaml('%TAG directive', `%TAG !e! tag:example.com,2000:\n---\n${notes('n: !e!x 1\n')}`),
    yaml(
      '%TAG directive that names a core type',
      `%TAG ! tag:yaml.org,2002:\n---\n${notes('n: !int "7"\n')}`,
    ),
    yaml('directive without ---', `%YAML 1.1\n${notes('n: 1\n')}`),
    yaml('only a comment', `# nothing here\n`),
    yaml('empty document between separators', `${notes('n: 1\n')}---\n---\n`),
    yaml('second document in one YAML node stream', `${notes('n: 1\n')}--- \n${EVIL.join('\n')}\n`),
  ];
}

function mergeKeys(): Corner[] {
  return [
    barNotes('merge key after explicit keys (inline map)', 'a: 1\n<<: {a: 2, b: 3}\n'),
    barNotes('merge key before explicit keys (inline map)', '<<: {a: 2, b: 3}\na: 1\n'),
    barNotes('merge key after explicit keys (alias)', 'base: &b {a: 2}\nx:\n  a: 1\n  <<: *b\n'),
    barNotes('merge key before explicit keys (alias)', 'base: &b {a: 2}\nx:\n  <<: *b\n  a: 1\n'),
    barNotes('merge key of a list of maps', 'x:\n  a: 1\n  <<: [{a: 2}, {b: 3}]\n'),
    barNotes('!!merge tag', 'x:\n  a: 1\n  !!merge <<: {a: 2}\n'),
    barNotes('quoted << is a plain key', 'x:\n  a: 1\n  "<<": {a: 2}\n'),
    barNotes('merge key with a scalar', 'x:\n  <<: 1\n'),
    yaml(
      'merge key overriding schema',
      `schema: bar.notes\npackage: bar\n<<: {package: foo, schema: olm.channel, name: evil, entries: [{name: foo.v1.0.0}]}\n`,
    ),
    yaml(
      'merge key after schema and package',
      `schema: bar.notes\npackage: bar\nname: x\n<<: {package: foo}\n`,
    ),
    yaml('merge key before schema and package', `<<: {package: foo}\nschema: bar.notes\npackage: bar\n`),
  ];
}

function caseFolding(): Corner[] {
  const out: Corner[] = [];
  const spellings: [string, string][] = [
    ['Schema', 'Schema'],
    ['SCHEMA', 'SCHEMA'],
    ['long s', '\u017fchema'],
    ['Package', 'Package'],
    ['Kelvin sign', 'pac\u212Aage'],
    ['fullwidth', '\uff53chema'],
  ];
  for (const [label, key] of spellings) {
    const field = /chema$/i.test(key) || key === '\uff53chema' ? 'schema' : 'package';
    const evil = EVIL.map((l) => (l.startsWith(`${field}:`) ? l.replace(field, key) : l));
    out.push(yaml(`${label} key in YAML`, `${evil.join('\n')}\n`));
    out.push(json(`${label} key in JSON`, `${EVIL_JSON.replace(`"${field}"`, `"${key}"`)}\n`));
    out.push(
      yaml(
        `${label} key beside the exact one`,
        `${EVIL.join('\n').replace(`${field}: `, `${key}: bar\n${field}: `)}\n`,
      ),
    );
  }
  out.push(
    yaml('Name and name', `${EVIL.join('\n')}\nName: other\n`),
    yaml('Entries spelled in capitals', `${EVIL.slice(0, 3).join('\n')}\nENTRIES: [{name: foo.v1.0.0}]\n`),
    yaml('entry Name in capitals', `${EVIL.slice(0, 3).join('\n')}\nentries: [{NAME: foo.v1.0.0}]\n`),
    yaml(
      'long s in an entry key',
      `${EVIL.slice(0, 3).join('\n')}\nentries: [{name: foo.v1.0.0, \u017fkips: [a]}]\n`,
    ),
    yaml('non-ASCII key that folds to ss', notes('pa\u00dfword: 1\npassword: 2\n')),
    yaml('ligature key', notes('\ufb01le: 1\nfile: 2\n')),
    json('duplicate schema keys in JSON', '{"schema":"bar.notes","package":"bar","schema":"olm.channel"}\n'),
    json('package then Package in JSON', '{"schema":"bar.notes","package":"bar","Package":"foo"}\n'),
  );
  return out;
}

function tags(): Corner[] {
  return [
    barNotes('!!str on a number', 'n: !!str 7\n'),
    barNotes('!!str on a mapping', 'n: !!str {a: 1}\n'),
    barNotes('!!int on a quoted number', 'n: !!int "7"\n'),
    barNotes('!!int on text', 'n: !!int abc\n'),
    barNotes('!!float', 'n: !!float 1\n'),
    barNotes('!!bool', 'n: !!bool "yes"\n'),
    barNotes('!!null', 'n: !!null ""\n'),
    barNotes('!!binary', 'n: !!binary aGVsbG8=\n'),
    barNotes('!!binary with line breaks', 'n: !!binary |\n  aGVs\n  bG8=\n'),
    barNotes('!!timestamp', 'n: !!timestamp 2001-12-14\n'),
    barNotes('custom tag on a scalar', 'n: !foo bar\n'),
    barNotes('custom tag on a mapping', 'n: !foo {a: 1}\n'),
    barNotes('non-specific tag', 'n: ! 7\n'),
    barNotes('verbatim tag', 'n: !<tag:yaml.org,2002:str> 7\n'),
    barNotes('!!omap', 'n: !!omap [{a: 1}, {b: 2}]\n'),
    barNotes('!!set', 'n: !!set {a, b}\n'),
    barNotes('!!seq on a mapping', 'n: !!seq {a: 1}\n'),
    barNotes('!!map on a sequence', 'n: !!map [a]\n'),
    barNotes('tag on a key', '!!str 1: one\n'),
    yaml('tag on schema', `schema: !!str olm.channel\n${EVIL.slice(1).join('\n')}\n`),
    yaml('custom tag on package', `${EVIL[0]}\npackage: !bar foo\n${EVIL.slice(2).join('\n')}\n`),
  ];
}

function escapes(): Corner[] {
  const e = (name: string, scalar: string): Corner => yaml(name, notes(`n: "${scalar}"\n`));
  return [
    e('\\N escape', 'a\\Nb'),
    e('\\_ escape', 'a\\_b'),
    e('\\L escape', 'a\\Lb'),
    e('\\P escape', 'a\\Pb'),
    e('\\/ escape', 'a\\/b'),
    e("\\' escape", "a\\'b"),
    e('\\e escape', 'a\\eb'),
    e('\\0 escape', 'a\\0b'),
    e('\\a and \\v escapes', 'a\\a\\vb'),
    e('\\x escape', 'a\\x41b'),
    e('\\x escape of a C1 byte', 'a\\x85b'),
    e('\\u escape', 'a\\u00e9b'),
    e('\\u lone surrogate', 'a\\ud800b'),
    e('\\u surrogate pair', 'a\\ud83d\\ude00b'),
    e('\\U escape', 'a\\U0001F600b'),
    e('\\U out of range', 'a\\U00110000b'),
    e('\\U surrogate', 'a\\U0000D800b'),
    e('escaped tab character', 'a\\\tb'),
    e('escaped space', 'a\\ b'),
    e('unknown escape', 'a\\qb'),
    yaml('escaped line break', notes('n: "a\\\n  b"\n')),
    yaml('escaped line break then spaces', notes('n: "a \\\n   b"\n')),
    yaml('escape in a key', notes('"n\\x41": 1\n')),
    yaml('\\N in the schema', `schema: "olm.channel\\N"\n${EVIL.slice(1).join('\n')}\n`),
    yaml('\\_ in the package', `${EVIL[0]}\npackage: "foo\\_"\n${EVIL.slice(2).join('\n')}\n`),
  ];
}

function folding(): Corner[] {
  return [
    barNotes('multi-line double-quoted', 'n: "a\n  b\n\n  c"\n'),
    barNotes('multi-line double-quoted with trailing spaces', 'n: "a   \n  b"\n'),
    barNotes('multi-line double-quoted with tabs', 'n: "a\t\n\tb"\n'),
    barNotes('multi-line single-quoted', "n: 'a\n  b\n\n\n  c'\n"),
    barNotes('multi-line plain', 'n: a\n  b\n\n  c\n'),
    barNotes('multi-line plain with a comment after', 'n: a\n  b # c\n'),
    barNotes('multi-line plain key', 'a\n  b: 1\n'),
    barNotes('plain with # inside', 'n: a#b\n'),
    barNotes('plain with : inside', 'n: a:b\n'),
    barNotes('plain starting with a dash', 'n: -a\n'),
    barNotes('literal block keep', 'n: |+\n  a\n\n'),
    barNotes('literal block header with a comment right after it', 'k: |#c\n  a\n'),
    barNotes('folded block strip header with a comment right after it', 'k: >-#c\n  a\n  b\n'),
    barNotes('literal block header with a comment after a space', 'k: | #c\n  a\n'),
    barNotes('literal block strip', 'n: |-\n  a\n\n'),
    barNotes('literal block explicit indentation', 'n: |2\n    a\n  b\n'),
    barNotes('folded block with more-indented lines', 'n: >\n  a\n    b\n  c\n\n  d\n'),
    barNotes('folded block keep', 'n: >+\n  a\n  b\n\n'),
    barNotes('block scalar with leading empty lines', 'n: |\n\n\n  a\n'),
    barNotes('block scalar indented by a tab', 'n: |\n\ta\n'),
    barNotes('block scalar with a tab after the indentation', 'n: |\n  \ta\n'),
    barNotes('block scalar less indented line', 'x:\n  n: |\n    a\n   b\n'),
    barNotes('block scalar with a # line', 'n: |\n  # not a comment\n'),
    barNotes('tab before a value', 'n:\t1\n'),
    barNotes('tab in indentation', 'x:\n\tn: 1\n'),
    barNotes('tab after a sequence dash', 'x:\n-\ta\n'),
    barNotes('tab after a sequence dash and a space', 'x:\n- \ta\n'),
    barNotes('tab after a nested sequence dash and a space', 'x:\n  - - \ta\n'),
    barNotes('tab after a dash before a comment', 'x:\n- \t# c\n  a\n'),
    barNotes('tab after an explicit key indicator', '? \ta\n: b\n'),
    barNotes('tab after a complex value indicator', '? a\n:\tb\n'),
    barNotes('tab after a key and a space', 'k: \ta\n'),
    barNotes('tab after the indentation of a plain continuation', 'k: a\n  \tb\n'),
    barNotes('trailing tab', 'n: 1\t\n'),
  ];
}

function scalars(): Corner[] {
  const values = [
    'y',
    'Y',
    'yes',
    'Yes',
    'YES',
    'n',
    'N',
    'no',
    'on',
    'On',
    'OFF',
    'off',
    'true',
    'False',
    'TRUE',
    '~',
    'null',
    'Null',
    'NULL',
    '',
    '0777',
    '0o17',
    '0b101',
    '0x1F',
    '+0x1F',
    '-0x1F',
    '-0777',
    '08',
    '0.5',
    '.5',
    '5.',
    '+.5',
    '-.5e3',
    '1e3',
    '1E3',
    '1.0e+5',
    '1_000',
    '1_000.5',
    '0x_1F',
    '190:20:30',
    '1:30',
    '-1:30',
    '2001-12-14',
    '2001-12-14t21:59:43.10-05:00',
    '9223372036854775807',
    '9223372036854775808',
    '18446744073709551615',
    '18446744073709551616',
    '-9223372036854775808',
    '-9223372036854775809',
    '1e400',
    '4.10',
    '0.1e1',
    '.inf',
    '-.Inf',
    '.NaN',
    '0x',
    '0b',
    '+',
    '-',
    '.',
    '1__0',
    '0.0',
    '-0',
    '-0.0',
    '123456789012345678',
    '1.7976931348623157e308',
    '5e-324',
    '=',
    '<<',
  ];
  const out: Corner[] = values.map((s) => yaml(`scalar ${JSON.stringify(s)}`, notes(`n: ${s}\n`)));
  const keys = [
    '1.5',
    '1e3',
    '0.000001',
    '3.14159265358979',
    '.inf',
    '~',
    'null',
    'true',
    'on',
    'no',
    '0x1F',
    '190:20:30',
    '123456789012',
    '1e21',
    '0777',
    '-0',
    '2001-12-14',
  ];
  for (const k of keys) out.push(yaml(`key ${JSON.stringify(k)}`, notes(`${k}: x\n`)));
  out.push(
    yaml('empty key', notes(': x\n')),
    yaml('key 1 and key "1"', notes('1: a\n"1": b\n')),
    yaml('key true and key "true"', notes('true: a\n"true": b\n')),
    yaml('key 1.0 and key 1', notes('1.0: a\n1: b\n')),
    yaml('key 0x10 and key 16', notes('0x10: a\n16: b\n')),
  );
  return out;
}

function keysAndCollections(): Corner[] {
  return [
    barNotes('key of 1023 characters', `${'k'.repeat(1023)}: 1\n`),
    barNotes('key of 1024 characters', `${'k'.repeat(1024)}: 1\n`),
    barNotes('key of 1025 characters', `${'k'.repeat(1025)}: 1\n`),
    barNotes('quoted key of 1100 characters', `"${'k'.repeat(1100)}": 1\n`),
    barNotes('flow key of 1100 characters', `x: {${'k'.repeat(1100)}: 1}\n`),
    barNotes('explicit key', '? n\n: 1\n'),
    barNotes('complex key (mapping)', '? {a: 1}\n: 1\n'),
    barNotes('complex key (sequence)', '[a, b]: 1\n'),
    barNotes('flow mapping key', '{a: 1}: 2\n'),
    barNotes('alias as key', 'a: &k n\n*k : 2\n'),
    barNotes('anchor on a key', '&k n: 1\nm: *k\n'),
    barNotes('scalar alias', 'a: &x 1\nb: *x\n'),
    barNotes('mapping alias', 'a: &x {p: 1}\nb: *x\n'),
    barNotes('undefined alias', 'a: *nope\n'),
    barNotes('alias redefined', 'a: &x 1\nb: &x 2\nc: *x\n'),
    barNotes('flow mapping with a bare key', 'x: {a, b: 1}\n'),
    barNotes('flow mapping with a trailing comma', 'x: {a: 1,}\n'),
    barNotes('flow sequence with a trailing comma', 'x: [a,]\n'),
    barNotes('flow sequence with a pair', 'x: [a: 1]\n'),
    barNotes('flow mapping over lines', 'x: {a: 1,\n  b: 2}\n'),
    barNotes('flow mapping with an empty value', 'x: {a: }\n'),
    barNotes('JSON-like flow with quoted keys', 'x: {"a":1}\n'),
    barNotes('sequence at the same indentation as its key', 'x:\n- a\n- b\n'),
    barNotes('nested sequences', 'x:\n- - a\n  - b\n'),
    barNotes('duplicate key at top', 'n: 1\nn: 2\n'),
    barNotes('duplicate key nested', 'x:\n  a: 1\n  a: 2\n'),
    barNotes('duplicate key in a flow mapping', 'x: {a: 1, a: 2}\n'),
    yaml('duplicate package key', `${EVIL.join('\n')}\npackage: bar\n`),
    yaml('duplicate schema key', `schema: bar.notes\npackage: bar\nschema: olm.channel\n`),
    yaml('root sequence', '- a\n- b\n'),
    yaml('root scalar', 'hello\n'),
    yaml('root flow mapping then junk', `${EVIL_JSON} trailing\n`),
    yaml('root flow mapping then a second node', `{schema: bar.notes, package: bar}\n${EVIL.join('\n')}\n`),
    yaml('deep nesting', notes(`n: ${'['.repeat(200)}${']'.repeat(200)}\n`)),
    yaml('long line', notes(`n: ${'x'.repeat(70_000)}\n`)),
    yaml('long comment line', notes(`# ${'x'.repeat(70_000)}\nn: 1\n`)),
    yaml('keys indented differently', 'schema: bar.notes\n package: bar\n'),
    yaml('key less indented than the item above', notes('x:\n  - a: 1\n b: 2\n')),
  ];
}

function encodings(): Corner[] {
  const bom = '\ufeff';
  const out: Corner[] = [
    yaml('BOM at the start', `${bom}${notes('n: 1\n')}`),
    yaml('two BOMs at the start', `${bom}${bom}${notes('n: 1\n')}`),
    yaml('BOM at the start of a second document', `${notes('n: 1\n')}---\n${bom}${notes('m: 1\n')}`),
    yaml('BOM inside a value', notes(`n: a${bom}b\n`)),
    yaml('BOM inside a quoted value', notes(`n: "a${bom}b"\n`)),
    yaml('BOM in a comment', notes(`# a${bom}b\nn: 1\n`)),
    yaml('BOM before a key', notes(`${bom}n: 1\n`)),
    json('BOM before JSON', `${bom}${EVIL_JSON}\n`),
    json('BOM before the second JSON object', `{"schema":"bar.notes","package":"bar"}\n${bom}${EVIL_JSON}\n`),
    json('BOM inside a JSON string', `{"schema":"bar.notes","package":"bar","n":"a${bom}b"}\n`),
    yaml(
      'UTF-16 LE BOM',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(notes('n: 1\n'), 'utf16le')]),
    ),
    yaml(
      'invalid UTF-8 in a value',
      Buffer.concat([Buffer.from(notes('n: a')), Buffer.from([0xff]), Buffer.from('\n')]),
    ),
    yaml(
      'invalid UTF-8 in a comment',
      Buffer.concat([Buffer.from(notes('# a')), Buffer.from([0xc3]), Buffer.from('\nn: 1\n')]),
    ),
    yaml(
      'overlong UTF-8',
      Buffer.concat([Buffer.from(notes('n: a')), Buffer.from([0xc0, 0xaf]), Buffer.from('\n')]),
    ),
    yaml(
      'UTF-8 encoded surrogate',
      Buffer.concat([Buffer.from(notes('n: a')), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n')]),
    ),
    json(
      'invalid UTF-8 in a JSON string',
      Buffer.concat([
        Buffer.from('{"schema":"bar.notes","package":"bar","n":"a'),
        Buffer.from([0xff]),
        Buffer.from('"}\n'),
      ]),
    ),
    json(
      'invalid UTF-8 after a JSON object',
      Buffer.concat([
        Buffer.from('{"schema":"bar.notes","package":"bar"}\n'),
        Buffer.from([0xff]),
        Buffer.from(`\n${EVIL_JSON}\n`),
      ]),
    ),
    yaml('astral character', notes('n: "\u{1F600}"\n')),
    yaml('private-use character', notes('n: \ue000\n')),
    yaml('noncharacter U+FFFE', notes('n: a\ufffeb\n')),
  ];
  // C0 and C1 controls in a plain scalar, a quoted scalar and a comment.
  for (let c = 0; c <= 0x9f; c++) {
    if (c === 0x09 || c === 0x0a || c === 0x0d || (c >= 0x20 && c < 0x7f)) continue;
    const ch = String.fromCharCode(c);
    const hex = c.toString(16).padStart(2, '0');
    out.push(yaml(`control 0x${hex} in a plain scalar`, notes(`n: a${ch}b\n`)));
    if (c % 3 === 0) out.push(yaml(`control 0x${hex} in a comment`, notes(`# a${ch}b\nn: 1\n`)));
    if (c % 3 === 1) out.push(yaml(`control 0x${hex} in a double-quoted scalar`, notes(`n: "a${ch}b"\n`)));
    if (c % 3 === 2)
      out.push(
        json(`control 0x${hex} in a JSON string`, `{"schema":"bar.notes","package":"bar","n":"a${ch}b"}\n`),
      );
  }
  return out;
}

function jsonCorners(): Corner[] {
  const j = (name: string, body: string): Corner =>
    json(name, `{"schema":"bar.notes","package":"bar",${body}}\n`);
  return [
    j('big integer', '"n":100000000000000000001'),
    j('float past float64', '"n":1e400'),
    j('negative zero', '"n":-0'),
    j('exponent form', '"n":1E+2'),
    j('decimal 4.10', '"n":4.10'),
    j('\\u0000 escape', '"n":"a\\u0000b"'),
    j('lone surrogate escape', '"n":"a\\ud800b"'),
    j('\\u2028 escape', '"n":"a\\u2028b"'),
    j('HTML characters', '"n":"<a>&</a>"'),
    j('duplicate key', '"n":1,"n":2'),
    j('nested duplicate key', '"n":{"a":1,"a":2}'),
    json('JSON then YAML', `{"schema":"bar.notes","package":"bar"}\n${EVIL.join('\n')}\n`),
    json('JSON with a comment', `{"schema":"bar.notes","package":"bar"} // x\n${EVIL_JSON}\n`),
    json('JSON with a trailing comma', `{"schema":"bar.notes","package":"bar",}\n${EVIL_JSON}\n`),
    json('JSON with single quotes', `{'schema':'bar.notes','package':'bar'}\n${EVIL_JSON}\n`),
    json('JSON with a tab', `{"schema":"bar.notes",\t"package":"bar"}\n`),
    json('JSON array of objects', `[${EVIL_JSON}]\n`),
    json('JSON with U+00A0 as whitespace', `{"schema":"bar.notes",\u00a0"package":"bar"}\n${EVIL_JSON}\n`),
    json('JSON with a form feed', `{"schema":"bar.notes",\f"package":"bar"}\n`),
    json('JSON object then garbage', `{"schema":"bar.notes","package":"bar"}garbage\n${EVIL_JSON}\n`),
    json('two JSON objects on one line', `{"schema":"bar.notes","package":"bar"}${EVIL_JSON}\n`),
    json(
      'second JSON object broken',
      `{"schema":"bar.notes","package":"bar"}\n{"schema":"olm.channel",\n${EVIL.join('\n')}\n`,
    ),
    json(
      'third JSON object broken',
      `{"schema":"bar.notes","package":"bar"}\n{"schema":"bar.notes","package":"bar","m":1}\n{bad\n${EVIL_JSON}\n`,
    ),
    json('JSON with U+2028 in a key', `{"schema":"bar.notes","package":"bar","a\u2028b":1}\n`),
    json('JSON after a space before the brace', `   \n  ${EVIL_JSON}\n`),
    json('YAML in a .json file', `${EVIL.join('\n')}\n`),
    yaml('JSON in a .yaml file', `${EVIL_JSON}\n`),
    yaml('two JSON objects in a .yaml file', `{"schema":"bar.notes","package":"bar"}\n${EVIL_JSON}\n`),
  ];
}

function flowCollections(): Corner[] {
  return [
    barNotes('? starting text in a flow sequence', 'x: [a, ?b]\n'),
    barNotes('? key in a flow mapping', 'x: {a: 1, ?b: c}\n'),
    barNotes('? inside text in a flow sequence', 'x: [a?b]\n'),
    barNotes('? inside a flow mapping value', 'x: {a: b?c}\n'),
    barNotes('URL with a query in a flow sequence', 'x: [http://a.example/c?d=e]\n'),
    barNotes('explicit ? key in a flow mapping', 'x: {? a: b}\n'),
    yaml(
      'flow ?package hides a channel of foo',
      '{schema: olm.channel, package: bar, name: evil, entries: [{name: bar.v1.0.0}], ?package: foo, ?entries: [{name: foo.v1.0.0}]}\n',
    ),
    yaml(
      'flow ?package in a document after ---',
      `${notes('n: 1\n')}---\n{schema: olm.channel, package: bar, name: evil, entries: [{name: bar.v1.0.0}], ?package: foo, ?entries: [{name: foo.v1.0.0}]}\n`,
    ),
    barNotes(': before } in a flow mapping', 'x: {a:}\n'),
    barNotes(': before , in a flow mapping', 'x: {a:, b: 1}\n'),
    barNotes(': before ] in a flow sequence', 'x: [a:]\n'),
    barNotes(': before [ in a flow mapping', 'x: {a:[b]}\n'),
    barNotes(': before } in a flow value', 'x: {a: b:}\n'),
    barNotes(': before ] in a nested flow sequence', 'x: [[a:]]\n'),
    barNotes(': after a quoted key before [', 'x: {"a":[b]}\n'),
    yaml(
      'flow schema: before } after the schema',
      `{schema: olm.channel, package: foo, name: evil, entries: [{name: foo.v1.0.0}], schema:}\n`,
    ),
    barNotes('flow text starting with :', 'x: [:a]\n'),
    barNotes('- alone in a flow sequence', 'x: [-]\n'),
    barNotes('- alone before a comma', 'x: [-, a]\n'),
    barNotes('- alone as a flow mapping value', 'x: {a: -}\n'),
    barNotes('- then text in a flow sequence', 'x: [-a]\n'),
    barNotes('empty key in a flow sequence', 'x: [: a]\n'),
    barNotes('empty key in a flow mapping', 'x: {: a}\n'),
    barNotes('explicit empty key', 'x:\n  ?\n  : a\n'),
    barNotes('flow sequence text over a line at column 0', 'x: [a\nb]\n'),
    barNotes('flow mapping over a line at column 0', 'x: {a: 1,\nb: 2}\n'),
    barNotes('flow comment right after a comma', 'x: [a,#c\n  b]\n'),
  ];
}

function anchors(): Corner[] {
  return [
    barNotes('anchor name with a dot', 'a: &x.y 1\nb: *x.y\n'),
    barNotes('anchor name followed by ?', 'a: &x? 1\n'),
    barNotes('alias key without a space', 'a: &k n\n*k: 2\n'),
    barNotes('alias key in a flow mapping without a space', 'a: &k n\nx: {*k: 2}\n'),
    barNotes('anchor before [ in a flow sequence', 'x: [&a[1]]\n'),
    barNotes('anchor before { in a flow sequence', 'x: [&a{b: 1}]\n'),
    barNotes('anchor with : in a flow sequence', 'x: [&a: 1]\n'),
    barNotes('alias of a mapping as a key', 'a: &x {p: 1}\n*x : 2\n'),
    barNotes('alias of null as a key', 'a: &x ~\n*x : 2\n'),
    barNotes('alias of a float as a key', 'a: &x 3.14159265358979\n*x : 2\n'),
    yaml(
      'alias key spelling package',
      'p: &p package\nschema: olm.channel\n*p : foo\nname: evil\nentries: [{name: foo.v1.0.0}]\n',
    ),
    barNotes('anchor of 1030 characters on a key', `&${'a'.repeat(1030)} k: 1\n`),
  ];
}

function keysFarFromColon(): Corner[] {
  return [
    barNotes('key then 1100 spaces before :', `k${' '.repeat(1100)}: 1\n`),
    barNotes('nested key then 1100 spaces before :', `x:\n  k${' '.repeat(1100)}: 1\n`),
    yaml('first key then 1100 spaces before :', `k${' '.repeat(1100)}: 1\nschema: bar.notes\npackage: bar\n`),
    barNotes('flow key then 1100 spaces before :', `x: {a${' '.repeat(1100)}: b}\n`),
    barNotes('key true and key "true" nested', 'x:\n  true: a\n  "true": b\n'),
    barNotes('key yes and key "true"', 'x:\n  yes: a\n  "true": b\n'),
    barNotes('key 1 and key "1" nested', 'x:\n  1: a\n  "1": b\n'),
    barNotes("key 1 and key '1' in a flow mapping", "x: {1: a, '1': b}\n"),
    barNotes('key 1 and key "1" in flow pairs', 'x: [1: a, "1": b]\n'),
  ];
}

function fastReaderEdges(): Corner[] {
  // Keys that read as themselves, so that the fast reader (not the full one) reads these.
  const fast = (body: string): string => `schema: bar.notes\npackage: bar\n${body}`;
  return [
    yaml('fast reader: tab at the start of a literal block', fast('k: |\n  \ta\n')),
    yaml('fast reader: tab in an empty line before a literal block', fast('k: |\n  \t\n  a\n')),
    yaml('fast reader: tab after the indentation of a later line', fast('k: |\n  a\n  \tb\n')),
    yaml('fast reader: tab with an indentation digit', fast('k: |2\n  \ta\n')),
    yaml('fast reader: tab before the indentation of a later line', fast('k: |\n  a\n \tb\n')),
    yaml('fast reader: multi-line plain in an indentless sequence', fast('k:\n- a\n  b\n')),
    yaml('fast reader: quoted key', fast('"k": 1\n\'j\': 2\n')),
    yaml('fast reader: literal strip with an indentation digit', fast('k: |2-\n   a\n  b\n')),
  ];
}

function jsonFallbacks(): Corner[] {
  const first = '{"schema":"bar.notes","package":"bar"}';
  return [
    json(
      'JSON number past float64 by its digits',
      `{"schema":"bar.notes","package":"bar","n":1${'0'.repeat(300)}e9}\n`,
    ),
    json(
      'JSON number past float64 by digits and a point',
      `{"schema":"bar.notes","package":"bar","n":1${'0'.repeat(305)}.5e5}\n`,
    ),
    json('JSON then a form feed line then YAML', `${first}\f\n${EVIL.join('\n')}\n`),
    json('JSON then a vertical tab line then YAML', `${first}\v\n${EVIL.join('\n')}\n`),
    json('JSON then U+00A0 line then YAML', `${first}\u00a0\n${EVIL.join('\n')}\n`),
    json('JSON then U+3000 then YAML', `${first}\u3000${EVIL.join('\n')}\n`),
    json('JSON then U+2028 line then YAML', `${first}\u2028\n${EVIL.join('\n')}\n`),
    json('JSON then U+FFFD then YAML', `${first}\n\ufffd\n${EVIL.join('\n')}\n`),
    json('JSON then three bytes of YAML', `${first}\na:\n`),
    json('JSON after U+3000 past 4096 bytes', `${'\u3000'.repeat(1366)}${EVIL_JSON}\n`),
    json('JSON after U+3000 within 4096 bytes', `${'\u3000'.repeat(1365)}${EVIL_JSON}\n`),
    json('JSON after U+2028 past 4096 bytes', `${'\u2028'.repeat(1366)}${EVIL_JSON}\n`),
    json('JSON after U+00A0 past 4096 bytes', `${'\u00a0'.repeat(2049)}${EVIL_JSON}\n`),
    json('JSON brace at byte 4096', `${' '.repeat(4096)}${EVIL_JSON}\n`),
    json('JSON brace at byte 4095', `${' '.repeat(4095)}${EVIL_JSON}\n`),
  ];
}

function afterTheFirstNode(): Corner[] {
  // A comment first: read as YAML, not sniffed as JSON.
  const after = (name: string, rest: string): Corner =>
    yaml(`after a flow root: ${name}`, `# notes\n{schema: bar.notes, package: bar}\n${rest}`);
  return [
    after('an unterminated double quote', '"abc\n'),
    after('an unterminated single quote', "'abc\n"),
    after('a bad escape', '"\\q"\n'),
    after('an @', '@x\n'),
    after('a tab', '\tx\n'),
    after('plain text, then an unterminated quote', 'foo\n"abc\n'),
    after('a second object with a bad escape', '{"a": "\\q"}\n'),
    after('a second JSON object', '{"schema":"bar.notes","package":"bar","m":1}\n'),
    after('an unterminated second object', '{"a": "b"\n'),
    after('a block sequence', '- a\n'),
    after('a closing bracket', ']\n'),
    after('a comment', '# more\n'),
    after('an explicit key', '? a\n'),
    yaml('after a flow root: text on its line', `# notes\n{schema: bar.notes, package: bar} x\n`),
    yaml('an indented root, then a line at column 0', ' schema: bar.notes\n package: bar\nname: x\n'),
    yaml(
      'an indented root after ---, then keys at column 0',
      `${notes('n: 1\n')}---\n  schema: bar.notes\n  package: bar\nschema: olm.channel\n`,
    ),
    json(
      'JSON, then --- and an indented root',
      '{"schema":"bar.notes","package":"bar"}\n---\n schema: bar.notes\npackage: bar\nz: 1\n',
    ),
    yaml('an indented root sequence, then a key', ' - a\nb: c\n'),
  ];
}

/** Every generated corner, named uniquely. */
export function yamlCorners(): Corner[] {
  const all = [
    ...unicodeBreaks(),
    ...lineEnds(),
    ...documentMarkers(),
    ...mergeKeys(),
    ...caseFolding(),
    ...tags(),
    ...escapes(),
    ...folding(),
    ...scalars(),
    ...keysAndCollections(),
    ...encodings(),
    ...jsonCorners(),
    ...flowCollections(),
    ...anchors(),
    ...keysFarFromColon(),
    ...fastReaderEdges(),
    ...jsonFallbacks(),
    ...afterTheFirstNode(),
  ];
  const seen = new Set<string>();
  for (const c of all) {
    if (seen.has(c.name)) throw new Error(`two corners named ${c.name}`);
    seen.add(c.name);
  }
  return all;
}
