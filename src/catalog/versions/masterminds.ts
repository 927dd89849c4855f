/**
 * OLM v1 version ranges: `spec.source.catalog.version` of a ClusterExtension.
 *
 * Two layers, applied in the order the cluster applies them:
 * 1. the ClusterExtension CRD (operator-controller `api/v1/clusterextension_types.go`):
 *    `maxLength: 64` and a CEL `self.matches(...)` regex, checked by the API server;
 * 2. Masterminds/semver v3.5 `NewConstraint` and `Constraints.Check` (`constraints.go`,
 *    `version.go`), which operator-controller calls in `compare.NewVersionRange`.
 * Both are ported rather than approximated (docs/olm-upgrades.md "OLM v1"): hyphen
 * ranges, `||`, comma or space AND, `~`, `^`, wildcards, partial versions, a `v` prefix,
 * leading-zero coercion and the prerelease rule all follow the Go code, quirks included.
 */
import { goQuote } from '../go/gostrings.js';
import type { Version } from './semver.js';

export interface MastermindsRange {
  /** Constraints.Check on the bundle version (operator-controller drops build metadata first). */
  matches(v: Version): boolean;
  /** Constraints.String(): each constraint as written, ANDs joined by a space, ORs by ` || `. */
  toString(): string;
}

export type ParseMastermindsResult = { ok: true; range: MastermindsRange } | { ok: false; error: string };

/** The CRD's `maxLength`; the API server counts characters. */
export const VERSION_MAX_LENGTH = 64;

const FIELD = 'spec.source.catalog.version';

/**
 * What a ClusterExtension with this `version` gets: the API server's rejection, the
 * resolver's "desired version range ... is invalid", or the range. The empty string means
 * the field is unset (`omitempty`): every version matches.
 */
export function parseMastermindsRange(s: string): ParseMastermindsResult {
  if (s === '') return { ok: true, range: ANY_VERSION };
  const crdError = checkVersionField(s);
  if (crdError !== null) return { ok: false, error: crdError };
  const parsed = parseMastermindsConstraint(s);
  if (!parsed.ok)
    return { ok: false, error: `desired version range ${goQuote(s)} is invalid: ${parsed.error}` };
  return parsed;
}

/** The CRD validation of the field, with the API server's message, or null when it passes. */
export function checkVersionField(s: string): string | null {
  if ([...s].length > VERSION_MAX_LENGTH) {
    return `${FIELD}: Too long: may not be more than ${VERSION_MAX_LENGTH} bytes`;
  }
  if (!CRD_VERSION_REGEX.test(s)) {
    return `${FIELD}: Invalid value: "string": invalid version expression`;
  }
  return null;
}

/** Masterminds `NewConstraint` alone (no CRD check); `error` is Masterminds' text. */
export function parseMastermindsConstraint(s: string): ParseMastermindsResult {
  const groups: Constraint[][] = [];
  const groupHasPre: boolean[] = [];
  for (const segment of rewriteRange(s).split('||')) {
    if (!VALID_CONSTRAINT_REGEX.test(segment)) {
      return { ok: false, error: `improper constraint: ${goQuote(segment)}` };
    }
    const found = segment.match(FIND_CONSTRAINT_REGEX) ?? [segment];
    const group: Constraint[] = [];
    for (const text of found) {
      const c = parseConstraint(text);
      if (typeof c === 'string') return { ok: false, error: c };
      group.push(c);
    }
    groups.push(group);
    // v3.4.0+: one prerelease constraint lets prereleases through for the whole AND group.
    groupHasPre.push(group.some((c) => c.con.pre !== ''));
  }
  const text = groups.map((g) => g.map((c) => c.origfunc + c.orig).join(' ')).join(' || ');
  return {
    ok: true,
    range: {
      matches: (v) => {
        const mv = fromBlang(v);
        return groups.some((group, i) => group.every((c) => c.check(mv, c, groupHasPre[i]!)));
      },
      toString: () => text,
    },
  };
}

