/**
 * Version ranges exactly as Go's github.com/blang/semver/v4 `ParseRange` reads them.
 *
 * Every `skipRange` in a catalog means what blang makes of it, quirks included, so this is
 * a faithful port of blang v4 `range.go` (splitAndTrim, splitORParts, expandWildcardVersion,
 * splitComparatorVersion, buildVersionRange, parseComparator), not a SemVer-range parser.
 * docs/olm-upgrades.md "skipRange" says the quirks in prose.
 */
import { goQuote, goTrimSpace } from '../go/gostrings.js';
import { compareVersions, formatVersion, parseVersion, SemverError } from './semver.js';
import type { Version } from './semver.js';

/** A range string blang would reject; `message` is blang's error text, verbatim. */
export class RangeSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RangeSyntaxError';
  }
}

/** Evaluation reached an empty `||` group, where blang calls a nil Range and panics. */
export class RangeEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RangeEvaluationError';
  }
}

/** The six comparisons blang knows; `==`/`` are `=`, and `!` is `!=`. */
export type ComparatorOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export interface Comparator {
  op: ComparatorOp;
  version: Version;
}

/** Comparators joined by AND. Empty only for `a || || b`, which blang accepts. */
export type ComparatorGroup = readonly Comparator[];

export type ParseRangeResult = { ok: true; range: VersionRange } | { ok: false; error: string };

/** A parsed range: groups joined by OR, evaluated left to right like blang's closures. */
export class VersionRange {
  constructor(
    readonly source: string,
    readonly groups: readonly ComparatorGroup[],
  ) {}

  /** True when `v` is in the range; throws RangeEvaluationError where blang would panic. */
  matches(v: Version): boolean {
    for (const group of this.groups) {
      if (group.length === 0) {
        throw new RangeEvaluationError(
          `Range ${goQuote(this.source)} has an empty '||' group: blang panics (nil Range) when evaluation reaches it`,
        );
      }
      if (group.every((c) => comparatorMatches(c, v))) return true;
    }
    return false;
  }

  /**
   * What OLM makes of it: like `matches`, but where blang would panic (an empty `||`
   * group reached) the range covers nothing, as the resolvers skip it.
   */
  covers(v: Version): boolean {
    try {
      return this.matches(v);
    } catch (err) {
      if (err instanceof RangeEvaluationError) return false;
      throw err;
    }
  }

  /** True when some version could reach an empty group (which blang cannot evaluate). */
  get hasEmptyGroup(): boolean {
    return this.groups.some((g) => g.length === 0);
  }

  /** What the range really means after blang's rewriting, e.g. `>=1.0.0 <1.1.0 || =2.0.0`. */
  toString(): string {
    return this.groups.map(formatGroup).join(' || ');
  }
}

/** blang `ParseRange`. */
export function parseRange(s: string): VersionRange {
  const orParts = splitORParts(splitAndTrim(s));
  const expanded = orParts.map((tokens) => tokens.flatMap(expandWildcardToken));
  const groups = expanded.map((tokens) => tokens.map(parseComparatorToken));
  return new VersionRange(s, groups);
}

export function tryParseRange(s: string): ParseRangeResult {
  try {
    return { ok: true, range: parseRange(s) };
  } catch (err) {
    if (err instanceof RangeSyntaxError) return { ok: false, error: err.message };
    throw err;
  }
}

export function comparatorMatches(c: Comparator, v: Version): boolean {
  const order = compareVersions(v, c.version);
  switch (c.op) {
    case '=':
      return order === 0;
    case '!=':
      return order !== 0;
    case '>':
      return order === 1;
    case '>=':
      return order >= 0;
    case '<':
      return order === -1;
    case '<=':
      return order <= 0;
  }
}

function formatGroup(group: ComparatorGroup): string {
  if (group.length === 0) return '<empty group>';
  return group.map((c) => c.op + formatVersion(c.version)).join(' ');
}

// ---- Tokenising ----

const SPACE = 0x20;
const NO_SPLIT_AFTER = [0x3e, 0x3c, 0x3d]; // '>', '<', '='

/**
 * blang `splitAndTrim`: split on ' ' only, except right after '>', '<' or '='; drop tokens
 * shorter than 2 bytes; delete the spaces left inside tokens. Works on UTF-8 bytes because
 * Go's lengths are byte counts (a lone `é` is 2 bytes, so it survives).
 */
function splitAndTrim(s: string): string[] {
  const bytes = new TextEncoder().encode(s);
  const decoder = new TextDecoder();
  const tokens: string[] = [];
  let last = 0;
  let lastChar = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === SPACE && !NO_SPLIT_AFTER.includes(lastChar)) {
      if (last < i - 1) tokens.push(decoder.decode(bytes.subarray(last, i)));
      last = i + 1;
    } else if (b !== SPACE) {
      lastChar = b;
    }
  }
  if (last < bytes.length - 1) tokens.push(decoder.decode(bytes.subarray(last)));
  return tokens.map((t) => t.replaceAll(' ', ''));
}

