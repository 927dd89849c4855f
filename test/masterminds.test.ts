import { describe, expect, it } from 'vitest';
import {
  checkVersionField,
  parseMastermindsConstraint,
  parseMastermindsRange,
} from '../src/catalog/versions/masterminds.js';
import { goQuote } from '../src/catalog/go/gostrings.js';
import { parseVersionTolerant } from '../src/catalog/versions/semver.js';

const TOO_LONG = 'spec.source.catalog.version: Too long: may not be more than 64 bytes';
const REGEX_MISMATCH = 'spec.source.catalog.version: Invalid value: "string": invalid version expression';

/** Masterminds alone (no CRD), so hyphen ranges and leading zeros can be exercised. */
function check(constraint: string, version: string): boolean {
  const parsed = parseMastermindsConstraint(constraint);
  if (!parsed.ok) throw new Error(`${constraint}: ${parsed.error}`);
  return parsed.range.matches(parseVersionTolerant(version));
}

/** The whole path a ClusterExtension takes: CRD first, then Masterminds. */
function allows(range: string, version: string): boolean {
  const parsed = parseMastermindsRange(range);
  if (!parsed.ok) throw new Error(`${range}: ${parsed.error}`);
  return parsed.range.matches(parseVersionTolerant(version));
}

describe('CRD validation of spec.source.catalog.version', () => {
  // operator-controller controllers/clusterextension_admission_test.go, TestClusterExtensionAdmissionVersion
  const accepted = [
    '1.2.3',
    '1.2.3-alpha.1+metadata',
    '1.2.3-alpha-beta',
    '>=1.2.3',
    '=>1.2.3',
    '>= 1.2.3',
    '>=v1.2.3',
    '>= v1.2.3',
    '<=1.2.3',
    '=<1.2.3',
    '=1.2.3',
    '!=1.2.3',
    '<1.2.3',
    '>1.2.3',
    '~1.2.2',
    '~>1.2.3',
    '^1.2.3',
    'v1.2.3',
    '1.x',
    '1.X',
    '1.*',
    '1.2.x',
    '1.2.X',
    '1.2.*',
    '>=1.2.3 <2.3.4',
    '>=1.2.3,<2.3.4',
    '>=1.2.3, <2.3.4',
    '<1.2.3||>2.3.4',
    '<1.2.3|| >2.3.4',
    '<1.2.3 ||>2.3.4',
    '<1.2.3 || >2.3.4',
    '>1.0.0,<1.2.3 || >2.1.0',
    '<1.2.3-abc >2.3.4-def',
    '<1.2.3-abc+def >2.3.4-ghi+jkl',
  ];
  it.each(accepted)('accepts %j (and Masterminds parses it)', (version) => {
    expect(checkVersionField(version)).toBeNull();
    expect(parseMastermindsRange(version).ok).toBe(true);
  });

  const rejected = [
    'invalid-semver',
    '1.2.3.4',
    '1.2.3-beta!',
    '1.2.3.alpha',
    '1..2.3',
    '1.2.3-pre+bad_metadata',
    '1.2.-3',
    '.1.2.3',
    '<<1.2.3',
    '>>1.2.3',
    '>~1.2.3',
    '==1.2.3',
    '=!1.2.3',
    '!1.2.3',
    '1.Y',
    '>1.2.3 && <2.3.4',
    '>1.2.3;<2.3.4',
    '01.2.3',
    '1.02.3',
    '1.2.03',
    '1.2.3 - 2.3.4',
  ];
  it.each(rejected)('rejects %j with the CEL message', (version) => {
    expect(parseMastermindsRange(version)).toEqual({ ok: false, error: REGEX_MISMATCH });
  });

  it('rejects more than 64 characters before looking at the syntax', () => {
    const long = '1234567890.1234567890.12345678901234567890123456789012345678901234';
    expect(parseMastermindsRange(long)).toEqual({ ok: false, error: TOO_LONG });
    expect(parseMastermindsRange('>=1.0.0 <2.0.0'.padEnd(64, ' ')).ok).toBe(true);
    expect(parseMastermindsRange('>=1.0.0 <2.0.0'.padEnd(65, ' '))).toEqual({ ok: false, error: TOO_LONG });
  });

  it('keeps the regex quirks: stray `]` after `*`, and `|` as a first major', () => {
    expect(checkVersionField('1.*.*')).toBe(REGEX_MISMATCH);
    expect(checkVersionField('* || >=1.0.0')).toBeNull();
    expect(checkVersionField('>=1.0.0 || *')).toBe(REGEX_MISMATCH);
    expect(checkVersionField('>=1.0.0 || 1.*')).toBeNull();
    expect(checkVersionField('>=1.0.0 || 1.2.*')).toBe(REGEX_MISMATCH);
    // The CRD lets `|` through as a major; Masterminds then cannot build a version from it.
    expect(checkVersionField('| 1.0.0')).toBeNull();
    expect(parseMastermindsRange('| 1.0.0')).toEqual({
      ok: false,
      error: 'desired version range "| 1.0.0" is invalid: constraint parser error',
    });
  });

  it('passes what only Masterminds rejects on, with the resolver message', () => {
    expect(parseMastermindsRange('1.2.3-01')).toEqual({
      ok: false,
      error: 'desired version range "1.2.3-01" is invalid: constraint parser error',
    });
  });

  it('treats an empty version as unset', () => {
    expect(allows('', '0.0.1-alpha')).toBe(true);
  });

  it('accepts exactly what the verbatim upstream regexes accept', () => {
    // RE2's \s and \d are ASCII; the patterns below are copied from the CRD and constraints.go.
    const re2 = (p: string): RegExp =>
      new RegExp(p.replaceAll('\\s', '[\\t\\n\\f\\r ]').replaceAll('\\d', '[0-9]'));
    const crd = re2(
      String.raw`^(\s*(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|[x|X|\*])(\.(0|[1-9]\d*|x|X|\*]))?(\.(0|[1-9]\d*|x|X|\*))?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)((?:\s+|,\s*|\s*\|\|\s*)(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|x|X|\*])(\.(0|[1-9]\d*|x|X|\*))?(\.(0|[1-9]\d*|x|X|\*]))?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)*$`,
    );
    const ops = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
    const cv = String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
    const valid = re2(String.raw`^(\s*(${ops})\s*(${cv})\s*)((?:\s+|,\s*)(${ops})\s*(${cv})\s*)*$`);

    // Short strings over the characters that matter, from a fixed-seed generator.
    const alphabet = [
      '0',
      '1',
      '2',
      '10',
      '.',
      ' ',
      '  ',
      '\t',
      ',',
      '|',
      '||',
      '-',
      '+',
      'v',
      'x',
      '*',
      ']',
      '=',
      '>',
      '<',
      '!',
      '~',
      '^',
      'a',
    ];
    let seed = 42;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let crdAccepted = 0;
    let validAccepted = 0;
    for (let i = 0; i < 30_000; i++) {
      let s = '';
      const length = 1 + next(12);
      for (let j = 0; j < length; j++) s += alphabet[next(alphabet.length)];
      const crdVerdict = crd.test(s);
      expect(checkVersionField(s) === null, s).toBe(crdVerdict || [...s].length > 64);
      if (crdVerdict) crdAccepted++;
      // Without `||` and hyphen ranges Masterminds validates the string as one segment.
      if (!s.includes('||') && !/\s-\s/.test(s)) {
        const parsed = parseMastermindsConstraint(s);
        const improper = !parsed.ok && parsed.error === `improper constraint: ${goQuote(s)}`;
        expect(improper, s).toBe(!valid.test(s));
        if (!improper) validAccepted++;
      }
    }
    // The generator must reach both verdicts often enough to mean something.
    expect(crdAccepted).toBeGreaterThan(500);
    expect(validAccepted).toBeGreaterThan(1000);
  });

  it('answers pathological input quickly', () => {
    const inputs = [
      '1' + '  1'.repeat(21) + '!',
      '1' + ' , 1'.repeat(15) + '!',
      '1' + ' || 1'.repeat(12) + '!',
      '1.0.0-' + 'a.'.repeat(28) + '!',
    ];
    const start = performance.now();
    for (const s of inputs) {
      expect(parseMastermindsRange(s).ok).toBe(false);
      expect(parseMastermindsConstraint(s.repeat(20)).ok).toBe(false);
    }
    expect(performance.now() - start).toBeLessThan(500);
  });
});

