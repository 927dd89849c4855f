// What catalog-bot refuses to read in YAML: constructs where opm's reader (go-yaml v2, YAML
// 1.1, through sigs.k8s.io/yaml) and ours could read the same text differently, so that opm
// would serve a channel or bundle that our checks never saw. Each is refused with its own
// rule and the line, even where opm accepts it (docs/security.md, "The bot reads files exactly
// as opm does"); test/yaml-differential.test.ts holds every rule against the real opm.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { NOT_RESOLVED, resolvePlainScalar } from './yaml11.js';

// The syntax tree comes from the `yaml` package, loaded on first use: what the fast reader
// reads (every real catalog, nearly) never needs it, and `validate` starts faster without it.
const require = createRequire(import.meta.url);
let yamlModule: typeof Yaml | undefined;
const yamlParser = (): Yaml.Parser => new (yamlModule ??= require('yaml') as typeof Yaml).Parser();

/** A construct refused, at 0-based `offset` of the document text. */
export interface ScreenFinding {
  rule: ReadRefusal | 'L-TOO-DEEP';
  message: string;
  offset: number;
  /**
   * Found in the text itself, whatever its structure. Otherwise found in the syntax tree,
   * which means little past a syntax error: decode.ts weighs it against the full reader's.
   */
  certain?: boolean;
}

export type ReadRefusal =
  | 'L-YAML-LINE-BREAK'
  | 'L-YAML-CR'
  | 'L-YAML-DOCUMENT-END'
  | 'L-YAML-DIRECTIVE'
  | 'L-YAML-TAG'
  | 'L-YAML-MERGE-KEY'
  | 'L-YAML-KEY'
  | 'L-YAML-ESCAPE'
  | 'L-YAML-TAB'
  | 'L-KEY-NOT-ASCII'
  | 'L-JSON-NUMBER';

/** Every refusal, with why opm and catalog-bot could disagree there (README and docs/security.md). */
export const READ_REFUSALS: Record<ReadRefusal, string> = {
  'L-YAML-LINE-BREAK':
    'U+2028, U+2029 and U+0085 are line breaks for opm (YAML 1.1) and not for YAML 1.2 readers: a comment or scalar can hide keys',
  'L-YAML-CR':
    'a carriage return without a line feed ends a line for YAML but not for the `---` splitter opm uses',
  'L-YAML-DOCUMENT-END': 'opm reads only up to `...` and drops what follows in the same document',
  'L-YAML-DIRECTIVE': '`%YAML` and `%TAG` directives change how tags and versions are read',
  'L-YAML-TAG': 'opm resolves tags (`!!binary`, `!!int`, custom tags) its own way',
  'L-YAML-MERGE-KEY':
    "opm's merge key `<<` overrides keys written before it; YAML readers disagree on merge order",
  'L-YAML-KEY':
    'a key that is not text or a whole number (a float, null, a collection), or longer than 1,000 characters, becomes a different key for opm or fails there',
  'L-YAML-ESCAPE': "escapes `\\/`, `\\'` and surrogate `\\u`/`\\U` codes are read differently by opm",
  'L-YAML-TAB':
    'a tab where opm expects indentation or a space (after `- `, at the start of a block scalar) fails there',
  'L-KEY-NOT-ASCII':
    'opm matches top-level keys with Unicode case folding (`ſchema` is `schema`, `paßword` is `password`): only ASCII keys are read at the top of a document',
  'L-JSON-NUMBER': 'a JSON number too large for a float64 makes opm read the file as YAML instead',
};

/** What to write instead, for each refusal (a hint beside the finding). */
export const READ_REFUSAL_HINTS: Record<ReadRefusal, string> = {
  'L-YAML-LINE-BREAK':
    'Replace it with a plain line break, or inside a double-quoted string with its escape (\\u2028, \\u2029, \\N).',
  'L-YAML-CR': 'Save the file with LF (or CRLF) line ends.',
  'L-YAML-DOCUMENT-END': 'Replace the `...` line with `---`, or remove it.',
  'L-YAML-DIRECTIVE': 'Remove the `%` directive line.',
  'L-YAML-TAG': 'Remove the tag and write the value itself (quote it to keep it text).',
  'L-YAML-MERGE-KEY': 'Write the keys out in the mapping instead of merging them with `<<`.',
  'L-YAML-KEY': 'Quote the key (`"1.5": x`), or use a shorter text key.',
  'L-YAML-ESCAPE': 'Write the character itself, or an escape both read alike (\\u00e9, \\n).',
  'L-YAML-TAB': 'Indent with spaces, and put a space, not a tab, after `-`.',
  'L-KEY-NOT-ASCII':
    'Write top-level keys in ASCII (schema, package, name, ...); put other text inside a value.',
  'L-JSON-NUMBER': 'Write the number as a string, or as one a float64 holds.',
};

