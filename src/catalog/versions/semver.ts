/**
 * Versions exactly as Go's github.com/blang/semver/v4 parses and orders them.
 *
 * opm checks every bundle version with blang `Parse`, and OLM compares versions with blang
 * `Compare`, so error texts and edge cases here are ported from blang v4 `semver.go`
 * rather than taken from the SemVer spec or npm `semver`.
 */

import { goQuote, goSplitN, goTrimSpace, utf8Length } from '../go/gostrings.js';

/** A numeric prerelease identifier is a bigint, an alphanumeric one a string. */
export type PrereleasePart = bigint | string;

export interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: PrereleasePart[];
  /** Build metadata: kept for formatting, ignored by comparisons. */
  build: string[];
}

/** A version string blang would reject; `message` is blang's error text, verbatim. */
export class SemverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SemverError';
  }
}

export type ParseVersionResult = { ok: true; version: Version } | { ok: false; error: string };

const MAX_UINT64 = (1n << 64n) - 1n;
const ONLY_DIGITS = /^[0-9]*$/;
const ONLY_ALPHANUM = /^[0-9A-Za-z-]*$/;

/** blang `Parse`: strict MAJOR.MINOR.PATCH[-pre][+build]. */
export function parseVersion(s: string): Version {
  if (s.length === 0) throw new SemverError('Version string empty');

  const parts = goSplitN(s, '.', 3);
  if (parts.length !== 3) throw new SemverError('No Major.Minor.Patch elements found');
  const [majorStr, minorStr, rest] = parts as [string, string, string];

  const major = parseNumericField(majorStr, 'major', 'Major');
  const minor = parseNumericField(minorStr, 'minor', 'Minor');

  // Build is cut at the first '+', then prerelease at the first '-' of what is left.
  let patchStr = rest;
  let buildStrs: string[] = [];
  let preStrs: string[] = [];
  const buildIndex = patchStr.indexOf('+');
  if (buildIndex !== -1) {
    buildStrs = patchStr.slice(buildIndex + 1).split('.');
    patchStr = patchStr.slice(0, buildIndex);
  }
  const preIndex = patchStr.indexOf('-');
  if (preIndex !== -1) {
    preStrs = patchStr.slice(preIndex + 1).split('.');
    patchStr = patchStr.slice(0, preIndex);
  }

  const patch = parseNumericField(patchStr, 'patch', 'Patch');
  const pre = preStrs.map(parsePrereleasePart);
  const build = buildStrs.map(parseBuildPart);
  return { major, minor, patch, pre, build };
}

/**
 * blang `ParseTolerant`: trims whitespace, drops one leading `v`, strips leading zeros from
 * the first three dot-parts and pads `1` / `1.2` to three parts, then calls strict `Parse`.
 */
export function parseVersionTolerant(s: string): Version {
  const trimmed = goTrimSpace(s);
  const withoutV = trimmed.startsWith('v') ? trimmed.slice(1) : trimmed;
  const parts = goSplitN(withoutV, '.', 3).map(stripLeadingZeros);
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1] ?? '')) {
      throw new SemverError('Short version cannot contain PreRelease/Build meta data');
    }
    while (parts.length < 3) parts.push('0');
  }
  return parseVersion(parts.join('.'));
}

export function tryParseVersion(s: string): ParseVersionResult {
  try {
    return { ok: true, version: parseVersion(s) };
  } catch (err) {
    if (err instanceof SemverError) return { ok: false, error: err.message };
    throw err;
  }
}

/** blang `Compare`: SemVer precedence; build metadata is ignored. */
export function compareVersions(a: Version, b: Version): -1 | 0 | 1 {
  return (
    compareBigints(a.major, b.major) ||
    compareBigints(a.minor, b.minor) ||
    compareBigints(a.patch, b.patch) ||
    comparePrereleases(a.pre, b.pre)
  );
}

/** blang `String()`: includes prerelease and build metadata. */
export function formatVersion(v: Version): string {
  let out = `${v.major}.${v.minor}.${v.patch}`;
  if (v.pre.length > 0) out += '-' + v.pre.map(String).join('.');
  if (v.build.length > 0) out += '+' + v.build.join('.');
  return out;
}

function parseNumericField(s: string, lowerName: string, capitalName: string): bigint {
  if (!ONLY_DIGITS.test(s)) {
    throw new SemverError(`Invalid character(s) found in ${lowerName} number ${goQuote(s)}`);
  }
  if (hasLeadingZeroes(s)) {
    throw new SemverError(`${capitalName} number must not contain leading zeroes ${goQuote(s)}`);
  }
  return goParseUint64(s);
}

/** blang `NewPRVersion`. */
function parsePrereleasePart(s: string): PrereleasePart {
  if (s.length === 0) throw new SemverError('Prerelease is empty');
  if (ONLY_DIGITS.test(s)) {
    if (hasLeadingZeroes(s)) {
      throw new SemverError(`Numeric PreRelease version must not contain leading zeroes ${goQuote(s)}`);
    }
    return goParseUint64(s);
  }
  if (ONLY_ALPHANUM.test(s)) return s;
  throw new SemverError(`Invalid character(s) found in prerelease ${goQuote(s)}`);
}

function parseBuildPart(s: string): string {
  if (s.length === 0) throw new SemverError('Build meta data is empty');
  if (!ONLY_ALPHANUM.test(s)) {
    throw new SemverError(`Invalid character(s) found in build meta data ${goQuote(s)}`);
  }
  return s;
}

function hasLeadingZeroes(s: string): boolean {
  return s.length > 1 && s[0] === '0';
}

/** ParseTolerant's zero stripping; `len(p) > 1` in Go counts bytes, not characters. */
function stripLeadingZeros(part: string): string {
  if (utf8Length(part) <= 1) return part;
  const stripped = part.replace(/^0+/, '');
  return stripped === '' || !/^[0-9]/.test(stripped) ? '0' + stripped : stripped;
}

function compareBigints(a: bigint, b: bigint): -1 | 0 | 1 {
  return a === b ? 0 : a > b ? 1 : -1;
}

/** A version without prerelease is greater; otherwise identifier by identifier, then length. */
function comparePrereleases(a: PrereleasePart[], b: PrereleasePart[]): -1 | 0 | 1 {
  if (a.length === 0 || b.length === 0) return compareBigints(BigInt(b.length), BigInt(a.length));
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) {
    const order = comparePrereleasePart(a[i]!, b[i]!);
    if (order !== 0) return order;
  }
  return compareBigints(BigInt(a.length), BigInt(b.length));
}

/** Numeric identifiers sort below alphanumeric ones; strings compare bytewise (ASCII only). */
function comparePrereleasePart(a: PrereleasePart, b: PrereleasePart): -1 | 0 | 1 {
  if (typeof a === 'bigint' && typeof b === 'bigint') return compareBigints(a, b);
  if (typeof a === 'bigint') return -1;
  if (typeof b === 'bigint') return 1;
  return a === b ? 0 : a > b ? 1 : -1;
}

// ---- Go standard-library behaviour that leaks into blang's results and messages ----

/** strconv.ParseUint(s, 10, 64), with Go's error text. */
function goParseUint64(s: string): bigint {
  if (!/^[0-9]+$/.test(s)) throw new SemverError(`strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > MAX_UINT64) throw new SemverError(`strconv.ParseUint: parsing ${goQuote(s)}: value out of range`);
  return n;
}

/** blang `NewPRVersion`: one prerelease identifier (used for `olm.package` releases). */
export const parsePrereleaseIdentifier = parsePrereleasePart;
