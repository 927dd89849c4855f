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
const yaml = (): typeof Yaml => (yamlModule ??= require('yaml') as typeof Yaml);

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
  | 'L-YAML-FLOW'
  | 'L-YAML-ANCHOR'
  | 'L-YAML-AFTER-NODE'
  | 'L-YAML-BLOCK-HEADER'
  | 'L-KEY-FOLD'
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
    'a key that is not text or a whole number (a float, null, a collection, an alias), that is 1,000 characters or more from its `:`, or a number or boolean beside the same text as a key, becomes a different key for opm, fails there, or wins at random',
  'L-YAML-ESCAPE': "escapes `\\/`, `\\'` and surrogate `\\u`/`\\U` codes are read differently by opm",
  'L-YAML-TAB':
    'a tab where opm expects indentation or a space (after `- `, `? ` or `: ` at the start of a line, at the start of a block scalar) fails there',
  'L-YAML-FLOW':
    'inside `[ ]` or `{ }`, opm (YAML 1.1) ends plain text at `?`, reads `:` before `,]}` as text and `-` alone as text, and reads on where YAML 1.2 readers stop: the same text is other keys there',
  'L-YAML-ANCHOR':
    'opm ends anchor and alias names at the first character that is not a letter, digit, `_` or `-`; YAML 1.2 readers read on',
  'L-YAML-AFTER-NODE':
    'opm reads only the first node of a document, but scans on past it and fails on what it cannot scan: after a `[ ]` or `{ }` only JSON values and comments are read, and no line may be indented less than the first',
  'L-YAML-BLOCK-HEADER':
    'a `#` right after the `|` or `>` of a block scalar is a comment for opm and an error for YAML 1.2 readers',
  'L-KEY-FOLD':
    'opm matches top-level keys with Unicode case folding (`ſchema` is `schema`, `paßword` is `password`): a top-level key with a character that folds otherwise than it lowercases is refused',
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
  'L-YAML-TAB': 'Indent with spaces, and put a space, not a tab, after `-`, `?` and `:`.',
  'L-YAML-FLOW': 'Quote the text inside `[ ]` or `{ }`, or write the collection in block style.',
  'L-YAML-ANCHOR': 'Name anchors and aliases with letters, digits, `_` and `-` only, then a space.',
  'L-YAML-AFTER-NODE': 'Put each object in a document of its own, separated by `---` lines.',
  'L-YAML-BLOCK-HEADER': 'Put a space between `|` or `>` and the `#` of the comment.',
  'L-KEY-FOLD': 'Write top-level keys in ASCII (schema, package, name, ...); put other text inside a value.',
  'L-JSON-NUMBER': 'Write the number as a string, or as one a float64 holds.',
};

// Characters refused anywhere in a YAML document, and lines that start a construct refused.
// After `-`, `?` or a `:` that starts a line, go-yaml takes a tab for the start of a token
// and fails: `- \ta`, `? \ta`, `: \tb`.
const SCREENED = /[\u2028\u2029\u0085]|^\.\.\.(?:[ \t\r]|$)|^ *(?:[-?:] +)*[-?:] *\t/m;
export const LONE_CR = /\r(?!\n)/;

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
    message: 'a tab after `-`, `?` or `:` at the start of a line: opm fails on it; use spaces',
    offset: at + found.length - 1,
    certain: true,
  };
}

