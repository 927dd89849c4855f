// Decode one catalog file into JSON values the way opm's loader does
// (apimachinery YAMLOrJSONDecoder + go-yaml v2), keeping the line of every blob and of
// the collections inside it. Unlike opm, decoding goes on after a bad YAML document so
// that one run reports every broken document of a file.
import { isAscii, isUtf8 } from 'node:buffer';
import type { LoadOptions as YamlLoadOptions, YAMLException } from 'js-yaml';
import type { CheckedValues } from './fast/fastyaml.js';
import { lineAndColumnCached } from './fast/text-position.js';
import { countLineBreaks, forEachYamlDocument } from './fast/yaml-documents.js';
import { readInSubset } from './fast/yaml-subset.js';
import { goJsonSyntaxError, isJsonSpace } from '../go/gojsonsyntax.js';
import { goStringCompare, goTrimSpace, isGoSpace } from '../go/gostrings.js';
import { goYamlSchema, jsYaml, nonFiniteScalars } from './yaml11.js';
import { READ_REFUSALS, screenYamlDocument, type ReadRefusal, type ScreenFinding } from './yaml-screen.js';

export const MAX_NESTING_DEPTH = 1000;
export { READ_REFUSALS, READ_REFUSAL_HINTS, type ReadRefusal } from './yaml-screen.js';
export { yamlDocumentsRead } from './fast/yaml-subset.js';
export type { CheckedValues } from './fast/fastyaml.js';

export interface DecodedValue {
  value: unknown;
  /** 1-based line and column where the object starts. */
  line: number;
  column: number;
  /** Where the collections inside `value` start (lineOf). */
  lines?: LineTable;
}

export type DecodeRule =
  | 'L-YAML-SYNTAX'
  | 'L-YAML-SEPARATOR'
  | 'L-JSON-SYNTAX'
  | 'L-ENCODING'
  | 'L-TOO-DEEP'
  | 'L-ALIASES'
  | 'QUIRK-JSON-YAML-FALLBACK'
  | 'QUIRK-YAML-FIRST-NODE-ONLY'
  | 'QUIRK-DUPLICATE-KEY-LAST-WINS'
  | 'QUIRK-JSON-INVALID-UTF8'
  | ReadRefusal;

export interface DecodeProblem {
  rule: DecodeRule;
  message: string;
  line: number;
  column: number;
}

export interface DecodedFile {
  values: DecodedValue[];
  problems: DecodeProblem[];
  /** Quirks opm accepts silently; worth a warning. */
  notes: DecodeProblem[];
}

/**
 * Where the collections inside a decoded value start, down to RECORDED_DEPTH: kept beside
 * the value, since a weak-map entry per collection cost a sixth of decoding.
 */
export interface LineTable {
  collections: object[];
  /** Lines of `collections`, 1-based once `base` is added. */
  lines: number[];
  base: number;
  /** Where the next search starts: callers ask in document order. */
  cursor: number;
}

/** No table for a value with no collection inside it (the value's own line is known). */
function lineTable(
  root: unknown,
  collections: object[],
  lines: number[],
  base: number,
): LineTable | undefined {
  if (collections.length === 0 || (collections.length === 1 && collections[0] === root)) return undefined;
  return { collections, lines, base, cursor: 0 };
}

/** The 1-based line where a collection inside a decoded value started, when known. */
export function lineOf(table: LineTable | undefined, value: unknown): number | undefined {
  if (table === undefined || typeof value !== 'object' || value === null) return undefined;
  const { collections } = table;
  const n = collections.length;
  for (let k = 0, i = table.cursor; k < n; k++, i = i + 1 === n ? 0 : i + 1) {
    if (collections[i] !== value) continue;
    table.cursor = i + 1 === n ? 0 : i + 1;
    return table.base + (table.lines[i] as number);
  }
  return undefined;
}

// Only the first levels matter for messages (blob, entries list, entry, properties...).
const RECORDED_DEPTH = 4;

// opm's JSON sniff looks at this many bytes (NewYAMLOrJSONDecoder's buffer size).
const JSON_SNIFF_SIZE = 4096;

