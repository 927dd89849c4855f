// A fast reader for the YAML that opm and the template renderers write (go-yaml v2 and
// sigs.k8s.io/yaml marshal output): block mappings and sequences, plain and quoted
// one-line scalars, `|` and `|-` literal blocks, `[]` and `{}`. It gives exactly what the
// full reader (js-yaml with the go-yaml schema, decode.ts) gives, or nothing: anything
// outside that subset makes it give up on the document, which the full reader then reads.
// Most catalog files are in the subset, and this is several times faster (README, "Benchmark").
import { checkGo, goRaw, matchField, type GoType } from '../../go/gojson.js';
import { NOT_RESOLVED, resolvePlainScalar } from '../yaml11.js';
import { MAX_KEY_LENGTH } from '../yaml-screen.js';

/** A document read by the fast path: the value and the 0-based lines (in the document) of its collections. */
export interface FastDocument {
  value: unknown;
  /** 0-based line of the root node in the document text. */
  rootLine: number;
  /** Collections at depth <= recordedDepth and the 0-based line the full reader records for each. */
  collections: object[];
  lines: number[];
}

/**
 * Property values that validation only type-checks (README, "Benchmarks"). In a document
 * whose root `schema` is `schema`, the `value` of an item of the root's `properties` list is
 * checked against the Go type `shape` gives for the item's `type`, as json.Unmarshal would
 * check it, and not built: the document holds `placeholder` there instead. A value that
 * fails its check, or that the check is unsure of, is built after all (the caller reports
 * the error as before); a document of another schema is read again, built.
 */
export interface CheckedValues {
  schema: string;
  shape(type: string): GoType | undefined;
  placeholder: object;
}

/** Thrown (and caught below) when the document is not in the subset. */
const GIVE_UP = new Error('not in the fast subset');
/** Thrown while checking a value (CheckedValues) that is to be built after all. */
const BUILD_IT = new Error('to be built');
/** What a checked mapping gives back: its value is not built. */
const NOT_BUILT: Record<string, unknown> = Object.freeze({});

// Where go-yaml and js-yaml may differ or where the subset stops: line breaks other than
// LF, byte order marks, the unicode line separators, control characters (the full reader
// reports them).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const OUTSIDE_SUBSET = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
// A key the full reader keeps as the same string: no resolution, no merge key, no prototype games.
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
// Plain keys already found to read as themselves: catalogs repeat a few hundred keys. The
// process may read many catalogs (the App): only short keys, and a bounded number of them.
const PLAIN_KEYS_SEEN = new Set<string>();
const PLAIN_KEYS_SEEN_MAX = 2000;
// Deeper than any catalog; the full reader reports absurd nesting its own way.
const MAX_FAST_DEPTH = 100;

class Reader {
  /** Start of the current line. */
  pos = 0;
  /** 0-based number of the current line. */
  line = 0;
  /** Indentation (spaces) and end of the current line; set by peek(). */
  indent = 0;
  eol = 0;
  readonly collections: object[] = [];
  readonly lines: number[] = [];
  /** Reading the list that is the value of the root's `properties` (CheckedValues). */
  inProperties = false;
  /** How many values were checked and not built. */
  checkedCount = 0;
  /** The first `: ` at or after colonSearchedFrom (-1: none), for startsMappingEntry. */
  private colonSearchedFrom = Infinity;
  private colonAt = -1;

  constructor(
    readonly text: string,
    /** Set to 0 while a value is checked: nothing of it is recorded. */
    private recordedDepth: number,
    readonly checked?: CheckedValues,
  ) {}

