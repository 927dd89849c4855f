import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goUnquote, haveOpm, OPM } from './helpers/oracle.js';
import {
  parseRange,
  RangeEvaluationError,
  RangeSyntaxError,
  tryParseRange,
} from '../src/catalog/versions/range.js';
import { goQuote } from '../src/catalog/go/gostrings.js';
import { parseVersion } from '../src/catalog/versions/semver.js';

function errorOf(range: string): string {
  try {
    parseRange(range);
  } catch (err) {
    expect(err).toBeInstanceOf(RangeSyntaxError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(range)} to be rejected`);
}

function matches(range: string, version: string): boolean {
  return parseRange(range).matches(parseVersion(version));
}

/** Accepted ranges and what blang really makes of them (VersionRange.toString). */
const ACCEPTED: [range: string, meaning: string][] = [
  ['>=1.0.0 <2.0.0', '>=1.0.0 <2.0.0'],
  ['>1.0.0 <=2.0.0 || >3.0.0 !4.2.1', '>1.0.0 <=2.0.0 || >3.0.0 !=4.2.1'],
  ['1.0.0', '=1.0.0'],
  ['==1.0.0', '=1.0.0'],
  ['!1.0.0', '!=1.0.0'],
  ['!=1.0.0-rc.1+b', '!=1.0.0-rc.1+b'],
  // Tokenising: no split after '>', '<', '='; short tokens dropped; spaces anywhere else split.
  ['>= 1.0.0 <  2.0.0', '>=1.0.0 <2.0.0'],
  ['  >=1.0.0   <2.0.0  ', '>=1.0.0 <2.0.0'],
  ['! 1.2.3', '=1.2.3'],
  ['1.0.0 - 2.0.0', '=1.0.0 =2.0.0'],
  ['x >=1.0.0 * 1 <2.0.0', '>=1.0.0 <2.0.0'],
  ['1.0.0 >', '=1.0.0'],
  ['\t1.0.0', '=1.0.0'], // a tab before the digit is trimmed off the (empty) operator
  // Wildcards as blang expands them, bugs included.
  ['1.2.x', '>=1.2.0 <1.3.0'],
  ['=1.2.x', '>=1.2.0 <1.3.0'],
  ['1.x', '>=1.0.0 <2.0.0'],
  ['1.x.x', '>=1.0.0 <1.1.0'],
  ['>1.2.x', '>=1.3.0'],
  ['>=1.2.x', '>=1.2.0'],
  ['<1.2.x', '<1.2.0'],
  ['<=1.2.x', '<1.3.0'],
  ['>1.x', '>=2.0.0'],
  ['<=1.x', '<2.0.0'],
  ['!=1.2.x', '<1.2.0 >=1.3.0'],
  ['!1.x', '<1.0.0 >=2.0.0'],
  ['^1.x', '=1.0.0'],
  ['~1.2.x', '=1.2.0'],
  ['~1.0.0-x', '=1.0.0-x'], // any token with an x escapes the comparator check
  ['>=1.x.3', '>=1.0.3'],
  ['>=1.2.x-rc', '>=1.2.0-rc'],
  ['>=1.0.0+linux', '>=1.0.0+linux'],
  ['<1.0.0-xyz', '<1.0.0-xyz'],
  ['>1.-1.x', '>=1.0.0'], // strconv.Atoi accepts a sign
  ['>1.+1.x', '>=1.2.0'],
  ['>=1.0.0 || <0.1.0', '>=1.0.0 || <0.1.0'],
  ['1.0.0 || || 2.0.0', '=1.0.0 || <empty group> || =2.0.0'],
];

/** Rejected ranges with blang's exact message. */
const REJECTED: [range: string, message: string][] = [
  ['', "Last element in range is '||'"],
  [' ', "Last element in range is '||'"],
  ['*', "Last element in range is '||'"],
  ['x', "Last element in range is '||'"],
  ['>=1.0.0 <2.0.0 ||', "Last element in range is '||'"],
  ['||', "First element in range is '||'"],
  ['|| >=1.0.0', "First element in range is '||'"],
  ['~1.1.0', 'Could not parse Range "~1.1.0": Could not parse comparator "~" in "~1.1.0"'],
  ['~1.2', 'Could not parse Range "~1.2": Could not parse comparator "~" in "~1.2"'],
  ['^1.2.3', 'Could not parse Range "^1.2.3": Could not parse comparator "^" in "^1.2.3"'],
  ['v1.0.0', 'Could not parse Range "v1.0.0": Could not parse comparator "v" in "v1.0.0"'],
  ['=>1.0.0', 'Could not parse Range "=>1.0.0": Could not parse comparator "=>" in "=>1.0.0"'],
  ['1.0.0 ||2.0.0', 'Could not parse Range "||2.0.0": Could not parse comparator "||" in "||2.0.0"'],
  ['é1.0.0', 'Could not parse Range "é1.0.0": Could not parse comparator "é" in "é1.0.0"'],
  [
    '1.2.X',
    'Could not parse Range "1.2.X": Could not parse version "1.2.X" in "1.2.X": Invalid character(s) found in patch number "X"',
  ],
  [
    '1.2.*',
    'Could not parse Range "1.2.*": Could not parse version "1.2.*" in "1.2.*": Invalid character(s) found in patch number "*"',
  ],
  [
    '>=1.2',
    'Could not parse Range ">=1.2": Could not parse version "1.2" in ">=1.2": No Major.Minor.Patch elements found',
  ],
  [
    '>=01.0.0',
    'Could not parse Range ">=01.0.0": Could not parse version "01.0.0" in ">=01.0.0": Major number must not contain leading zeroes "01"',
  ],
  [
    '<2.0.0||>=3.0.0',
    'Could not parse Range "<2.0.0||>=3.0.0": Could not parse version "2.0.0||>=3.0.0" in "<2.0.0||>=3.0.0": Invalid character(s) found in patch number "0||>=3.0.0"',
  ],
  [
    '>=1.0.0, <2.0.0',
    'Could not parse Range ">=1.0.0,": Could not parse version "1.0.0," in ">=1.0.0,": Invalid character(s) found in patch number "0,"',
  ],
  [
    '>=1.0.0\t<2.0.0',
    'Could not parse Range ">=1.0.0\\t<2.0.0": Could not parse version "1.0.0\\t<2.0.0" in ">=1.0.0\\t<2.0.0": Invalid character(s) found in patch number "0\\t<2.0.0"',
  ],
  // An x that is not a wildcard: operators that need a "next" version lose their version.
  ['1.0.0-xyz', 'Could not get version from string: "<"'],
  ['>1.0.0+linux', 'Could not get version from string: ">="'],
  ['<=1.0.0+x86', 'Could not get version from string: "<"'],
  ['!=1.0.0-x', 'Could not get version from string: ">="'],
  ['1.x.3', 'Could not get version from string: "<"'],
  ['<=1.9223372036854775808.x', 'Could not get version from string: "<"'], // Atoi overflow
  [
    '>1.9223372036854775807.x', // Atoi+1 wraps to a negative int64
    'Could not parse Range ">=1.-9223372036854775808.0": Could not parse version "1.-9223372036854775808.0" in ">=1.-9223372036854775808.0": Invalid character(s) found in minor number "-9223372036854775808"',
  ],
  [
    '>=1.0.0-beta.x1', // the first ".x" becomes ".0", even inside a prerelease
    'Could not parse Range ">=1.0.0-beta.01": Could not parse version "1.0.0-beta.01" in ">=1.0.0-beta.01": Numeric PreRelease version must not contain leading zeroes "01"',
  ],
  ['xx', 'Could not get version from string: "xx"'],
  ['>=x', 'Could not get version from string: ">=x"'],
  ['1.0.0 >=', 'Could not get version from string: ">="'],
  ['é', 'Could not get version from string: "é"'], // 2 bytes in Go, so not dropped
  [
    '>=١.0.0', // unicode.IsDigit: the operator ends at any Unicode decimal digit
    'Could not parse Range ">=١.0.0": Could not parse version "١.0.0" in ">=١.0.0": Invalid character(s) found in major number "١"',
  ],
  // Wildcard expansion runs over all groups before any comparator is parsed.
  ['~1.0.0 || xx', 'Could not get version from string: "xx"'],
  // And comparators are parsed left to right.
  ['~1.0.0 >=1.2', 'Could not parse Range "~1.0.0": Could not parse comparator "~" in "~1.0.0"'],
];

describe('parseRange: accepted ranges and their real meaning', () => {
  it.each(ACCEPTED)('%j means %j', (range, meaning) => {
    expect(parseRange(range).toString()).toBe(meaning);
  });

  it('exposes the parsed structure', () => {
    const parsed = parseRange('>=1.0.0 <2.0.0 || 3.0.0');
    expect(parsed.source).toBe('>=1.0.0 <2.0.0 || 3.0.0');
    expect(parsed.groups.map((g) => g.map((c) => c.op))).toEqual([['>=', '<'], ['=']]);
    expect(parsed.groups[1]?.[0]?.version).toEqual(parseVersion('3.0.0'));
    expect(parsed.hasEmptyGroup).toBe(false);
  });
});

describe('parseRange: blang error messages', () => {
  it.each(REJECTED)('%j fails with %j', (range, message) => {
    expect(errorOf(range)).toBe(message);
  });

  it('tryParseRange returns the range or the error text', () => {
    const ok = tryParseRange('1.x');
    expect(ok.ok && ok.range.toString()).toBe('>=1.0.0 <2.0.0');
    expect(tryParseRange('~1.1.0')).toEqual({
      ok: false,
      error: 'Could not parse Range "~1.1.0": Could not parse comparator "~" in "~1.1.0"',
    });
  });
});

describe('VersionRange.matches', () => {
  it.each([
    // blang's own doc example
    ['>1.0.0 <2.0.0 || >3.0.0 !4.2.1', ['1.2.3', '1.9.9', '3.1.1'], ['4.2.1', '2.1.1', '1.0.0', '3.0.0']],
    ['>=1.0.0 <2.0.0', ['1.0.0', '1.5.0', '1.99.99'], ['0.9.9', '2.0.0', '1.0.0-rc.1']],
    // No prerelease exclusion: prereleases are just lower than their release.
    ['<1.2.3', ['1.2.3-rc.1', '0.0.0-0'], ['1.2.3']],
    ['>=1.0.0 <2.0.0', ['1.5.0-rc.1', '1.0.1-0'], []],
    ['<2.0.0', ['2.0.0-rc.1'], ['2.0.0']],
    ['1.x', ['1.0.0', '1.99.0', '2.0.0-rc.1'], ['2.0.0', '0.9.9', '1.0.0-rc.1']],
    ['1.x.x', ['1.0.0', '1.0.99'], ['1.1.0', '1.5.0']],
    ['1.2.x', ['1.2.0', '1.2.99', '1.3.0-0'], ['1.3.0', '1.1.9']],
    ['^1.x', ['1.0.0', '1.0.0+b'], ['1.0.1', '1.5.0']],
    ['!=1.2.x', [], ['1.1.0', '1.2.5', '1.3.0', '0.0.1', '9.9.9']],
    ['!1.2.3', ['1.2.4', '1.2.3-rc.1'], ['1.2.3', '1.2.3+b']],
    ['==1.2.3', ['1.2.3'], ['1.2.4']],
    ['1.0.0 - 2.0.0', [], ['1.0.0', '1.5.0', '2.0.0']],
    ['! 1.2.3', ['1.2.3'], ['1.2.4']],
    // Build metadata is ignored on both sides.
    ['=1.0.0+a', ['1.0.0', '1.0.0+b'], ['1.0.1']],
    ['>1.0.0+a', [], ['1.0.0+b']],
    ['>1.0.0-rc.1', ['1.0.0-rc.2', '1.0.0-rc.1.1', '1.0.0'], ['1.0.0-rc.1', '1.0.0-rc.0', '1.0.0-beta']],
    ['<1.0.0-10', ['1.0.0-9', '1.0.0-0'], ['1.0.0-10', '1.0.0-a']],
  ] as [string, string[], string[]][])('%j', (range, inside, outside) => {
    for (const v of inside) expect(matches(range, v), `${v} should match`).toBe(true);
    for (const v of outside) expect(matches(range, v), `${v} should not match`).toBe(false);
  });

  it('throws where blang would call the nil Range of an empty || group', () => {
    const range = parseRange('1.0.0 || || 2.0.0');
    expect(range.hasEmptyGroup).toBe(true);
    expect(range.matches(parseVersion('1.0.0'))).toBe(true); // short-circuits before the empty group
    expect(() => range.matches(parseVersion('2.0.0'))).toThrow(RangeEvaluationError);
  });
});

// ---- Differential test against opm: a channel entry's skipRange goes through blang ParseRange ----

interface OpmRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs opm on a one-channel catalog with one bundle `foo.v<version>` per version; only the
 * first channel entry carries `skipRange`.
 */
async function runOpm(command: string[], skipRange: string, versions: string[]): Promise<OpmRun> {
  const dir = await mkdtemp(join(tmpdir(), 'range-opm-'));
  const entries = versions.map((v, i) =>
    i === 0 ? { name: `foo.v${v}`, skipRange } : { name: `foo.v${v}` },
  );
  const bundles = versions.map((version) => ({
    schema: 'olm.bundle',
    package: 'foo',
    name: `foo.v${version}`,
    image: 'quay.io/x/foo:v1',
    properties: [{ type: 'olm.package', value: { packageName: 'foo', version } }],
  }));
  const blobs = [
    { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'foo', name: 'stable', entries },
    ...bundles,
  ];
  try {
    await writeFile(join(dir, 'catalog.json'), blobs.map((b) => JSON.stringify(b)).join('\n'));
    return await new Promise((resolve) => {
      execFile(OPM, [...command, dir], (err, stdout, stderr) =>
        resolve({ ok: err === null, stdout, stderr }),
      );
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `opm validate` verdict and its logrus message, unquoted. */
async function opmValidateSkipRange(skipRange: string): Promise<{ ok: boolean; message: string }> {
  const run = await runOpm(['validate'], skipRange, ['1.0.0']);
  const quotedMsg = /msg=("(?:[^"\\]|\\.)*")/.exec(run.stderr)?.[1];
  return { ok: run.ok, message: quotedMsg ? goUnquote(quotedMsg) : run.stderr };
}

/** Versions whose entries `opm alpha render-graph` links by skipRange, i.e. blang says match. */
async function opmSkipRangeMatches(skipRange: string, versions: string[]): Promise<string[]> {
  const run = await runOpm(['alpha', 'render-graph'], skipRange, versions);
  expect(run.ok, run.stderr).toBe(true);
  const edgeSources = run.stdout.matchAll(/^\s*foo-stable-foo\.v([^[]+)\["[^"]*"\]-- "skipRange\(/gm);
  return [...edgeSources].map((m) => m[1]!);
}

// opm skips an empty skipRange, so '' is the one case not compared.
const DIFFERENTIAL_RANGES = [...ACCEPTED, ...REJECTED].map(([range]) => range).filter((r) => r !== '');

describe.skipIf(!haveOpm)('differential: parseRange vs opm validate', () => {
  it.each(DIFFERENTIAL_RANGES)('%j', async (range) => {
    const opm = await opmValidateSkipRange(range);
    const ours = tryParseRange(range);
    expect(ours.ok, opm.message).toBe(opm.ok);
    if (!ours.ok)
      expect(opm.message.endsWith(`invalid skipRange ${goQuote(range)}: ${ours.error}`)).toBe(true);
  });
});

// Versions on both sides of every bound used in ACCEPTED.
const GRAPH_VERSIONS = [
  '0.0.1',
  '0.1.0',
  '0.9.9',
  '1.0.0-0',
  '1.0.0-rc.1',
  '1.0.0-x',
  '1.0.0',
  '1.0.0+b',
  '1.0.1',
  '1.0.3',
  '1.1.0',
  '1.2.0-rc',
  '1.2.0',
  '1.2.3-rc.1',
  '1.2.3',
  '1.2.4',
  '1.3.0-0',
  '1.3.0',
  '1.99.0',
  '2.0.0-rc.1',
  '2.0.0',
  '2.1.1',
  '3.0.0',
  '3.1.1',
  '4.2.1',
  '10.0.0',
];

const EVALUABLE_RANGES = ACCEPTED.filter(([, meaning]) => !meaning.includes('<empty group>')).map(([r]) => r);

describe.skipIf(!haveOpm)('differential: VersionRange.matches vs opm alpha render-graph', () => {
  it.each(EVALUABLE_RANGES)('%j', async (range) => {
    const parsed = parseRange(range);
    const ours = GRAPH_VERSIONS.filter((v) => parsed.matches(parseVersion(v)));
    expect(await opmSkipRangeMatches(range, GRAPH_VERSIONS)).toEqual(ours);
  });

  it('reads the edges from the graph (a known answer, so the comparison above is not vacuous)', async () => {
    expect(await opmSkipRangeMatches('1.x.x', GRAPH_VERSIONS)).toEqual([
      '1.0.0',
      '1.0.0+b',
      '1.0.1',
      '1.0.3',
    ]);
  });

  it('opm panics evaluating an empty || group, where matches throws', async () => {
    const run = await runOpm(['alpha', 'render-graph'], '1.0.0 || || 2.0.0', ['2.0.0']);
    expect(run.ok).toBe(false);
    expect(run.stderr).toContain('nil pointer dereference');
    expect(() => parseRange('1.0.0 || || 2.0.0').matches(parseVersion('2.0.0'))).toThrow(
      RangeEvaluationError,
    );
  });
});