// Characters refused anywhere in a YAML document, and lines that start a construct refused.
const SCREENED = /[\u2028\u2029\u0085]|^\.\.\.(?:[ \t\r]|$)|^[ ]*-\t/m;
const LONE_CR = /\r(?!\n)/;

/** The first refused construct of a YAML document, or undefined. */
export function screenYamlDocument(text: string): ScreenFinding | undefined {
  const cr = text.includes('\r') ? LONE_CR.exec(text) : null;
  if (cr)
    return {
      rule: 'L-YAML-CR',
      message: 'a carriage return without a line feed: end lines with LF or CRLF',
      offset: cr.index,
      certain: true,
    };
  const lexical = SCREENED.exec(text);
  if (lexical) return lexicalFinding(lexical[0], lexical.index);
  if (!MAY_NEED_SYNTAX.some((re) => re.test(text))) return undefined;
  try {
    return screenSyntax(text);
  } catch (err) {
    // Nesting past what the stack holds (thousands of levels): too deep to read at all.
    if (!(err instanceof RangeError)) throw err;
    return { rule: 'L-TOO-DEEP', message: 'document is nested too deeply to read', offset: 0, certain: true };
  }
}

function lexicalFinding(found: string, at: number): ScreenFinding {
  if (found === '\u2028' || found === '\u2029' || found === '\u0085')
    return {
      rule: 'L-YAML-LINE-BREAK',
      message: `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is a line break for opm: use a plain line break, or write it as an escape in a double-quoted string`,
      offset: at,
      certain: true,
    };
  if (found.startsWith('...'))
    return {
      rule: 'L-YAML-DOCUMENT-END',
      message: '`...` ends the document for opm, which ignores the rest of it: separate documents with `---`',
      offset: at,
      certain: true,
    };
  return {
    rule: 'L-YAML-TAB',
    message: 'a tab after `-`: opm fails on it; use a space',
    offset: at + found.length - 1,
    certain: true,
  };
}

