import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goUnquote, haveOpm, OPM } from './helpers/oracle.js';
import {
  compareVersions,
  formatVersion,
  parseVersion,
  parseVersionTolerant,
  SemverError,
  tryParseVersion,
} from '../src/catalog/versions/semver.js';
import type { Version } from '../src/catalog/versions/semver.js';
import { goQuote, goSplitN, goTrimSpace } from '../src/catalog/go/gostrings.js';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SemverError);
    return (err as Error).message;
  }
  throw new Error('expected a SemverError');
}

describe('parseVersion: accepted versions', () => {
  it('splits major, minor, patch, prerelease and build', () => {
    expect(parseVersion('1.2.3-alpha.11.x-y+build.007.z')).toEqual<Version>({
      major: 1n,
      minor: 2n,
      patch: 3n,
      pre: ['alpha', 11n, 'x-y'],
      build: ['build', '007', 'z'],
    });
  });

  it.each([
    ['0.0.0', '0.0.0'],
    ['18446744073709551615.18446744073709551615.18446744073709551615', null],
    ['1.0.0-0', null],
    ['1.0.0--', null],
    ['1.0.0-0A.is.legal', null],
    ['1.0.0-a-b+c-d', null],
    ['1.0.0+b-c', null], // '-' after '+' belongs to the build
    ['1.0.0+007', null], // leading zeros are fine in build metadata
    ['1.0.0-rc.18446744073709551615', null],
  ])('%s parses and formats back', (input, formatted) => {
    expect(formatVersion(parseVersion(input))).toBe(formatted ?? input);
  });

  it('keeps numeric prerelease identifiers as bigint beyond 2^53', () => {
    expect(parseVersion('1.0.0-9007199254740993').pre).toEqual([9007199254740993n]);
  });
});

