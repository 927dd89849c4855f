// Format-preserving edits of FBC and template files. A file is parsed into nodes with
// source offsets (YAML with the `yaml` package's Document API, JSON with a small parser
// here), and every change is a splice of the original text: comments, key order, quoting,
// indentation and everything not touched stay byte for byte.
import {
  Document,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  stringify,
  visit,
  type Node as YamlNode,
} from 'yaml';
import { goYamlMarshal } from '../templates/write.js';

export interface TScalar {
  kind: 'scalar';
  start: number;
  end: number;
  value: unknown;
}
export interface TSeq {
  kind: 'seq';
  start: number;
  end: number;
  flow: boolean;
  items: TNode[];
}
export interface TPair {
  key: string;
  keyStart: number;
  value: TNode | undefined;
}
export interface TMap {
  kind: 'map';
  start: number;
  end: number;
  flow: boolean;
  pairs: TPair[];
}
export type TNode = TScalar | TSeq | TMap;

export interface Splice {
  at: number;
  del: number;
  ins: string;
}

export class EditError extends Error {}

export type TextFormat = 'yaml' | 'json';

export function formatOfPath(path: string, text: string): TextFormat {
  if (/\.json$/i.test(path)) return 'json';
  if (/\.ya?ml$/i.test(path)) return 'yaml';
  return /^\s*\{/.test(text) ? 'json' : 'yaml';
}

// ---- parsing

function fromYaml(node: YamlNode | null | undefined): TNode | undefined {
  if (!node) return undefined;
  const [start, end] = node.range ?? [0, 0];
  if (isMap(node)) {
    return {
      kind: 'map',
      start,
      end,
      flow: node.flow === true,
      pairs: node.items.map((p) => {
        const key = p.key as YamlNode | null;
        return {
          key: isScalar(key) ? String(key.value) : '',
          keyStart: key?.range?.[0] ?? start,
          value: fromYaml(p.value as YamlNode | null),
        };
      }),
    };
  }
  if (isSeq(node)) {
    return {
      kind: 'seq',
      start,
      end,
      flow: node.flow === true,
      items: node.items.flatMap((i) => fromYaml(i as YamlNode) ?? []),
    };
  }
  if (isScalar(node)) return { kind: 'scalar', start, end, value: node.value };
  throw new EditError('aliases and tags are not supported in files the bot edits');
}

class JsonParser {
  private i = 0;
  constructor(private readonly s: string) {}

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }

  private fail(what: string): never {
    throw new EditError(`JSON: ${what} at offset ${this.i}`);
  }

  all(): TNode[] {
    const out: TNode[] = [];
    for (this.ws(); this.i < this.s.length; this.ws()) out.push(this.value());
    return out;
  }

  private value(): TNode {
    this.ws();
    const start = this.i;
    const c = this.s[this.i];
    if (c === '{') {
      this.i++;
      const pairs: TPair[] = [];
      this.ws();
      if (this.s[this.i] === '}') this.i++;
      else {
        for (;;) {
          this.ws();
          const keyStart = this.i;
          const key = this.value();
          if (key.kind !== 'scalar' || typeof key.value !== 'string') this.fail('expected a key');
          this.ws();
          if (this.s[this.i++] !== ':') this.fail('expected ":"');
          pairs.push({ key: key.value as string, keyStart, value: this.value() });
          this.ws();
          const d = this.s[this.i++];
          if (d === '}') break;
          if (d !== ',') this.fail('expected "," or "}"');
        }
      }
      return { kind: 'map', start, end: this.i, flow: true, pairs };
    }
    if (c === '[') {
      this.i++;
      const items: TNode[] = [];
      this.ws();
      if (this.s[this.i] === ']') this.i++;
      else {
        for (;;) {
          items.push(this.value());
          this.ws();
          const d = this.s[this.i++];
          if (d === ']') break;
          if (d !== ',') this.fail('expected "," or "]"');
        }
      }
      return { kind: 'seq', start, end: this.i, flow: true, items };
    }
    if (c === '"') {
      this.i++;
      while (this.i < this.s.length && this.s[this.i] !== '"') this.i += this.s[this.i] === '\\' ? 2 : 1;
      this.i++;
      return { kind: 'scalar', start, end: this.i, value: JSON.parse(this.s.slice(start, this.i)) };
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)/.exec(this.s.slice(this.i, this.i + 64));
    if (!m) this.fail('unexpected character');
    this.i += m[0].length;
    return { kind: 'scalar', start, end: this.i, value: JSON.parse(m[0]) };
  }
}

