// Go standard-library string behaviour that opm's messages and parsing depend on.

/** Go compares strings byte by byte (UTF-8), not by UTF-16 code unit as JavaScript's `<` does. */
export function goStringCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  // Outside the surrogates UTF-16 and UTF-8 order alike; a character past U+FFFF (or a lone
  // surrogate, U+FFFD to Go) against one from U+E000 up does not: compare the bytes.
  if ((x & 0xf800) !== 0xd800 && (y & 0xf800) !== 0xd800) return x < y ? -1 : 1;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** strings.SplitN for n > 0: at most n parts, the last one keeps the remaining separators. */
export function goSplitN(s: string, sep: string, n: number): string[] {
  const parts: string[] = [];
  let rest = s;
  while (parts.length < n - 1) {
    const at = rest.indexOf(sep);
    if (at === -1) break;
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + sep.length);
  }
  parts.push(rest);
  return parts;
}

// unicode.IsSpace: the White_Space property (JS trim() also strips U+FEFF and misses U+0085).
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const GO_TRIM_SPACE = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g');

/** strings.TrimSpace. */
export function goTrimSpace(s: string): string {
  return s.replace(GO_TRIM_SPACE, '');
}

const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const GO_SHORT_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

// Printable ASCII other than `"` and `\`: quoted as it is (most names; validation quotes
// thousands of them for its messages).
const QUOTED_AS_IS = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** strconv.Quote, i.e. Go's `%q`, so messages quote strings exactly like blang's. */
export function goQuote(s: string): string {
  if (QUOTED_AS_IS.test(s)) return '"' + s + '"';
  let out = '"';
  for (const ch of s) out += quoteRune(ch);
  return out + '"';
}

function quoteRune(ch: string): string {
  // A lone surrogate reaches Go as U+FFFD (JSON decoding and UTF-8 encoding both replace it).
  if (/^[\uD800-\uDFFF]$/.test(ch)) return '\uFFFD';
  if (ch === '"' || ch === '\\') return '\\' + ch;
  if (GO_PRINTABLE.test(ch)) return ch;
  const short = GO_SHORT_ESCAPES[ch];
  if (short !== undefined) return short;
  const code = ch.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return '\\x' + code.toString(16).padStart(2, '0');
  if (code < 0x10000) return '\\u' + code.toString(16).padStart(4, '0');
  return '\\U' + code.toString(16).padStart(8, '0');
}

/** unicode.IsSpace for one UTF-16 code unit. */
export function isGoSpace(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** len(s) in Go: UTF-8 bytes. */
export function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}
