/**
 * skipRange lint (docs/olm-upgrades.md "skipRange", the R-* rules): the forms blang/semver v4
 * reads differently from what they say, and the Masterminds/npm forms it rejects, each
 * with the blang range the author probably meant.
 *
 * How it works: the range is read a second time the way its author most likely meant it,
 * with Masterminds/npm rules (comma or space AND, `||` with or without spaces, hyphen
 * ranges, `~`, `^`, `x`/`X`/`*` wildcards, short versions, a `v` prefix). Each term is also
 * read alone by the blang port (`range.ts`); where the two readings differ, the form is
 * named by a rule. The suggestion is the intended reading written in blang syntax; it is
 * only offered after `tryParseRange` accepts it and it is shown to select exactly the
 * intended versions (sets of versions are compared exactly, see `equivalent`).
 */
import { formatVersion, compareVersions, tryParseVersion } from './semver.js';
import type { Version } from './semver.js';
import { comparatorMatches, tryParseRange } from './range.js';
import type { Comparator, ComparatorOp, VersionRange } from './range.js';
import { utf8Length } from '../go/gostrings.js';

export interface RangeLint {
  rule: string;
  level: 'error' | 'warning';
  message: string;
  /** A blang range the author probably meant, when one can be derived. */
  suggestion?: string;
}

export type RangeLintRule =
  | 'R-HYPHEN-RANGE'
  | 'R-BANG-SPACE'
  | 'R-X-X'
  | 'R-CARET-TILDE-WILDCARD'
  | 'R-NOT-EQUAL-WILDCARD'
  | 'R-X-IN-PRERELEASE'
  | 'R-MATCHES-NOTHING'
  | 'R-EMPTY-GROUP'
  | 'R-FOREIGN-SYNTAX';

export const RANGE_LINT_LEVELS: Record<RangeLintRule, 'error' | 'warning'> = {
  'R-HYPHEN-RANGE': 'error',
  'R-BANG-SPACE': 'error',
  'R-X-X': 'error',
  'R-CARET-TILDE-WILDCARD': 'error',
  'R-NOT-EQUAL-WILDCARD': 'error',
  'R-X-IN-PRERELEASE': 'error',
  'R-MATCHES-NOTHING': 'error',
  'R-EMPTY-GROUP': 'error',
  'R-FOREIGN-SYNTAX': 'warning',
};

/**
 * Lints one skipRange. `publishedVersions` (every version ever published in the package)
 * enables R-MATCHES-NOTHING against real versions; without it, only a range no version at
 * all can match is reported. An empty string means "no skipRange" and gets no lint.
 */