  /**
   * Move to the next line with content; false at the end. Empty and comment lines between
   * entries are skipped; a line of only spaces or a tab in the indentation ends the fast path.
   */
  peek(likelyIndent = 0): boolean {
    const text = this.text;
    // Most lines are indented as the entry before: one comparison for those spaces.
    const likely = likelyIndent > 0 ? spaces(likelyIndent) : '';
    for (;;) {
      if (this.pos >= text.length) return false;
      let eol = text.indexOf('\n', this.pos);
      if (eol < 0) eol = text.length;
      if (eol === this.pos) {
        this.pos = eol + 1;
        this.line++;
        continue;
      }
      let i = this.pos;
      if (likelyIndent > 0 && text.startsWith(likely, i)) i += likelyIndent;
      while (text.charCodeAt(i) === 0x20) i++;
      const c = text.charCodeAt(i);
      if (c === 0x23 /* # */) {
        // A comment line: skipped, as between entries the full reader skips it.
        this.pos = eol + 1;
        this.line++;
        continue;
      }
      if (i === eol || c === 0x09) throw GIVE_UP;
      this.indent = i - this.pos;
      this.eol = eol;
      return true;
    }
  }

  nextLine(): void {
    this.pos = this.eol + 1;
    this.line++;
  }

  record(collection: object, line: number, depth: number): void {
    if (depth <= this.recordedDepth) {
      this.collections.push(collection);
      this.lines.push(line);
    }
  }

  /**
   * A block mapping whose keys are at `indent`; the first key starts at `start` on the current
   * line. With a `shape`, the mapping is read and checked against it, not built.
   */
  mapping(indent: number, start: number, depth: number, shape?: GoType): Record<string, unknown> {
    const text = this.text;
    const result: Record<string, unknown> = shape === undefined ? {} : NOT_BUILT;
    // A checked mapping keeps only its keys, to find a repeated one as a built mapping does
    // (in a list while short, then in a set: a pull request may write thousands of keys).
    let keys: string[] | Set<string> | undefined = shape === undefined ? undefined : [];
    if (depth > MAX_FAST_DEPTH) throw GIVE_UP;
    if (shape !== undefined && shape.kind !== 'struct' && shape.kind !== 'map' && shape.kind !== 'raw')
      throw BUILD_IT; // Go wants no object here: a type error, which the built value reports
    let checkedHere = false;
    // A mapping at depth 2 is a root key's value: `properties` written as a mapping has no
    // list items whose values Go checks (it fails on the whole), so none is checked here.
    if (depth === 2) this.inProperties = false;
    for (;;) {
      const keyLine = this.line;
      const eol = this.eol;
      let key: string;
      let p: number;
      const c = text.charCodeAt(start);
      if (c === 0x22 || c === 0x27) {
        const quoted = this.quoted(start, indent);
        key = quoted.value;
        p = quoted.end;
        if (quoted.line !== keyLine || text.charCodeAt(p) !== 0x3a) throw GIVE_UP;
      } else {
        p = text.indexOf(':', start);
        if (p < 0 || p > eol) throw GIVE_UP;
        key = text.slice(start, p);
        if (!PLAIN_KEYS_SEEN.has(key)) {
          if (!PLAIN_KEY.test(key) || resolvePlainScalar(key) !== NOT_RESOLVED) throw GIVE_UP;
          if (PLAIN_KEYS_SEEN.size < PLAIN_KEYS_SEEN_MAX && key.length <= 64) PLAIN_KEYS_SEEN.add(key);
        }
      }
      if (key === '__proto__' || p - start >= MAX_KEY_LENGTH) throw GIVE_UP; // as the screen counts it
      if (keys === undefined) {
        if (Object.prototype.hasOwnProperty.call(result, key)) throw GIVE_UP;
      } else if (Array.isArray(keys)) {
        if (keys.includes(key)) throw GIVE_UP;
        keys.push(key);
        if (keys.length > 16) keys = new Set(keys);
      } else {
        if (keys.has(key)) throw GIVE_UP;
        keys.add(key);
      }
      if (depth === 1 && this.checked !== undefined) this.inProperties = key === 'properties';
      const entryShape = shape === undefined ? undefined : shapeOfEntry(shape, key);
      p++; // past ':'
      let value: unknown;
      if (p === eol) {
        const checkedShape =
          shape === undefined && depth === 3 && key === 'value' && this.inProperties
            ? this.shapeOf(result)
            : undefined;
        if (checkedShape !== undefined) {
          value = this.checkedValueBelow(indent, depth + 1, keyLine, checkedShape);
          checkedHere = value === this.checked!.placeholder;
        } else {
          value = this.valueBelow(indent, depth + 1, keyLine, entryShape);
        }
      } else {
        if (text.charCodeAt(p) !== 0x20) throw GIVE_UP;
        p++;
        value = this.inlineValue(p, indent, depth + 1, keyLine);
        if (entryShape !== undefined && !scalarFits(value, entryShape)) throw BUILD_IT;
      }
      if (shape === undefined) result[key] = value;
      if (!this.peek(indent) || this.indent < indent) {
        // Another spelling of `type` or `value` would make Go's choice of them matter.
        if (
          checkedHere &&
          Object.keys(result).some((k) => k !== 'type' && k !== 'value' && OTHER_SPELLING.test(k))
        )
          throw GIVE_UP;
        return result;
      }
      if (this.indent > indent) throw GIVE_UP;
      start = this.pos + indent;
      if (text.charCodeAt(start) === 0x2d && isSpaceOrEnd(text.charCodeAt(start + 1))) throw GIVE_UP;
    }
  }