const ANY_VERSION: MastermindsRange = { matches: () => true, toString: () => '' };

// ---- Regexes, ported from RE2. `\s` is RE2's ASCII class, which lacks \v; `\d` is ASCII. ----

function re2(pattern: string, flags = ''): RegExp {
  return new RegExp(pattern.replaceAll('\\s', '[\\t\\n\\f\\r ]').replaceAll('\\d', '[0-9]'), flags);
}

/**
 * A whole-string check `^G1 (SEP G)* $` written for a backtracking engine. The upstream
 * patterns put `\s*` atoms next to each other (after a version, inside a separator, after
 * an empty operator), so a failing string is tried with every split of every whitespace
 * run: exponential in the number of constraints (a 64-character CRD input took 0.7 s).
 * This form accepts the same strings with one way to match each: whitespace is consumed
 * once per gap, an operator is either absent or non-empty, and a version is matched
 * atomically (`(?=(V))\N`), which is safe because nothing that may follow a version
 * (whitespace, `,`, `||`, the end) can extend it.
 */
function wholeConstraintRegex(first: string, later: string, separators: string[]): RegExp {
  const gap = `(?:${separators.map((sep) => `\\s*${sep}\\s*`).join('|')}|\\s+)`;
  const op = String.raw`(?:(?:!=|>=|=>|<=|=<|~>|=|>|<|~|\^)\s*)?`;
  return re2(String.raw`^\s*${op}(?=(${first}))\1(?:${gap}${op}(?=(${later}))\2)*\s*$`);
}

const PRE_AND_BUILD = String.raw`(?:-[0-9A-Za-z\-]+(?:\.[0-9A-Za-z\-]+)*)?(?:\+[0-9A-Za-z\-]+(?:\.[0-9A-Za-z\-]+)*)?`;

// The CEL rule, equivalent to the CRD's (test/masterminds.test.ts compares them), with
// its stray `]`s: `\*]` needs a literal `]` after the `*`, so `1.*.*` and a later `1.2.*`
// are rejected, while `[x|X|\*]` lets the first major be `|`.
const CRD_VERSION_REGEX = wholeConstraintRegex(
  String.raw`v?(?:0|[1-9]\d*|[x|X|\*])(?:\.(?:0|[1-9]\d*|x|X|\*]))?(?:\.(?:0|[1-9]\d*|x|X|\*))?` +
    PRE_AND_BUILD,
  String.raw`v?(?:0|[1-9]\d*|x|X|\*])(?:\.(?:0|[1-9]\d*|x|X|\*))?(?:\.(?:0|[1-9]\d*|x|X|\*]))?` +
    PRE_AND_BUILD,
  [',', String.raw`\|\|`],
);