describe('parseVersion: blang error messages', () => {
  it.each([
    ['', 'Version string empty'],
    ['1', 'No Major.Minor.Patch elements found'],
    ['1.2', 'No Major.Minor.Patch elements found'],
    ['0x1.0.0', 'Invalid character(s) found in major number "0x1"'],
    ['v1.0.0', 'Invalid character(s) found in major number "v1"'],
    ['-1.0.0', 'Invalid character(s) found in major number "-1"'],
    [' 1.0.0', 'Invalid character(s) found in major number " 1"'],
    ['01.0.0', 'Major number must not contain leading zeroes "01"'],
    ['1.a.0', 'Invalid character(s) found in minor number "a"'],
    ['1.01.0', 'Minor number must not contain leading zeroes "01"'],
    ['1.0.a', 'Invalid character(s) found in patch number "a"'],
    ['1.0.0.0', 'Invalid character(s) found in patch number "0.0"'],
    ['1.0.0 ', 'Invalid character(s) found in patch number "0 "'],
    ['1.0.0\t', 'Invalid character(s) found in patch number "0\\t"'],
    ['1.0.01', 'Patch number must not contain leading zeroes "01"'],
    ['1.0.0-', 'Prerelease is empty'],
    ['1.0.0-a..b', 'Prerelease is empty'],
    ['1.0.0-+b', 'Prerelease is empty'],
    ['1.0.0-01', 'Numeric PreRelease version must not contain leading zeroes "01"'],
    ['1.0.0-a_b', 'Invalid character(s) found in prerelease "a_b"'],
    ['1.0.0-é', 'Invalid character(s) found in prerelease "é"'],
    ['1.0.0+', 'Build meta data is empty'],
    ['1.0.0+a..b', 'Build meta data is empty'],
    ['1.0.0+a_b', 'Invalid character(s) found in build meta data "a_b"'],
    ['1.0.0+a+b', 'Invalid character(s) found in build meta data "a+b"'],
    // Build is checked after prerelease, patch before both.
    ['1.0.0-a_b+c_d', 'Invalid character(s) found in prerelease "a_b"'],
    ['1.0.x-a_b', 'Invalid character(s) found in patch number "x"'],
    // strconv.ParseUint's own errors leak through.
    ['1..0', 'strconv.ParseUint: parsing "": invalid syntax'],
    ['1.0.', 'strconv.ParseUint: parsing "": invalid syntax'],
    ['1.0.-rc', 'strconv.ParseUint: parsing "": invalid syntax'],
    ['18446744073709551616.0.0', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
    ['1.0.0-18446744073709551616', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
  ])('%j fails with %j', (input, message) => {
    expect(errorOf(() => parseVersion(input))).toBe(message);
  });
});

describe('tryParseVersion', () => {
  it('returns the version or the error text', () => {
    expect(tryParseVersion('1.2.3')).toEqual({ ok: true, version: parseVersion('1.2.3') });
    expect(tryParseVersion('1.2')).toEqual({ ok: false, error: 'No Major.Minor.Patch elements found' });
  });
});

describe('compareVersions', () => {
  // The SemVer 2.0.0 spec's precedence example, plus numeric major/minor/patch ordering.
  const ascending = [
    '0.9.99',
    '1.0.0-0',
    '1.0.0-2',
    '1.0.0-10',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.0.10',
    '1.2.0',
    '1.10.0',
    '2.0.0',
    '10.0.0',
    '18446744073709551615.0.0',
  ];

  it('orders every pair like SemVer precedence', () => {
    for (const [i, a] of ascending.entries()) {
      for (const [j, b] of ascending.entries()) {
        const expected = Math.sign(i - j);
        expect(compareVersions(parseVersion(a), parseVersion(b)), `${a} vs ${b}`).toBe(expected);
      }
    }
  });

  it('compares alphanumeric identifiers bytewise (uppercase before lowercase, "-" before digits)', () => {
    expect(compareVersions(parseVersion('1.0.0-Z'), parseVersion('1.0.0-a'))).toBe(-1);
    expect(compareVersions(parseVersion('1.0.0--'), parseVersion('1.0.0-0a'))).toBe(-1);
    expect(compareVersions(parseVersion('1.0.0-a10'), parseVersion('1.0.0-a9'))).toBe(-1);
  });

  it('ignores build metadata but formatVersion keeps it', () => {
    const a = parseVersion('1.0.0+1');
    const b = parseVersion('1.0.0+2');
    expect(compareVersions(a, b)).toBe(0);
    expect(compareVersions(parseVersion('1.0.0-rc.1+zzz'), parseVersion('1.0.0-rc.1'))).toBe(0);
    expect([formatVersion(a), formatVersion(b)]).toEqual(['1.0.0+1', '1.0.0+2']);
  });
});

describe('parseVersionTolerant (blang ParseTolerant)', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['  v1.2.3\n', '1.2.3'],
    ['v1.2', '1.2.0'],
    ['1', '1.0.0'],
    ['01.002.0003', '1.2.3'],
    ['1.0.00', '1.0.0'],
    ['1.2.03-rc.1+b', '1.2.3-rc.1+b'],
    ['1.2.00-rc', '1.2.0-rc'], // stripping leaves "-rc", so a "0" is put back
    ['\u00a01.2.3\u3000', '1.2.3'], // Go's TrimSpace knows Unicode spaces
  ])('%j → %s', (input, expected) => {
    expect(formatVersion(parseVersionTolerant(input))).toBe(expected);
  });

  it.each([
    // Any multi-character part not starting with a digit gets a "0" prefixed.
    ['vv1.2.3', 'Invalid character(s) found in major number "0v1"'],
    ['V1.2.3', 'Invalid character(s) found in major number "0V1"'],
    ['1.2.x', 'Invalid character(s) found in patch number "x"'],
    ['1.2-rc', 'Short version cannot contain PreRelease/Build meta data'],
    ['1+b', 'Short version cannot contain PreRelease/Build meta data'],
    ['1.2.3-rc.01', 'Numeric PreRelease version must not contain leading zeroes "01"'],
    ['', 'strconv.ParseUint: parsing "": invalid syntax'],
    ['\ufeff1.2.3', 'Invalid character(s) found in major number "0\\ufeff1"'], // BOM is not a Go space
  ])('%j fails with %j', (input, message) => {
    expect(errorOf(() => parseVersionTolerant(input))).toBe(message);
  });
});