/** blang `splitORParts`: an empty token list also ends up as "Last element ... '||'". */
function splitORParts(tokens: string[]): string[][] {
  const groups: string[][] = [];
  let last = 0;
  tokens.forEach((token, i) => {
    if (token !== '||') return;
    if (i === 0) throw new RangeSyntaxError("First element in range is '||'");
    groups.push(tokens.slice(last, i));
    last = i + 1;
  });
  if (last === tokens.length) throw new RangeSyntaxError("Last element in range is '||'");
  groups.push(tokens.slice(last));
  return groups;
}

/** blang `splitComparatorVersion`: the operator is everything before the first Unicode digit. */
function splitComparatorVersion(token: string): { op: string; version: string } {
  const firstDigit = token.search(/\p{Nd}/u);
  if (firstDigit === -1) throw new RangeSyntaxError(`Could not get version from string: ${goQuote(token)}`);
  return { op: goTrimSpace(token.slice(0, firstDigit)), version: token.slice(firstDigit) };
}

// ---- Wildcards (blang expandWildcardVersion and helpers) ----

type WildcardType = 'none' | 'major' | 'minor' | 'patch';

/**
 * Rewrites one token that contains an `x` anywhere into one or two plain comparator tokens.
 * Tokens without `x` pass through. An empty "next" version (the `x` was not a wildcard)
 * leaves a bare operator such as `<`, which then fails in splitComparatorVersion.
 */
function expandWildcardToken(token: string): string[] {
  if (!token.includes('x')) return [token];
  const { op, version } = splitComparatorVersion(token);
  const wildcard = getWildcardType(version);
  const flat = createVersionFromWildcard(version);
  const next = () => incrementedVersion(flat, wildcard);

  switch (op) {
    case '>':
      return ['>=' + next()];
    case '>=':
      return ['>=' + flat];
    case '<':
      return ['<' + flat];
    case '<=':
      return ['<' + next()];
    case '':
    case '=':
    case '==':
      return ['>=' + flat, '<' + next()];
    case '!=':
    case '!':
      // Meant as "outside the wildcard", but ANDed, so it can never match.
      return ['<' + flat, '>=' + next()];
    default:
      // blang drops operators it does not know here, so `^1.x` becomes `1.0.0` (equality).
      return [flat];
  }
}

/** A wildcard only counts when `x` is the whole last dot-part; the part count picks the kind. */
function getWildcardType(version: string): WildcardType {
  const parts = version.split('.');
  if (parts[parts.length - 1] !== 'x') return 'none';
  return (['none', 'major', 'minor', 'patch'] as const)[parts.length] ?? 'none';
}

/** blang `createVersionFromWildcard`: only the FIRST `.x` becomes `.0` (so `1.x.x` → `1.0.0`). */
function createVersionFromWildcard(version: string): string {
  const flat = version.replace('.x.x', '.x').replace('.x', '.0');
  return flat.split('.').length === 2 ? flat + '.0' : flat;
}

/** The exclusive upper bound blang derives, or '' where blang's increment fails or is skipped. */
function incrementedVersion(flat: string, wildcard: WildcardType): string {
  if (wildcard === 'patch') return incrementPart(flat, 1) ?? '';
  if (wildcard === 'minor') return incrementPart(flat, 0) ?? '';
  return '';
}

/** blang `incrementMinorVersion` / `incrementMajorVersion`: Atoi, +1 (int64 wraps), Itoa. */
function incrementPart(flat: string, index: number): string | null {
  const parts = flat.split('.');
  const n = goAtoi(parts[index] ?? '');
  if (n === null) return null;
  parts[index] = String(BigInt.asIntN(64, n + 1n));
  return parts.join('.');
}

/** strconv.Atoi on 64-bit Go: optional sign, ASCII digits, within int64; null on error. */
function goAtoi(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const n = BigInt(s);
  return n === BigInt.asIntN(64, n) ? n : null;
}

// ---- Comparators ----

/** blang's ParseRange loop body plus `buildVersionRange`, with its error wrapping. */
function parseComparatorToken(token: string): Comparator {
  const { op, version } = splitComparatorVersion(token);
  try {
    return buildComparator(op, version);
  } catch (err) {
    if (err instanceof RangeSyntaxError) {
      throw new RangeSyntaxError(`Could not parse Range ${goQuote(token)}: ${err.message}`);
    }
    throw err;
  }
}

function buildComparator(opStr: string, versionStr: string): Comparator {
  const op = parseComparator(opStr);
  if (op === null) {
    throw new RangeSyntaxError(
      `Could not parse comparator ${goQuote(opStr)} in ${goQuote(opStr + versionStr)}`,
    );
  }
  try {
    return { op, version: parseVersion(versionStr) };
  } catch (err) {
    if (err instanceof SemverError) {
      throw new RangeSyntaxError(
        `Could not parse version ${goQuote(versionStr)} in ${goQuote(opStr + versionStr)}: ${err.message}`,
      );
    }
    throw err;
  }
}

/** blang `parseComparator`. */
function parseComparator(s: string): ComparatorOp | null {
  switch (s) {
    case '':
    case '=':
    case '==':
      return '=';
    case '!':
    case '!=':
      return '!=';
    case '>':
    case '>=':
    case '<':
    case '<=':
      return s;
    default:
      return null;
  }
}