const OPS = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
// Masterminds' `cvRegex`: its classes admit `|`, and any mix of digits and wildcards.
const CV =
  String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?` +
  String.raw`(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?` +
  String.raw`(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;

const CONSTRAINT_REGEX = re2(String.raw`^\s*(${OPS})\s*(${CV})\s*$`);
const CONSTRAINT_RANGE_REGEX = re2(String.raw`\s*(${CV})\s+-\s+(${CV})\s*`, 'g');
const FIND_CONSTRAINT_REGEX = re2(String.raw`(${OPS})\s*(${CV})`, 'g');
// Masterminds' validConstraintRegex, `^(\s*(ops)\s*(cv)\s*)((?:\s+|,\s*)(ops)\s*(cv)\s*)*$`, in the same form.
const CV_ATOM = String.raw`v?[0-9|x|X|\*]+(?:\.[0-9|x|X|\*]+)?(?:\.[0-9|x|X|\*]+)?` + PRE_AND_BUILD;
const VALID_CONSTRAINT_REGEX = wholeConstraintRegex(CV_ATOM, CV_ATOM, [',']);
const LOOSE_VERSION_REGEX = re2(
  String.raw`^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?` +
    String.raw`(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?` +
    String.raw`(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$`,
);

/** rewriteRange: `a - b` becomes `>= a, <= b ` (replacing the first equal text, as Go does). */
function rewriteRange(s: string): string {
  let out = s;
  for (const m of s.matchAll(CONSTRAINT_RANGE_REGEX)) {
    // Group 1 is the first version; the second starts after cvRegex's nine groups.
    const replacement = `>= ${m[1]}, <= ${m[11]} `;
    out = out.replace(m[0], () => replacement);
  }
  return out;
}

// ---- Versions as Masterminds holds them: the prerelease is one string. ----

interface MmVersion {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
}

/** semver.New(major, minor, patch, pre, build), as compare.NewVersionRange builds it. */
function fromBlang(v: Version): MmVersion {
  return { major: v.major, minor: v.minor, patch: v.patch, pre: v.pre.map(String).join('.') };
}

const MAX_UINT64 = (1n << 64n) - 1n;

/** strconv.ParseUint(s, 10, 64), or null on error. */
function parseUint(s: string): bigint | null {
  if (!/^[0-9]+$/.test(s)) return null;
  const n = BigInt(s);
  return n > MAX_UINT64 ? null : n;
}

const ALLOWED = /^[0-9A-Za-z-]*$/;
const DIGITS = /^[0-9]*$/;

/** NewVersion with CoerceNewVersion (the default): leading zeros allowed in numbers. */
function newVersion(s: string): MmVersion | null {
  const m = LOOSE_VERSION_REGEX.exec(s);
  if (!m) return null;
  const major = parseUint(m[1]!);
  const minor = m[2] ? parseUint(m[2].slice(1)) : 0n;
  const patch = m[3] ? parseUint(m[3].slice(1)) : 0n;
  if (major === null || minor === null || patch === null) return null;
  const pre = m[5] ?? '';
  const metadata = m[8] ?? '';
  if (pre !== '' && !validPrerelease(pre)) return null;
  if (metadata !== '' && !metadata.split('.').every((p) => p !== '' && ALLOWED.test(p))) return null;
  return { major, minor, patch, pre };
}

function validPrerelease(pre: string): boolean {
  return pre.split('.').every((p) => {
    if (p === '') return false;
    if (DIGITS.test(p)) return !(p.length > 1 && p[0] === '0');
    return ALLOWED.test(p);
  });
}

function compare(v: MmVersion, o: MmVersion): number {
  if (v.major !== o.major) return v.major > o.major ? 1 : -1;
  if (v.minor !== o.minor) return v.minor > o.minor ? 1 : -1;
  if (v.patch !== o.patch) return v.patch > o.patch ? 1 : -1;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  return comparePrerelease(v.pre, o.pre);
}

function comparePrerelease(v: string, o: string): number {
  const sparts = v.split('.');
  const oparts = o.split('.');
  const l = Math.max(sparts.length, oparts.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sparts[i] ?? '', oparts[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return -1;
  if (o === '') return 1;
  const oi = parseUint(o);
  const si = parseUint(s);
  if (oi === null && si === null) return s > o ? 1 : -1;
  if (oi === null) return -1;
  if (si === null) return 1;
  return si > oi ? 1 : -1;
}

// ---- Constraints ----

interface Constraint {
  con: MmVersion;
  /** The version as written (e.g. `4.x`), and the operator as written. */
  orig: string;
  origfunc: string;
  check: ConstraintCheck;
  dirty: boolean;
  minorDirty: boolean;
  patchDirty: boolean;
}

function isX(s: string): boolean {
  return s === 'x' || s === '*' || s === 'X';
}

/** parseConstraint; returns Masterminds' error text on failure. */
function parseConstraint(c: string): Constraint | string {
  if (c.length === 0) {
    // An empty constraint is `*`.
    return {
      con: { major: 0n, minor: 0n, patch: 0n, pre: '' },
      orig: c,
      origfunc: '',
      check: tildeOrEqual,
      dirty: true,
      minorDirty: false,
      patchDirty: false,
    };
  }
  const m = CONSTRAINT_REGEX.exec(c);
  if (!m) return `improper constraint: ${goQuote(c)}`;
  const [, op = '', whole = '', major = '', minorPart = '', patchPart = '', prePart = ''] = m;
  let ver = whole;
  let dirty = false;
  let minorDirty = false;
  let patchDirty = false;
  // A wildcard or missing part drops everything after it (build metadata always).
  if (isX(major) || major === '') {
    ver = `0.0.0${prePart}`;
    dirty = true;
  } else if (isX(minorPart.slice(1)) || minorPart === '') {
    minorDirty = dirty = true;
    ver = `${major}.0.0${prePart}`;
  } else if (isX(patchPart.slice(1)) || patchPart === '') {
    patchDirty = dirty = true;
    ver = `${major}${minorPart}.0${prePart}`;
  }
  const con = newVersion(ver);
  if (con === null) return 'constraint parser error';
  const check = CONSTRAINT_OPS[op];
  if (check === undefined) return `improper constraint: ${goQuote(c)}`; // the regex admits only known operators
  return { con, orig: whole, origfunc: op, check, dirty, minorDirty, patchDirty };
}

type ConstraintCheck = (v: MmVersion, c: Constraint, includePre: boolean) => boolean;

/** Every operator first rejects a prerelease unless its AND group names one. */
const excludedPrerelease = (v: MmVersion, includePre: boolean): boolean => v.pre !== '' && !includePre;

const notEqual: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (c.dirty) {
    if (c.con.major !== v.major) return true;
    if (c.con.minor !== v.minor && !c.minorDirty) return true;
    if (c.minorDirty) return false;
    if (c.con.patch !== v.patch && !c.patchDirty) return true;
    if (c.patchDirty) {
      if (v.pre !== '' || c.con.pre !== '') return comparePrerelease(v.pre, c.con.pre) !== 0;
      return false;
    }
  }
  return compare(v, c.con) !== 0;
};

const greaterThan: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (!c.dirty) return compare(v, c.con) === 1;
  if (v.major > c.con.major) return true;
  if (v.major < c.con.major) return false;
  // `>11` needs 12 or higher; `>11.1` needs 11.2 or higher.
  if (c.minorDirty) return false;
  if (c.patchDirty) return v.minor > c.con.minor;
  return compare(v, c.con) === 1;
};

const lessThan: ConstraintCheck = (v, c, includePre) =>
  !excludedPrerelease(v, includePre) && compare(v, c.con) < 0;

const greaterThanEqual: ConstraintCheck = (v, c, includePre) =>
  !excludedPrerelease(v, includePre) && compare(v, c.con) >= 0;

const lessThanEqual: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (!c.dirty) return compare(v, c.con) <= 0;
  // `<=1.2` means below 1.3.0, `<=1` below 2.0.0.
  if (v.major > c.con.major) return false;
  if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
  return true;
};

const tilde: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (compare(v, c.con) < 0) return false;
  // ~0.0.0 (and `*`) accept everything.
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) {
    return true;
  }
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
};

const tildeOrEqual: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (c.dirty) return tilde(v, c, includePre);
  return compare(v, c.con) === 0;
};

const caret: ConstraintCheck = (v, c, includePre) => {
  if (excludedPrerelease(v, includePre)) return false;
  if (compare(v, c.con) < 0) return false;
  if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
  // Major 0: the minor is the compatibility level, and with minor 0 the patch is.
  if (v.major > 0n) return false;
  if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
  if (v.minor > 0n) return false;
  return c.con.patch === v.patch;
};

const CONSTRAINT_OPS: Record<string, ConstraintCheck> = {
  '': tildeOrEqual,
  '=': tildeOrEqual,
  '!=': notEqual,
  '>': greaterThan,
  '<': lessThan,
  '>=': greaterThanEqual,
  '=>': greaterThanEqual,
  '<=': lessThanEqual,
  '=<': lessThanEqual,
  '~': tilde,
  '~>': tilde,
  '^': caret,
};