// The syntax pass is slow next to the fast reader; a document it could refuse has one of
// these (each a superset of what the pass looks for), and most documents have none.
const KEY_START = String.raw`(?:^[ \t]*(?:[-?][ \t]+)*|[{,?][ \t]*)(?:&\S+[ \t]+)?`;
const MAY_NEED_SYNTAX = [
  /(?:^|[\s[{,:])!/m, // a tag
  /^%/m, // a directive
  /<</, // a merge key
  /\\(?:[/']|u[dD][89a-fA-F]|U(?!000[0-9a-fA-F]{5}|0010[0-9a-fA-F]{4})|U0000[dD][89a-fA-F])/, // a refused escape
  /^ *\t/m, // a tab after the indentation (a block scalar's first line)
  /[[{]/, // a flow collection: its plain text, keys and end
  /(?:^|[\s,:?-])[&*]/m, // an anchor or an alias (also as a key)
  /[|>][-+0-9]*#/, // a comment right after a block scalar's header
  /^[^\n]{999,}:/m, // a key's `:` 1,000 characters from its start
  /(?:^|[\s?])\?(?:\s|$)/m, // an explicit key
  // a key, where keys start, that may be a number, a boolean or null, or empty
  new RegExp(
    KEY_START +
      String.raw`(?:[0-9.+~-][^\s,[\]{}#]*|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)?[ \t]*:(?:[\s,[\]{}]|$)`,
    'm',
  ),
];

/** The syntax pass: tags, directives, keys, anchors, flow collections, escapes and block scalar indentation. */
function screenSyntax(text: string): ScreenFinding | undefined {
  let found: ScreenFinding | undefined;
  // `inFlow`: inside `[ ]` or `{ }`, where go-yaml v2 splits plain text its own way.
  const visit = (node: unknown, inFlow: boolean): void => {
    if (found || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, inFlow);
      return;
    }
    const token = node as CstToken;
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
      case 'anchor':
      case 'alias':
        found = badAnchor(token, text);
        if (found) return;
        break;
      case 'double-quoted-scalar':
        found = badEscape(token.source ?? '', token.offset ?? 0);
        if (found) return;
        break;
      case 'block-scalar':
        found = commentAtBlockHeader(token) ?? tabAtBlockStart(token);
        if (found) return;
        break;
      case 'scalar':
        if (inFlow) found = badFlowPlain(token);
        if (found) return;
        break;
      case 'block-map':
      case 'block-seq':
        // Inside `[ ]` or `{ }` only where YAML 1.2 readers fail: `-` before a space or `,]}`
        // (which go-yaml reads as text), `a: b: c`.
        if (inFlow) {
          found = {
            rule: 'L-YAML-FLOW',
            message:
              token.type === 'block-seq'
                ? '`-` alone inside `[ ]` or `{ }`: opm reads it as text; quote it'
                : '`a: b: c` inside `[ ]` or `{ }`: opm reads it otherwise; quote the text',
            offset: token.offset ?? 0,
          };
          return;
        }
        break;
      case 'flow-collection':
        found = unclosedFlow(token, text);
        if (found) return;
        break;
    }
    if (Array.isArray(token.items)) {
      found = badKeys(token, text);
      if (found) return;
    }
    const flow = inFlow || token.type === 'flow-collection';
    for (const value of Object.values(token)) visit(value, flow);
  };
  for (const token of new (yaml().Parser)().parse(text)) {
    visit(token, false);
    if (found) return found;
  }
  return undefined;
}

/** A token of the `yaml` package's concrete syntax tree, as far as the screen looks at it. */
interface CstToken {
  type?: string;
  offset?: number;
  source?: string;
  items?: CstItem[];
  end?: CstToken[];
  props?: CstToken[];
  [key: string]: unknown;
}

interface CstItem {
  start: CstToken[];
  key?: CstToken | null;
  sep?: CstToken[];
  value?: CstToken | null;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);
// go-yaml v2 gives up on an implicit key whose `:` is 1,024 characters or more from where the
// key starts (its anchor, if it has one); well below, to be safe.
export const MAX_KEY_LENGTH = 1000;

/** The keys of a mapping (or the pairs of a flow sequence): each on its own, then together. */
function badKeys(collection: CstToken, text: string): ScreenFinding | undefined {
  const items = collection.items ?? [];
  for (const item of items) {
    const colon = item.sep?.find((t) => t.type === 'map-value-ind');
    if (item.key === undefined || item.key === null) {
      if (colon === undefined) continue;
      return {
        rule: 'L-YAML-KEY',
        message: 'a `:` with no key before it: the key is null for opm, which fails on it; write a key',
        offset: colon.offset ?? 0,
      };
    }
    const found = badKey(item.key) ?? keyTooFar(item, colon) ?? colonAfterFlowPlain(item, colon, text);
    if (found) return found;
  }
  // A flow sequence's pairs are mappings of one key each: nothing to compare.
  const isMapping =
    collection.type === 'block-map' ||
    (collection.type === 'flow-collection' &&
      (collection.start as CstToken | undefined)?.type === 'flow-map-start');
  return isMapping ? sameKeyTwoWays(items) : undefined;
}

function badKey(key: CstToken): ScreenFinding | undefined {
  const type = key.type ?? '';
  const offset = key.offset ?? 0;
  if (COLLECTIONS.has(type))
    return {
      rule: 'L-YAML-KEY',
      message: 'a mapping or list used as a key: opm fails on it; use a text key',
      offset,
    };
  if (type === 'alias')
    return {
      rule: 'L-YAML-KEY',
      message: `alias ${key.source ?? ''} used as a key: opm keys it by the type of what it names; write the key out`,
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

/** An implicit key whose `:` is too far from where go-yaml starts the key (at its anchor). */
function keyTooFar(item: CstItem, colon: CstToken | undefined): ScreenFinding | undefined {
  if (colon === undefined || item.start.some((t) => t.type === 'explicit-key-ind')) return undefined;
  let start = item.key?.offset ?? 0;
  for (const t of item.start)
    if (t.type === 'anchor' || t.type === 'tag') start = Math.min(start, t.offset ?? start);
  const distance = (colon.offset ?? 0) - start;
  if (distance < MAX_KEY_LENGTH) return undefined;
  return {
    rule: 'L-YAML-KEY',
    message: `the \`:\` of this key is ${distance} characters from its start (at most ${MAX_KEY_LENGTH - 1}): opm gives up on long keys`,
    offset: start,
  };
}

/**
 * `a:` then `,`, `]`, `}`, `[` or `{` inside `[ ]` or `{ }`: YAML 1.2 readers take `a` as a
 * key, go-yaml v2 reads the text `a:`.
 */
function colonAfterFlowPlain(
  item: CstItem,
  colon: CstToken | undefined,
  text: string,
): ScreenFinding | undefined {
  const key = item.key;
  if (colon === undefined || key?.type !== 'scalar' || typeof key.source !== 'string') return undefined;
  const at = colon.offset ?? 0;
  if ((key.offset ?? 0) + key.source.length !== at) return undefined;
  const next = text.charCodeAt(at + 1);
  if (Number.isNaN(next) || next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d)
    return undefined;
  return {
    rule: 'L-YAML-FLOW',
    message: `\`${key.source.slice(0, 40)}:\` before \`${text[at + 1]}\`: opm reads the \`:\` as part of the text; put a space after it`,
    offset: at,
  };
}

/** A plain scalar inside `[ ]` or `{ }` that go-yaml v2 splits where YAML 1.2 readers do not. */
function badFlowPlain(token: CstToken): ScreenFinding | undefined {
  const source = token.source ?? '';
  const offset = token.offset ?? 0;
  const question = source.indexOf('?');
  if (question >= 0)
    return {
      rule: 'L-YAML-FLOW',
      message: `\`?\` in unquoted text inside \`[ ]\` or \`{ }\`: opm starts a key there; quote the text`,
      offset: offset + question,
    };
  if (source.startsWith(':'))
    return {
      rule: 'L-YAML-FLOW',
      message: 'unquoted text starting with `:` inside `[ ]` or `{ }`: opm reads a `:` there; quote the text',
      offset,
    };
  return undefined;
}

/** A `[ ]` or `{ }` that YAML 1.2 readers see end early (a line not indented past its parent). */
function unclosedFlow(token: CstToken, text: string): ScreenFinding | undefined {
  const closed = (token.end ?? []).some((t) => t.type === 'flow-seq-end' || t.type === 'flow-map-end');
  if (closed) return undefined;
  // With no closing bracket anywhere after it, opm fails on it too (and skips a bundle file).
  const opener = (token.start as CstToken | undefined)?.type;
  const closer = opener === 'flow-map-start' ? '}' : ']';
  if (!text.includes(closer, token.offset ?? 0)) return undefined;
  return {
    rule: 'L-YAML-FLOW',
    message:
      '`[ ]` or `{ }` not closed before a line indented no more than its parent: opm reads on; indent the lines inside it, or close it',
    offset: token.offset ?? 0,
  };
}

/** go-yaml v2 anchor and alias names: letters, digits, `_` and `-`, then a space or `,]}`... */
function badAnchor(token: CstToken, text: string): ScreenFinding | undefined {
  const source = token.source ?? '';
  const offset = token.offset ?? 0;
  const after = text[offset + source.length];
  if (/^[&*][A-Za-z0-9_-]+$/.test(source) && after !== '[' && after !== '{') return undefined;
  return {
    rule: 'L-YAML-ANCHOR',
    message: `${token.type} ${source.slice(0, 40)}: opm ends the name at the first character that is not a letter, digit, \`_\` or \`-\`; use only those, then a space`,
    offset,
  };
}

/**
 * `1` and `"1"`, or `true` and `"true"`, as keys of one mapping: different keys for go-yaml,
 * the same text once opm converts them to JSON, and which value opm keeps is random.
 */
function sameKeyTwoWays(items: CstItem[]): ScreenFinding | undefined {
  const kinds = new Map<string, string>();
  for (const item of items) {
    const key = item.key;
    if (!key) continue;
    let kind: string;
    let name: string;
    if (key.type === 'scalar') {
      const value = resolvePlainScalar(key.source ?? '');
      if (typeof value === 'number' || typeof value === 'boolean') {
        kind = typeof value;
        name = String(value);
      } else {
        kind = 'string';
        name = key.source ?? '';
      }
    } else if (key.type === 'single-quoted-scalar' || key.type === 'double-quoted-scalar') {
      // Broken quoting is the reader's to report: no value, nothing to compare.
      const { CST } = yaml();
      const resolved = CST.resolveAsScalar(key as Parameters<typeof CST.resolveAsScalar>[0], false, () => {});
      if (!resolved) continue;
      kind = 'string';
      name = resolved.value;
    } else {
      continue;
    }
    const seen = kinds.get(name);
    if (seen === undefined) kinds.set(name, kind);
    else if (seen !== kind)
      return {
        rule: 'L-YAML-KEY',
        message: `key ${JSON.stringify(name)} written both as a ${seen === 'string' ? kind : seen} and as text: opm keeps one of them at random; quote both`,
        offset: key.offset ?? 0,
      };
  }
  return undefined;
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

/** `|#c`: go-yaml takes the `#` for a comment, YAML 1.2 readers want a space first. */
function commentAtBlockHeader(token: CstToken): ScreenFinding | undefined {
  const props = token.props ?? [];
  const header = props.find((p) => p.type === 'block-scalar-header');
  const comment = props.find((p) => p.type === 'comment');
  if (!header || !comment) return undefined;
  const end = (header.offset ?? 0) + (header.source ?? '').length;
  if (comment.offset !== end) return undefined;
  return {
    rule: 'L-YAML-BLOCK-HEADER',
    message: `\`${header.source ?? ''}#\`: opm reads a comment there, other readers fail; put a space before the \`#\``,
    offset: end,
  };
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