/**
 * Is the first non-space character among the first 4096 bytes an opening brace? (opm's JSON
 * sniff) Bytes, not characters: U+3000 takes three, and opm stops at a character cut short.
 */
function looksLikeJson(text: string): boolean {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes > JSON_SNIFF_SIZE) return false;
    if (c === 0x7b) return true;
    if (!isGoSpace(c)) return false;
  }
  return false;
}

export interface DecodeOptions {
  /** Read every YAML document with the full reader (the fast path's reference, in tests). */
  fullReaderOnly?: boolean;
  /**
   * Hand each value over as soon as it is read instead of collecting them in `values`
   * (which stays empty): a caller that keeps little of each value lets it go at once.
   */
  onValue?: (value: DecodedValue) => void;
  /** Property values to check and not build, in what the fast path reads (fast/fastyaml.ts). */
  checkedValues?: CheckedValues;
}

export function decodeFile(bytes: Uint8Array, options: DecodeOptions = {}): DecodedFile {
  const out: DecodedFile = { values: [], problems: [], notes: [] };
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // ASCII (most catalogs) decodes fastest as latin1, which gives the same string.
  const ascii = isAscii(bytes);
  const valid = ascii || isUtf8(bytes);
  const encoding = ascii ? 'latin1' : 'utf8';
  if (looksLikeJson(buffer.toString(encoding, 0, JSON_SNIFF_SIZE))) {
    const text = buffer.toString(encoding);
    if (!valid) {
      // Go's JSON decoder replaces invalid UTF-8 inside strings instead of failing.
      const at = firstBadUtf8(bytes);
      out.notes.push({
        rule: 'QUIRK-JSON-INVALID-UTF8',
        message: 'invalid UTF-8 in a JSON string is replaced by U+FFFD (as opm does)',
        ...at.position,
      });
    }
    decodeJsonStream(text, bytes, valid, out, options);
  } else {
    if (!valid) {
      const at = firstBadUtf8(bytes);
      out.problems.push({ rule: 'L-ENCODING', message: `yaml: ${at.reason}`, ...at.position });
      return out;
    }
    // The same documents, lines and findings as decodeYamlStream, each document's text made
    // on its own (fast/yaml-documents.ts). Separator findings come before the documents' own.
    const docOut: DecodedFile = { values: out.values, problems: [], notes: out.notes };
    forEachYamlDocument(
      buffer,
      encoding,
      (rest, line) => checkSeparatorLine(rest, line, out),
      (text, firstLine) => emit(decodeYamlDocument({ text, firstLine }, docOut, options), out, options),
    );
    for (const p of docOut.problems) out.problems.push(p);
  }
  return out;
}

/** The first invalid UTF-8 sequence, with go-yaml's name for what is wrong with it. */
function firstBadUtf8(bytes: Uint8Array): { reason: string; position: { line: number; column: number } } {
  let line = 1;
  let lineStart = 0;
  let i = 0;
  let reason = 'invalid leading UTF-8 octet';
  while (i < bytes.length) {
    const b = bytes[i] as number;
    let n = 0;
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) n = 3;
    else if (b >= 0xf0 && b <= 0xf4) n = 4;
    if (n === 0) break;
    if (i + n > bytes.length) {
      reason = 'incomplete UTF-8 octet sequence';
      break;
    }
    if (!isUtf8(bytes.subarray(i, i + n))) {
      reason = 'invalid trailing UTF-8 octet';
      break;
    }
    if (b === 0x0a) {
      line++;
      lineStart = i + 1;
    }
    i += n;
  }
  return { reason, position: { line, column: i - lineStart + 1 } };
}

// ---------------------------------------------------------------- YAML

interface YamlDocument {
  text: string;
  /** 0-based line of the document's first line in the file. */
  firstLine: number;
}

/**
 * Split on `---` lines exactly like apimachinery's YAMLReader: a separator seen while the
 * buffer is still empty stays in the buffer as the start of the next document.
 */
