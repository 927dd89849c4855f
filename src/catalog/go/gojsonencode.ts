// Go's encoding/json encoder, the one home for it. opm writes JSON in a few ways that
// differ only in the options below, so each caller names the way it emulates:
// declcfg.WriteJSON (a json.Encoder, indented, HTML left alone, structs in field order),
// declcfg.Meta re-encoding every blob it reads (a map[string]any: keys sorted), and
// json.Marshal of a bundle manifest (keys sorted, HTML escaped).
import { goStringCompare } from './gostrings.js';

/**
 * JSON kept as text: bytes Go already holds (a json.RawMessage), or values whose key order
 * JavaScript objects cannot hold (Go sorts map keys bytewise; JavaScript puts integer-like
 * keys first). The encoder writes the text as it is.
 */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * A value Go holds as a map[string]any inside a struct (a blob or property value that
 * declcfg.Meta re-encoded): the encoder sorts its keys, and those of the maps inside it,
 * whatever `sortKeys` says.
 */
export class GoMap {
  constructor(readonly value: unknown) {}
  toJSON(): unknown {
    return this.value;
  }
}

export interface GoJsonOptions {
  /**
   * true: every object is a Go map[string]any, keys sorted bytewise (UTF-8). false: a Go
   * struct, keys in the object's own order (the caller builds it in Go's field order and
   * wraps map values in GoMap).
   */
  sortKeys: boolean;
  /** json.Marshal writes <, > and & as \u003c, \u003e, \u0026; an Encoder after SetEscapeHTML(false) does not. */
  escapeHtml: boolean;
  /**
   * A json.Encoder after SetIndent("", indent): indented, `"key": value`, and a newline
   * after the value as Encoder.Encode writes. Absent: json.Marshal's compact bytes.
   */
  indent?: string;
}

/**
 * The bytes Go writes for a value decoded from JSON (or built as Go would hold it):
 * strings, numbers, booleans, null, arrays, objects and RawJson. An undefined object
 * value is an absent (omitempty) field; undefined elsewhere is null.
 */
export function goJsonEncode(value: unknown, options: GoJsonOptions): string {
  const { indent } = options;
  return indent === undefined ? encode(value, options, undefined) : encode(value, options, '\n') + '\n';
}

/** `newline`: a line break and the current depth's indent, or undefined for compact output. */
function encode(v: unknown, options: GoJsonOptions, newline: string | undefined): string {
  if (v instanceof RawJson) return rawText(v.text, newline, options.indent ?? '');
  if (v instanceof GoMap)
    return encode(v.value, options.sortKeys ? options : { ...options, sortKeys: true }, newline);
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return goJsonString(v, options.escapeHtml);
    case 'number':
      // Go formats float64 as ES6 does (exponent below 1e-6 and from 1e21), but keeps the
      // sign of zero. NaN and the infinities cannot come from JSON; JSON.stringify's null.
      return Object.is(v, -0) ? '-0' : Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
  }
  const inner = newline === undefined ? undefined : newline + options.indent;
  const separator = inner === undefined ? ',' : ',' + inner;
  const open = (bracket: string): string => (inner === undefined ? bracket : bracket + inner);
  const close = (bracket: string): string => (newline === undefined ? bracket : newline + bracket);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    const items: string[] = [];
    for (const x of v) items.push(encode(x, options, inner));
    return open('[') + items.join(separator) + close(']');
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (options.sortKeys) keys.sort(goStringCompare);
  const colon = inner === undefined ? ':' : ': ';
  const fields: string[] = [];
  for (const k of keys) {
    const x = o[k];
    if (x !== undefined) fields.push(goJsonString(k, options.escapeHtml) + colon + encode(x, options, inner));
  }
  if (fields.length === 0) return '{}';
  return open('{') + fields.join(separator) + close('}');
}

// Characters Go's encodeState.string writes differently from JSON.stringify: U+2028 and
// U+2029 (always escaped), surrogates (a lone one is invalid UTF-8), and <, >, & when
// escaping HTML. Everything else (quotes, backslashes, control characters as \n, \b,
// \u001f ...) JSON.stringify already writes exactly as Go does.
const NOT_AS_JSON_STRINGIFY = /[\u2028\u2029\ud800-\udfff]/;
const NOT_AS_JSON_STRINGIFY_HTML = /[\u2028\u2029\ud800-\udfff<>&]/;

/** A string as Go's encoder writes it. */
export function goJsonString(s: string, escapeHtml: boolean): string {
  if (!(escapeHtml ? NOT_AS_JSON_STRINGIFY_HTML : NOT_AS_JSON_STRINGIFY).test(s)) return JSON.stringify(s);
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2028 || c === 0x2029 || (escapeHtml && (c === 0x3c || c === 0x3e || c === 0x26))) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = s.charCodeAt(i + 1);
      if (c < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else {
        // A lone surrogate comes from a `\ud800` escape in the input, which Go's decoder
        // already turned into U+FFFD; the encoder writes that rune as it is.
        out += '\ufffd';
      }
    } else out += JSON.stringify(s[i]!).slice(1, -1);
  }
  return `"${out}"`;
}

/**
 * RawJson text in the output. json.Indent of compact text when indenting (the encoder
 * indents the whole value, raw parts included); U+2028 and U+2029 escaped, as every
 * JSON text this project writes has them.
 */
function rawText(text: string, newline: string | undefined, indent: string): string {
  const escaped = NOT_LINE_SEPARATOR.test(text)
    ? text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
    : text;
  return newline === undefined ? escaped : indentCompact(escaped, newline, indent);
}

const NOT_LINE_SEPARATOR = /[\u2028\u2029]/;

// A string (skipped whole: base64 payloads make them long), an empty object or array (kept
// closed), or one structural character.
const JSON_TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|\{\}|\[\]|[{}[\],:]/g;

/** Go's json.Indent of compact JSON whose first line break is `newline`. */
function indentCompact(compact: string, newline: string, indent: string): string {
  let line = newline;
  return compact.replace(JSON_TOKEN, (token) => {
    switch (token) {
      case '{':
      case '[':
        line += indent;
        return token + line;
      case '}':
      case ']':
        line = line.slice(0, line.length - indent.length);
        return line + token;
      case ',':
        return ',' + line;
      case ':':
        return ': ';
      default:
        return token; // a string, {} or []
    }
  });
}