describe('Masterminds constraints', () => {
  // Masterminds/semver constraints_test.go, TestConstraintsCheck (a selection).
  const cases: [string, string, boolean][] = [
    ['*', '1.2.3', true],
    ['~0.0.0', '1.2.3', true],
    ['0.x.x', '1.2.3', false],
    ['0.0.x', '1.2.3', false],
    ['0.0.0', '1.2.3', false],
    ['^0.0.0', '1.2.3', false],
    ['= 2.0', '1.2.3', false],
    ['= 2.0', '2.0.0', true],
    ['4.1', '4.1.0', true],
    ['4.1.x', '4.1.3', true],
    ['1.x', '1.4', true],
    ['!=4.1', '4.1.0', false],
    ['!=4.1-alpha', '4.1.0-alpha', false],
    ['!=4.1-alpha', '4.1.1-alpha', false],
    ['!=4.1-alpha', '4.1.0', true],
    ['!=4.1', '5.1.0', true],
    ['!=4.x', '5.1.0', true],
    ['!=4.x', '4.1.0', false],
    ['!=4.1.x', '4.2.0', true],
    ['!=4.2.x', '4.2.3', false],
    ['>1.1', '4.1.0', true],
    ['>1.1', '1.1.0', false],
    ['<1.1', '0.1.0', true],
    ['<1.1', '1.1.0', false],
    ['<1.1', '1.1.1', false],
    ['<1.x', '1.1.1', false],
    ['<1.x', '0.1.1', true],
    ['<1.x', '2.0.0', false],
    ['<1.1.x', '1.2.1', false],
    ['<1.1.x', '1.1.500', false],
    ['<1.1.x', '1.0.500', true],
    ['<1.2.x', '1.1.1', true],
    ['>=1.1', '4.1.0', true],
    ['>=1.1', '4.1.0-beta', false],
    ['>=1.1', '1.1.0', true],
    ['>=1.1', '0.0.9', false],
    ['<=1.1', '0.1.0', true],
    ['<=1.1', '0.1.0-alpha', false],
    ['<=1.1-a', '0.1.0-alpha', true],
    ['<=1.1', '1.1.0', true],
    ['<=1.x', '1.1.0', true],
    ['<=2.x', '3.0.0', false],
    ['<=1.1', '1.1.1', true],
    ['<=1.1.x', '1.2.500', false],
    ['<=4.5', '3.4.0', true],
    ['<=4.5', '3.7.0', true],
    ['<=4.5', '4.6.3', false],
    ['>1.1, <2', '1.1.1', false],
    ['>1.1, <2', '1.2.1', true],
    ['>1.1, <3', '4.3.2', false],
    ['>=1.1, <2, !=1.2.3', '1.2.3', false],
    ['>1.1 <2', '1.2.1', true],
    ['>=1.1    <2    !=1.2.3', '1.2.3', false],
    ['>=1.1, <2, !=1.2.3 || > 3', '4.1.2', true],
    ['>=1.1, <2, !=1.2.3 || > 3', '3.1.2', false],
    ['>=1.1, <2, !=1.2.3 || >= 3', '3.0.0', true],
    ['>=1.1, <2, !=1.2.3 || > 3', '3.0.0', false],
    ['> 1.1, <     2', '1.1.1', false],
    ['>   1.1, <2', '1.2.1', true],
    ['>= 1.0.0  <= 2.0.0-beta', '1.0.1-beta', true],
    ['>= 1.0.0  <= 2.0.0-beta', '1.0.1', true],
    ['>= 1.0.0  <= 2.0.0-beta', '3.0.0', false],
    ['>= 1.0.0  <= 2.0.0-beta || > 3', '3.0.1-beta', false],
    ['>= 1.0.0  <= 2.0.0-beta != 1.0.1 || > 3', '1.0.1-beta', true],
    ['>= 1.0.0  <= 2.0.0-beta != 1.0.1-beta || > 3', '1.0.1-beta', false],
    ['>= 1.0.0-0  <= 2.0.0', '1.0.1-beta', true],
    ['1.1 - 2', '1.1.1', true],
    ['1.5.0 - 4.5', '3.7.0', true],
    ['1.1-3', '4.3.2', false],
    ['^1.1', '1.1.1', true],
    ['^1.1', '4.3.2', false],
    ['^1.x', '1.1.1', true],
    ['^2.x', '1.1.1', false],
    ['^1.x', '2.1.1', false],
    ['^1.x', '1.1.1-beta1', false],
    ['^1.1.2-alpha', '1.2.1-beta1', true],
    ['^1.2.x-alpha', '1.1.1-beta1', false],
    ['^0.0.1', '0.0.1', true],
    ['^0.0.1', '0.3.1', false],
    ['~*', '2.1.1', true],
    ['~1', '2.1.1', false],
    ['~1', '1.3.5', true],
    ['~1.x', '2.1.1', false],
    ['~1.x', '1.3.5', true],
    ['~1.1', '1.1.1', true],
    ['~1.1', '1.1.1-alpha', false],
    ['~1.1-alpha', '1.1.1-beta', true],
    ['~1.1.1-beta', '1.1.1-alpha', false],
    ['~1.1.1-beta', '1.1.1', true],
    ['~1.2.3', '1.2.5', true],
    ['~1.2.3', '1.2.2', false],
    ['~1.2.3', '1.3.2', false],
    ['~1.1', '1.2.3', false],
    ['~1.3', '2.4.5', false],
    ['1.0.0 - 2.0.0 <=2.0.0', '1.5.0', true],
    ['1.0.0 - 2.0.0, <=2.0.0', '1.5.0', true],
  ];
  it.each(cases)('%j on %s is %s', (constraint, version, expected) => {
    expect(check(constraint, version)).toBe(expected);
  });

  it('follows the section 4.4 rewrites', () => {
    // ~ is patch-level, `~1` is a major range.
    expect([check('~1.2', '1.2.0'), check('~1.2', '1.2.9'), check('~1.2', '1.3.0')]).toEqual([
      true,
      true,
      false,
    ]);
    expect([check('~1', '1.9.9'), check('~1', '2.0.0')]).toEqual([true, false]);
    // ^ is major-level, with the 0.x special cases.
    expect([check('^1.2.3', '1.9.0'), check('^1.2.3', '2.0.0')]).toEqual([true, false]);
    expect([check('^0.2.3', '0.2.9'), check('^0.2.3', '0.3.0')]).toEqual([true, false]);
    expect([check('^0.0.3', '0.0.3'), check('^0.0.3', '0.0.4')]).toEqual([true, false]);
    expect([
      check('^0', '0.9.9'),
      check('^0', '1.0.0'),
      check('^0.0', '0.0.9'),
      check('^0.0', '0.1.0'),
    ]).toEqual([true, false, true, false]);
    // Partial versions: `>1.2` is `>=1.3.0`, `<=1.2` is `<1.3.0`, `=`/bare act like tilde.
    expect([check('>1.2', '1.2.9'), check('>1.2', '1.3.0')]).toEqual([false, true]);
    expect([check('<=1.2', '1.2.9'), check('<=1.2', '1.3.0')]).toEqual([true, false]);
    expect([check('=1.2', '1.2.7'), check('1', '1.7.0'), check('1.2.3', '1.2.4')]).toEqual([
      true,
      true,
      false,
    ]);
    // Wildcards, in every spelling.
    for (const w of ['x', 'X', '*']) {
      expect([check(`1.2.${w}`, '1.2.5'), check(`1.2.${w}`, '1.3.0')]).toEqual([true, false]);
      expect([
        check(`>= 1.2.${w}`, '9.0.0'),
        check(`<= 2.${w}`, '2.9.9'),
        check(`<= 2.${w}`, '3.0.0'),
      ]).toEqual([true, true, false]);
      expect(check(w, '0.0.1')).toBe(true);
    }
    // A `v` prefix and leading zeros are accepted by Masterminds (the CRD rejects the zeros).
    expect([check('v1.2.3', '1.2.3'), check('>=v1.2', '1.2.0'), check('01.02.03', '1.2.3')]).toEqual([
      true,
      true,
      true,
    ]);
    // Build metadata never matters.
    expect([check('1.0.0+1', '1.0.0'), check('1.0.0', '1.0.0+2')]).toEqual([true, true]);
  });

  it('excludes prereleases unless the AND group names one', () => {
    const prereleases: [range: string, version: string, allowed: boolean][] = [
      ['>=1.0.0', '1.1.0-rc.1', false],
      ['>=1.0.0-0', '1.1.0-rc.1', true],
      // Any prerelease comparator in the group will do, unlike npm's same-M.m.p rule (v3.4.0).
      ['>=1.0.0-rc.1, <3.0.0', '2.5.0-alpha', true],
      // The permission does not carry across `||`.
      ['>=1.0.0-0 <2.0.0 || >=3.0.0', '1.5.0-rc.1', true],
      ['>=1.0.0-0 <2.0.0 || >=3.0.0', '3.1.0-rc.1', false],
      ['*', '1.0.0-rc.1', false],
    ];
    for (const [range, version, allowed] of prereleases)
      expect(allows(range, version), `${range} on ${version}`).toBe(allowed);
  });

  it('rewrites hyphen ranges and prints constraints as Masterminds does', () => {
    const printed = (s: string): string => {
      const parsed = parseMastermindsConstraint(s);
      return parsed.ok ? parsed.range.toString() : parsed.error;
    };
    expect(printed('1.0.0 - 2.0.0')).toBe('>=1.0.0 <=2.0.0');
    expect(printed('2 - 3, 4.0.0 - 5.1')).toBe('>=2 <=3 >=4.0.0 <=5.1');
    expect(printed('3 - 4 || => 3.0, < 4')).toBe('>=3 <=4 || =>3.0 <4');
    expect(printed('2.x,   >=1.2.3 || >4.5.6, < 5.7')).toBe('2.x >=1.2.3 || >4.5.6 <5.7');
    expect(printed('>= 1.2')).toBe('>=1.2');
    expect(check('1.0.0 - 2.0.0', '2.0.0')).toBe(true);
    expect(check('1.0.0 - 2.0.0', '2.0.1')).toBe(false);
  });

  it("reports Masterminds' parse errors", () => {
    const error = (s: string): string | undefined => {
      const parsed = parseMastermindsConstraint(s);
      return parsed.ok ? undefined : parsed.error;
    };
    const errors: [constraint: string, error: string | undefined][] = [
      ['>= bar', 'improper constraint: ">= bar"'],
      ['12.3.4.1234', 'improper constraint: "12.3.4.1234"'],
      ['12.3.34~ 1.2.3', 'improper constraint: "12.3.34~ 1.2.3"'],
      ['>=1.0.0 ||', 'improper constraint: ""'],
      ['v1.2.3-beta.01', 'constraint parser error'],
      ['99999999999999999999.0.0', 'constraint parser error'],
      ['12.3.34 ~1.2.3', undefined],
      ['v2.3.5-20161202202307-sha.e8fc5e5', undefined],
    ];
    for (const [constraint, expected] of errors) expect(error(constraint), constraint).toBe(expected);
  });
});