/** The top-level values of a file (YAML documents or a JSON stream). */
export function parseNodes(text: string, format: TextFormat): TNode[] {
  if (format === 'json') return new JsonParser(text).all();
  const docs = parseAllDocuments(text);
  const out: TNode[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) throw new EditError(`YAML: ${doc.errors[0]!.message}`);
    const node = fromYaml(doc.contents as YamlNode | null);
    if (node) out.push(node);
  }
  return out;
}

export function pairOf(map: TMap, key: string): TPair | undefined {
  return (
    map.pairs.find((p) => p.key === key) ?? map.pairs.find((p) => p.key.toLowerCase() === key.toLowerCase())
  );
}

export function valueOf(map: TMap, key: string): TNode | undefined {
  return pairOf(map, key)?.value;
}

export function scalarOf(map: TMap, key: string): unknown {
  const v = valueOf(map, key);
  return v?.kind === 'scalar' ? v.value : undefined;
}

// ---- text layout helpers

const lineStart = (text: string, at: number): number => text.lastIndexOf('\n', at - 1) + 1;
const lineEnd = (text: string, at: number): number => {
  const i = text.indexOf('\n', at);
  return i < 0 ? text.length : i;
};
const columnOf = (text: string, at: number): number => at - lineStart(text, at);

/** Where a node's own text ends: block collections' ranges run on to the next line. */
export function contentEnd(node: TNode): number {
  if (node.kind === 'scalar' || node.flow) return node.end;
  if (node.kind === 'seq') {
    const last = node.items[node.items.length - 1];
    return last ? contentEnd(last) : node.end;
  }
  const last = node.pairs[node.pairs.length - 1];
  return last?.value ? contentEnd(last.value) : (last?.keyStart ?? node.end);
}

/** The column of the `- ` that introduces a block sequence item. */
export function dashColumn(text: string, item: TNode): number {
  let i = item.start - 1;
  while (i >= 0 && text[i] === ' ') i--;
  return text[i] === '-' ? columnOf(text, i) : columnOf(text, item.start);
}

/** How the file writes things, so that new text looks like the old. */
export interface Style {
  format: TextFormat;
  /** YAML: block sequences inside mappings indented under their key. */
  indentSeq: boolean;
  singleQuote: boolean;
  /** JSON: the indentation unit. */
  jsonIndent: string;
}

export function detectStyle(text: string, format: TextFormat): Style {
  const jsonIndent = /\n( +|\t)\S/.exec(text)?.[1] ?? '    ';
  const seq = /\n( *)[A-Za-z]\w*:[ \t]*\n( *)- /.exec(text);
  const indentSeq = seq ? seq[2]!.length > seq[1]!.length : false;
  const single = (text.match(/: '/g) ?? []).length;
  const double = (text.match(/: "/g) ?? []).length;
  return { format, indentSeq, singleQuote: single >= double, jsonIndent };
}

/** YAML for new text: the file's sequence indentation, and strings quoted as go-yaml (opm) quotes them. */
function yamlText(value: unknown, style: Style): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value !== 'string') return;
      const go = goYamlMarshal(node.value);
      node.type = go.startsWith("'")
        ? 'QUOTE_SINGLE'
        : go.startsWith('"')
          ? 'QUOTE_DOUBLE'
          : node.value.includes('\n')
            ? 'BLOCK_LITERAL'
            : 'PLAIN';
    },
  });
  return doc.toString({ indentSeq: style.indentSeq, lineWidth: 0 });
}

const indentLines = (snippet: string, indent: string): string =>
  snippet
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (l === '' ? l : indent + l))
    .join('\n');

/** A scalar as it would be written in place. */
export function scalarText(value: string, style: Style): string {
  return style.format === 'json' ? JSON.stringify(value) : yamlText(value, style).replace(/\n$/, '');
}

// ---- edits

export function setScalar(node: TNode, value: string, style: Style): Splice {
  if (node.kind !== 'scalar') throw new EditError('expected a scalar to replace');
  return { at: node.start, del: node.end - node.start, ins: scalarText(value, style) };
}

function jsonValue(value: unknown, style: Style, column: number): string {
  return indentLines(JSON.stringify(value, null, style.jsonIndent), ' '.repeat(column)).trimStart();
}