function splitYamlDocuments(text: string, baseLine: number, out: DecodedFile): YamlDocument[] {
  const docs: YamlDocument[] = [];
  let docStart = 0;
  let docLine = baseLine;
  let bufferNonEmpty = false;
  let line = baseLine;
  let pos = 0;
  while (pos < text.length) {
    let eol = text.indexOf('\n', pos);
    if (eol < 0) eol = text.length;
    if (text.startsWith('---', pos)) {
      checkSeparatorLine(text.slice(pos + 3, eol), line, out);
      if (pos > docStart || bufferNonEmpty) {
        docs.push({ text: text.slice(docStart, pos), firstLine: docLine });
        docStart = eol + 1;
        docLine = line + 1;
        bufferNonEmpty = false;
      } else {
        bufferNonEmpty = true; // keep the `---` line in the next document
      }
    }
    pos = eol + 1;
    line++;
  }
  if (docStart < text.length || bufferNonEmpty) {
    docs.push({ text: text.slice(docStart), firstLine: docLine });
  }
  return docs;
}

/**
 * What follows `---` on line `line` (0-based): anything but a comment is a finding. opm stops
 * there; the line is read as a separator to keep reading the rest. Once per separator.
 */
function checkSeparatorLine(rest: string, line: number, out: DecodedFile): void {
  // apimachinery trims with strings.TrimSpace: U+FEFF stays (an error), U+0085 goes.
  const after = goTrimSpace(rest);
  if (after.length > 0 && after[0] !== '#')
    out.problems.push({
      rule: 'L-YAML-SEPARATOR',
      message: `invalid Yaml document separator: ${after}`,
      line: line + 1,
      column: 1,
    });
}

function decodeYamlStream(
  text: string,
  baseLine: number,
  baseColumn: number,
  out: DecodedFile,
  options: DecodeOptions,
): void {
  for (const doc of splitYamlDocuments(text, baseLine, out)) {
    const decoded = decodeYamlDocument(doc, out, options);
    if (decoded) {
      if (decoded.line === doc.firstLine + 1 && baseColumn > 0) decoded.column += baseColumn;
      emit(decoded, out, options);
    }
  }
}