  /** The value of a `key:` that ends its line: a nested block, an indentless sequence, or null. */
  private valueBelow(indent: number, depth: number, keyLine: number, shape: GoType | undefined): unknown {
    this.nextLine();
    if (this.peek(indent) && this.indent > indent) return this.block(this.indent, depth, keyLine, shape);
    if (this.peekIsIndentlessItem(indent)) return this.sequence(indent, depth, keyLine, shape);
    return null;
  }

  /** The Go type a property item's value is checked against (CheckedValues), if any. */
  private shapeOf(item: Record<string, unknown>): GoType | undefined {
    const type = item.type;
    return typeof type === 'string' ? this.checked!.shape(type) : undefined;
  }

  /** valueBelow, checked against `shape` (CheckedValues); built when the check does not pass. */
  private checkedValueBelow(indent: number, depth: number, keyLine: number, shape: GoType): unknown {
    const { pos, line, eol, recordedDepth } = this;
    const lineIndent = this.indent;
    this.recordedDepth = 0;
    let value: unknown;
    try {
      value = this.valueBelow(indent, depth, keyLine, shape);
    } catch (err) {
      this.recordedDepth = recordedDepth;
      if (err !== BUILD_IT) throw err;
      Object.assign(this, { pos, line, eol, indent: lineIndent });
      return this.valueBelow(indent, depth, keyLine, undefined);
    }
    this.recordedDepth = recordedDepth;
    if (value === null) return null; // `value:` and nothing: null, not a checked value
    this.checkedCount++;
    return this.checked!.placeholder;
  }

  private peekIsIndentlessItem(indent: number): boolean {
    if (this.pos >= this.text.length || this.indent !== indent) return false;
    const at = this.pos + indent;
    return this.text.charCodeAt(at) === 0x2d && isSpaceOrEnd(this.text.charCodeAt(at + 1));
  }

  /** A block node starting on the current line (already peeked) at `indent`; checked with a `shape`. */
  private block(indent: number, depth: number, line: number, shape: GoType | undefined): unknown {
    const at = this.pos + indent;
    if (this.text.charCodeAt(at) === 0x2d && isSpaceOrEnd(this.text.charCodeAt(at + 1))) {
      return this.sequence(indent, depth, line, shape);
    }
    const value = this.mapping(indent, at, depth, shape);
    this.record(value, line, depth);
    return value;
  }