/** Insert `value` as item `index` of a sequence (default: at the end). */
export function insertSeqItem(
  text: string,
  seq: TSeq,
  value: unknown,
  style: Style,
  index = seq.items.length,
): Splice {
  const items = seq.items;
  if (seq.flow || style.format === 'json') {
    if (items.length === 0) {
      const inner = text.slice(seq.start + 1, seq.end - 1);
      const render = style.format === 'json' ? JSON.stringify(value) : yamlFlow(value, style);
      return { at: seq.start + 1, del: inner.length, ins: render };
    }
    const ref = items[Math.min(index, items.length - 1)]!;
    const column = columnOf(text, ref.start);
    const render = style.format === 'json' ? jsonValue(value, style, column) : yamlFlow(value, style);
    const sep = text.slice(seq.start, items[0]!.start).includes('\n') ? ',\n' + ' '.repeat(column) : ', ';
    if (index < items.length) return { at: ref.start, del: 0, ins: render + sep };
    return { at: items[items.length - 1]!.end, del: 0, ins: sep + render };
  }
  if (items.length === 0) throw new EditError('cannot add to an empty block sequence');
  const dash = ' '.repeat(dashColumn(text, items[0]!));
  const snippet = indentLines(yamlText([value], style), dash);
  if (index < items.length) {
    return { at: lineStart(text, dashStart(text, items[index]!)), del: 0, ins: snippet + '\n' };
  }
  return { at: lineEnd(text, contentEnd(items[items.length - 1]!)), del: 0, ins: '\n' + snippet };
}

function dashStart(text: string, item: TNode): number {
  let i = item.start - 1;
  while (i >= 0 && text[i] === ' ') i--;
  return text[i] === '-' ? i : item.start;
}

function yamlFlow(value: unknown, style: Style): string {
  return stringify(value, { flow: true, lineWidth: 0, singleQuote: style.singleQuote }).replace(/\n$/, '');
}

/**
 * Add `key: value` to a mapping, before the first key that sorts after it when the keys
 * are sorted (as opm writes them), otherwise after `after` or at the end.
 */
export function addPair(
  text: string,
  map: TMap,
  key: string,
  value: unknown,
  style: Style,
  after?: string,
): Splice {
  const pairs = map.pairs;
  const keys = pairs.map((p) => p.key);
  const sorted = keys.every((k, i) => i === 0 || keys[i - 1]! <= k);
  let before: TPair | undefined;
  if (sorted && keys.length > 1) before = pairs.find((p) => p.key > key);
  else if (after !== undefined) {
    const i = pairs.findIndex((p) => p.key === after);
    before = i >= 0 ? pairs[i + 1] : undefined;
  }
  if (map.flow || style.format === 'json') {
    if (pairs.length === 0) {
      const render =
        style.format === 'json'
          ? `${JSON.stringify(key)}: ${JSON.stringify(value)}`
          : yamlFlow({ [key]: value }, style)
              .slice(1, -1)
              .trim();
      return { at: map.start + 1, del: map.end - map.start - 2, ins: render };
    }
    const ref = before ?? pairs[pairs.length - 1]!;
    const column = columnOf(text, ref.keyStart);
    const render =
      style.format === 'json'
        ? `${JSON.stringify(key)}: ${jsonValue(value, style, column)}`
        : yamlFlow({ [key]: value }, style)
            .slice(1, -1)
            .trim();
    const multiline = text.slice(map.start, pairs[0]!.keyStart).includes('\n');
    const sep = multiline ? ',\n' + ' '.repeat(column) : ', ';
    if (before) return { at: before.keyStart, del: 0, ins: render + sep };
    const last = pairs[pairs.length - 1]!;
    return { at: last.value?.end ?? last.keyStart, del: 0, ins: sep + render };
  }
  const indent = ' '.repeat(columnOf(text, pairs[0]!.keyStart));
  const snippet = indentLines(yamlText({ [key]: value }, style), indent);
  if (before) return { at: lineStart(text, before.keyStart), del: 0, ins: snippet + '\n' };
  const last = pairs[pairs.length - 1]!;
  return {
    at: lineEnd(text, last.value ? contentEnd(last.value) : last.keyStart),
    del: 0,
    ins: '\n' + snippet,
  };
}

/** Append a new top-level object after `after` (a top-level node), or at the end. */
export function insertDocument(
  text: string,
  value: Record<string, unknown>,
  style: Style,
  after?: TNode,
): Splice {
  if (style.format === 'json') {
    const render = JSON.stringify(value, null, style.jsonIndent);
    const at = after ? after.end : text.length;
    return {
      at,
      del: 0,
      ins: (at > 0 && text[at - 1] !== '\n' ? '\n' : '') + render + (after ? '\n' : '\n'),
    };
  }
  const render = '---\n' + yamlText(value, style);
  if (!after)
    return { at: text.length, del: 0, ins: (text.endsWith('\n') || text === '' ? '' : '\n') + render };
  const at = lineEnd(text, contentEnd(after));
  return { at: Math.min(at + 1, text.length), del: 0, ins: (at >= text.length ? '\n' : '') + render };
}

export function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => b.at - a.at);
  let out = text;
  for (const s of sorted) out = out.slice(0, s.at) + s.ins + out.slice(s.at + s.del);
  return out;
}