// The syntax pass is slow next to the fast reader; a document it could refuse has one of
// these (each a superset of what the pass looks for), and most documents have none.
const MAY_NEED_SYNTAX = [
  /(?:^|[\s[{,:])!/m, // a tag
  /^%/m, // a directive
  /<</, // a merge key
  /\\(?:[/']|u[dD][89a-fA-F]|U(?!000[0-9a-fA-F]{5}|0010[0-9a-fA-F]{4})|U0000[dD][89a-fA-F])/, // a refused escape
  /^ *\t/m, // a tab after the indentation (a block scalar's first line)
  /[\]}]\s*:|(?:^|[\s[{,])\?(?:\s|$)/m, // a collection as a key, an explicit key
  /^[^\n]{1000,}:/m, // a key past 1,000 characters
  // a key, where keys start, that may be a number or null, or empty
  /(?:^[ \t]*(?:-[ \t]+)*|[{,?][ \t]*)(?:&\S+[ \t]+)?(?:[0-9.+~-][^\s,[\]{}#]*|null|Null|NULL)?[ \t]*:(?:[\s,[\]{}]|$)/m,
];

/** The syntax pass: tags, directives, keys, escapes and block scalar indentation. */
function screenSyntax(text: string): ScreenFinding | undefined {
  let found: ScreenFinding | undefined;
  const visit = (node: unknown): void => {
    if (found || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const token = node as Record<string, unknown> & { type?: string; offset?: number; source?: string };
    switch (token.type) {
      case 'tag':
        found = {
          rule: 'L-YAML-TAG',
          message: `tag ${token.source ?? ''}: opm resolves tags its own way; write the value without one`,
          offset: token.offset ?? 0,
        };
        return;
      case 'directive':
        found = {
          rule: 'L-YAML-DIRECTIVE',
          message: `directive ${(token.source ?? '').slice(0, 40)}: remove it`,
          offset: token.offset ?? 0,
        };
        return;
      case 'doc-end':
        found = {
          rule: 'L-YAML-DOCUMENT-END',
          message:
            '`...` ends the document for opm, which ignores the rest of it: separate documents with `---`',
          offset: token.offset ?? 0,
        };
        return;
      case 'double-quoted-scalar':
        found = badEscape(token.source ?? '', token.offset ?? 0);
        if (found) return;
        break;
      case 'block-scalar':
        found = tabAtBlockStart(token);
        if (found) return;
        break;
    }
    if (Array.isArray(token.items)) {
      for (const item of token.items as Record<string, unknown>[]) {
        if (item.key !== undefined && item.key !== null)
          found ??= badKey(item.key as Record<string, unknown>);
        if (found) return;
      }
    }
    for (const value of Object.values(token)) visit(value);
  };
  for (const token of yamlParser().parse(text)) {
    visit(token);
    if (found) return found;
  }
  return undefined;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);
// go-yaml v2 gives up on an implicit key after 1,024 characters; well below, to be safe.
export const MAX_KEY_LENGTH = 1000;

function badKey(key: Record<string, unknown>): ScreenFinding | undefined {
  const type = key.type as string;
  const offset = (key.offset as number | undefined) ?? 0;
  if (COLLECTIONS.has(type))
    return {
      rule: 'L-YAML-KEY',
      message: 'a mapping or list used as a key: opm fails on it; use a text key',
      offset,
    };
  const source = typeof key.source === 'string' ? key.source : '';
  if (source.length > MAX_KEY_LENGTH)
    return {
      rule: 'L-YAML-KEY',
      message: `a key of ${source.length} characters (at most ${MAX_KEY_LENGTH}): opm gives up on long keys`,
      offset,
    };
  if (type !== 'scalar') return undefined;
  if (source === '<<')
    return {
      rule: 'L-YAML-MERGE-KEY',
      message: 'merge key `<<`: opm lets it override keys written before it; write the keys out',
      offset,
    };
  const value = resolvePlainScalar(source);
  if (value === NOT_RESOLVED || typeof value === 'boolean' || typeof value === 'string') return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && !/[.eE]/.test(source)) return undefined;
  return {
    rule: 'L-YAML-KEY',
    message: `key ${JSON.stringify(source)} is ${value === null ? 'null' : 'a number'} for opm, which writes it differently or fails: quote it`,
    offset,
  };
}

/** An escape go-yaml v2 reads differently from YAML 1.2 readers, in a double-quoted scalar's source. */
function badEscape(source: string, offset: number): ScreenFinding | undefined {
  const escape = /\\(?:(['/])|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))/g;
  for (let m = escape.exec(source); m; m = escape.exec(source)) {
    // `\\` escapes itself: count the backslashes before.
    let slashes = 0;
    for (let i = m.index - 1; i >= 0 && source[i] === '\\'; i--) slashes++;
    if (slashes % 2 === 1) continue;
    const code = m[2] !== undefined ? parseInt(m[2], 16) : m[3] !== undefined ? parseInt(m[3], 16) : -1;
    if (code === -1 || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
      return {
        rule: 'L-YAML-ESCAPE',
        message: `escape ${m[0]}: opm reads it differently; write the character itself`,
        offset: offset + m.index,
      };
  }
  return undefined;
}

/** A block scalar with no indentation digit whose first line has a tab after its spaces. */
function tabAtBlockStart(token: Record<string, unknown>): ScreenFinding | undefined {
  const props = token.props as { type: string; source: string }[] | undefined;
  const header = props?.find((p) => p.type === 'block-scalar-header')?.source ?? '';
  if (/[1-9]/.test(header)) return undefined;
  const source = typeof token.source === 'string' ? token.source : '';
  const first = /^(?:[ \t]*\n)*([ ]*)\t/.exec(source);
  if (!first) return undefined;
  return {
    rule: 'L-YAML-TAB',
    message: 'the block starts with a tab after its indentation: opm fails on it; indent with spaces only',
    offset: ((token.offset as number | undefined) ?? 0) + first[0].length - 1,
  };
}