  /**
   * A block sequence whose dashes are at `indent`, the current line being its first item.
   * With a `shape`, the items are read and checked against it, not kept.
   */
  sequence(indent: number, depth: number, line: number, shape?: GoType): unknown[] {
    const text = this.text;
    const result: unknown[] = [];
    if (depth > MAX_FAST_DEPTH) throw GIVE_UP;
    if (shape !== undefined && shape.kind !== 'slice' && shape.kind !== 'raw') throw BUILD_IT;
    const itemShape = shape?.kind === 'slice' ? shape.elem : shape;
    this.record(result, line, depth);
    for (;;) {
      const start = this.pos + indent;
      // `- ` then content on the same line; anything else (`-` alone, `- - x`) is not in the subset.
      if (text.charCodeAt(start + 1) !== 0x20) throw GIVE_UP;
      const itemStart = start + 2;
      const c = text.charCodeAt(itemStart);
      if (itemStart >= this.eol || c === 0x20 || (c === 0x2d && isSpaceOrEnd(text.charCodeAt(itemStart + 1))))
        throw GIVE_UP;
      const itemLine = this.line;
      if (this.startsMappingEntry(itemStart, indent)) {
        const item = this.mapping(itemStart - this.pos, itemStart, depth + 1, itemShape);
        this.record(item, itemLine, depth + 1);
        if (itemShape === undefined) result.push(item);
      } else {
        const item = this.inlineValue(itemStart, indent, depth + 1, itemLine);
        if (itemShape === undefined) result.push(item);
        else if (!scalarFits(item, itemShape)) throw BUILD_IT;
      }
      if (!this.peek(indent) || this.indent < indent) return result;
      if (this.indent > indent) throw GIVE_UP;
      const next = this.pos + indent;
      if (text.charCodeAt(next) !== 0x2d || !isSpaceOrEnd(text.charCodeAt(next + 1))) return result;
    }
  }

  /** Does a `key:` start at p (a compact mapping in a sequence item)? */
  private startsMappingEntry(p: number, parentIndent: number): boolean {
    const text = this.text;
    const c = text.charCodeAt(p);
    if (c === 0x22 || c === 0x27) return text.charCodeAt(this.quoted(p, parentIndent).end) === 0x3a;
    // The next `: ` may be far past this line, or nowhere: found once for all the items it
    // is past (a search per item of a long list of scalars would take quadratic time).
    if (p < this.colonSearchedFrom || (this.colonAt >= 0 && p > this.colonAt)) {
      this.colonSearchedFrom = p;
      this.colonAt = text.indexOf(': ', p);
    }
    const colon = this.colonAt;
    if (colon >= 0 && colon < this.eol) return true;
    return text.charCodeAt(this.eol - 1) === 0x3a;
  }

  /**
   * A scalar or `[]`/`{}` after `key: ` or `- ` at p, or a literal block. Scalars may go on
   * over more indented lines (go-yaml folds long ones). Leaves the reader on the next line.
   */
  private inlineValue(p: number, parentIndent: number, depth: number, line: number): unknown {
    const text = this.text;
    const c = text.charCodeAt(p);
    let value: unknown;
    switch (c) {
      case 0x22: // "
      case 0x27: {
        // '
        const quoted = this.quoted(p, parentIndent);
        if (quoted.end !== quoted.eol) throw GIVE_UP;
        this.line = quoted.line;
        this.pos = quoted.lineStart;
        this.eol = quoted.eol;
        value = quoted.value;
        break;
      }
      case 0x7c: // |
        return this.literal(p, parentIndent);
      case 0x5b: // [
      case 0x7b: {
        // {
        const eol = this.eol;
        if (eol !== p + 2 || text.charCodeAt(p + 1) !== (c === 0x5b ? 0x5d : 0x7d)) throw GIVE_UP;
        const empty = c === 0x5b ? [] : {};
        this.record(empty, line, depth);
        value = empty;
        break;
      }
      default:
        value = this.plain(p, parentIndent);
    }
    this.nextLine();
    return value;
  }

  /** A plain scalar from p, resolved as the full reader resolves it. */
  private plain(p: number, parentIndent: number): unknown {
    const text = this.text;
    const c = text.charCodeAt(p);
    // Indicators that start something else (or something this reader leaves to the full one).
    if (
      c === 0x2d /* - */ ? isSpaceOrEnd(text.charCodeAt(p + 1)) : INDICATOR.has(c) || c === 0x20 || c === 0x09
    )
      throw GIVE_UP;
    let s = plainSegment(text, p, this.eol);
    // More indented lines go on with the scalar: one line break is a space, more are newlines.
    // Most scalars end with their line, the next one being no deeper than the parent.
    const after = this.eol + 1;
    const ends =
      after < text.length &&
      text.charCodeAt(after) !== 0x0a &&
      !text.startsWith(spaces(parentIndent + 1), after);
    while (!ends) {
      const next = this.continuation(this.eol, this.line, parentIndent, false);
      if (next === undefined) break;
      if (text.charCodeAt(next.pos) === 0x23) throw GIVE_UP; // a comment
      s += next.breaks === 1 ? ' ' : '\n'.repeat(next.breaks - 1);
      s += plainSegment(text, next.pos, next.eol);
      this.line = next.line;
      this.pos = next.lineStart;
      this.eol = next.eol;
    }
    if (s === '<<') throw GIVE_UP;
    const resolved = resolvePlainScalar(s);
    return resolved === NOT_RESOLVED ? s : resolved;
  }

