// Differential, table-driven test of the validator against the rule book
// (docs/validation-rules.md) and the real `opm validate` v1.73.0.
//
// Every case is a small catalog. For each one:
//  * `validateCatalog` must give opm's verdict (unless the case is marked `diff`, an
//    intentional difference, with the reason), must report the expected rule id with a
//    file and (for text files) a line, and its message must contain opm's message core;
//  * the oracle block checks the table itself against the real opm, and that both agree.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog, type LoadOptions } from '../src/catalog/index.js';
import { haveOpm, opmValidate, removeTree, writeTree } from './helpers/oracle.js';
import {
  basic,
  bundle,
  channel,
  deprecations,
  jsonStream as J,
  olmPackageProp,
  pkg,
  prettyJsonStream,
  yamlStream as Y,
  versionEntry,
  type Obj,
} from './helpers/catalogs.js';

interface Case {
  name: string;
  files: Record<string, string | Buffer>;
  /** Extra setup after the files are written (symlinks). */
  setup?: (dir: string) => void;
  /** The catalog root inside the written tree (default: the tree itself). */
  root?: string;
  /** opm's verdict. Default: invalid when `rule` is set, valid otherwise. */
  opmValid?: boolean;
  /** The rule id (or acceptable ids) we must report as an error. */
  rule?: string | string[];
  /** opm's message core: opm's message and one of our messages for `rule` must contain it. */
  msg?: string;
  /** Where we word it differently on purpose: opm's message core (then `msg` is ours). */
  opmMsg?: string;
  /** Rule ids we must NOT report (opm does not complain about these here). */
  absent?: string[];
  /** A warning rule id we must report (accepted quirks). */
  warning?: string;
  /** Intentional difference from opm: the reason. Our verdict is then the opposite of opm's. */
  diff?: string;
  options?: LoadOptions;
  /** The offending file is binary (or not a file): no line number expected. */
  noLine?: boolean;
}

// ---------------------------------------------------------------------------------------
// Building blocks

const P = pkg();
const CH = channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]);
const B0 = bundle('1.0.0');
const B1 = bundle('1.1.0');
const OK = Y(...basic());
/** foo's package and channel stable with `entries`, then `blobs`: one catalog.yaml. */
const inStable = (entries: (string | Obj)[], ...blobs: Obj[]): Record<string, string> => ({
  'catalog.yaml': Y(P, channel(entries), ...blobs),
});
/** The channel entry of foo at `version` replacing `replaces` (and skipping `skips`), as versions. */
const replacing = (version: string, replaces: string, skips?: string[]): Obj =>
  versionEntry(version, { replaces, skips });
/** The basic catalog minus the package blob (for cases that bring their own). */
const REST = Y(CH, B0, B1);

const b64 = (s: string): string => Buffer.from(s).toString('base64');
/** `before`, one raw byte (not UTF-8 on its own), then `after`. */
const withByte = (before: string, byte: number, after: string): Buffer =>
  Buffer.concat([Buffer.from(before), Buffer.from([byte]), Buffer.from(after)]);
const withProps = (version: string, ...extra: Obj[]): Obj =>
  bundle(version, { properties: [olmPackageProp(version), ...extra] });
/** A catalog with one bundle foo.v1.0.0 in channel stable, the bundle given. */
const oneBundle = (b: Obj, entry: Obj = { name: 'foo.v1.0.0' }): string => Y(P, channel([entry]), b);
/** A catalog with one entry, the entry given. */
const oneEntry = (entry: Obj): string => Y(P, channel([entry]), bundle('1.0.0'));
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const nested = (open: string, close: string, depth: number): string =>
  open.repeat(depth) + close.repeat(depth);