describe('Go helpers', () => {
  it('goQuote matches strconv.Quote', () => {
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('\t\n\r\x07\b\f\v')).toBe('"\\t\\n\\r\\a\\b\\f\\v"');
    expect(goQuote('\x00\x1f\x7f')).toBe('"\\x00\\x1f\\x7f"');
    expect(goQuote('é ü')).toBe('"é ü"');
    expect(goQuote('\u00a0\u200b\ufeff')).toBe('"\\u00a0\\u200b\\ufeff"');
    expect(goQuote('\u{e0001}😀')).toBe('"\\U000e0001😀"');
  });

  it('goQuote quotes each ASCII character alone as within text that needs escapes', () => {
    // Plain printable ASCII takes a short way; text with anything else goes rune by rune.
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      expect(goQuote(`a${ch}b`), `U+${c.toString(16)}`).toBe(goQuote(`a${ch}b\n`).replace(/\\n"$/, '"'));
    }
    expect(goQuote('kepler-operator.v0.20.0')).toBe('"kepler-operator.v0.20.0"');
  });

  it('goSplitN keeps the remainder in the last part', () => {
    expect(goSplitN('1.2.3.4', '.', 3)).toEqual(['1', '2', '3.4']);
    expect(goSplitN('', '.', 3)).toEqual(['']);
  });

  it('goTrimSpace trims Go spaces only', () => {
    expect(goTrimSpace('\u0085 x \u2028')).toBe('x');
    expect(goTrimSpace('\ufeffx')).toBe('\ufeffx');
  });
});

// ---- Differential test against opm: the bundle's olm.package version goes through blang Parse ----

interface OpmVerdict {
  ok: boolean;
  message: string;
}

/** Runs `opm validate` on a one-bundle catalog built from the given version and skipRange. */
async function opmValidate(version: string, skipRange?: string): Promise<OpmVerdict> {
  const dir = await mkdtemp(join(tmpdir(), 'semver-opm-'));
  const entry = skipRange === undefined ? { name: 'foo.v1.0.0' } : { name: 'foo.v1.0.0', skipRange };
  const blobs = [
    { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [entry] },
    {
      schema: 'olm.bundle',
      package: 'foo',
      name: 'foo.v1.0.0',
      image: 'quay.io/x/foo:v1',
      properties: [{ type: 'olm.package', value: { packageName: 'foo', version } }],
    },
  ];
  try {
    await writeFile(join(dir, 'catalog.json'), blobs.map((b) => JSON.stringify(b)).join('\n'));
    return await new Promise((resolve) => {
      execFile(OPM, ['validate', dir], (err, _stdout, stderr) => {
        const quotedMsg = /msg=("(?:[^"\\]|\\.)*")/.exec(stderr)?.[1];
        resolve({ ok: err === null, message: quotedMsg ? goUnquote(quotedMsg) : stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const DIFFERENTIAL_VERSIONS = [
  '1.0.0',
  '0.0.0',
  '1.2.3-alpha.1+build.5',
  '18446744073709551615.0.0',
  '18446744073709551616.0.0',
  '1.0.0-0',
  '1.0.0--',
  '1.0.0+b-c',
  '1.0.0+007',
  '1.0.0-rc.18446744073709551616',
  '',
  'v1.0.0',
  '1.0',
  '1',
  '01.0.0',
  '1.01.0',
  '1.0.01',
  '0x1.0.0',
  '1.0.0-',
  '1.0.0-01',
  '1.0.0-a_b',
  '1.0.0-a..b',
  '1.0.0+',
  '1.0.0+a_b',
  '1.0.0+a..b',
  '1..0',
  '1.0.',
  ' 1.0.0',
  '1.0.0\t',
  '1.0.0-é',
  '1.0.0.0',
  '1.0.0-rc.1+a+b',
];

describe.skipIf(!haveOpm)('differential: parseVersion vs opm validate', () => {
  it.each(DIFFERENTIAL_VERSIONS)('%j', async (version) => {
    const opm = await opmValidate(version);
    const ours = tryParseVersion(version);
    expect(ours.ok, opm.message).toBe(opm.ok);
    if (!ours.ok) {
      expect(opm.message).toBe(
        `error parsing bundle "foo.v1.0.0" version ${goQuote(version)}: ${ours.error}`,
      );
    }
  });
});