  /**
   * After the line break at i (on line `line`): skip empty lines; the next line must be
   * indented more than parentIndent to go on (else undefined, or giving up if `required`).
   */
  private continuation(
    i: number,
    line: number,
    parentIndent: number,
    required: boolean,
  ): { pos: number; breaks: number; line: number; lineStart: number; eol: number } | undefined {
    const text = this.text;
    const deeper = spaces(parentIndent + 1);
    let breaks = 0;
    for (;;) {
      if (i >= text.length) {
        if (required) throw GIVE_UP;
        return undefined;
      }
      i++;
      breaks++;
      line++;
      if (i >= text.length || text.charCodeAt(i) === 0x0a) continue; // an empty line
      if (!text.startsWith(deeper, i)) {
        // Not indented past the parent: the scalar ends (what that line holds, spaces only
        // or a tab, peek() judges as it reads it next).
        if (required) throw GIVE_UP;
        return undefined;
      }
      let j = i + deeper.length;
      while (text.charCodeAt(j) === 0x20) j++;
      const c = text.charCodeAt(j);
      if (c === 0x0a || j >= text.length || c === 0x09) throw GIVE_UP; // a line of spaces, a tab
      let eol = text.indexOf('\n', j);
      if (eol < 0) eol = text.length;
      return { pos: j, breaks, line, lineStart: i, eol };
    }
  }

  /**
   * A quoted scalar, folded over lines as the full reader folds it. `end` is just after the
   * closing quote, on the line that starts at `lineStart` and ends at `eol`.
   */
  quoted(
    p: number,
    parentIndent: number,
  ): { value: string; end: number; line: number; lineStart: number; eol: number } {
    const text = this.text;
    const double = text.charCodeAt(p) === 0x22;
    let line = this.line;
    let lineStart = this.pos;
    let eol = this.eol;
    // Most quoted scalars close on their line with nothing escaped: their text as it stands.
    const close = text.indexOf(double ? '"' : "'", p + 1);
    if (close >= 0 && close < eol && (double || text.charCodeAt(close + 1) !== 0x27)) {
      const value = text.slice(p + 1, close);
      if (!(double ? ESCAPED_OR_TAB : TAB).test(value))
        return { value, end: close + 1, line, lineStart, eol };
    }
    let value = '';
    let i = p + 1;
    let captureStart = i;
    let captureEnd = i;
    for (;;) {
      if (i >= text.length) throw GIVE_UP;
      const ch = text.charCodeAt(i);
      if (double ? ch === 0x22 : ch === 0x27) {
        value += text.slice(captureStart, i);
        i++;
        if (double || text.charCodeAt(i) !== 0x27) break;
        captureStart = i; // '' is a quote
        i++;
        captureEnd = i;
      } else if (ch === 0x0a) {
        // A line break folds: trailing spaces go, one break is a space, more are newlines.
        value += text.slice(captureStart, captureEnd);
        const next = this.continuation(i, line, parentIndent, true)!;
        value += next.breaks === 1 ? ' ' : '\n'.repeat(next.breaks - 1);
        ({ pos: i, line, lineStart, eol } = next);
        captureStart = captureEnd = i;
      } else if (double && ch === 0x5c) {
        value += text.slice(captureStart, i);
        const e = text.charCodeAt(i + 1);
        if (e === 0x0a) {
          // An escaped line break joins the lines with nothing between.
          const next = this.continuation(i + 1, line, parentIndent, true)!;
          ({ pos: i, line, lineStart, eol } = next);
        } else {
          const simple = SIMPLE_ESCAPES.get(e);
          if (simple !== undefined) {
            value += simple;
            i += 2;
          } else {
            const digits = e === 0x78 ? 2 : e === 0x75 ? 4 : e === 0x55 ? 8 : 0;
            const hex = text.slice(i + 2, i + 2 + digits);
            if (digits === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== digits) throw GIVE_UP;
            const code = parseInt(hex, 16);
            // Surrogates and codes past Unicode: opm reads them differently (yaml-screen.ts).
            if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw GIVE_UP;
            value += String.fromCodePoint(code);
            i += 2 + digits;
          }
        }
        captureStart = captureEnd = i;
      } else if (ch === 0x09) {
        throw GIVE_UP;
      } else {
        i++;
        if (ch !== 0x20) captureEnd = i;
      }
    }
    return { value, end: i, line, lineStart, eol };
  }