// A document whose root is a flow collection: optional BOM, `---`, blank and comment lines first.
const FLOW_ROOT = /^\ufeff?(?:[ \t]*(?:#.*|---[ \t]*(?:#.*)?)?\r?\n)*[ \t]*[{[]/;
const JUNK_AFTER_ROOT = /end of the stream or a document separator is expected|expected a single document/;
// What go-yaml's reader refuses anywhere in a document (yaml_parser_update_buffer).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const YAML_CONTROL_CHARACTER = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]/;

/**
 * A YAML document as opm converts it to JSON: a value JSON cannot hold (`.inf`, `.nan`) fails
 * the conversion, and with it the document.
 */
function decodeYamlDocument(
  doc: YamlDocument,
  out: DecodedFile,
  options: DecodeOptions,
): DecodedValue | undefined {
  const nonFinite = nonFiniteScalars.count;
  const decoded = readYamlDocument(doc, out, options);
  if (decoded === undefined || nonFiniteScalars.count === nonFinite) return decoded;
  const unsupported = firstUnsupportedJsonValue(decoded.value);
  if (unsupported === undefined) return decoded; // as a key (a string to JSON), or inside a dropped part
  out.problems.push({
    rule: 'L-YAML-SYNTAX',
    message: `error converting YAML to JSON: json: unsupported value: ${unsupported}`,
    line: decoded.line,
    column: decoded.column,
  });
  return undefined;
}

/** The first infinity or NaN json.Marshal meets (map keys in Go's order), as Go prints it. */
function firstUnsupportedJsonValue(v: unknown): string | undefined {
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const items = Array.isArray(v)
    ? v
    : Object.keys(v)
        .sort(goStringCompare)
        .map((k) => (v as Record<string, unknown>)[k]);
  for (const item of items) {
    const found = firstUnsupportedJsonValue(item);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Is `text` JSON objects and arrays between line breaks, spaces and comments? (A tab there,
 * outside a collection, go-yaml fails on.)
 */
function isJsonValuesAndComments(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d) {
      i++;
    } else if (c === 0x23) {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol + 1;
    } else if (c === 0x7b || c === 0x5b) {
      const scan = scanJsonValue(text, i, 1);
      if (scan.error !== undefined) return false;
      try {
        JSON.parse(text.slice(i, scan.end));
      } catch {
        return false;
      }
      i = scan.end;
    } else {
      return false;
    }
  }
  return true;
}

/** go-yaml v2 reads only the first node of a document and ignores what follows. */
function readYamlDocument(
  doc: YamlDocument,
  out: DecodedFile,
  options: DecodeOptions,
): DecodedValue | undefined {
  // What opm and the renderers write is read by the fast reader (fast/yaml-subset.ts), which
  // gives what the full reader gives or nothing; the rest by the full reader.
  const fast = readInSubset(doc.text, RECORDED_DEPTH, options);
  if (fast === undefined) return readWithFullReader(doc, out);
  return {
    value: fast.value,
    line: doc.firstLine + fast.rootLine + 1,
    column: 1,
    lines: lineTable(fast.value, fast.collections, fast.lines, doc.firstLine + 1),
  };
}

/** A YAML document read by js-yaml with the go-yaml schema, past the screen (yaml-screen.ts). */
function readWithFullReader(doc: YamlDocument, out: DecodedFile): DecodedValue | undefined {
  const control = YAML_CONTROL_CHARACTER.exec(doc.text);
  if (control) {
    const before = doc.text.slice(0, control.index);
    const lineInDoc = before.split('\n').length;
    out.problems.push({
      rule: 'L-YAML-SYNTAX',
      message: 'error converting YAML to JSON: yaml: control characters are not allowed',
      line: doc.firstLine + lineInDoc,
      column: control.index - before.lastIndexOf('\n'),
    });
    return undefined;
  }
  // Where opm could read this text differently, refuse it rather than guess (docs/security.md).
  const refused = screenYamlDocument(doc.text);
  const refuse = (finding: ScreenFinding): undefined => {
    const before = doc.text.slice(0, finding.offset);
    out.problems.push({
      rule: finding.rule,
      message: finding.message,
      line: doc.firstLine + countLineBreaks(before) + 1,
      column: finding.offset - before.lastIndexOf('\n'),
    });
    return undefined;
  };
  if (refused?.certain) return refuse(refused);
  try {
    const value = parseYamlNode(doc.text, doc.firstLine, out);
    return refused ? refuse(refused) : value;
  } catch (err) {
    // A construct before the point where the document breaks is the finding; one after it
    // may be the syntax tree's guess at broken text (a flow collection never closed).
    if (refused && (!isYamlException(err) || (err.mark?.position ?? Infinity) >= refused.offset)) {
      // Both: the reader's own error (what to fix first) and the construct refused.
      out.problems.push(yamlProblem(err, doc.firstLine));
      return refuse(refused);
    }
    // Only a flow collection ends by itself; after a block node go-yaml fails too.
    if (
      isYamlException(err) &&
      JUNK_AFTER_ROOT.test(err.reason ?? '') &&
      err.mark &&
      FLOW_ROOT.test(doc.text.slice(0, err.mark.position))
    ) {
      // go-yaml scans on past the node (the next token, and the rest of its line when that
      // could start a key) and fails the document on what it cannot scan: only JSON values
      // (a JSON stream after a comment or BOM) and comments are known to scan.
      if (!isJsonValuesAndComments(doc.text.slice(err.mark.position))) {
        out.problems.push({
          rule: 'L-YAML-AFTER-NODE',
          message:
            'text after the first node of this document: opm ignores it or fails on it; remove it, or start a new document with `---`',
          line: doc.firstLine + err.mark.line + 1,
          column: err.mark.column + 1,
        });
        return undefined;
      }
      try {
        const first = parseYamlNode(doc.text.slice(0, err.mark.position), doc.firstLine, out);
        out.notes.push({
          rule: 'QUIRK-YAML-FIRST-NODE-ONLY',
          message:
            'text after the first YAML node of this document is ignored (opm reads only the first node)',
          line: doc.firstLine + err.mark.line + 1,
          column: err.mark.column + 1,
        });
        return first;
      } catch {
        // report the original error
      }
    }
    const dedent = isYamlException(err) ? lineLessIndentedThanRoot(doc.text) : undefined;
    if (dedent !== undefined) {
      out.problems.push({
        rule: 'L-YAML-AFTER-NODE',
        message:
          'a line indented less than the first line of this document: opm ends the document there and ignores the rest; indent them alike',
        line: doc.firstLine + dedent + 1,
        column: 1,
      });
      return undefined;
    }
    out.problems.push(yamlProblem(err, doc.firstLine));
    return undefined;
  }
}

/**
 * The 0-based line of a content line indented less than the document's first one, which
 * go-yaml takes for the end of the root node (and of what it reads), where YAML 1.2 readers
 * fail. Undefined when the first content line is not indented.
 */
function lineLessIndentedThanRoot(text: string): number | undefined {
  let rootIndent = -1;
  let line = 0;
  for (let start = 0; start < text.length; line++) {
    let eol = text.indexOf('\n', start);
    if (eol < 0) eol = text.length;
    let i = start;
    while (text.charCodeAt(i) === 0x20) i++;
    const blank = i >= eol || text.charCodeAt(i) === 0x23 || text.charCodeAt(i) === 0x0d;
    const marker = line === 0 && text.startsWith('---', start);
    if (!blank && !marker) {
      const indent = i - start;
      if (rootIndent < 0) {
        if (indent === 0) return undefined;
        rootIndent = indent;
      } else if (indent < rootIndent) {
        return line;
      }
    }
    start = eol + 1;
  }
  return undefined;
}

// js-yaml's words for what go-yaml reports differently.
const GO_YAML_WORDING: [RegExp, string][] = [
  [/^bad indentation of a mapping entry$/, 'mapping values are not allowed in this context'],
  [/^end of the stream or a document separator is expected$/, 'did not find expected <document start>'],
  [/^unexpected end of the stream within a (single|double) quoted scalar$/, 'found unexpected end of stream'],
];

function yamlProblem(err: unknown, firstLine: number): DecodeProblem {
  if (isYamlException(err)) {
    const line = firstLine + (err.mark?.line ?? 0) + 1;
    const column = (err.mark?.column ?? 0) + 1;
    const reason = err.reason ?? err.message;
    if (/maxDepth/.test(reason)) {
      return { rule: 'L-TOO-DEEP', message: `nesting deeper than ${MAX_NESTING_DEPTH} levels`, line, column };
    }
    const wording = GO_YAML_WORDING.find(([re]) => re.test(reason))?.[1] ?? reason;
    return {
      rule: 'L-YAML-SYNTAX',
      message: `error converting YAML to JSON: yaml: line ${line}: ${wording}`,
      line,
      column,
    };
  }
  if (err instanceof AliasError) {
    return {
      rule: 'L-ALIASES',
      message: 'error converting YAML to JSON: yaml: document contains excessive aliasing',
      line: firstLine + 1,
      column: 1,
    };
  }
  if (err instanceof RangeError) {
    return {
      rule: 'L-TOO-DEEP',
      message: 'document is nested too deeply to read',
      line: firstLine + 1,
      column: 1,
    };
  }
  return { rule: 'L-YAML-SYNTAX', message: String(err), line: firstLine + 1, column: 1 };
}

class AliasError extends Error {}

function isYamlException(err: unknown): err is YAMLException {
  return err instanceof jsYaml().YAMLException;
}

function parseYamlNode(text: string, firstLine: number, out: DecodedFile): DecodedValue {
  let depth = 0;
  const openLines: number[] = [];
  const openColumns: number[] = [];
  let rootLine = firstLine + 1;
  let rootColumn = 1;
  let sawAnchor = false;
  // An alias gives the same collection again: its first place counts.
  let recorded = new Set<object>();
  let collections: object[] = [];
  let lines: number[] = [];
  const options: YamlLoadOptions = {
    schema: goYamlSchema(),
    maxDepth: MAX_NESTING_DEPTH,
    listener(event, state) {
      if (event === 'open') {
        depth++;
        if (depth <= RECORDED_DEPTH) {
          openLines.push(state.line);
          openColumns.push(state.position - state.lineStart);
        }
        return;
      }
      if (state.anchor !== null) sawAnchor = true;
      if (depth <= RECORDED_DEPTH) {
        const line = openLines.pop() ?? 0;
        const column = openColumns.pop() ?? 0;
        const result: unknown = state.result;
        if (typeof result === 'object' && result !== null && !recorded.has(result)) {
          recorded.add(result);
          collections.push(result);
          lines.push(line);
        }
        if (depth === 1) {
          rootLine = firstLine + line + 1;
          rootColumn = column + 1;
        }
      }
      depth--;
    },
  };
  let value: unknown;
  try {
    value = jsYaml().load(text, options);
  } catch (err) {
    // go-yaml lets a later duplicate key win; js-yaml can only do that silently.
    if (!isYamlException(err) || !/duplicated mapping key/.test(err.reason ?? '')) throw err;
    out.notes.push({
      rule: 'QUIRK-DUPLICATE-KEY-LAST-WINS',
      message: 'duplicate key: the last value wins (as in opm); remove the other one',
      line: firstLine + (err.mark?.line ?? 0) + 1,
      column: (err.mark?.column ?? 0) + 1,
    });
    depth = 0;
    openLines.length = 0;
    openColumns.length = 0;
    recorded = new Set();
    collections = [];
    lines = [];
    value = jsYaml().load(text, { ...options, json: true });
  }
  if (sawAnchor) checkAliasExpansion(value);
  return {
    value: value ?? null,
    line: rootLine,
    column: rootColumn,
    lines: lineTable(value, collections, lines, firstLine + 1),
  };
}

/**
 * js-yaml shares aliased nodes instead of copying them; opm's go-yaml expands them and
 * stops on "excessive aliasing". Count the expanded size the same way so that an alias
 * bomb is an error here too, and never expands in later code.
 */
function checkAliasExpansion(root: unknown): void {
  const sizes = new Map<object, number>();
  let distinct = 0;
  const sizeOf = (v: unknown): number => {
    if (typeof v !== 'object' || v === null) return 1;
    const known = sizes.get(v);
    if (known !== undefined) return known;
    distinct++;
    let n = 1;
    for (const child of Array.isArray(v) ? v : Object.values(v)) n += sizeOf(child);
    sizes.set(v, n);
    return n;
  };
  const expanded = sizeOf(root);
  const shared = expanded - distinct;
  if (shared > 100 && expanded > 1000 && shared / expanded > allowedAliasRatio(expanded))
    throw new AliasError();
}

// go-yaml v2: allow 99% of nodes from aliases in small documents, 10% in huge ones.
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000);
}