export function lintSkipRange(range: string, publishedVersions?: Version[]): RangeLint[] {
  if (range.trim() === '') return [];
  const intent = readIntent(range);
  const whole = tryParseRange(range);
  const suggestion = intent.meaning === null ? undefined : blangForm(intent.meaning);
  const found: { rule: RangeLintRule; message: string }[] = [];
  const add = (rule: RangeLintRule, message: string) => {
    if (!found.some((f) => f.rule === rule && f.message === message)) found.push({ rule, message });
  };
  const features: Feature[] = [...intent.features];

  for (const term of intent.terms) {
    if (term.kind === 'hyphen') {
      add('R-HYPHEN-RANGE', hyphenMessage(term.raw));
      features.push(...term.features);
      continue;
    }
    const reading = blangReading(term.raw);
    const misread =
      term.meaning !== null &&
      (reading.kind === 'ok'
        ? !equivalent(reading.range.groups, term.meaning)
        : reading.kind === 'dropped' && !equivalent(ANY, term.meaning));
    const shown = reading.kind === 'ok' ? `\`${reading.range.toString()}\`` : '';
    if (term.bangSpace) {
      add(
        'R-BANG-SPACE',
        `\`${term.raw}\`: blang drops a \`!\` that is followed by a space` +
          (reading.kind === 'ok'
            ? `, so this means ${shown}, the opposite of \`!=${term.versionText}\``
            : ' and reads the rest on its own'),
      );
      features.push(...term.features);
    } else if (reading.kind === 'ok' && misread && term.opKind === 'ne' && hasXWildcard(term)) {
      add(
        'R-NOT-EQUAL-WILDCARD',
        `\`${term.raw}\` matches nothing in blang: a wildcard after \`${term.op}\` becomes ${shown}, two comparators ANDed`,
      );
    } else if (reading.kind === 'ok' && misread && isForeignOp(term.op) && !term.opDropped) {
      add(
        'R-CARET-TILDE-WILDCARD',
        `\`${term.raw}\`: blang drops the \`${term.op}\` of a term containing \`x\` and reads it as ${shown}, one version only`,
      );
    } else if (reading.kind === 'ok' && misread && /^\d+\.x\.x(?![^-+])/.test(term.versionText)) {
      add(
        'R-X-X',
        `\`${term.raw}\` means ${shown} in blang, which reads \`N.x.x\` as the patch wildcard \`N.0.x\``,
      );
    } else if (term.xInPrerelease && (misread || (reading.kind === 'error' && term.features.length === 0))) {
      add(
        'R-X-IN-PRERELEASE',
        `\`${term.raw}\`: blang expands every term containing the letter \`x\` as a wildcard, even in a prerelease or build part; ` +
          (reading.kind === 'ok'
            ? `it reads this one as ${shown}`
            : reading.kind === 'error'
              ? `it rejects this one (${reading.error})`
              : 'it ignores this one'),
      );
    } else {
      features.push(...term.features);
      if (misread) {
        features.push(
          reading.kind === 'dropped'
            ? { kind: 'a one-character term, which blang ignores', example: term.raw }
            : { kind: `\`${term.raw}\`, which blang reads as ${shown}` },
        );
      }
    }
  }

  if (whole.ok && whole.range.hasEmptyGroup) {
    add(
      'R-EMPTY-GROUP',
      `\`${range}\` has an empty \`||\` alternative${intent.emptyMiddle ? '' : ' (blang drops one-character terms)'}: opm accepts it, but OLM's evaluation panics on a nil range when a version reaches it`,
    );
  } else if (intent.emptyEnds) {
    add(
      'R-EMPTY-GROUP',
      `\`${range}\` starts or ends with \`||\`: blang rejects it (opm fails) while npm reads the empty alternative as \`*\`, every version`,
    );
  } else if (intent.emptyMiddle) {
    add('R-EMPTY-GROUP', `\`${range}\` has an empty \`||\` alternative, which OLM cannot evaluate`);
  }

  if (whole.ok) {
    const groups = whole.range.groups.filter((g) => g.length > 0);
    if (!satisfiable(groups)) {
      if (!found.some((f) => RANGE_LINT_LEVELS[f.rule] === 'error')) {
        add('R-MATCHES-NOTHING', `\`${range}\` can never match any version (blang: \`${whole.range}\`)`);
      }
    } else if (publishedVersions !== undefined && publishedVersions.length > 0) {
      if (!publishedVersions.some((v) => matchesDnf(groups, v))) {
        add(
          'R-MATCHES-NOTHING',
          `\`${range}\` (blang: \`${whole.range}\`) matches none of the ${publishedVersions.length} versions ever published in this package (${describeVersions(publishedVersions)})`,
        );
      }
    }
  }

  const featureList = describeFeatures(features);
  if (featureList !== '') {
    let verdict: string;
    if (!whole.ok) verdict = `blang rejects the range, so opm fails (B-SKIPRANGE): ${whole.error}`;
    else if (intent.meaning === null || !equivalent(whole.range.groups, intent.meaning)) {
      verdict = `blang reads the range as \`${whole.range}\``;
    } else verdict = 'blang happens to read it as meant here, but the blang form is clearer';
    add('R-FOREIGN-SYNTAX', `\`${range}\` uses Masterminds/npm range syntax: ${featureList}. ${verdict}`);
  }

  const lints: RangeLint[] = found.map(({ rule, message }) => {
    const lint: RangeLint = { rule, level: RANGE_LINT_LEVELS[rule], message };
    if (suggestion !== undefined && suggestion !== range && usefulFor(rule, whole, intent.meaning)) {
      lint.suggestion = suggestion;
      lint.message += `; write \`${suggestion}\``;
    }
    return lint;
  });
  return [...lints.filter((l) => l.level === 'error'), ...lints.filter((l) => l.level === 'warning')];
}

/** A R-MATCHES-NOTHING finding only gets a suggestion when the rewrite changes the meaning. */
function usefulFor(
  rule: RangeLintRule,
  whole: ReturnType<typeof tryParseRange>,
  meaning: Dnf | null,
): boolean {
  if (rule !== 'R-MATCHES-NOTHING' || !whole.ok || meaning === null) return true;
  return !equivalent(whole.range.groups, meaning);
}