function aliasBomb(): string {
  const lines = ['schema: x.bomb', `a: &a [${Array(9).fill('lol').join(', ')}]`];
  const names = 'abcdefghi';
  for (let i = 1; i < names.length; i++) {
    const prev = names[i - 1] as string;
    lines.push(`${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------
// The table

const cases: Case[] = [
  // ---- 1.1/1.2 Loading: YAML --------------------------------------------------------------
  {
    name: 'L-YAML-SYNTAX: over-indented key',
    files: { 'catalog.yaml': 'schema: olm.package\nname: bar\n  defaultChannel: x\n' },
    rule: 'L-YAML-SYNTAX',
    msg: 'mapping values are not allowed in this context',
  },
  {
    name: 'L-YAML-SYNTAX: error in the second document (opm counts lines per document)',
    files: { 'catalog.yaml': Y(P) + '---\nschema: olm.channel\nname: stable\n  package: foo\n' },
    rule: 'L-YAML-SYNTAX',
    // opm counts lines from the document start ("line 3"); we give the file's line.
    msg: 'yaml: line 7: mapping values are not allowed in this context',
    opmMsg: 'yaml: line 3: mapping values are not allowed in this context',
  },
  {
    name: 'L-YAML-SYNTAX: tab in indentation',
    files: { 'catalog.yaml': 'schema: olm.package\nname: foo\nicon:\n\tmediatype: image/png\n' },
    rule: 'L-YAML-SYNTAX',
  },
  {
    name: 'L-YAML-SYNTAX: unquoted skipRange starting with >',
    files: {
      'catalog.yaml':
        Y(P, B0) +
        '---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n  skipRange: >=0.9.0 <1.0.0\n',
    },
    rule: 'L-YAML-SYNTAX',
  },
  {
    name: 'L-YAML-SYNTAX: control character',
    files: { 'catalog.yaml': 'schema: olm.package\nname: foo\ndescription: "a\x01b"\n' },
    rule: 'L-YAML-SYNTAX',
    msg: 'control characters are not allowed',
  },
  {
    name: 'L-YAML-SEPARATOR: --- followed by a tag',
    files: { 'catalog.yaml': Y(P) + '--- !!map\n' + REST },
    rule: 'L-YAML-SEPARATOR',
    msg: 'invalid Yaml document separator: !!map',
  },
  {
    name: 'L-YAML-SEPARATOR: --- followed by a value',
    files: { 'catalog.yaml': Y(P) + '--- schema: olm.channel\n' + REST },
    rule: 'L-YAML-SEPARATOR',
    msg: 'invalid Yaml document separator: schema: olm.channel',
  },
  {
    name: 'ok: a comment after ---',
    files: { 'catalog.yaml': Y(P) + '--- # the channel\n' + Y(CH) + '---   \n' + Y(B0, B1) },
  },
  { name: 'ok: a single leading ---', files: { 'catalog.yaml': '---\n' + OK } },
  { name: 'ok: a single trailing ---', files: { 'catalog.yaml': OK + '---\n' } },
  {
    name: 'L-YAML-DOCUMENT-END: a ... document end',
    files: { 'catalog.yaml': Y(P) + '...\n---\n' + REST + '...\n' },
    opmValid: true,
    rule: 'L-YAML-DOCUMENT-END',
    diff: 'opm drops what follows `...` in a document; we refuse the marker (docs/security.md)',
  },
  { name: 'ok: two --- in a row mid-file', files: { 'catalog.yaml': Y(P) + '---\n---\n' + REST } },
  {
    name: 'ok: --- inside an indented block scalar is not a separator',
    files: {
      'catalog.yaml':
        'schema: olm.package\nname: foo\ndefaultChannel: stable\ndescription: |\n  intro\n  ---\n  more\n---\n' +
        REST,
    },
  },
  { name: 'ok: CRLF line endings', files: { 'catalog.yaml': OK.replace(/\n/g, '\r\n') } },
  { name: 'ok: 0-byte files', files: { 'catalog.yaml': OK, 'empty.yaml': '', 'empty.json': '', noext: '' } },
  { name: 'ok: an empty directory', files: {} },
  {
    name: 'ok: several packages per file, mixed YAML and JSON, nested directories',
    files: {
      'a/b/c/foo.yaml': OK,
      'bar/index.json': J(
        pkg('bar'),
        channel(['bar.v1.0.0'], { package: 'bar' }),
        bundle('1.0.0', {}, 'bar'),
        pkg('baz'),
        channel(['baz.v2.0.0'], { package: 'baz' }),
        bundle('2.0.0', {}, 'baz'),
      ),
    },
  },

  // ---- L-EMPTY-DOCUMENT and separator runs -----------------------------------------------------
  {
    name: 'L-EMPTY-DOCUMENT: a file holding only a newline',
    files: { 'catalog.yaml': OK, 'empty.yaml': '\n' },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: a whitespace-only file',
    files: { 'catalog.yaml': OK, 'blank.yaml': '   \n\n  \n' },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: a license comment before the first ---',
    files: { 'catalog.yaml': '# Copyright 2026 Example\n# SPDX-License-Identifier: Apache-2.0\n---\n' + OK },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: a comment-only document between separators',
    files: { 'catalog.yaml': Y(P) + '---\n# channels follow\n---\n' + REST },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: a blank line after the final ---',
    files: { 'catalog.yaml': OK + '---\n\n' },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: two --- at file start',
    files: { 'catalog.yaml': '---\n---\n' + OK },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: two --- at file end',
    files: { 'catalog.yaml': OK + '---\n---\n' },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },
  {
    name: 'L-EMPTY-DOCUMENT: three --- in a row mid-file',
    files: { 'catalog.yaml': Y(P) + '---\n---\n---\n' + REST },
    rule: 'L-EMPTY-DOCUMENT',
    msg: "object '' is missing root schema field",
  },

  // ---- Files in the tree, .indexignore, symlinks -----------------------------------------------
  {
    name: 'L-NOT-OBJECT: README.md inside the root',
    files: { 'catalog.yaml': OK, 'README.md': '# Catalog\n\nThis catalog holds the foo operator.\n' },
    rule: 'L-NOT-OBJECT',
    msg: 'json: cannot unmarshal string into Go value of type map[string]interface {}',
  },
  {
    name: 'L-NOT-OBJECT: top-level array (a [ sends the file to YAML mode)',
    files: { 'catalog.json': '[' + JSON.stringify(P) + ']\n' },
    rule: 'L-NOT-OBJECT',
    msg: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
  },
  {
    name: 'L-NOT-OBJECT: a plain number document',
    files: { 'catalog.yaml': OK + '---\n42\n' },
    rule: 'L-NOT-OBJECT',
    msg: 'json: cannot unmarshal number into Go value of type map[string]interface {}',
  },
  {
    name: 'L-ENCODING: a PNG inside the root',
    files: { 'catalog.yaml': OK, 'icon.png': PNG },
    rule: ['L-ENCODING', 'L-YAML-SYNTAX'],
    msg: 'invalid leading UTF-8 octet',
    noLine: true,
  },
  {
    name: 'L-SCHEMA-MISSING: a GitHub workflow in a hidden directory',
    files: {
      'catalog.yaml': OK,
      '.github/workflows/ci.yaml': 'name: ci\non:\n  push: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n',
    },
    rule: 'L-SCHEMA-MISSING',
    msg: '"true":{"push":{}}',
  },
  {
    name: 'ok: .indexignore with * and !*.yaml keeps only YAML',
    files: {
      '.indexignore': '*\n!*.yaml\n',
      'catalog.yaml': OK,
      'README.md': '# Catalog\n\nprose\n',
      'icon.png': PNG,
      'broken.json': '{',
    },
  },
  {
    name: 'ok: .indexignore with comments, blank lines, dir/ and anchored patterns',
    files: {
      '.indexignore': '# not catalog content\n\n  docs/  \n/README.md\n*.txt\n',
      'catalog.yaml': OK,
      'README.md': 'prose',
      'docs/guide.md': 'prose',
      'docs/deeper/more.md': 'prose',
      'sub/notes.txt': 'prose',
    },
  },
  {
    name: 'ok: .indexignore in a subdirectory covers that subdirectory',
    files: { 'catalog.yaml': OK, 'sub/.indexignore': 'notes.txt\n', 'sub/notes.txt': 'prose' },
  },
  {
    name: 'L-NOT-OBJECT: .indexignore in a subdirectory does not cover its parent',
    files: { 'catalog.yaml': OK, 'sub/.indexignore': 'notes.txt\n', 'notes.txt': 'prose' },
    rule: 'L-NOT-OBJECT',
  },
  {
    name: 'L-NOT-OBJECT: a negation re-includes an ignored file',
    files: { 'catalog.yaml': OK, '.indexignore': '*.md\n!KEEP.md\n', 'a.md': 'prose', 'KEEP.md': 'prose' },
    rule: 'L-NOT-OBJECT',
  },
  {
    name: 'L-FS: a symlink to a directory',
    files: { 'sub/catalog.yaml': OK },
    setup: (dir) => symlinkSync('sub', join(dir, 'linkdir')),
    rule: 'L-FS',
    msg: 'linkdir: is a directory',
    noLine: true,
  },
  {
    name: 'ok: a symlink to a file inside the root is followed',
    files: { '.indexignore': 'real/\n', 'real/catalog.yaml': OK },
    setup: (dir) => symlinkSync('real/catalog.yaml', join(dir, 'catalog.yaml')),
  },
  {
    name: 'L-FS: a symlink to a file outside the root',
    files: { 'in/x.yaml': Y(P), 'out/rest.yaml': REST },
    setup: (dir) => symlinkSync('../out/rest.yaml', join(dir, 'in/rest.yaml')),
    root: 'in',
    opmValid: true,
    rule: 'L-FS',
    diff: 'we do not follow symlinks out of the catalog root (safety); opm follows them',
    noLine: true,
  },

  // ---- JSON streams and the JSON->YAML fallback -----------------------------------------------
  {
    name: 'ok: JSON objects concatenated without whitespace',
    files: {
      'c.json': basic()
        .map((o) => JSON.stringify(o))
        .join(''),
    },
  },
  { name: 'ok: JSON one object per line', files: { 'c.json': J(...basic()) } },
  { name: 'ok: pretty-printed JSON objects back to back', files: { 'c.json': prettyJsonStream(...basic()) } },
  {
    name: 'L-JSON-SYNTAX: first object broken and not YAML either',
    files: { 'c.json': '{"schema": "olm.package" "name": "foo"}\n' },
    rule: 'L-JSON-SYNTAX',
    msg: `invalid character '"' after object key:value pair`,
  },
  {
    name: 'L-JSON-SYNTAX: broken third object after two good ones (final)',
    files: { 'c.json': J(P, CH) + '{"schema": "olm.bundle",}\n' + J(B0, B1) },
    rule: 'L-JSON-SYNTAX',
    msg: "invalid character '}' looking for beginning of object key string",
  },
  {
    name: 'L-JSON-SYNTAX: truncated third object',
    files: { 'c.json': J(P, CH) + '{"schema": "olm.bundle", "name": "x"' },
    rule: 'L-JSON-SYNTAX',
    msg: 'unexpected EOF',
  },
  {
    name: 'QUIRK-JSON-YAML-FALLBACK: first JSON object with a trailing comma',
    files: {
      'p.json': '{"schema":"olm.package","name":"foo","defaultChannel":"stable",}\n',
      'rest.yaml': REST,
    },
    warning: 'QUIRK-JSON-YAML-FALLBACK',
  },
  {
    name: 'QUIRK-JSON-YAML-FALLBACK: one JSON object followed by --- YAML documents',
    files: { 'c.json': JSON.stringify(P) + '\n---\n' + REST },
    warning: 'QUIRK-JSON-YAML-FALLBACK',
  },
  {
    name: 'QUIRK-YAML-FIRST-NODE-ONLY: after a fallback on the first object only that object is read',
    files: {
      'a.json': '{"schema":"olm.package","name":"foo","defaultChannel":"stable",}\n' + J(P, P),
      'b.yaml': REST,
    },
    warning: 'QUIRK-YAML-FIRST-NODE-ONLY',
  },
  {
    name: 'B-NOT-IN-CHANNEL: after a fallback on the first object the channel that follows is never read',
    files: {
      'a.json': '{"schema":"olm.package","name":"foo","defaultChannel":"stable",}\n' + J(CH),
      'b.yaml': Y(B0, B1),
    },
    rule: 'B-NOT-IN-CHANNEL',
    msg: 'not found in any channel entries',
  },
  {
    name: 'QUIRK-YAML-FIRST-NODE-ONLY: a JSON file starting with a comment; the duplicate is never read',
    files: { 'p.json': '# the package\n' + J(P, P), 'rest.yaml': REST },
    warning: 'QUIRK-YAML-FIRST-NODE-ONLY',
  },
  {
    name: 'QUIRK-YAML-FIRST-NODE-ONLY: a JSON stream after a UTF-8 BOM; the duplicate is never read',
    files: { 'p.json': '\ufeff' + J(P, P), 'rest.yaml': REST },
    warning: 'QUIRK-YAML-FIRST-NODE-ONLY',
  },
  {
    name: 'QUIRK-YAML-FIRST-NODE-ONLY: a JSON stream after 5000 newlines is sniffed as YAML',
    files: { 'p.json': '\n'.repeat(5000) + J(P, P), 'rest.yaml': REST },
    warning: 'QUIRK-YAML-FIRST-NODE-ONLY',
  },
  {
    name: 'P-DUPLICATE: the same JSON stream without a BOM reads the duplicate',
    files: { 'p.json': J(P, P), 'rest.yaml': REST },
    rule: 'P-DUPLICATE',
    msg: 'duplicate package "foo"',
  },

  // ---- 1.3 Meta extraction ---------------------------------------------------------------------
  {
    name: 'L-META-DUPLICATE-KEYS: name and Name',
    files: {
      'catalog.yaml': 'schema: olm.package\nname: foo\nName: foo\ndefaultChannel: stable\n---\n' + REST,
    },
    rule: 'L-META-DUPLICATE-KEYS',
    msg: 'duplicate keys for key "name": [Name name]',
  },
  {
    name: 'L-META-DUPLICATE-KEYS: applies to unknown schemas too (JSON)',
    files: { 'catalog.yaml': OK, 'x.json': '{"schema":"x.custom","Package":"a","package":"b"}\n' },
    rule: 'L-META-DUPLICATE-KEYS',
    msg: 'duplicate keys for key "package": [Package package]',
  },
  {
    name: 'L-META-NOT-STRING: name: 4.12 unquoted',
    files: { 'catalog.yaml': 'schema: olm.package\nname: 4.12\n' },
    rule: 'L-META-NOT-STRING',
    msg: 'expected value for key "name" to be a string, got %!t(float64=4.12): 4.12',
  },
  {
    name: 'L-META-NOT-STRING: name: on (a YAML 1.1 bool)',
    files: { 'catalog.yaml': 'schema: olm.package\nname: on\n' },
    rule: 'L-META-NOT-STRING',
    msg: 'expected value for key "name" to be a string, got true: true',
  },
  {
    name: 'L-META-NOT-STRING: schema: null',
    files: { 'catalog.yaml': 'schema: null\nname: foo\n' },
    rule: 'L-META-NOT-STRING',
    msg: 'expected value for key "schema" to be a string, got %!t(<nil>): <nil>',
  },
  {
    name: 'L-META-NOT-STRING: numeric package in an unknown schema',
    files: { 'catalog.yaml': OK, 'x.json': '{"schema":"x.custom","package":1}\n' },
    rule: 'L-META-NOT-STRING',
    msg: 'expected value for key "package" to be a string, got %!t(float64=1): 1',
  },
  {
    name: 'QUIRK-DUPLICATE-KEY-LAST-WINS: YAML name: bar then name: foo',
    files: {
      'catalog.yaml': 'schema: olm.package\nname: bar\nname: foo\ndefaultChannel: stable\n---\n' + REST,
    },
    warning: 'QUIRK-DUPLICATE-KEY-LAST-WINS',
  },
  {
    name: 'QUIRK-DUPLICATE-KEY-LAST-WINS: JSON duplicate defaultChannel',
    files: {
      'p.json': '{"schema":"olm.package","name":"foo","defaultChannel":"beta","defaultChannel":"stable"}\n',
      'rest.yaml': REST,
    },
    warning: 'QUIRK-DUPLICATE-KEY-LAST-WINS',
  },
  {
    name: 'P-DEFAULT-CHANNEL-MISSING: duplicate keys, the last (wrong) one wins',
    files: {
      'catalog.yaml':
        'schema: olm.package\nname: foo\ndefaultChannel: stable\ndefaultChannel: beta\n---\n' + REST,
    },
    rule: 'P-DEFAULT-CHANNEL-MISSING',
    msg: 'channel must contain at least one bundle',
  },

  // ---- 1.4 Schema dispatch and typed decoding --------------------------------------------------
  {
    name: 'ok: Schema: capitalised key',
    files: { 'catalog.yaml': 'Schema: olm.package\nName: foo\nDefaultChannel: stable\n---\n' + REST },
  },
  {
    name: 'ok: case-insensitive field names (REPLACES, skiprange, defaultchannel, ENTRIES)',
    files: {
      'catalog.yaml':
        'schema: olm.package\nname: foo\ndefaultchannel: stable\n---\n' +
        "schema: olm.channel\npackage: foo\nname: stable\nENTRIES:\n- name: foo.v1.0.0\n- name: foo.v1.1.0\n  REPLACES: foo.v1.0.0\n  skiprange: '>=0.9.0 <1.1.0'\n---\n" +
        Y(B0, B1),
    },
  },
  {
    name: 'ok: unknown schemas are never checked',
    files: {
      'catalog.yaml': OK,
      'templates.yaml':
        'schema: olm.template.basic\nentries: 42\n---\nschema: OLM.Package\nname: Not_A_Valid_Name\n---\nschema: x.custom\npackage: nope\nname: whatever\n',
    },
  },
  {
    name: 'ok: unknown fields are ignored (replace: typo)',
    files: inStable(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0', replace: 'x' }], B0, B1),
  },
  {
    name: 'C-MULTIPLE-HEADS: a typo (replace:) silently drops the edge',
    files: {
      'catalog.yaml': Y(P, channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replace: 'foo.v1.0.0' }]), B0, B1),
    },
    rule: 'C-MULTIPLE-HEADS',
    msg: 'multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0',
  },
  {
    name: 'L-SCHEMA-MISSING: no schema key (JSON)',
    files: { 'catalog.yaml': OK, 'x.json': '{"name":"foo"}\n' },
    rule: 'L-SCHEMA-MISSING',
    msg: `object '{"name":"foo"}\n' is missing root schema field`,
  },
  {
    name: 'L-SCHEMA-MISSING: schema: ""',
    files: { 'catalog.yaml': OK + '---\nschema: ""\nname: bar\n' },
    rule: 'L-SCHEMA-MISSING',
    msg: `object '{"name":"bar","schema":""}\n' is missing root schema field`,
  },
  {
    name: 'L-SCHEMA-MISSING: a Kubernetes manifest in the tree',
    files: {
      'catalog.yaml': OK,
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
    },
    rule: 'L-SCHEMA-MISSING',
    msg: `object '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}\n' is missing root schema field`,
  },
  {
    name: 'L-PARSE-PACKAGE: icon base64data is not base64',
    files: {
      'catalog.yaml':
        Y(pkg('foo', { icon: { base64data: 'not base64!!', mediatype: 'image/png' } })) + '---\n' + REST,
    },
    rule: 'L-PARSE-PACKAGE',
    msg: 'parse package: illegal base64 data at input byte 3',
  },
  {
    name: 'L-PARSE-PACKAGE: defaultChannel: 4.12 unquoted',
    files: { 'catalog.yaml': 'schema: olm.package\nname: foo\ndefaultChannel: 4.12\n' },
    rule: 'L-PARSE-PACKAGE',
    msg: 'parse package: json: cannot unmarshal number into Go struct field Package.defaultChannel of type string',
  },
  {
    name: 'L-PARSE-PACKAGE: defaultChannel: yes (a YAML 1.1 bool)',
    files: { 'catalog.yaml': 'schema: olm.package\nname: foo\ndefaultChannel: yes\n---\n' + REST },
    rule: 'L-PARSE-PACKAGE',
    msg: 'parse package: json: cannot unmarshal bool into Go struct field Package.defaultChannel of type string',
  },
  {
    // Go decodes the keys in sorted order and reports the first error: defaultChannel's.
    name: 'L-PARSE-PACKAGE: icon not base64 and a number for defaultChannel, written after it',
    files: {
      'catalog.yaml':
        'schema: olm.package\nname: foo\nicon:\n  base64data: not base64!!\n  mediatype: image/png\ndefaultChannel: 5\n---\n' +
        REST,
    },
    rule: 'L-PARSE-PACKAGE',
    msg: 'parse package: json: cannot unmarshal number into Go struct field Package.defaultChannel of type string',
  },
  {
    name: 'L-PARSE-CHANNEL: entries is a mapping',
    files: {
      'catalog.yaml':
        Y(P, B0) + '---\nschema: olm.channel\npackage: foo\nname: stable\nentries: {name: foo.v1.0.0}\n',
    },
    rule: 'L-PARSE-CHANNEL',
    msg: 'parse channel: json: cannot unmarshal object into Go struct field',
  },
  {
    name: 'L-PARSE-CHANNEL: skips is a string',
    files: { 'catalog.yaml': Y(P, channel([{ name: 'foo.v1.0.0', skips: 'foo.v0.9.0' }]), B0) },
    rule: 'L-PARSE-CHANNEL',
    msg: 'parse channel: json: cannot unmarshal string into Go struct field',
  },
  {
    name: 'L-PARSE-BUNDLE: relatedImages is a mapping',
    files: { 'catalog.yaml': Y(P, CH, bundle('1.0.0', { relatedImages: { a: 'b' } }), B1) },
    rule: 'L-PARSE-BUNDLE',
    msg: 'parse bundle: json: cannot unmarshal object into Go struct field',
  },
  {
    name: 'L-PARSE-DEPRECATION: entries: "all"',
    files: { 'catalog.yaml': OK + '---\n' + Y(deprecations('all')) },
    rule: 'L-PARSE-DEPRECATION',
    msg: 'parse deprecation: json: cannot unmarshal string into Go struct field',
  },
  {
    name: 'L-BUNDLE-OBJECT: data is not base64',
    files: {
      'catalog.yaml': oneBundle(withProps('1.0.0', { type: 'olm.bundle.object', value: { data: '%%%' } })),
    },
    rule: 'L-BUNDLE-OBJECT',
    msg: 'read bundle objects: package "foo", bundle "foo.v1.0.0": parse property at index 1 as bundle object: illegal base64 data at input byte 0',
  },
  {
    name: 'L-BUNDLE-OBJECT: data is base64 of broken YAML',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', { type: 'olm.bundle.object', value: { data: b64('kind: [x') } }),
      ),
    },
    rule: 'L-BUNDLE-OBJECT',
    msg: 'read bundle objects: package "foo", bundle "foo.v1.0.0": convert bundle object property at index 1 to JSON',
  },
  {
    name: 'ok: olm.bundle.object makes image optional',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          image: undefined,
          properties: [
            olmPackageProp('1.0.0'),
            {
              type: 'olm.bundle.object',
              value: { data: b64('{"kind":"ClusterServiceVersion","apiVersion":"v1alpha1"}') },
            },
          ],
        }),
      ),
    },
  },

  // ---- 2. Package ------------------------------------------------------------------------------
  {
    name: 'P-NO-NAME: package without a name',
    files: { 'catalog.yaml': 'schema: olm.package\ndefaultChannel: stable\n---\n' + REST },
    rule: 'P-NO-NAME',
    msg: 'config contains package with no name',
  },
  {
    name: 'P-DUPLICATE: the same package in two files',
    files: { 'a.yaml': OK, 'b/again.json': J(P) },
    rule: 'P-DUPLICATE',
    msg: 'duplicate package "foo"',
  },
  {
    name: 'P-INVALID-NAME: upper case',
    files: { 'catalog.yaml': Y(pkg('Foo-Operator')) },
    rule: 'P-INVALID-NAME',
    msg: 'invalid package name "Foo-Operator": [a lowercase RFC 1123 label must consist of lower case alphanumeric characters',
  },
  {
    name: 'P-INVALID-NAME: dots',
    files: { 'catalog.yaml': Y(pkg('foo.operator')) },
    rule: 'P-INVALID-NAME',
    msg: 'must not contain dots',
  },
  {
    name: 'P-INVALID-NAME: 64 characters',
    files: { 'catalog.yaml': Y(pkg('a'.repeat(64))) },
    rule: 'P-INVALID-NAME',
    msg: 'must be no more than 63 characters',
  },
  {
    name: 'ok: package names of 63 characters and starting with a digit',
    files: {
      'a.yaml': Y(
        pkg('a'.repeat(63)),
        channel([`${'a'.repeat(63)}.v1.0.0`], { package: 'a'.repeat(63) }),
        bundle('1.0.0', {}, 'a'.repeat(63)),
      ),
      'b.yaml': Y(
        pkg('123-abc'),
        channel(['123-abc.v1.0.0'], { package: '123-abc' }),
        bundle('1.0.0', {}, '123-abc'),
      ),
    },
  },
  {
    name: 'P-NO-DEFAULT-CHANNEL: no defaultChannel',
    files: { 'catalog.yaml': Y(pkg('foo', { defaultChannel: undefined })) + '---\n' + REST },
    rule: 'P-NO-DEFAULT-CHANNEL',
    msg: 'default channel must be set',
  },
  {
    name: 'P-NO-CHANNELS: a package blob alone without defaultChannel',
    files: { 'catalog.yaml': Y(pkg('foo', { defaultChannel: undefined })) },
    rule: 'P-NO-CHANNELS',
    msg: 'package must contain at least one channel',
  },
  {
    name: 'P-DEFAULT-CHANNEL-MISSING: defaultChannel names no channel',
    files: { 'catalog.yaml': Y(pkg('foo', { defaultChannel: 'beta' })) + '---\n' + REST },
    rule: 'P-DEFAULT-CHANNEL-MISSING',
    msg: 'invalid channel "beta"',
  },
  {
    name: 'P-DEFAULT-CHANNEL-MISSING: a package blob alone with defaultChannel',
    files: { 'catalog.yaml': Y(P) },
    rule: 'P-DEFAULT-CHANNEL-MISSING',
    msg: 'channel must contain at least one bundle',
  },
  {
    name: 'P-DUPLICATE-VERSIONS: two bundles with version 1.0.0',
    files: inStable(
      ['foo.v1.0.0', replacing('1.0.0-dup', '1.0.0')],
      B0,
      bundle('1.0.0', { name: 'foo.v1.0.0-dup' }),
    ),
    rule: 'P-DUPLICATE-VERSIONS',
    msg: 'duplicate versions found in bundles: [{1.0.0: [foo.v1.0.0, foo.v1.0.0-dup]}]',
  },
  {
    name: 'ok: build metadata makes versions distinct',
    files: {
      'catalog.yaml': Y(
        P,
        channel(['foo.v1.0.0+1', { name: 'foo.v1.0.0+2', replaces: 'foo.v1.0.0+1' }]),
        bundle('1.0.0+1'),
        bundle('1.0.0+2', { image: 'quay.io/example/foo-bundle:v1.0.0-2' }),
      ).replace('quay.io/example/foo-bundle:v1.0.0+1', 'quay.io/example/foo-bundle:v1.0.0-1'),
    },
  },

  // ---- 3. Channel ------------------------------------------------------------------------------
  {
    name: 'C-UNKNOWN-PACKAGE: package: fooo',
    files: { 'catalog.yaml': Y(P, channel(['foo.v1.0.0'], { package: 'fooo' }), CH, B0, B1) },
    rule: 'C-UNKNOWN-PACKAGE',
    msg: 'unknown package "fooo" for channel "stable"',
  },
  {
    name: 'C-UNKNOWN-PACKAGE: a missing --- merges the package into the channel',
    files: {
      'catalog.yaml':
        'schema: olm.package\nname: foo\ndefaultChannel: stable\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n---\n' +
        Y(B0),
    },
    rule: 'C-UNKNOWN-PACKAGE',
    msg: 'unknown package "foo" for channel "stable"',
  },
  {
    name: 'C-NO-NAME: channel without a name',
    files: { 'catalog.yaml': OK + '---\n' + Y(channel(['foo.v1.0.0'], { name: undefined })) },
    rule: 'C-NO-NAME',
    msg: 'package "foo" contains channel with no name',
  },
  {
    name: 'C-DUPLICATE: stable defined in two files',
    files: { 'a.yaml': OK, 'b.yaml': Y(CH) },
    rule: 'C-DUPLICATE',
    msg: 'package "foo" has duplicate channel "stable"',
  },
  {
    name: 'C-DUPLICATE-ENTRY: an entry listed twice',
    files: inStable(['foo.v1.0.0', replacing('1.1.0', '1.0.0'), 'foo.v1.0.0'], B0, B1),
    rule: 'C-DUPLICATE-ENTRY',
    msg: 'invalid package "foo", channel "stable": duplicate entry "foo.v1.0.0"',
  },
  {
    name: 'C-ENTRY-NO-BUNDLE: an entry with no bundle blob',
    files: { 'catalog.yaml': Y(P, CH, B0) },
    rule: 'C-ENTRY-NO-BUNDLE',
    msg: 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v1.1.0]',
  },
  {
    name: 'C-ENTRY-NO-BUNDLE: missing blob in an earlier channel (the last-channel quirk)',
    files: { 'catalog.yaml': Y(P, CH, channel(['foo.v1.0.0'], { name: 'beta' }), B0) },
    // opm reports this as a bundle with no olm.package property and no image (only the
    // last-loaded channel gets the real check); we name the real problem for every channel.
    rule: 'C-ENTRY-NO-BUNDLE',
    msg: 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v1.1.0]',
    opmMsg: 'must be exactly one property with type "olm.package"',
  },
  {
    name: 'C-EMPTY: entries: []',
    files: { 'catalog.yaml': OK + '---\n' + Y(channel([], { name: 'beta' })) },
    rule: 'C-EMPTY',
    msg: 'channel must contain at least one bundle',
  },
  {
    name: 'C-NO-HEAD: a bundle replacing itself',
    files: { 'catalog.yaml': oneEntry({ name: 'foo.v1.0.0', replaces: 'foo.v1.0.0' }) },
    rule: 'C-NO-HEAD',
    msg: 'no channel head found in graph',
  },
  {
    name: 'C-NO-HEAD: a 2-cycle',
    files: inStable([replacing('1.0.0', '1.1.0'), replacing('1.1.0', '1.0.0')], B0, B1),
    rule: 'C-NO-HEAD',
    msg: 'no channel head found in graph',
  },
  {
    name: 'C-MULTIPLE-HEADS: two entries, no edge',
    files: { 'catalog.yaml': Y(P, channel(['foo.v1.0.0', 'foo.v1.1.0']), B0, B1) },
    rule: 'C-MULTIPLE-HEADS',
    msg: 'multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0',
  },
  {
    name: 'C-MULTIPLE-HEADS: skipRange is not an edge',
    files: inStable(['foo.v1.0.0', { name: 'foo.v1.1.0', skipRange: '>=1.0.0 <1.1.0' }], B0, B1),
    rule: 'C-MULTIPLE-HEADS',
    msg: 'multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0',
  },
  {
    name: 'C-CYCLE: head -> b -> c -> b',
    files: inStable(
      [replacing('1.2.0', '1.1.0'), replacing('1.1.0', '1.0.0'), replacing('1.0.0', '1.1.0')],
      B0,
      B1,
      bundle('1.2.0'),
    ),
    rule: 'C-CYCLE',
    msg: 'detected cycle in replaces chain of upgrade graph: foo.v1.1.0 -> foo.v1.0.0 -> foo.v1.1.0',
  },
  {
    name: 'C-STRANDED: v1.2.0 replaces and skips v1.1.0',
    files: inStable(
      ['foo.v1.0.0', replacing('1.1.0', '1.0.0'), replacing('1.2.0', '1.1.0', ['1.1.0'])],
      B0,
      B1,
      bundle('1.2.0'),
    ),
    rule: 'C-STRANDED',
    msg: 'channel contains one or more stranded bundles: foo.v1.0.0',
  },
  {
    name: 'C-STRANDED: a detached 2-cycle beside the chain',
    files: inStable(
      [
        replacing('1.2.0', '1.1.0'),
        replacing('1.1.0', '0.9.0'),
        replacing('1.0.0', '1.0.1'),
        replacing('1.0.1', '1.0.0'),
      ],
      B0,
      bundle('1.0.1'),
      B1,
      bundle('1.2.0'),
    ),
    rule: 'C-STRANDED',
    msg: 'channel contains one or more stranded bundles: foo.v1.0.0, foo.v1.0.1',
  },
  {
    name: 'ok: a tail replacing an entry that is not in the channel',
    files: inStable([replacing('1.0.0', '0.9.0'), replacing('1.1.0', '1.0.0')], B0, B1),
  },
  {
    name: 'ok: replaces naming a bundle of another channel, skips naming unknown bundles',
    files: {
      'catalog.yaml': Y(
        pkg('foo'),
        channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]),
        channel([{ name: 'foo.v1.1.0', replaces: 'foo.v1.0.0', skips: ['foo.v0.1.0', 'bar.v9.9.9'] }], {
          name: 'fast',
        }),
        B0,
        B1,
      ),
    },
  },
  {
    name: 'ok: the chain stops at a skipped bundle',
    files: inStable(
      ['foo.v1.0.0', replacing('1.1.0', '1.0.0'), replacing('1.2.0', '1.1.0', ['1.0.0'])],
      B0,
      B1,
      bundle('1.2.0'),
    ),
  },

  // ---- 4. Bundle -------------------------------------------------------------------------------
  {
    name: 'B-NO-PACKAGE: bundle without package',
    files: { 'catalog.yaml': Y(P, CH, bundle('1.0.0', { package: undefined }), B1) },
    rule: 'B-NO-PACKAGE',
    msg: 'package name must be set for bundle "foo.v1.0.0"',
  },
  {
    name: 'B-UNKNOWN-PACKAGE: package: bar',
    files: { 'catalog.yaml': OK + '---\n' + Y(bundle('1.0.0', {}, 'bar')) },
    rule: 'B-UNKNOWN-PACKAGE',
    msg: 'unknown package "bar" for bundle "bar.v1.0.0"',
  },
  {
    name: 'B-DUPLICATE: the same bundle in two files',
    files: { 'a.yaml': OK, 'b.json': J(B0) },
    rule: 'B-DUPLICATE',
    msg: 'package "foo" has duplicate bundle "foo.v1.0.0"',
  },
  {
    name: 'B-IMAGE-PULLSPEC: upper-case repository',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { image: 'quay.io/Example/x:v1' })) },
    rule: 'B-IMAGE-PULLSPEC',
    msg: 'package "foo" bundle "foo.v1.0.0" image: invalid image pull spec "quay.io/Example/x:v1": invalid reference format: repository name must be lowercase',
  },
  {
    name: 'B-IMAGE-PULLSPEC: short digest',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { image: 'quay.io/example/x@sha256:deadbeef' })) },
    rule: 'B-IMAGE-PULLSPEC',
    msg: 'invalid image pull spec "quay.io/example/x@sha256:deadbeef": invalid reference format',
  },
  {
    name: 'B-IMAGE-PULLSPEC: + in the tag',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { image: 'quay.io/example/x:v1.0.0+build.1' })) },
    rule: 'B-IMAGE-PULLSPEC',
    msg: 'invalid image pull spec "quay.io/example/x:v1.0.0+build.1": invalid reference format',
  },
  {
    name: 'B-IMAGE-PULLSPEC: a 64-hex-character name',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { image: 'ab'.repeat(32) })) },
    rule: 'B-IMAGE-PULLSPEC',
    msg: 'cannot specify 64-byte hexadecimal strings',
  },
  {
    name: 'B-RELATED-IMAGE-PULLSPEC: a space in the image',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', { relatedImages: [{ name: 'op', image: 'quay.io/x/foo bar:v1' }] }),
      ),
    },
    rule: 'B-RELATED-IMAGE-PULLSPEC',
    msg: 'package "foo" bundle "foo.v1.0.0" relatedImages[0].image: invalid image pull spec "quay.io/x/foo bar:v1": invalid reference format',
  },
  {
    name: 'ok: relatedImages[].image "" and name-only and digest images',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          image: 'busybox',
          relatedImages: [
            { name: 'empty', image: '' },
            { name: 'short', image: 'nginx' },
            { name: 'pinned', image: `quay.io/example/op@sha256:${'a'.repeat(64)}` },
            { name: 'port', image: 'localhost:5000/op:v1' },
          ],
        }),
      ),
    },
  },
  {
    name: 'B-NOT-IN-CHANNEL: a bundle listed in no channel',
    files: { 'catalog.yaml': OK + '---\n' + Y(bundle('2.0.0')) },
    rule: 'B-NOT-IN-CHANNEL',
    msg: 'package "foo", bundle "foo.v2.0.0" not found in any channel entries',
  },
  {
    name: 'B-NOT-IN-CHANNEL: a bundle without a name',
    files: { 'catalog.yaml': OK + '---\n' + Y(bundle('2.0.0', { name: undefined })) },
    rule: 'B-NOT-IN-CHANNEL',
    msg: 'package "foo", bundle "" not found in any channel entries',
  },
  {
    name: 'B-NO-NAME: a bundle without a name and an entry named ""',
    files: { 'catalog.yaml': Y(P, channel([{ name: '' }]), bundle('1.0.0', { name: undefined })) },
    rule: 'B-NO-NAME',
    msg: 'name must be set',
  },
  {
    name: 'B-NAME-NOT-NORMALIZED: release 2 but name foo.v1.0.0-2',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          name: 'foo.v1.0.0-2',
          properties: [olmPackageProp('1.0.0', 'foo', { release: '2' })],
        }),
        { name: 'foo.v1.0.0-2' },
      ),
    },
    rule: 'B-NAME-NOT-NORMALIZED',
    msg: 'name "foo.v1.0.0-2" does not match normalized name "foo-v1.0.0-2"',
  },
  {
    name: 'ok: release with the normalized name',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          name: 'foo-v1.0.0-2',
          properties: [olmPackageProp('1.0.0', 'foo', { release: '2' })],
        }),
        { name: 'foo-v1.0.0-2' },
      ),
    },
  },
  {
    name: 'P-DUPLICATE-VERSIONS: version 1.0.0-2 and 1.0.0 release 2 collide',
    files: {
      'catalog.yaml': Y(
        P,
        channel(['foo.v1.0.0-2', { name: 'foo-v1.0.0-2', replaces: 'foo.v1.0.0-2' }]),
        bundle('1.0.0-2'),
        bundle('1.0.0', {
          name: 'foo-v1.0.0-2',
          properties: [olmPackageProp('1.0.0', 'foo', { release: '2' })],
        }),
      ),
    },
    rule: 'P-DUPLICATE-VERSIONS',
    msg: 'duplicate versions found in bundles',
  },
  {
    name: 'B-NO-IMAGE: image ""',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { image: '' })) },
    rule: 'B-NO-IMAGE',
    msg: 'bundle image must be set',
  },
  {
    name: 'B-NO-IMAGE: olm.csv.metadata does not make image optional',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          image: undefined,
          properties: [olmPackageProp('1.0.0'), { type: 'olm.csv.metadata', value: { keywords: ['a'] } }],
        }),
      ),
    },
    rule: 'B-NO-IMAGE',
    msg: 'bundle image must be set',
  },
  {
    name: 'B-SKIP-EMPTY: an empty skip',
    files: { 'catalog.yaml': oneEntry({ name: 'foo.v1.0.0', skips: ['foo.v0.9.0', ''] }) },
    rule: 'B-SKIP-EMPTY',
    msg: 'skip[1] is empty',
  },
  {
    name: 'B-BUILD-METADATA-WITH-RELEASE: 1.0.0+git.abc with release 1',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          name: 'foo-v1.0.0+git.abc-1',
          properties: [olmPackageProp('1.0.0+git.abc', 'foo', { release: '1' })],
        }),
        { name: 'foo-v1.0.0+git.abc-1' },
      ),
    },
    rule: 'B-BUILD-METADATA-WITH-RELEASE',
    msg: 'cannot use build metadata in version with a release version',
  },
  {
    name: 'ok: bundle name need not match its version; no bundle-level replaces',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', { properties: [olmPackageProp('3.0.0')], replaces: 'nothing' }),
      ),
    },
  },
  {
    name: 'ok: property payloads that are not checked',
    files: {
      'catalog.yaml': oneBundle(
        withProps(
          '1.0.0',
          { type: 'olm.package.required', value: { packageName: 'bar', versionRange: 'not a range!' } },
          { value: 'no type at all' },
          { type: 'x.custom', value: [1, 'two', null, { three: true }] },
          { type: 'olm.Package', value: 'unknown type, any value' },
          { type: 'olm.constraint', value: { cel: { rule: 'garbage(' } } },
          { type: 'olm.channel', value: { channelName: 'stable', priority: 5 } },
        ),
      ),
    },
  },

  // ---- 5. Properties ---------------------------------------------------------------------------
  {
    name: 'PR-PARSE: olm.gvk value is a string',
    files: {
      'catalog.yaml': oneBundle(withProps('1.0.0', { type: 'olm.gvk', value: 'example.com/v1/Foo' })),
    },
    rule: 'PR-PARSE',
    msg: 'parse properties for bundle "foo.v1.0.0": parse property[1] of type "olm.gvk": json: cannot unmarshal string into Go value of type property.GVK',
  },
  {
    name: 'PR-PARSE: value missing',
    files: { 'catalog.yaml': oneBundle(withProps('1.0.0', { type: 'olm.gvk' })) },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.gvk": unexpected end of JSON input',
  },
  {
    name: 'PR-PARSE: olm.csv.metadata keywords is a string',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', { type: 'olm.csv.metadata', value: { keywords: 'a, b' } }),
      ),
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.csv.metadata": json: cannot unmarshal string into Go struct field',
  },
  {
    name: 'PR-PARSE: YAML version: 1.0 unquoted',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0\n',
    },
    rule: 'PR-PARSE',
    msg: 'cannot unmarshal number into Go struct field Package.version of type string',
  },
  {
    name: 'PR-PARSE: olm.channel priority "high" (v1.73.0 decodes it as int)',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', { type: 'olm.channel', value: { channelName: 'stable', priority: 'high' } }),
      ),
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.channel"',
  },
  {
    // Go decodes the keys in sorted order (group before version) and reports the first error.
    name: 'PR-PARSE: two fields of the wrong type, the first in key order is reported',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', { type: 'olm.gvk', value: { version: 5, kind: 'K', group: true } }),
      ),
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.gvk": json: cannot unmarshal bool into Go struct field GVK.group of type string',
  },
  {
    // Both spellings are decoded (Group sorts first): its type error counts, though group wins.
    name: 'PR-PARSE: a right value and another spelling of the field with a wrong one',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: olm.gvk\n  value:\n    group: g\n    kind: K\n    version: v1\n    Group: 5\n',
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.gvk": json: cannot unmarshal number into Go struct field GVK.group of type string',
  },
  {
    // In key order all the way down: annotations (a before b) before crdDescriptions.
    name: 'PR-PARSE: wrong values in a map and in a nested struct, the first in key order is reported',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', {
          type: 'olm.csv.metadata',
          value: {
            crdDescriptions: { owned: [{ version: 5, kind: 6 }] },
            annotations: { b: 5, a: true },
          },
        }),
      ),
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.csv.metadata": json: cannot unmarshal bool into Go struct field CSVMetadata.annotations of type string',
  },
  {
    name: 'PR-PARSE: two wrong fields of a nested struct, the first in key order is reported',
    files: {
      'catalog.yaml': oneBundle(
        withProps('1.0.0', {
          type: 'olm.csv.metadata',
          value: { crdDescriptions: { owned: [{ version: 5, kind: true }] } },
        }),
      ),
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.csv.metadata": json: cannot unmarshal bool into Go struct field CRDDescription.crdDescriptions.owned.kind of type string',
  },
  {
    // strconv.ParseFloat fails past float64, and go-yaml keeps the text: a string, as group wants.
    name: 'ok: 1e400, -1e400 and .1e400 are text to go-yaml (block and flow YAML)',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: olm.gvk\n  value:\n    group: 1e400\n    kind: K\n    version: v1\n' +
        '- type: olm.gvk\n  value: {group: -1e400, kind: K, version: v1}\n' +
        '- type: olm.gvk\n  value: {group: .1e400, kind: K, version: v1}\n',
    },
  },
  {
    // JSON has no infinity or NaN: sigs.k8s.io/yaml's conversion fails, and the document with it.
    name: 'L-YAML-SYNTAX: .inf as a property value (a type opm does not know) cannot be JSON',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: example.custom\n  value:\n    weight: .inf\n',
    },
    rule: 'L-YAML-SYNTAX',
    msg: 'error converting YAML to JSON: json: unsupported value: +Inf',
  },
  {
    // In a value validation only type-checks (read without being built by `validate`).
    name: 'L-YAML-SYNTAX: .nan and -.inf in olm.gvk values; Go meets the NaN first (sorted keys)',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: olm.gvk\n  value:\n    version: -.inf\n    group: .nan\n    kind: K\n',
    },
    rule: 'L-YAML-SYNTAX',
    msg: 'error converting YAML to JSON: json: unsupported value: NaN',
  },
  {
    // A key is text to JSON: go-yaml's .inf key becomes the string "+Inf".
    name: 'L-YAML-KEY: .inf as a key',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: example.custom\n  value:\n    .inf: 1\n',
    },
    opmValid: true,
    rule: 'L-YAML-KEY',
    diff: 'opm writes a float key with float32 precision; we refuse keys that are not text or whole numbers',
  },
  {
    // A float that underflows is a number (0), not text.
    name: 'PR-PARSE: 1e-400 is a number to go-yaml',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: olm.gvk\n  value:\n    group: 1e-400\n    kind: K\n    version: v1\n',
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.gvk": json: cannot unmarshal number into Go struct field GVK.group of type string',
  },
  {
    // Written as JSON writes a float64 (-9223372036854776000): past int64.
    name: 'PR-PARSE: olm.channel priority -2^63',
    files: {
      'catalog.yaml':
        Y(P, channel(['foo.v1.0.0'])) +
        '---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n' +
        '- type: olm.channel\n  value:\n    channelName: stable\n    priority: -9223372036854775808\n',
    },
    rule: 'PR-PARSE',
    msg: 'parse property[1] of type "olm.channel": json: cannot unmarshal number -9223372036854776000 into Go struct field Channel.priority of type int',
  },
  {
    name: 'PR-PACKAGE-COUNT: no olm.package property',
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { properties: [] })) },
    rule: 'PR-PACKAGE-COUNT',
    msg: 'package "foo" bundle "foo.v1.0.0" must have exactly 1 "olm.package" property, found 0',
  },
  {
    name: 'PR-PACKAGE-COUNT: olm.Package is another type',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          properties: [{ type: 'olm.Package', value: { packageName: 'foo', version: '1.0.0' } }],
        }),
      ),
    },
    rule: 'PR-PACKAGE-COUNT',
    msg: 'must have exactly 1 "olm.package" property, found 0',
  },
  {
    name: 'PR-PACKAGE-COUNT: two olm.package properties',
    files: { 'catalog.yaml': oneBundle(withProps('1.0.0', olmPackageProp('1.0.0'))) },
    rule: 'PR-PACKAGE-COUNT',
    msg: 'must have exactly 1 "olm.package" property, found 2',
  },
  {
    name: 'PR-PACKAGE-MISMATCH: packageName foo-operator',
    files: {
      'catalog.yaml': oneBundle(bundle('1.0.0', { properties: [olmPackageProp('1.0.0', 'foo-operator')] })),
    },
    rule: 'PR-PACKAGE-MISMATCH',
    msg: 'package "foo" does not match "olm.package" property "foo-operator"',
  },
  ...(
    [
      ['v1.0.0', 'Invalid character(s) found in major number "v1"'],
      ['1.0', 'No Major.Minor.Patch elements found'],
      ['01.0.0', 'Major number must not contain leading zeroes "01"'],
      ['', 'Version string empty'],
      ['1.0.0-', 'Prerelease is empty'],
      ['1.0.0-01', 'Numeric PreRelease version must not contain leading zeroes "01"'],
      ['1.0.0+', 'Build meta data is empty'],
      ['1.0.0+a_b', 'Invalid character(s) found in build meta data "a_b"'],
      ['1.0.0 ', 'Invalid character(s) found in patch number "0 "'],
      ['99999999999999999999.0.0', ''],
    ] as const
  ).map(([version, why]): Case => ({
    name: `PR-VERSION: ${JSON.stringify(version)}`,
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { properties: [olmPackageProp(version)] })) },
    rule: 'PR-VERSION',
    msg: `error parsing bundle "foo.v1.0.0" version ${JSON.stringify(version)}: ${why}`,
  })),
  ...['0.0.0', '1.0.0-0', '1.0.0+001', '1.0.0-alpha.1+build.5', '1.0.0-x-y.z--'].map((version): Case => ({
    name: `ok: version ${version}`,
    files: { 'catalog.yaml': oneBundle(bundle('1.0.0', { properties: [olmPackageProp(version)] })) },
  })),
  {
    name: 'PR-RELEASE: release rc_1',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          name: 'foo-v1.0.0-rc_1',
          properties: [olmPackageProp('1.0.0', 'foo', { release: 'rc_1' })],
        }),
        { name: 'foo-v1.0.0-rc_1' },
      ),
    },
    rule: 'PR-RELEASE',
    msg: 'error parsing bundle "foo-v1.0.0-rc_1" release version "rc_1": invalid release "rc_1": segment 0',
  },
  {
    name: 'PR-RELEASE: 21 characters',
    files: {
      'catalog.yaml': oneBundle(
        bundle('1.0.0', {
          name: `foo-v1.0.0-${'a'.repeat(21)}`,
          properties: [olmPackageProp('1.0.0', 'foo', { release: 'a'.repeat(21) })],
        }),
        { name: `foo-v1.0.0-${'a'.repeat(21)}` },
      ),
    },
    rule: 'PR-RELEASE',
    msg: `invalid release "${'a'.repeat(21)}": exceeds maximum length of 20 characters`,
  },

  // ---- skipRange -------------------------------------------------------------------------------
  ...['~1.1.0', '>=1.0.0, <1.2.0', '>=v1.0.0', '>=1.0 <1.2', '>=1.0.0 ||', '^1.0.0', '*', '=>1.0.0'].map(
    (range): Case => ({
      name: `B-SKIPRANGE: ${JSON.stringify(range)}`,
      files: { 'catalog.yaml': oneEntry({ name: 'foo.v1.0.0', skipRange: range }) },
      rule: 'B-SKIPRANGE',
      msg: `invalid skipRange ${JSON.stringify(range)}: `,
    }),
  ),
  ...[
    '>=1.0.0 <1.1.0',
    '>=1.0.0 <1.1.0 || >=2.0.0 <2.1.0',
    '1.0.0 - 2.0.0',
    '> 1.0.0',
    '<1.1.0',
    '>=1.0.0-0 <1.1.0',
    '!1.0.5',
    '1.x',
    '',
  ].map((range): Case => ({
    name: `ok: skipRange ${JSON.stringify(range)}`,
    files: { 'catalog.yaml': oneEntry({ name: 'foo.v1.0.0', skipRange: range }) },
  })),

  // ---- 6. Deprecations -------------------------------------------------------------------------
  {
    name: 'ok: deprecations of a bundle, a channel and the package; entries: []',
    files: {
      'catalog.yaml': OK,
      'dep.yaml': Y(
        deprecations([
          { reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'old' },
          { reference: { schema: 'olm.channel', name: 'stable' }, message: 'use fast' },
          { reference: { schema: 'olm.package' }, message: 'gone' },
        ]),
      ),
      'bar.yaml': Y(
        pkg('bar'),
        channel(['bar.v1.0.0'], { package: 'bar' }),
        bundle('1.0.0', {}, 'bar'),
        deprecations([], { package: 'bar' }),
      ),
    },
  },
  {
    name: 'DEP-NO-PACKAGE: deprecation without package',
    files: { 'catalog.yaml': OK + '---\n' + Y(deprecations([], { package: undefined })) },
    rule: 'DEP-NO-PACKAGE',
    msg: 'package name must be set for deprecation item 0',
  },
  {
    name: 'DEP-UNKNOWN-PACKAGE: package: bar',
    files: { 'catalog.yaml': OK + '---\n' + Y(deprecations([], { package: 'bar' })) },
    rule: 'DEP-UNKNOWN-PACKAGE',
    msg: 'cannot apply deprecations to an unknown package "bar"',
  },
  {
    name: 'DEP-DUPLICATE: two deprecation blobs for foo in two files',
    files: { 'catalog.yaml': OK, 'd1.yaml': Y(deprecations([])), 'd2.json': J(deprecations([])) },
    rule: 'DEP-DUPLICATE',
    msg: 'expected a maximum of one deprecation per package: "foo"',
  },
  {
    name: 'DEP-ENTRY-NO-SCHEMA: reference without schema',
    files: { 'catalog.yaml': OK + '---\n' + Y(deprecations([{ reference: { name: 'x' }, message: 'm' }])) },
    rule: 'DEP-ENTRY-NO-SCHEMA',
    msg: 'schema must be set for deprecation entry [0] for package "foo"',
  },
  {
    name: 'DEP-DUPLICATE-ENTRY: the same bundle twice',
    files: {
      'catalog.yaml':
        OK +
        '---\n' +
        Y(
          deprecations([
            { reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'a' },
            { reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'b' },
          ]),
        ),
    },
    rule: 'DEP-DUPLICATE-ENTRY',
    msg: 'duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.bundle", Name:"foo.v1.0.0"} for package "foo"',
  },
  {
    name: 'DEP-DUPLICATE-ENTRY: two olm.package entries',
    files: {
      'catalog.yaml':
        OK +
        '---\n' +
        Y(
          deprecations([
            { reference: { schema: 'olm.package' }, message: 'a' },
            { reference: { schema: 'olm.package' }, message: 'a' },
          ]),
        ),
    },
    rule: 'DEP-DUPLICATE-ENTRY',
    msg: 'duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.package", Name:""} for package "foo"',
  },
  {
    name: 'DEP-BUNDLE-NOT-FOUND: a bundle that does not exist',
    files: {
      'catalog.yaml':
        OK +
        '---\n' +
        Y(deprecations([{ reference: { schema: 'olm.bundle', name: 'foo.v9.0.0' }, message: 'm' }])),
    },
    rule: 'DEP-BUNDLE-NOT-FOUND',
    msg: 'cannot deprecate bundle "foo.v9.0.0" for package "foo": bundle not found',
  },
  {
    name: 'DEP-CHANNEL-NOT-FOUND: a channel that does not exist',
    files: {
      'catalog.yaml':
        OK +
        '---\n' +
        Y(deprecations([{ reference: { schema: 'olm.channel', name: 'beta' }, message: 'm' }])),
    },
    rule: 'DEP-CHANNEL-NOT-FOUND',
    msg: 'cannot deprecate channel "beta" for package "foo": channel not found',
  },
  {
    name: 'P-DEFAULT-CHANNEL-MISSING: deprecating a default channel that exists only by name',
    files: {
      'catalog.yaml':
        Y(pkg('foo', { defaultChannel: 'beta' })) +
        '---\n' +
        REST +
        '---\n' +
        Y(deprecations([{ reference: { schema: 'olm.channel', name: 'beta' }, message: 'm' }])),
    },
    rule: 'P-DEFAULT-CHANNEL-MISSING',
    msg: 'invalid channel "beta"',
    absent: ['DEP-CHANNEL-NOT-FOUND'],
  },
  {
    name: 'DEP-PACKAGE-NAME-SET: olm.package reference with a name',
    files: {
      'catalog.yaml':
        OK + '---\n' + Y(deprecations([{ reference: { schema: 'olm.package', name: 'foo' }, message: 'm' }])),
    },
    rule: 'DEP-PACKAGE-NAME-SET',
    msg: 'package name must be empty for deprecated package "foo" (specified "foo")',
  },
  {
    name: 'DEP-UNKNOWN-SCHEMA: schema olm.csv',
    files: {
      'catalog.yaml':
        OK + '---\n' + Y(deprecations([{ reference: { schema: 'olm.csv', name: 'x' }, message: 'm' }])),
    },
    rule: 'DEP-UNKNOWN-SCHEMA',
    msg: 'cannot deprecate object declcfg.PackageScopedReference{Schema:"olm.csv", Name:"x"} referenced by entry 0 for package "foo": object schema unknown',
  },
  {
    name: 'DEP-MESSAGE-EMPTY: message ""',
    files: {
      'catalog.yaml':
        OK +
        '---\n' +
        Y(deprecations([{ reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: '' }])),
    },
    rule: 'DEP-MESSAGE-EMPTY',
    msg: 'invalid deprecation: message must be set',
  },
  {
    name: 'DEP-MESSAGE-EMPTY: no message on a package deprecation',
    files: { 'catalog.yaml': OK + '---\n' + Y(deprecations([{ reference: { schema: 'olm.package' } }])) },
    rule: 'DEP-MESSAGE-EMPTY',
    msg: 'invalid deprecation: message must be set',
  },

  // ---- Bad input ------------------------------------------------------------------------------
  {
    name: 'L-ENCODING: invalid UTF-8 in a YAML file',
    files: {
      'catalog.yaml': withByte(OK + '---\nschema: x.note\ntext: caf', 0xe9, ' au lait\n'),
    },
    rule: ['L-ENCODING', 'L-YAML-SYNTAX'],
    msg: 'yaml: invalid trailing UTF-8 octet',
  },
  {
    name: 'ok: invalid UTF-8 inside a JSON string (Go substitutes U+FFFD)',
    files: {
      'catalog.yaml': REST,
      'p.json': withByte(
        '{"schema":"olm.package","name":"foo","defaultChannel":"stable","description":"caf',
        0xe9,
        ' au lait"}\n',
      ),
    },
  },
  {
    name: 'L-JSON-SYNTAX: invalid UTF-8 outside a JSON string',
    files: {
      'catalog.yaml': REST,
      'p.json': withByte('{"schema":"olm.package",', 0xff, '"name":"foo"}\n'),
    },
    rule: ['L-JSON-SYNTAX', 'L-ENCODING'],
    msg: "invalid character 'ÿ' looking for beginning of object key string",
  },
  {
    name: 'L-JSON-SYNTAX: invalid UTF-8 where JSON expects a key; the YAML fallback fails too',
    files: {
      'catalog.yaml': REST,
      'p.json': withByte('{"schema":"olm.package","name":"foo","defaultChannel":"stable",', 0xff, '}\n'),
    },
    rule: ['L-JSON-SYNTAX', 'L-ENCODING'],
    msg: "invalid character 'ÿ' looking for beginning of object key string",
  },
  {
    name: 'L-ALIASES: billion laughs (9 levels of 9 aliases)',
    files: { 'catalog.yaml': OK, 'bomb.yaml': aliasBomb() },
    rule: 'L-ALIASES',
    msg: 'excessive aliasing',
  },
  {
    name: 'L-TOO-DEEP: 1500 levels of YAML flow nesting',
    files: { 'catalog.yaml': OK, 'deep.yaml': `schema: x.deep\ndata: ${nested('[', ']', 1500)}\n` },
    opmValid: true,
    rule: 'L-TOO-DEEP',
    diff: 'we cap nesting depth to bound parser recursion; opm accepts up to 10000 levels',
  },
  {
    name: 'L-TOO-DEEP: 1500 levels of JSON nesting',
    files: { 'catalog.yaml': OK, 'deep.json': `{"schema":"x.deep","data":${nested('[', ']', 1500)}}\n` },
    opmValid: true,
    rule: 'L-TOO-DEEP',
    diff: 'we cap nesting depth to bound parser recursion; opm accepts up to 10000 levels',
  },
  {
    name: 'L-TOO-DEEP: 1500 levels of JSON objects in a package field',
    files: {
      'catalog.yaml': REST,
      'p.json': `{"schema":"olm.package","name":"foo","defaultChannel":"stable","x":${'{"a":'.repeat(1500)}1${'}'.repeat(1500)}}\n`,
    },
    opmValid: true,
    rule: 'L-TOO-DEEP',
    diff: 'we cap nesting depth to bound parser recursion; opm accepts up to 10000 levels',
  },
  {
    name: 'L-FILE-TOO-LARGE: a valid 2 KB file with maxFileSize 1000',
    files: { 'catalog.yaml': Y(pkg('foo', { description: 'x'.repeat(2000) })) + '---\n' + REST },
    options: { maxFileSize: 1000 },
    opmValid: true,
    rule: 'L-FILE-TOO-LARGE',
    diff: 'size limit is ours (opm has none); here set to 1000 bytes',
    noLine: true,
  },
];

// ---------------------------------------------------------------------------------------
// Running the table

const ruleList = (c: Case): string[] =>
  c.rule === undefined ? [] : Array.isArray(c.rule) ? c.rule : [c.rule];
const opmVerdict = (c: Case): boolean => c.opmValid ?? c.rule === undefined;
const ourVerdict = (c: Case): boolean => (c.diff ? !opmVerdict(c) : opmVerdict(c));

async function withTree<T>(c: Case, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = writeTree(c.files);
  try {
    c.setup?.(dir);
    return await fn(c.root ? join(dir, c.root) : dir);
  } finally {
    removeTree(dir);
  }
}

const show = (ds: { rule: string; level: string; message: string; file?: string; line?: number }[]): string =>
  ds.map((d) => `${d.level} ${d.rule} ${d.file ?? '-'}:${d.line ?? '-'} ${d.message}`).join('\n') || '(none)';

describe('rule table', () => {
  it('has unique case names', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it('covers every rule id of the rule book index (CLI-NOT-DIR excepted)', () => {
    const index = [
      'L-YAML-SYNTAX',
      'L-YAML-SEPARATOR',
      'L-JSON-SYNTAX',
      'L-NOT-OBJECT',
      'L-EMPTY-DOCUMENT',
      'L-FS',
      'L-META-DUPLICATE-KEYS',
      'L-META-NOT-STRING',
      'L-SCHEMA-MISSING',
      'L-PARSE-PACKAGE',
      'L-PARSE-CHANNEL',
      'L-PARSE-BUNDLE',
      'L-PARSE-DEPRECATION',
      'L-BUNDLE-OBJECT',
      'P-NO-NAME',
      'P-DUPLICATE',
      'P-INVALID-NAME',
      'P-NO-DEFAULT-CHANNEL',
      'P-NO-CHANNELS',
      'P-DEFAULT-CHANNEL-MISSING',
      'P-DUPLICATE-VERSIONS',
      'C-UNKNOWN-PACKAGE',
      'C-NO-NAME',
      'C-DUPLICATE',
      'C-DUPLICATE-ENTRY',
      'C-ENTRY-NO-BUNDLE',
      'C-EMPTY',
      'C-NO-HEAD',
      'C-MULTIPLE-HEADS',
      'C-CYCLE',
      'C-STRANDED',
      'B-NO-PACKAGE',
      'B-UNKNOWN-PACKAGE',
      'B-DUPLICATE',
      'B-IMAGE-PULLSPEC',
      'B-RELATED-IMAGE-PULLSPEC',
      'B-NOT-IN-CHANNEL',
      'B-NO-NAME',
      'B-NAME-NOT-NORMALIZED',
      'B-NO-IMAGE',
      'B-SKIP-EMPTY',
      'B-SKIPRANGE',
      'B-BUILD-METADATA-WITH-RELEASE',
      'PR-PARSE',
      'PR-PACKAGE-COUNT',
      'PR-PACKAGE-MISMATCH',
      'PR-VERSION',
      'PR-RELEASE',
      'DEP-NO-PACKAGE',
      'DEP-UNKNOWN-PACKAGE',
      'DEP-DUPLICATE',
      'DEP-ENTRY-NO-SCHEMA',
      'DEP-DUPLICATE-ENTRY',
      'DEP-BUNDLE-NOT-FOUND',
      'DEP-CHANNEL-NOT-FOUND',
      'DEP-PACKAGE-NAME-SET',
      'DEP-UNKNOWN-SCHEMA',
      'DEP-MESSAGE-EMPTY',
      'QUIRK-JSON-YAML-FALLBACK',
      'QUIRK-YAML-FIRST-NODE-ONLY',
      'QUIRK-DUPLICATE-KEY-LAST-WINS',
    ];
    const covered = new Set(
      cases.flatMap((c) => [...ruleList(c).slice(0, 1), ...(c.warning ? [c.warning] : [])]),
    );
    expect(index.filter((r) => !covered.has(r))).toEqual([]);
    expect(index.length).toBe(58 + 3);
  });

  it('marks every intentional difference with a reason, and only error cases', () => {
    for (const c of cases.filter((x) => x.diff)) expect(c.rule, c.name).toBeDefined();
  });
});

describe('validateCatalog follows the rule book', () => {
  for (const c of cases) {
    it(c.name, async () => {
      await withTree(c, async (dir) => {
        const started = Date.now();
        const report = await validateCatalog(new DirectorySource(dir), c.options);
        expect.soft(Date.now() - started, 'validation time (ms)').toBeLessThan(5000);
        const ds = report.diagnostics;
        const errors = ds.filter((d) => d.level === 'error');
        expect.soft(report.valid, `our verdict; diagnostics:\n${show(ds)}`).toBe(ourVerdict(c));
        const wanted = ruleList(c);
        if (wanted.length > 0) {
          const hits = errors.filter((d) => wanted.includes(d.rule));
          expect
            .soft(hits.length, `an error with rule ${wanted.join('|')}; got:\n${show(ds)}`)
            .toBeGreaterThan(0);
          expect
            .soft(
              hits.some((d) => typeof d.file === 'string' && d.file !== ''),
              `${wanted.join('|')} names a file`,
            )
            .toBe(true);
          if (!c.noLine) {
            expect
              .soft(
                hits.some((d) => typeof d.line === 'number' && d.line >= 1),
                `${wanted.join('|')} has a line`,
              )
              .toBe(true);
          }
          if (c.msg !== undefined) {
            expect
              .soft(
                hits.map((d) => d.message).filter((m) => m.includes(c.msg as string)),
                `a ${wanted.join('|')} message containing ${JSON.stringify(c.msg)}; got:\n${show(hits)}`,
              )
              .not.toEqual([]);
          }
        }
        for (const r of c.absent ?? []) {
          expect
            .soft(show(ds.filter((d) => d.rule === r)), `no ${r} (opm does not report it here)`)
            .toBe('(none)');
        }
        if (c.warning) {
          expect
            .soft(
              ds.filter((d) => d.level === 'warning' && d.rule === c.warning).length,
              `warning ${c.warning}; got:\n${show(ds)}`,
            )
            .toBeGreaterThan(0);
        }
      });
    });
  }
});

describe.skipIf(!haveOpm)('opm validate (oracle) agrees', () => {
  for (const c of cases) {
    it(c.name, async () => {
      await withTree(c, async (dir) => {
        const opm = opmValidate(dir);
        expect.soft(opm.valid, `opm verdict as the table says; opm said: ${opm.message}`).toBe(opmVerdict(c));
        const opmMsg = c.opmMsg ?? c.msg;
        if (opmMsg !== undefined && !opm.valid) {
          expect.soft(opm.message, 'opm message core as the table says').toContain(opmMsg);
        }
        if (!c.diff) {
          const report = await validateCatalog(new DirectorySource(dir), c.options);
          expect
            .soft(
              report.valid,
              `our verdict equals opm's (opm: ${opm.message || 'valid'}); ours:\n${show(report.diagnostics)}`,
            )
            .toBe(opm.valid);
        }
      });
    });
  }
});

describe('determinism', () => {
  it('reports the same diagnostics twice for a catalog with several broken files', async () => {
    const files = {
      'a.yaml': OK,
      'b/broken.yaml': 'schema: olm.package\nname: bar\n  defaultChannel: x\n',
      'c.json': '{"schema": "olm.package" "name": "foo"}\n',
      'd.yaml': '\n',
      'e.yaml': Y(channel(['foo.v1.0.0', 'foo.v2.0.0'], { name: 'beta' }), bundle('2.0.0'), bundle('3.0.0')),
      'f.yaml': Y(pkg('Bad.Name'), deprecations([{ reference: { schema: 'olm.csv', name: 'x' } }])),
      'README.md': 'prose\n',
    };
    const dir = writeTree(files);
    try {
      const first = await validateCatalog(new DirectorySource(dir));
      const second = await validateCatalog(new DirectorySource(dir));
      expect(first.valid).toBe(false);
      expect(new Set(first.diagnostics.map((d) => d.file)).size).toBeGreaterThan(3);
      expect(second.diagnostics).toEqual(first.diagnostics);
    } finally {
      removeTree(dir);
    }
  });
});