// ---------------------------------------------------------------- JSON

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

interface JsonScan {
  end: number;
  error?: string;
  /** Lines of collections at the recorded depths, in document (= pre-order) order. */
  lines: number[];
  /** Key count of each recorded object, in the same order (-1 for arrays). */
  keyCounts: number[];
}

/** Find the end of the JSON value that starts at `start`, and the lines of its collections. */
function scanJsonValue(text: string, start: number, startLine: number): JsonScan {
  const lines: number[] = [];
  const keyCounts: number[] = [];
  const openIndex: number[] = []; // index into keyCounts per open collection, -1 if not recorded
  let line = startLine;
  let depth = 0;
  let i = start;
  const n = text.length;
  const first = text.charCodeAt(i);
  if (first !== 0x7b && first !== 0x5b) {
    // A scalar at the top level: up to the next structural or space character.
    if (first === 0x22) {
      i++;
      while (i < n && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      return i < n ? { end: i + 1, lines, keyCounts } : { end: n, error: 'unexpected EOF', lines, keyCounts };
    }
    while (i < n && !/[\s{}[\],:"]/.test(text[i] ?? '')) i++;
    return { end: Math.max(i, start + 1), lines, keyCounts };
  }
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // skip a string
      i++;
      for (; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
        else if (s === 0x0a) line++;
      }
    } else if (c === 0x3a) {
      const k = openIndex[openIndex.length - 1];
      if (k !== undefined && k >= 0) keyCounts[k] = (keyCounts[k] ?? 0) + 1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > MAX_NESTING_DEPTH) {
        return { end: i, error: `nesting deeper than ${MAX_NESTING_DEPTH} levels`, lines, keyCounts };
      }
      if (depth <= RECORDED_DEPTH) {
        lines.push(line);
        openIndex.push(keyCounts.length);
        keyCounts.push(c === 0x7b ? 0 : -1);
      } else {
        openIndex.push(-1);
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      openIndex.pop();
      if (depth === 0) return { end: i + 1, lines, keyCounts };
    } else if (c === 0x0a) {
      line++;
    }
  }
  return { end: n, error: 'unexpected EOF', lines, keyCounts };
}

/** The lines of the parsed collections, and the line of an object with a duplicate key. */
function recordJsonLines(
  value: unknown,
  scan: JsonScan,
): { duplicateAt: number | undefined; lines: LineTable | undefined } {
  let next = 0;
  let duplicateAt: number | undefined;
  const collections: object[] = [];
  const lines: number[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (typeof v !== 'object' || v === null || depth > RECORDED_DEPTH) return;
    const index = next++;
    const line = scan.lines[index];
    if (line !== undefined) {
      collections.push(v);
      lines.push(line);
    }
    const children = Array.isArray(v) ? v : Object.values(v);
    const counted = scan.keyCounts[index];
    if (!Array.isArray(v) && counted !== undefined && counted > children.length) duplicateAt ??= line;
    for (const child of children) visit(child, depth + 1);
  };
  visit(value, 1);
  return { duplicateAt, lines: lineTable(value, collections, lines, 0) };
}

function decodeJsonStream(
  text: string,
  bytes: Uint8Array,
  validUtf8: boolean,
  out: DecodedFile,
  options: DecodeOptions,
): void {
  let pos = 0;
  let decoded = 0;
  let lastGoodEnd = 0;
  for (;;) {
    while (pos < text.length && isJsonSpace(text.charCodeAt(pos))) pos++;
    if (pos >= text.length) return;
    const at = lineAndColumnCached(text, pos);
    const scan = scanJsonValue(text, pos, at.line);
    let value: unknown;
    let failed = scan.error !== undefined;
    if (!failed) {
      try {
        value = JSON.parse(text.slice(pos, scan.end));
      } catch {
        failed = true;
      }
    }
    if (failed) {
      if (scan.error?.startsWith('nesting')) {
        out.problems.push({ rule: 'L-TOO-DEEP', message: scan.error, ...lineAndColumn(text, scan.end) });
        return;
      }
      // Go's message for the failure, measured from the end of the previous value.
      const byteStart = Buffer.byteLength(text.slice(0, lastGoodEnd));
      const goError = goJsonSyntaxError(bytes, byteStart + Buffer.byteLength(text.slice(lastGoodEnd, pos)));
      const reason = goError?.message ?? 'unexpected EOF';
      const errorByte =
        byteStart + Buffer.byteLength(text.slice(lastGoodEnd, pos)) + Math.max((goError?.offset ?? 1) - 1, 0);
      const where = lineAndColumn(text, Buffer.from(bytes.subarray(0, errorByte)).toString('utf8').length);
      if (decoded <= 1) {
        // apimachinery falls back to YAML for the rest of the file (since opm v1.56).
        const offset = errorByte - byteStart + 1;
        const message = reason === 'unexpected EOF' ? reason : `json: offset ${offset}: ${reason}`;
        fallBackToYaml(
          text,
          lastGoodEnd,
          validUtf8,
          { rule: 'L-JSON-SYNTAX', message, ...where },
          out,
          options,
        );
      } else {
        out.problems.push({ rule: 'L-JSON-SYNTAX', message: reason, ...where });
      }
      return;
    }
    if (OVER_FLOAT64.test(text.slice(pos, scan.end)) && firstUnsupportedJsonValue(value) !== undefined) {
      out.problems.push({
        rule: 'L-JSON-NUMBER',
        message:
          'a number too large for a float64: opm reads this file as YAML instead; write it as a string',
        ...at,
      });
      return;
    }
    const { duplicateAt, lines } = recordJsonLines(value, scan);
    if (duplicateAt !== undefined) {
      out.notes.push({
        rule: 'QUIRK-DUPLICATE-KEY-LAST-WINS',
        message: 'duplicate key in this object: the last value wins (as in opm); remove the other one',
        line: duplicateAt,
        column: 1,
      });
    }
    emit({ value, line: at.line, column: at.column, lines }, out, options);
    decoded++;
    pos = scan.end;
    lastGoodEnd = pos;
  }
}

// A number literal that may be past float64 (1.8e308): an exponent of three digits, or, with an
// exponent of at most 99, 210 digits before the point (JSON allows no leading zeros).
const OVER_FLOAT64 = /[0-9][eE]\+?[0-9]{3}|[0-9]{210}/;

/**
 * Where opm's YAML reading starts after the JSON at `from` failed, as apimachinery's
 * consumeWhitespace finds it: Unicode spaces (Go's unicode.IsSpace, so also U+00A0, U+2028, a
 * form feed) are skipped up to and including the first line feed. It reads four bytes at a
 * time and decodes one character of them: with fewer than four bytes left, or at U+FFFD, it
 * gives up, and opm reports the JSON error (undefined).
 */
function yamlFallbackStart(text: string, from: number): number | undefined {
  let left = Buffer.byteLength(text.slice(from));
  let i = from;
  for (;;) {
    if (left < 4) return undefined;
    const c = text.codePointAt(i) as number;
    if (c === 0xfffd) return undefined;
    if (!isGoSpace(c)) return i;
    i++;
    left -= c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (c === 0x0a) return i;
  }
}

function fallBackToYaml(
  text: string,
  from: number,
  validUtf8: boolean,
  jsonProblem: DecodeProblem,
  out: DecodedFile,
  options: DecodeOptions,
): void {
  const start = yamlFallbackStart(text, from);
  if (start === undefined) {
    out.problems.push(jsonProblem);
    return;
  }
  const rest = text.slice(start);
  // go-yaml refuses invalid UTF-8, which the JSON reader had replaced.
  if (!validUtf8 && rest.includes('\ufffd')) {
    out.problems.push(jsonProblem);
    return;
  }
  const base = lineAndColumn(text, start);
  const attempt: DecodedFile = { values: [], problems: [], notes: [] };
  // Collected first: whether they count depends on the whole attempt.
  decodeYamlStream(rest, base.line - 1, base.column - 1, attempt, { ...options, onValue: undefined });
  const refusals = attempt.problems.filter((p) => p.rule in READ_REFUSALS);
  if (refusals.length > 0) {
    // What opm would read as YAML here is refused: say so, not only that the JSON is bad.
    out.problems.push(jsonProblem, ...refusals);
    return;
  }
  if (attempt.problems.length > 0 && attempt.values.length === 0) {
    out.problems.push(jsonProblem);
    return;
  }
  for (const v of attempt.values) emit(v, out, options);
  out.problems.push(...attempt.problems);
  out.notes.push(...attempt.notes, {
    rule: 'QUIRK-JSON-YAML-FALLBACK',
    message: `not valid JSON (${jsonProblem.message}); opm reads the rest of this file as YAML`,
    line: jsonProblem.line,
    column: jsonProblem.column,
  });
}

function emit(value: DecodedValue | undefined, out: DecodedFile, options: DecodeOptions): void {
  if (value === undefined) return;
  if (options.onValue) options.onValue(value);
  else out.values.push(value);
}