function hyphenMessage(raw: string): string {
  const reading = tryParseRange(raw);
  if (!reading.ok) return `\`${raw}\`: blang has no hyphen ranges and rejects this (${reading.error})`;
  const what = reading.range.toString();
  const nothing = !satisfiable(reading.range.groups);
  return `\`${raw}\` is not a range in blang: the lone \`-\` is dropped and the two versions are ANDed, \`${what}\`${nothing ? ', which matches nothing' : ''}`;
}

function describeVersions(versions: Version[]): string {
  const sorted = [...versions].sort(compareVersions);
  const first = formatVersion(sorted[0]!);
  const last = formatVersion(sorted[sorted.length - 1]!);
  return sorted.length === 1 ? first : `${first} … ${last}`;
}

// ---- What blang makes of one term on its own ----

type Reading = { kind: 'ok'; range: VersionRange } | { kind: 'dropped' } | { kind: 'error'; error: string };

function blangReading(raw: string): Reading {
  // blang drops tokens shorter than two bytes; a lone one leaves nothing to parse.
  if (utf8Length(raw) < 2) return { kind: 'dropped' };
  const parsed = tryParseRange(raw);
  return parsed.ok ? { kind: 'ok', range: parsed.range } : { kind: 'error', error: parsed.error };
}

// ---- The author's reading (Masterminds v3 / npm semver 7, where they agree) ----

/** A comparator plus, for a version written in full, the operator as the author spelt it. */
interface Cmp extends Comparator {
  opText?: string;
}
/** Alternatives (OR) of comparator lists (AND); `[[]]` is never used, ANY is `>=0.0.0`. */
type Dnf = readonly (readonly Cmp[])[];

type OpKind = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'tilde' | 'caret';

const OP_KINDS: Record<string, OpKind> = {
  '': 'eq',
  '=': 'eq',
  '==': 'eq',
  '!': 'ne',
  '!=': 'ne',
  '>': 'gt',
  '>=': 'ge',
  '=>': 'ge',
  '<': 'lt',
  '<=': 'le',
  '=<': 'le',
  '~': 'tilde',
  '~>': 'tilde',
  '^': 'caret',
};

/** Operators blang's comparator parser knows (as written, before any wildcard expansion). */
const BLANG_OPS = new Set(['', '=', '==', '!', '!=', '>', '>=', '<', '<=']);

function isForeignOp(op: string): boolean {
  return !BLANG_OPS.has(op);
}

const ZERO: Version = { major: 0n, minor: 0n, patch: 0n, pre: [], build: [] };
/** What `*` means to Masterminds and npm (prereleases aside). */
const ANY: Dnf = [[{ op: '>=', version: ZERO }]];

/** One piece of Masterminds/npm syntax, with where it was written. */
interface Feature {
  kind: string;
  example?: string;
}

