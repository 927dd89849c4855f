// json.RawMessage: Go keeps a JSON value's text as it was written, and its encoder writes that
// text compacted. Numbers stay as written (4.10, 100000000000000000001), and so do `\u`
// escapes and the order of keys, where a JavaScript value would change all three.
// Every function here takes text that JSON.parse has already accepted.
import { isJsonSpace } from './gojsonsyntax.js';

function skipSpace(text: string, i: number): number {
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Where the JSON value that starts at `i` ends. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22 /* " */) {
    for (i++; ;) {
      const ch = text.charCodeAt(i);
      if (ch === 0x5c /* \ */) i += 2;
      else if (ch === 0x22) return i + 1;
      else i++;
    }
  }
  if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
    let depth = 0;
    for (;;) {
      const ch = text.charCodeAt(i);
      if (ch === 0x22) {
        i = valueEnd(text, i);
        continue;
      }
      if (ch === 0x7b || ch === 0x5b) depth++;
      else if ((ch === 0x7d || ch === 0x5d) && --depth === 0) return i + 1;
      i++;
    }
  }
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    if (isJsonSpace(ch) || ch === 0x2c || ch === 0x5d || ch === 0x7d) break;
    i++;
  }
  return i;
}

/** encoding/json's compact: the text without the spaces between its tokens. */
export function goJsonCompact(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length;) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      i = valueEnd(text, i);
    } else if (isJsonSpace(ch)) {
      out += text.slice(from, i);
      i = skipSpace(text, i);
      from = i;
    } else {
      i++;
    }
  }
  return out + text.slice(from);
}

/** The items of a JSON array's or object's text as written (an object's with their keys, decoded). */
function rawItems(text: string, open: number, close: number): [string, string][] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== open) return undefined;
  i = skipSpace(text, i + 1);
  const items: [string, string][] = [];
  if (text.charCodeAt(i) === close) return items;
  for (;;) {
    let key = '';
    if (open === 0x7b) {
      const keyEnd = valueEnd(text, i);
      key = JSON.parse(text.slice(i, keyEnd)) as string;
      i = skipSpace(text, skipSpace(text, keyEnd) + 1); // past ':'
    }
    const end = valueEnd(text, i);
    items.push([key, text.slice(i, end)]);
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === close) return items;
    i = skipSpace(text, i + 1); // past ','
  }
}

/** The elements of a JSON array's text, each as written; undefined if the text is no array. */
export function jsonRawElements(text: string): string[] | undefined {
  return rawItems(text, 0x5b, 0x5d)?.map(([, raw]) => raw);
}

/**
 * What Go decodes from a JSON object's text into the struct field `name`, as written: the
 * last member whose key matches the name without regard to case (later members overwrite
 * earlier ones). Undefined if there is none, or the text is no object.
 */
export function goRawField(text: string, name: string): string | undefined {
  const lower = name.toLowerCase();
  let raw: string | undefined;
  for (const [key, value] of rawItems(text, 0x7b, 0x7d) ?? []) if (key.toLowerCase() === lower) raw = value;
  return raw;
}