  /** A `|` or `|-` literal block (`|2-`...); p is at the `|`. */
  private literal(p: number, parentIndent: number): string {
    const text = this.text;
    // The header: `-` (strip) and an indentation digit, in either order (go-yaml writes
    // `|2-` when the text starts with a space or an empty line). Keep (`+`) and comments
    // are left to the full reader.
    const header = /^\|(?:-?([1-9])?|([1-9])-)$/.exec(text.slice(p, this.eol));
    if (!header) throw GIVE_UP;
    const strip = header[0].includes('-');
    const digit = header[1] ?? header[2];
    this.nextLine();
    let result = '';
    let emptyLines = 0;
    // As the full reader: an explicit indentation counts from the parent's.
    let textIndent = digit === undefined ? -1 : parentIndent + Number(digit);
    let indentation = textIndent < 0 ? '' : spaces(textIndent);
    let didReadContent = false;
    while (this.pos < text.length) {
      let eol = text.indexOf('\n', this.pos);
      if (eol < 0) eol = text.length;
      let i = this.pos;
      if (textIndent < 0) {
        // Lines before the first content line must be empty.
        while (text.charCodeAt(i) === 0x20) i++;
        // go-yaml fails on a tab where it is still looking for the indentation (yaml-screen.ts).
        if (text.charCodeAt(i) === 0x09) throw GIVE_UP;
        if (i === eol) {
          if (i !== this.pos) throw GIVE_UP;
          emptyLines++;
          this.pos = eol + 1;
          this.line++;
          continue;
        }
        if (i - this.pos <= parentIndent) throw GIVE_UP; // an empty block: left to the full reader
        textIndent = i - this.pos;
        indentation = spaces(textIndent);
      } else {
        const limit = this.pos + textIndent;
        if (text.startsWith(indentation, i)) i = limit;
        else while (i < limit && text.charCodeAt(i) === 0x20) i++;
        if (i === eol) {
          emptyLines++;
          this.pos = eol + 1;
          this.line++;
          continue;
        }
        if (i < limit) break; // less indented: the block ends
      }
      if (didReadContent) result += emptyLines === 0 ? '\n' : '\n'.repeat(1 + emptyLines);
      else if (emptyLines > 0) result += '\n'.repeat(emptyLines);
      result += text.slice(i, eol);
      didReadContent = true;
      emptyLines = 0;
      this.pos = eol + 1;
      this.line++;
    }
    if (!didReadContent) throw GIVE_UP;
    if (!strip) result += '\n';
    return result;
  }
}

const ESCAPED_OR_TAB = /[\\\t]/;
const TAB = /\t/;

// The full reader's one-character escapes in double-quoted scalars (a tab after `\\` aside).
const SIMPLE_ESCAPES = new Map<number, string>(
  (
    [
      ['0', '\0'],
      ['a', '\x07'],
      ['b', '\b'],
      ['t', '\t'],
      ['n', '\n'],
      ['v', '\v'],
      ['f', '\f'],
      ['r', '\r'],
      ['e', '\x1b'],
      [' ', ' '],
      ['"', '"'],
      ['\\', '\\'],
      ['N', '\x85'],
      ['_', '\xa0'],
      ['L', '\u2028'],
      ['P', '\u2029'],
    ] as const
  ).map(([k, v]) => [k.charCodeAt(0), v]),
);