/** `a short version (`1.2`, `1.4`); a comma ...`: one entry per kind, examples merged. */
function describeFeatures(features: Feature[]): string {
  const byKind = new Map<string, string[]>();
  for (const f of features) {
    const examples = byKind.get(f.kind) ?? [];
    if (f.example !== undefined && !examples.includes(f.example)) examples.push(f.example);
    byKind.set(f.kind, examples);
  }
  return [...byKind]
    .map(([kind, examples]) =>
      examples.length === 0 ? kind : `${kind} (${examples.map((e) => `\`${e}\``).join(', ')})`,
    )
    .join('; ');
}

interface PartialVersion {
  /** null: a wildcard or a missing part, and every part after it. */
  major: bigint | null;
  minor: bigint | null;
  patch: bigint | null;
  pre: string;
  build: string;
  /** The lowercase-`x` part positions (blang's own wildcard letter). */
  lowerX: boolean;
}

interface ComparatorTerm {
  kind: 'comparator';
  /** The term as written, original spacing kept (`! 1.2.3`). */
  raw: string;
  op: string;
  opKind: OpKind | null;
  /** The operator was separated from the version by whitespace. */
  opSpaced: boolean;
  /** blang splits a one-character operator off and drops it (`! 1.2.3`, `~ 1.2.3`). */
  opDropped: boolean;
  bangSpace: boolean;
  versionText: string;
  version: PartialVersion | null;
  xInPrerelease: boolean;
  meaning: Dnf | null;
  features: Feature[];
}

interface HyphenTerm {
  kind: 'hyphen';
  raw: string;
  meaning: Dnf | null;
  features: Feature[];
}

type Term = ComparatorTerm | HyphenTerm;

interface Intent {
  terms: Term[];
  /** The whole range as meant, or null when some part of it has no clear meaning. */
  meaning: Dnf | null;
  features: Feature[];
  emptyEnds: boolean;
  emptyMiddle: boolean;
}

function hasXWildcard(term: ComparatorTerm): boolean {
  return term.version !== null && term.version.lowerX;
}

function readIntent(range: string): Intent {
  const features: Feature[] = [];
  if (range.includes(','))
    features.push({ kind: 'a comma between comparators (blang separates them with spaces)' });
  if (/[^\S ]/.test(range)) {
    features.push({ kind: 'a tab or other non-space whitespace (blang splits on spaces only)' });
  }
  for (const m of range.matchAll(/\|\|/g)) {
    const before = m.index === 0 ? ' ' : range[m.index - 1];
    const after = range[m.index + 2] ?? ' ';
    if (before !== ' ' || after !== ' ') {
      features.push({ kind: '`||` without a space on each side (blang needs `||` as a separate word)' });
      break;
    }
  }

  const segments = range.split('||');
  const blank = segments.map((s) => /^[\s,]*$/.test(s));
  const emptyEnds = segments.length > 1 && (blank[0]! || blank[blank.length - 1]!);
  const emptyMiddle = blank.slice(1, -1).some(Boolean);

  const terms: Term[] = [];
  let meaning: Cmp[][] | null = [];
  segments.forEach((segment, i) => {
    if (blank[i]) return;
    const segTerms = readTerms(segment);
    terms.push(...segTerms);
    let group: Cmp[][] | null = [[]];
    for (const term of segTerms) {
      group = term.meaning === null || group === null ? null : product(group, term.meaning);
    }
    meaning = group === null || meaning === null ? null : [...meaning, ...group];
  });
  return { terms, meaning, features, emptyEnds, emptyMiddle };
}

const OP_ONLY = /^[<>=!~^]+$/;

/** Splits one `||` alternative into terms: comparators, with hyphen ranges joined. */
function readTerms(segment: string): Term[] {
  const words = [...segment.matchAll(/[^\s,]+/g)].map((m) => ({
    text: m[0],
    start: m.index,
    end: m.index + m[0].length,
  }));
  // An operator written apart from its version (`>= 1.0.0`, `! 1.2.3`) belongs to it.
  const merged: { text: string; raw: string; opSpaced: boolean }[] = [];
  let pendingOp = '';
  let pendingStart = 0;
  for (const w of words) {
    if (OP_ONLY.test(w.text)) {
      if (pendingOp === '') pendingStart = w.start;
      pendingOp += w.text;
      continue;
    }
    if (pendingOp !== '') {
      merged.push({ text: pendingOp + w.text, raw: segment.slice(pendingStart, w.end), opSpaced: true });
      pendingOp = '';
    } else {
      merged.push({ text: w.text, raw: w.text, opSpaced: false });
    }
  }
  if (pendingOp !== '') {
    merged.push({ text: pendingOp, raw: segment.slice(pendingStart).trim(), opSpaced: false });
  }

  const terms: Term[] = [];
  for (let i = 0; i < merged.length; i++) {
    const a = merged[i]!;
    const dash = merged[i + 1];
    const b = merged[i + 2];
    if (dash?.text === '-' && b !== undefined) {
      terms.push(hyphenTerm(a.text, b.text, `${a.raw} - ${b.raw}`));
      i += 2;
    } else {
      terms.push(comparatorTerm(a.text, a.raw, a.opSpaced));
    }
  }
  return terms;
}

const OP_RE = /^(!=|==|>=|=>|<=|=<|~>|[=<>!~^])?/;
const NUM_OR_WILD = String.raw`(\d+|[xX*])`;
const IDENTS = String.raw`[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*`;
const VERSION_RE = new RegExp(
  String.raw`^(v?)${NUM_OR_WILD}(?:\.${NUM_OR_WILD})?(?:\.${NUM_OR_WILD})?(?:-(${IDENTS}))?(?:\+(${IDENTS}))?$`,
);

function comparatorTerm(text: string, raw: string, opSpaced: boolean): ComparatorTerm {
  const op = OP_RE.exec(text)?.[0] ?? '';
  const versionText = text.slice(op.length);
  const opKind = OP_KINDS[op] ?? null;
  const parsed = readVersion(versionText);
  const features = parsed?.features ?? [];
  const bangSpace = /^! /.test(raw);
  // blang splits after a space unless the character before it is `>`, `<` or `=`, and
  // then drops the one-character operator.
  const opDropped = /^[!~^] /.test(raw);
  if (opDropped && !bangSpace) {
    features.push({ kind: `a space after \`${op}\`, so blang drops the \`${op}\``, example: raw });
  } else if (parsed !== null && opKind !== null && isForeignOp(op)) {
    features.push({ kind: `the \`${op}\` operator`, example: raw });
  }
  const version = parsed?.version ?? null;
  const meaning =
    version === null || opKind === null ? null : comparatorMeaning(opKind, op, opSpaced, version);
  return {
    kind: 'comparator',
    raw,
    op,
    opKind,
    opSpaced,
    opDropped,
    bangSpace,
    versionText,
    version,
    xInPrerelease: version !== null && /x/.test(version.pre + version.build),
    meaning,
    features,
  };
}

function hyphenTerm(a: string, b: string, raw: string): HyphenTerm {
  const lo = readVersion(a);
  const hi = readVersion(b);
  const features: Feature[] = [...(lo?.features ?? []), ...(hi?.features ?? [])];
  if (lo === null || hi === null) return { kind: 'hyphen', raw, meaning: null, features };
  const alt: Cmp[] = [];
  if (lo.version.major !== null) alt.push({ op: '>=', version: lowest(lo.version) });
  if (hi.version.major !== null) {
    alt.push(
      hi.version.patch !== null
        ? { op: '<=', version: lowest(hi.version) }
        : { op: '<', version: nextUp(hi.version) },
    );
  }
  return { kind: 'hyphen', raw, meaning: alt.length === 0 ? ANY : [alt], features };
}

function readVersion(text: string): { version: PartialVersion; features: Feature[] } | null {
  const m = VERSION_RE.exec(text);
  if (m === null) return null;
  const [, v = '', ...rest] = m;
  const parts = rest.slice(0, 3).filter((p): p is string => p !== undefined);
  const pre = rest[3] ?? '';
  const build = rest[4] ?? '';
  const features: Feature[] = [];
  const add = (kind: string) => features.push({ kind, example: text });
  if (v !== '') add('a `v` prefix');
  if (parts.some((p) => p === 'X' || p === '*')) add('an `X` or `*` wildcard');
  else if (parts[0] === 'x') add('a major wildcard');
  if (parts.some((p) => /^0\d/.test(p))) add('leading zeros');
  const firstWild = parts.findIndex((p) => /^[xX*]$/.test(p));
  const fixed = firstWild === -1 ? parts.length : firstWild;
  if (firstWild === -1 && parts.length < 3) add('a short version');
  if (firstWild !== -1 && parts.slice(firstWild).some((p) => /^\d/.test(p))) add('a number after a wildcard');
  // npm and Masterminds only allow a prerelease or build after three numbers.
  if (fixed < 3 && (pre !== '' || build !== '')) return null;
  const num = (i: number) => (i < fixed ? BigInt(parts[i]!) : null);
  const version: PartialVersion = {
    major: num(0),
    minor: num(1),
    patch: num(2),
    pre,
    build,
    lowerX: parts.includes('x'),
  };
  // The numbers and identifiers must make a real version (leading zeros in numbers are coerced).
  const check = `${version.major ?? 0}.${version.minor ?? 0}.${version.patch ?? 0}${pre ? '-' + pre : ''}${build ? '+' + build : ''}`;
  if (!tryParseVersion(check).ok) return null;
  return { version, features };
}

function makeVersion(major: bigint, minor: bigint, patch: bigint): Version {
  return { major, minor, patch, pre: [], build: [] };
}

/** The version with wildcards and missing parts set to zero (prerelease and build kept). */
function lowest(p: PartialVersion): Version {
  const text = `${p.major ?? 0}.${p.minor ?? 0}.${p.patch ?? 0}${p.pre ? '-' + p.pre : ''}${p.build ? '+' + p.build : ''}`;
  const parsed = tryParseVersion(text);
  if (!parsed.ok) throw new Error(`unreachable: ${text}`);
  return parsed.version;
}