// In a plain scalar, `: ` would make a mapping and ` #` a comment; tabs are left to the full reader.
const NOT_PLAIN_TEXT = /: | #|\t/;

/** One line of a plain scalar: what the subset allows, with no trailing space. */
function plainSegment(text: string, from: number, eol: number): string {
  const last = text.charCodeAt(eol - 1);
  if (last === 0x20 || last === 0x09 || last === 0x3a) throw GIVE_UP;
  const s = text.slice(from, eol);
  if (NOT_PLAIN_TEXT.test(s)) throw GIVE_UP;
  return s;
}

// Characters that cannot start a plain scalar here (YAML indicators), `-` handled apart.
const INDICATOR = new Set([...'?:,[]{}#&*!|>\'"%@`'].map((ch) => ch.charCodeAt(0)));

/** The type of a mapping entry's value, the mapping being checked against `shape`. */
function shapeOfEntry(shape: GoType, key: string): GoType {
  if (shape.kind === 'map') return shape.elem;
  if (shape.kind !== 'struct') return shape; // raw: read, not checked
  const field = matchField(shape, key);
  if (field === undefined) return goRaw; // Go drops unknown fields
  // Another spelling of a field: which of several spellings Go keeps is decodeGo's to say.
  if (field !== key) throw BUILD_IT;
  return shape.fields[field]!;
}

/** Does a scalar (or `[]`, `{}`) pass json.Unmarshal into `shape`? */
function scalarFits(value: unknown, shape: GoType): boolean {
  // An infinity or NaN is built, for the document's check (decode.ts) to find.
  if (typeof value === 'number' && !Number.isFinite(value)) return false;
  if (shape.kind === 'raw' || value === null) return true;
  if (shape.kind === 'string') return typeof value === 'string';
  return checkGo(value, shape) === undefined;
}

const OTHER_SPELLING = /^(?:type|value)$/i;

const SPACES: string[] = [];

/** `n` spaces (kept for the usual indentations). */
function spaces(n: number): string {
  if (n >= 64) return ' '.repeat(n);
  return (SPACES[n] ??= ' '.repeat(n));
}

function isSpaceOrEnd(c: number): boolean {
  return c === 0x20 || c === 0x0a || Number.isNaN(c);
}

/**
 * Read one YAML document (the text between `---` separators, possibly starting with the
 * `---` line) if it is in the fast subset; undefined means "use the full reader".
 * Records collections up to `recordedDepth` with the line the full reader records for each
 * (the line where its node starts: a value's key line, an item's dash line).
 */
export function readFastYamlDocument(
  text: string,
  recordedDepth: number,
  /** The caller has seen that OUTSIDE_SUBSET does not match (saves a second scan). */
  screened = false,
  checked?: CheckedValues,
): FastDocument | undefined {
  if (!screened && OUTSIDE_SUBSET.test(text)) return undefined;
  const reader = new Reader(text, recordedDepth, checked);
  try {
    if (text.startsWith('---')) {
      let eol = text.indexOf('\n');
      if (eol < 0) eol = text.length;
      if (eol !== 3) return undefined;
      reader.pos = 4;
      reader.line = 1;
    }
    if (!reader.peek() || reader.indent !== 0) return undefined;
    const rootLine = reader.line;
    const first = reader.pos;
    const c = text.charCodeAt(first);
    if (c === 0x2d || c === 0x2e || c === 0x25) return undefined; // sequences, `...`, directives
    const value = reader.mapping(0, first, 1);
    reader.record(value, rootLine, 1);
    if (reader.peek()) return undefined;
    if (reader.checkedCount > 0 && value.schema !== checked!.schema)
      return readFastYamlDocument(text, recordedDepth, true);
    return { value, rootLine, collections: reader.collections, lines: reader.lines };
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    // Anything else (a stack overflow on absurd nesting...) is the full reader's to report.
    return undefined;
  }
}