/** The first version past a partial one: `1` → 2.0.0, `1.2` → 1.3.0 (major must be set). */
function nextUp(p: PartialVersion): Version {
  if (p.minor === null) return makeVersion(p.major! + 1n, 0n, 0n);
  return makeVersion(p.major!, p.minor + 1n, 0n);
}

/** One comparator as Masterminds/npm read it, as a DNF of blang comparators. */
function comparatorMeaning(kind: OpKind, op: string, opSpaced: boolean, p: PartialVersion): Dnf {
  const full = p.patch !== null;
  const lo = lowest(p);
  const asWritten = BLANG_OPS.has(op) && !opSpaced ? op : undefined;
  const exact = (o: ComparatorOp): Dnf => [
    [{ op: o, version: lo, ...(asWritten === undefined ? {} : { opText: asWritten }) }],
  ];
  if (p.major === null) {
    // `*`, `x`, `x.x.x`: every version, or none.
    return kind === 'ne' || kind === 'gt' || kind === 'lt' ? [] : ANY;
  }
  switch (kind) {
    case 'eq':
      return full
        ? exact('=')
        : [
            [
              { op: '>=', version: lo },
              { op: '<', version: nextUp(p) },
            ],
          ];
    case 'ne':
      return full ? exact('!=') : [[{ op: '<', version: lo }], [{ op: '>=', version: nextUp(p) }]];
    case 'gt':
      return full ? exact('>') : [[{ op: '>=', version: nextUp(p) }]];
    case 'ge':
      return exact('>=');
    case 'lt':
      return exact('<');
    case 'le':
      return full ? exact('<=') : [[{ op: '<', version: nextUp(p) }]];
    case 'tilde': {
      const upper =
        p.minor === null ? makeVersion(p.major + 1n, 0n, 0n) : makeVersion(p.major, p.minor + 1n, 0n);
      return [
        [
          { op: '>=', version: lo },
          { op: '<', version: upper },
        ],
      ];
    }
    case 'caret': {
      let upper: Version;
      if (p.major > 0n || p.minor === null) upper = makeVersion(p.major + 1n, 0n, 0n);
      else if (p.minor > 0n || p.patch === null) upper = makeVersion(0n, p.minor + 1n, 0n);
      else upper = makeVersion(0n, 0n, p.patch + 1n);
      return [
        [
          { op: '>=', version: lo },
          { op: '<', version: upper },
        ],
      ];
    }
  }
}

const MAX_ALTERNATIVES = 256;

/** AND of two DNFs (null when it would grow beyond reason). */
function product(a: Dnf, b: Dnf): Cmp[][] | null {
  if (a.length * b.length > MAX_ALTERNATIVES) return null;
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

// ---- Writing the intended meaning in blang syntax ----

/**
 * The intended DNF as a blang range string, or undefined when blang cannot say it. The
 * result is re-parsed with tryParseRange and must select exactly the intended versions.
 */
function blangForm(meaning: Dnf): string | undefined {
  const groups: Cmp[][] = [];
  for (const alt of meaning) {
    let encoded: Cmp[][] | null = [[]];
    for (const c of alt) encoded = encoded === null ? null : product(encoded, encodeComparator(c));
    if (encoded === null) return undefined;
    for (const g of encoded) {
      const simple = simplifyGroup(g);
      if (simple !== null) groups.push(simple);
    }
  }
  if (groups.length === 0 || groups.length > MAX_ALTERNATIVES) return undefined;
  const text = withoutSubsumed(groups)
    .map((g) => g.map((c) => (c.opText ?? c.op) + formatVersion(c.version)).join(' '))
    .join(' || ');
  const check = tryParseRange(text);
  if (!check.ok || check.range.hasEmptyGroup || !equivalent(check.range.groups, meaning)) return undefined;
  return text;
}

/**
 * blang treats any term containing `x` as a wildcard. Build metadata never affects order, so
 * it can go; a prerelease with `x` is kept only with `>=` and `<` (which survive), using the
 * version right after it for the other operators.
 */
function encodeComparator(c: Cmp): Cmp[][] {
  let version = c.version;
  const opText = c.opText;
  if (version.build.some((b) => b.includes('x'))) version = { ...version, build: [] };
  if (!version.pre.some((p) => typeof p === 'string' && p.includes('x'))) {
    return [[{ op: c.op, version, ...(opText === undefined ? {} : { opText }) }]];
  }
  const next = successor(version);
  switch (c.op) {
    case '>=':
    case '<':
      return [[{ op: c.op, version }]];
    case '>':
      return [[{ op: '>=', version: next }]];
    case '<=':
      return [[{ op: '<', version: next }]];
    case '=':
      return [
        [
          { op: '>=', version },
          { op: '<', version: next },
        ],
      ];
    case '!=':
      return [[{ op: '<', version }], [{ op: '>=', version: next }]];
  }
}

/** Drops alternatives that another alternative already covers (the first of equal ones stays). */
function withoutSubsumed(groups: Cmp[][]): Cmp[][] {
  return groups.filter(
    (g, i) =>
      !groups.some(
        (other, j) => j !== i && equivalent([g, other], [other]) && (j < i || !equivalent([g, other], [g])),
      ),
  );
}

/** Keeps the tightest lower and upper bound (in the place of the first one) and drops repeats. */
function simplifyGroup(group: readonly Cmp[]): Cmp[] | null {
  if (!satisfiable([group])) return null;
  const lowers = group.filter((c) => c.op === '>' || c.op === '>=');
  const uppers = group.filter((c) => c.op === '<' || c.op === '<=');
  const lower = lowers.reduce<Cmp | undefined>(
    (best, c) => (best === undefined || tighterLower(c, best) ? c : best),
    undefined,
  );
  const upper = uppers.reduce<Cmp | undefined>(
    (best, c) => (best === undefined || tighterUpper(c, best) ? c : best),
    undefined,
  );
  const out: Cmp[] = [];
  const seen = new Set<string>();
  for (const c of group) {
    let pick: Cmp = c;
    if (c.op === '>' || c.op === '>=') pick = lower!;
    else if (c.op === '<' || c.op === '<=') pick = upper!;
    const key = (pick.opText ?? pick.op) + formatVersion(pick.version);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(pick);
  }
  return out;
}

function tighterLower(a: Cmp, b: Cmp): boolean {
  const order = compareVersions(a.version, b.version);
  return order > 0 || (order === 0 && a.op === '>' && b.op === '>=');
}

function tighterUpper(a: Cmp, b: Cmp): boolean {
  const order = compareVersions(a.version, b.version);
  return order < 0 || (order === 0 && a.op === '<' && b.op === '<=');
}

// ---- Sets of versions, compared exactly ----

/** The smallest version of all: 0.0.0-0. */
const MINIMUM: Version = { major: 0n, minor: 0n, patch: 0n, pre: [0n], build: [] };

/** The version immediately after `v` in SemVer order: `1.2.3` → `1.2.4-0`, `1.2.3-a` → `1.2.3-a.0`. */
function successor(v: Version): Version {
  if (v.pre.length > 0) return { ...v, pre: [...v.pre, 0n], build: [] };
  return { major: v.major, minor: v.minor, patch: v.patch + 1n, pre: [0n], build: [] };
}

function matchesDnf(dnf: readonly (readonly Comparator[])[], v: Version): boolean {
  return dnf.some((g) => g.every((c) => comparatorMatches(c, v)));
}

/**
 * Every comparator is constant between two consecutive versions it names, so the minimum,
 * each named version and the version right after it represent every region of the order.
 */
function samplePoints(...dnfs: (readonly (readonly Comparator[])[])[]): Version[] {
  const points: Version[] = [MINIMUM];
  for (const dnf of dnfs) {
    for (const g of dnf) {
      for (const c of g) points.push(c.version, successor(c.version));
    }
  }
  return points;
}

/** Whether two ranges (empty groups ignored) select exactly the same versions. */
function equivalent(a: readonly (readonly Comparator[])[], b: readonly (readonly Comparator[])[]): boolean {
  const aa = a.filter((g) => g.length > 0);
  const bb = b.filter((g) => g.length > 0);
  return samplePoints(aa, bb).every((v) => matchesDnf(aa, v) === matchesDnf(bb, v));
}

function satisfiable(dnf: readonly (readonly Comparator[])[]): boolean {
  const groups = dnf.filter((g) => g.length > 0);
  return samplePoints(groups).some((v) => matchesDnf(groups, v));
}
