import { describe, expect, it } from 'vitest';
import { lintSkipRange, RANGE_LINT_LEVELS } from '../src/catalog/versions/range-lint.js';
import type { RangeLint } from '../src/catalog/versions/range-lint.js';
import { parseRange, tryParseRange } from '../src/catalog/versions/range.js';
import { parseMastermindsConstraint } from '../src/catalog/versions/masterminds.js';
import { parseVersion } from '../src/catalog/versions/semver.js';

const v = (s: string) => parseVersion(s);

/** Release versions 0-3 × 0-3 × 0-3 plus a few far ones: what "intended" is checked on. */
const GRID: string[] = [];
for (let major = 0; major <= 3; major++) {
  for (let minor = 0; minor <= 3; minor++) {
    for (let patch = 0; patch <= 3; patch++) GRID.push(`${major}.${minor}.${patch}`);
  }
}
GRID.push('1.10.0', '1.2.10', '10.0.0', '0.10.0');

function rulesOf(lints: RangeLint[]): string[] {
  return lints.map((l) => l.rule);
}

/** The single suggestion every lint of this range carries (they all name the same rewrite). */
function suggestionOf(lints: RangeLint[]): string | undefined {
  const all = new Set(lints.map((l) => l.suggestion));
  expect(all.size).toBe(1);
  return [...all][0];
}

/**
 * The suggestion is a valid blang range that selects, on every version of the grid (and
 * `extra`), exactly what the intended Masterminds constraint selects.
 */
function expectMeans(suggestion: string | undefined, intended: string, extra: string[] = []): void {
  expect(suggestion).toBeDefined();
  const blang = tryParseRange(suggestion!);
  expect(blang.ok, `${suggestion} must parse`).toBe(true);
  if (!blang.ok) return;
  expect(blang.range.hasEmptyGroup).toBe(false);
  const mm = parseMastermindsConstraint(intended);
  if (!mm.ok) throw new Error(`${intended}: ${mm.error}`);
  const differing = [...GRID, ...extra].filter((s) => blang.range.matches(v(s)) !== mm.range.matches(v(s)));
  expect(differing, `${suggestion} vs Masterminds ${intended}`).toEqual([]);
}

interface Case {
  range: string;
  rules: string[];
  suggestion: string | null;
  /** The author's meaning as a Masterminds constraint (defaults to the range itself). */
  intended?: string;
  /** More versions to compare on (prereleases, for constraints that name one). */
  extra?: string[];
}

const CASES: Case[] = [
  // ---- errors: forms blang accepts but reads differently ----
  { range: '1.0.0 - 2.0.0', rules: ['R-HYPHEN-RANGE'], suggestion: '>=1.0.0 <=2.0.0' },
  { range: '1.0.0 - 2.0.0 || >=3.0.0', rules: ['R-HYPHEN-RANGE'], suggestion: '>=1.0.0 <=2.0.0 || >=3.0.0' },
  {
    range: '1.2 - 1.4',
    rules: ['R-HYPHEN-RANGE', 'R-FOREIGN-SYNTAX'],
    suggestion: '>=1.2.0 <1.5.0',
  },
  {
    range: 'v1.0.0 - v2.0.0',
    rules: ['R-HYPHEN-RANGE', 'R-FOREIGN-SYNTAX'],
    suggestion: '>=1.0.0 <=2.0.0',
  },
  { range: '! 1.2.3', rules: ['R-BANG-SPACE'], suggestion: '!=1.2.3', intended: '!=1.2.3' },
  { range: '! =1.2.3', rules: ['R-BANG-SPACE'], suggestion: '!=1.2.3', intended: '!=1.2.3' },
  { range: '! 1.2.x', rules: ['R-BANG-SPACE'], suggestion: '<1.2.0 || >=1.3.0', intended: '!=1.2.x' },
  {
    range: '>=1.0.0 <2.0.0 ! 1.5.0',
    rules: ['R-BANG-SPACE'],
    suggestion: '>=1.0.0 <2.0.0 !=1.5.0',
    intended: '>=1.0.0 <2.0.0 !=1.5.0',
  },
  { range: '1.x.x', rules: ['R-X-X'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '=1.x.x', rules: ['R-X-X'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '==1.x.x', rules: ['R-X-X'], suggestion: '>=1.0.0 <2.0.0', intended: '1.x.x' },
  { range: '>1.x.x', rules: ['R-X-X'], suggestion: '>=2.0.0' },
  { range: '<=1.x.x', rules: ['R-X-X'], suggestion: '<2.0.0' },
  { range: '^1.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '~1.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '~1.2.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.2.0 <1.3.0' },
  { range: '^0.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=0.0.0 <1.0.0' },
  { range: '^1.x.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '~> 1.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '=>1.x', rules: ['R-CARET-TILDE-WILDCARD'], suggestion: '>=1.0.0' },
  { range: '!=1.2.x', rules: ['R-NOT-EQUAL-WILDCARD'], suggestion: '<1.2.0 || >=1.3.0' },
  { range: '!1.x', rules: ['R-NOT-EQUAL-WILDCARD'], suggestion: '<1.0.0 || >=2.0.0', intended: '!=1.x' },
  { range: '!=1.x.x', rules: ['R-NOT-EQUAL-WILDCARD'], suggestion: '<1.0.0 || >=2.0.0' },
  {
    range: '>=1.0.0 <2.0.0 !=1.5.x',
    rules: ['R-NOT-EQUAL-WILDCARD'],
    suggestion: '>=1.0.0 <1.5.0 || >=1.6.0 <2.0.0',
  },
  {
    range: '>=1.0.0 <2.0.0 || || >=3.0.0',
    rules: ['R-EMPTY-GROUP'],
    suggestion: '>=1.0.0 <2.0.0 || >=3.0.0',
    intended: '>=1.0.0 <2.0.0 || >=3.0.0',
  },
  {
    range: '>=1.0.0 <2.0.0 ||',
    rules: ['R-EMPTY-GROUP'],
    suggestion: '>=1.0.0 <2.0.0',
    intended: '>=1.0.0 <2.0.0',
  },
  { range: '|| >=3.0.0', rules: ['R-EMPTY-GROUP'], suggestion: '>=3.0.0', intended: '>=3.0.0' },
  { range: '||', rules: ['R-EMPTY-GROUP'], suggestion: null },
  {
    range: '<1.0.0 || * || >=3.0.0',
    rules: ['R-EMPTY-GROUP', 'R-FOREIGN-SYNTAX'],
    suggestion: '<1.0.0 || >=0.0.0',
  },
  // x in a prerelease or build part (blang expands it as a wildcard anyway)
  {
    range: '1.2.3-xyz',
    rules: ['R-X-IN-PRERELEASE'],
    suggestion: '>=1.2.3-xyz <1.2.3-xyz.0',
    extra: ['1.2.3-xyz', '1.2.3-xyz.0', '1.2.3-xyz.1', '1.2.3-xy', '1.2.3-y', '1.2.3-0'],
  },
  {
    range: '>1.2.3-xyz',
    rules: ['R-X-IN-PRERELEASE'],
    suggestion: '>=1.2.3-xyz.0',
    extra: ['1.2.3-xyz', '1.2.3-xyz.0', '1.2.3-y', '1.2.3-xy'],
  },
  {
    range: '!=1.2.3-xyz',
    rules: ['R-X-IN-PRERELEASE'],
    suggestion: '<1.2.3-xyz || >=1.2.3-xyz.0',
    extra: ['1.2.3-xyz', '1.2.3-xyz.0', '1.2.3-y', '1.2.3-xy'],
  },
  { range: '=1.2.3+x86', rules: ['R-X-IN-PRERELEASE'], suggestion: '=1.2.3' },
  // blang rewrites the first `.x`, even in a prerelease; that version cannot be written in blang.
  { range: '>=1.2.3-beta.xyz', rules: ['R-X-IN-PRERELEASE'], suggestion: null },
  { range: '>=1.0.0-beta.x1', rules: ['R-X-IN-PRERELEASE'], suggestion: null },

  // ---- warnings: Masterminds/npm syntax ----
  { range: '>=1.0.0, <2.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '>=1.0.0,<2.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '~1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <1.3.0' },
  { range: '~1.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.3 <1.3.0' },
  { range: '~>1.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.3 <1.3.0' },
  { range: '~1', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '^1.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.3 <2.0.0' },
  { range: '^1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <2.0.0' },
  { range: '^0.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=0.2.3 <0.3.0' },
  { range: '^0.0.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=0.0.3 <0.0.4' },
  { range: '^0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=0.0.0 <1.0.0' },
  { range: '~ 1.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.3 <1.3.0' },
  { range: '^ 1.2.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.3 <2.0.0' },
  { range: 'v1.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '1.0.0' },
  { range: '>=v1.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0' },
  { range: '>=v1.0.0 <v2.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '1.2.X', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <1.3.0' },
  { range: '1.X', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '1.2.*', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <1.3.0' },
  { range: '<=1.*', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<2.0.0' },
  { range: '*', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=0.0.0' },
  { range: 'x.x.x', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=0.0.0' },
  { range: '>=1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0' },
  { range: '>1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.3.0' },
  { range: '<=1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<1.3.0' },
  { range: '<1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<1.2.0' },
  { range: '1.2', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <1.3.0' },
  { range: '>=1', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0' },
  { range: '=>1.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0' },
  { range: '=<1.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<=1.0.0' },
  { range: '>=01.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0' },
  { range: '1.x.3', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '<2.0.0||>=3.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<2.0.0 || >=3.0.0' },
  { range: '<2.0.0 ||>=3.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '<2.0.0 || >=3.0.0' },
  { range: '>=1.0.0\t<2.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  {
    range: '>=1.0.0 <2.0.0\t|| >=3.0.0',
    rules: ['R-FOREIGN-SYNTAX'],
    suggestion: '>=1.0.0 <2.0.0 || >=3.0.0',
  },
  // blang silently drops the one-character terms here (`x`, `*`, `1`), so it means `>=1.0.0 <2.0.0`
  { range: 'x >=1.0.0 * <2.0.0', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  { range: '>=0.5.0 1', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.0.0 <2.0.0' },
  {
    range: '>=1.0.0 <2.0.0 !=1.2.*',
    rules: ['R-FOREIGN-SYNTAX'],
    suggestion: '>=1.0.0 <1.2.0 || >=1.3.0 <2.0.0',
  },
  { range: '~1.2 || ^3.1', rules: ['R-FOREIGN-SYNTAX'], suggestion: '>=1.2.0 <1.3.0 || >=3.1.0 <4.0.0' },
];

describe('lintSkipRange: every rule, with a verified blang suggestion', () => {
  it.each(CASES)('$range', (c) => {
    const lints = lintSkipRange(c.range);
    expect(rulesOf(lints)).toEqual(c.rules);
    for (const l of lints) {
      expect(l.level).toBe(RANGE_LINT_LEVELS[l.rule as keyof typeof RANGE_LINT_LEVELS]);
      expect(l.message).not.toBe('');
    }
    const suggestion = suggestionOf(lints);
    if (c.suggestion === null) {
      expect(suggestion).toBeUndefined();
      return;
    }
    expect(suggestion).toBe(c.suggestion);
    expectMeans(suggestion, c.intended ?? c.range, c.extra);
    // The suggestion is itself clean.
    expect(lintSkipRange(suggestion!)).toEqual([]);
  });

  it('levels: errors for silent misreadings and empty groups, a warning for foreign syntax', () => {
    expect(RANGE_LINT_LEVELS).toEqual({
      'R-HYPHEN-RANGE': 'error',
      'R-BANG-SPACE': 'error',
      'R-X-X': 'error',
      'R-CARET-TILDE-WILDCARD': 'error',
      'R-NOT-EQUAL-WILDCARD': 'error',
      'R-X-IN-PRERELEASE': 'error',
      'R-MATCHES-NOTHING': 'error',
      'R-EMPTY-GROUP': 'error',
      'R-FOREIGN-SYNTAX': 'warning',
    });
    // errors come first
    expect(rulesOf(lintSkipRange('v1.0.0 - 2.0.0'))).toEqual(['R-HYPHEN-RANGE', 'R-FOREIGN-SYNTAX']);
  });

  it('messages say what blang makes of the range', () => {
    const [hyphen] = lintSkipRange('1.0.0 - 2.0.0');
    expect(hyphen!.message).toContain('`=1.0.0 =2.0.0`');
    expect(hyphen!.message).toContain('matches nothing');
    expect(lintSkipRange('! 1.2.3')[0]!.message).toContain('`=1.2.3`');
    expect(lintSkipRange('1.x.x')[0]!.message).toContain('`>=1.0.0 <1.1.0`');
    expect(lintSkipRange('^1.x')[0]!.message).toContain('`=1.0.0`');
    expect(lintSkipRange('~1.x')[0]!.message).toContain('`=1.0.0`');
    expect(lintSkipRange('!=1.2.x')[0]!.message).toContain('`<1.2.0 >=1.3.0`');
    expect(lintSkipRange('>=1.0.0 <2.0.0 || || >=3.0.0')[0]!.message).toContain('panics');
    const foreign = lintSkipRange('>=v1.0, <2')[0]!;
    expect(foreign.message).toContain('comma');
    expect(foreign.message).toContain('`v` prefix (`v1.0`)');
    expect(foreign.message).toContain('short version (`v1.0`, `2`)');
    expect(foreign.message).toContain('B-SKIPRANGE');
    expect(foreign.suggestion).toBe('>=1.0.0 <2.0.0');
    expect(lintSkipRange('~ 1.2.3')[0]!.message).toContain('blang reads the range as `=1.2.3`');
    expect(lintSkipRange('x >=1.0.0 * <2.0.0')[0]!.message).toContain('happens to read it as meant');
  });

  it('an invalid range in foreign syntax gets the fix even though blang rejects it', () => {
    for (const range of [
      'v1.0.0',
      '~1.2',
      '^1.2.3',
      '1.2.X',
      '1.2.*',
      '>=1.2',
      '<2.0.0||>=3.0.0',
      '>=1.0.0\t<2.0.0',
    ]) {
      expect(tryParseRange(range).ok, range).toBe(false);
      const lints = lintSkipRange(range);
      expect(rulesOf(lints), range).toEqual(['R-FOREIGN-SYNTAX']);
      expect(tryParseRange(lints[0]!.suggestion!).ok).toBe(true);
    }
  });

  it('gives no suggestion when the intent is unclear, and no lint for text that is not range syntax', () => {
    expect(lintSkipRange('foo')).toEqual([]);
    expect(lintSkipRange('>=1.0.0 foo')).toEqual([]);
    const commaGarbage = lintSkipRange('>=1.0.0, foo');
    expect(rulesOf(commaGarbage)).toEqual(['R-FOREIGN-SYNTAX']);
    expect(commaGarbage[0]!.suggestion).toBeUndefined();
  });
});

describe('R-MATCHES-NOTHING', () => {
  const published = ['1.0.0', '1.1.0', '1.2.0', '1.2.1'].map(v);

  it('fires when no published version is in the range', () => {
    const lints = lintSkipRange('>=2.0.0 <3.0.0', published);
    expect(rulesOf(lints)).toEqual(['R-MATCHES-NOTHING']);
    expect(lints[0]!.message).toContain('none of the 4 versions');
    expect(lints[0]!.message).toContain('1.0.0 … 1.2.1');
    expect(lints[0]!.suggestion).toBeUndefined();
  });

  it('does not fire when one published version matches, or when nothing was published', () => {
    expect(lintSkipRange('>=1.2.1 <2.0.0', published)).toEqual([]);
    expect(lintSkipRange('>=2.0.0 <3.0.0', [])).toEqual([]);
    expect(lintSkipRange('>=2.0.0 <3.0.0')).toEqual([]);
  });

  it('names the quirk as well as the empty result', () => {
    // blang: >=1.0.0 <1.1.0 covers only 1.0.x; the published 1.x versions are 1.1.0 and later
    const lints = lintSkipRange('1.x.x', ['1.1.0', '1.2.0'].map(v));
    expect(rulesOf(lints)).toEqual(['R-X-X', 'R-MATCHES-NOTHING']);
    expect(lints[1]!.suggestion).toBe('>=1.0.0 <2.0.0');
  });

  it('fires without published versions for a range no version can match', () => {
    expect(rulesOf(lintSkipRange('>=2.0.0 <1.0.0'))).toEqual(['R-MATCHES-NOTHING']);
    expect(rulesOf(lintSkipRange('=1.0.0 !=1.0.0'))).toEqual(['R-MATCHES-NOTHING']);
    expect(rulesOf(lintSkipRange('>1.0.0 <1.0.1-0'))).toEqual(['R-MATCHES-NOTHING']);
    // but not twice for a form whose own rule already says it matches nothing
    expect(rulesOf(lintSkipRange('1.0.0 - 2.0.0'))).toEqual(['R-HYPHEN-RANGE']);
    expect(rulesOf(lintSkipRange('!=1.2.x'))).toEqual(['R-NOT-EQUAL-WILDCARD']);
    // `>1.0.0 <1.0.1` still has 1.0.1-rc.1 in it (blang does not exclude prereleases)
    expect(lintSkipRange('>1.0.0 <1.0.1')).toEqual([]);
  });

  it('skips an empty group (which blang would panic on) instead of throwing', () => {
    const lints = lintSkipRange('>=5.0.0 || || >=6.0.0', published);
    expect(rulesOf(lints)).toEqual(['R-EMPTY-GROUP', 'R-MATCHES-NOTHING']);
  });
});

describe('clean ranges', () => {
  const clean = [
    '>=1.0.0 <2.0.0',
    '<1.2.3',
    '>=1.0.0 <2.0.0 || >=3.0.0',
    '>=4.1.0 <4.2.3',
    '>1.0.0 <=2.0.0 || >3.0.0 !4.2.1',
    '>=1.0.0 <2.0.0 !1.2.3',
    '!=1.2.3',
    '!1.2.3',
    '==1.2.3',
    '=1.2.3',
    '1.2.3',
    '>= 1.0.0 <  2.0.0', // no split after '>', '<', '='
    '  >=1.0.0   <2.0.0  ',
    '1.x', // blang's own wildcards
    '1.2.x',
    '>1.x',
    '<=1.2.x',
    '=1.x',
    '==1.2.x',
    '>=1.x.x', // 1.x.x, but blang's reading happens to agree
    '<1.x.x',
    '>=1.0.0-rc.1 <2.0.0-0',
    '>=1.0.0+build.1',
    '>=1.2.3+x86', // `x` in build metadata, harmless with `>=`
    '<1.0.0-xyz',
  ];
  it.each(clean)('%j has no lint', (range) => {
    expect(tryParseRange(range).ok).toBe(true);
    expect(lintSkipRange(range)).toEqual([]);
    expect(lintSkipRange(range, [v('1.0.0'), v('1.2.3'), v('3.0.0')]).map((l) => l.rule)).not.toContain(
      'R-HYPHEN-RANGE',
    );
  });

  it('an empty skipRange is no skipRange', () => {
    expect(lintSkipRange('')).toEqual([]);
  });
});

describe('docs/olm-semantics.md 7.1: every blang quirk', () => {
  it('1. tokens split on spaces only, never after >, < or =; short tokens dropped; inner spaces deleted', () => {
    expect(lintSkipRange('>= 1.0.0 < 2.0.0')).toEqual([]);
    expect(rulesOf(lintSkipRange('1.0.0 - 2.0.0'))).toEqual(['R-HYPHEN-RANGE']); // `-` dropped
    expect(rulesOf(lintSkipRange('! 1.2.3'))).toEqual(['R-BANG-SPACE']); // `!` dropped
    expect(rulesOf(lintSkipRange('>=1.0.0 *'))).toEqual(['R-FOREIGN-SYNTAX']); // `*` dropped
    expect(rulesOf(lintSkipRange('>=0.5.0 1'))).toEqual(['R-FOREIGN-SYNTAX']); // bare `1` dropped
    expect(lintSkipRange('>=0.5.0 1')[0]!.message).toContain('one-character term, which blang ignores (`1`)');
  });

  it('2. || first, last, empty, and an empty range', () => {
    expect(rulesOf(lintSkipRange('|| >=1.0.0'))).toEqual(['R-EMPTY-GROUP']);
    expect(rulesOf(lintSkipRange('>=1.0.0 ||'))).toEqual(['R-EMPTY-GROUP']);
    expect(rulesOf(lintSkipRange('>=1.0.0 || || <0.5.0'))).toEqual(['R-EMPTY-GROUP']);
    expect(parseRange('>=1.0.0 || || <0.5.0').hasEmptyGroup).toBe(true);
    expect(tryParseRange('*').ok).toBe(false); // "Last element in range is '||'"
    expect(lintSkipRange('*')[0]!.message).toContain("Last element in range is '||'");
  });

  it('3. wildcards: x anywhere, 1.x.x, operator mapping, != never satisfiable, ^/~ dropped', () => {
    expect(lintSkipRange('1.x')).toEqual([]);
    expect(lintSkipRange('1.2.x')).toEqual([]);
    expect(lintSkipRange('>1.2.x <=1.4.x')).toEqual([]); // >= 1.3.0, < 1.5.0 as meant
    expect(rulesOf(lintSkipRange('1.x.x'))).toEqual(['R-X-X']);
    expect(rulesOf(lintSkipRange('!=1.2.x'))).toEqual(['R-NOT-EQUAL-WILDCARD']);
    expect(rulesOf(lintSkipRange('!1.2.x'))).toEqual(['R-NOT-EQUAL-WILDCARD']);
    expect(rulesOf(lintSkipRange('^1.x'))).toEqual(['R-CARET-TILDE-WILDCARD']);
    expect(rulesOf(lintSkipRange('~1.x'))).toEqual(['R-CARET-TILDE-WILDCARD']);
    // without a wildcard, ^ and ~ are plain parse errors
    expect(rulesOf(lintSkipRange('^1.2.3'))).toEqual(['R-FOREIGN-SYNTAX']);
    expect(rulesOf(lintSkipRange('~1.2.3'))).toEqual(['R-FOREIGN-SYNTAX']);
    // the first `.x` is flattened even inside a prerelease
    expect(parseRange('>=1.2.3-beta.xyz').toString()).toBe('>=1.2.3-beta.0yz');
    expect(rulesOf(lintSkipRange('>=1.2.3-beta.xyz'))).toEqual(['R-X-IN-PRERELEASE']);
    expect(lintSkipRange('>=1.2.3-beta.xyz')[0]!.message).toContain('`>=1.2.3-beta.0yz`');
    // an `x` that is not a wildcard loses the "next" version: only >= and < survive
    expect(rulesOf(lintSkipRange('1.2.3-xyz'))).toEqual(['R-X-IN-PRERELEASE']);
    expect(rulesOf(lintSkipRange('<=1.2.3+linux'))).toEqual(['R-X-IN-PRERELEASE']);
    expect(lintSkipRange('<1.2.3-xyz')).toEqual([]);
    expect(lintSkipRange('>=1.2.3+linux')).toEqual([]);
  });

  it('4. comparators: the nine operators, strict versions (no v, no leading zeros, three parts)', () => {
    for (const op of ['', '=', '==', '!', '!=', '<', '<=', '>', '>=']) {
      expect(lintSkipRange(`${op}1.2.3`), op).toEqual([]);
    }
    for (const range of ['=>1.2.3', '=<1.2.3', '~>1.2.3', 'v1.2.3', '>=01.2.3', '>=1.2']) {
      expect(rulesOf(lintSkipRange(range)), range).toEqual(['R-FOREIGN-SYNTAX']);
    }
  });

  it('5. evaluation: no prerelease exclusion, so a prerelease counts as published and covered', () => {
    expect(lintSkipRange('<1.2.3', [v('1.2.3-rc.1')])).toEqual([]);
    expect(rulesOf(lintSkipRange('<1.2.3-rc.1', [v('1.2.3-rc.1')]))).toEqual(['R-MATCHES-NOTHING']);
  });
});

describe('docs/olm-semantics.md 7.3: every row', () => {
  it('prereleases below an upper bound are covered (no false "matches nothing")', () => {
    expect(lintSkipRange('<1.2.3', [v('1.2.3-rc.1')])).toEqual([]);
    expect(lintSkipRange('>=1.0.0 <2.0.0', [v('1.5.0-rc.1')])).toEqual([]);
    expect(lintSkipRange('<2.0.0', [v('2.0.0-rc.1')])).toEqual([]);
  });

  it('1.x covers 2.0.0-rc.1', () => {
    expect(lintSkipRange('1.x', [v('2.0.0-rc.1')])).toEqual([]);
  });

  it('!=1.2.3, !1.2.3, ==1.2.3 are valid blang', () => {
    for (const r of ['!=1.2.3', '!1.2.3', '==1.2.3']) expect(lintSkipRange(r)).toEqual([]);
  });

  it.each([
    ['v1.0.0', '1.0.0'],
    ['~1.2', '>=1.2.0 <1.3.0'],
    ['^1.2.3', '>=1.2.3 <2.0.0'],
    ['1.2.X', '>=1.2.0 <1.3.0'],
    ['1.2.*', '>=1.2.0 <1.3.0'],
    ['>=1.2', '>=1.2.0'],
    ['<2.0.0||>=3.0.0', '<2.0.0 || >=3.0.0'],
    ['>=1.0.0\t<2.0.0', '>=1.0.0 <2.0.0'],
  ])('%j is invalid in blang: R-FOREIGN-SYNTAX, suggest %j', (range, suggestion) => {
    expect(tryParseRange(range).ok).toBe(false);
    const lints = lintSkipRange(range);
    expect(lints).toHaveLength(1);
    expect(lints[0]).toMatchObject({ rule: 'R-FOREIGN-SYNTAX', level: 'warning', suggestion });
    expectMeans(suggestion, range);
  });

  it('1.0.0 - 2.0.0 is valid syntax but matches nothing', () => {
    expect(lintSkipRange('1.0.0 - 2.0.0')).toEqual([
      expect.objectContaining({ rule: 'R-HYPHEN-RANGE', level: 'error', suggestion: '>=1.0.0 <=2.0.0' }),
    ]);
  });

  it('! 1.2.3 is =1.2.3', () => {
    expect(lintSkipRange('! 1.2.3')).toEqual([
      expect.objectContaining({ rule: 'R-BANG-SPACE', level: 'error', suggestion: '!=1.2.3' }),
    ]);
  });

  it('1.x.x, ^1.x, !=1.2.x', () => {
    expect(lintSkipRange('1.x.x')).toEqual([
      expect.objectContaining({ rule: 'R-X-X', level: 'error', suggestion: '>=1.0.0 <2.0.0' }),
    ]);
    expect(lintSkipRange('^1.x')).toEqual([
      expect.objectContaining({
        rule: 'R-CARET-TILDE-WILDCARD',
        level: 'error',
        suggestion: '>=1.0.0 <2.0.0',
      }),
    ]);
    expect(lintSkipRange('!=1.2.x')).toEqual([
      expect.objectContaining({
        rule: 'R-NOT-EQUAL-WILDCARD',
        level: 'error',
        suggestion: '<1.2.0 || >=1.3.0',
      }),
    ]);
  });

  it('>=1.0.0 <2.0.0 || is an error, not "everything"', () => {
    const lints = lintSkipRange('>=1.0.0 <2.0.0 ||');
    expect(lints).toEqual([
      expect.objectContaining({ rule: 'R-EMPTY-GROUP', level: 'error', suggestion: '>=1.0.0 <2.0.0' }),
    ]);
  });

  it('>=1.0.0, <2.0.0 is invalid (npm loose mode would widen it to <2.0.0)', () => {
    expect(lintSkipRange('>=1.0.0, <2.0.0')).toEqual([
      expect.objectContaining({ rule: 'R-FOREIGN-SYNTAX', level: 'warning', suggestion: '>=1.0.0 <2.0.0' }),
    ]);
  });

  it('AND semantics and build metadata are the same everywhere: no lint', () => {
    expect(lintSkipRange('>=1.0.0 <2.0.0')).toEqual([]);
    expect(lintSkipRange('1.0.0+2', [v('1.0.0+1')])).toEqual([]);
  });
});

describe('suggestions are always valid blang', () => {
  // A spread of odd inputs: any suggestion must parse, have no empty group, and lint clean.
  const inputs = [
    ...CASES.map((c) => c.range),
    '^0.0',
    '^0.0.x',
    '~0.2',
    '>=1.0.0 <2.0.0 || ~3.1 || ^4',
    '>*',
    '<*',
    '!=*',
    '>=*',
    '<=*',
    '1.0.0 - *',
    '* - 2.0.0',
    '>=1.0.0 >=1.1.0 <3.0.0 <2.0.0',
    '!= 1.2.3',
    '> = 1.0.0',
    '>=1.0.0 <2.0.0 || >=1.2.0 <1.3.0',
    '^1.2.3-beta.1',
    '~1.2.3-xyz',
    '1.0.0 >',
    '-',
    '1.0.0 -',
  ];
  it.each(inputs)('%j', (range) => {
    for (const l of lintSkipRange(range, [v('1.0.0')])) {
      if (l.suggestion === undefined) continue;
      const parsed = tryParseRange(l.suggestion);
      expect(parsed.ok, l.suggestion).toBe(true);
      if (parsed.ok) expect(parsed.range.hasEmptyGroup).toBe(false);
      expect(lintSkipRange(l.suggestion).filter((x) => x.rule !== 'R-MATCHES-NOTHING')).toEqual([]);
    }
  });

  it.each([
    ['^0.0', '>=0.0.0 <0.1.0'],
    ['~0.2', '>=0.2.0 <0.3.0'],
    ['>=1.0.0 <2.0.0 || ~3.1 || ^4', '>=1.0.0 <2.0.0 || >=3.1.0 <3.2.0 || >=4.0.0 <5.0.0'],
    ['>=1.0.0 >=1.1.0 <3.0.0 <2.0.0, !=1.5.0', '>=1.1.0 <2.0.0 !=1.5.0'],
    ['>=1.0.0 <2.0.0 || >=1.2.0 <1.3.0 || ^1.2', '>=1.0.0 <2.0.0'],
  ])('%j → %j, as Masterminds means it', (range, suggestion) => {
    const lints = lintSkipRange(range);
    expect(lints.length).toBeGreaterThan(0);
    expect(suggestionOf(lints)).toBe(suggestion);
    expectMeans(suggestion, range);
  });
});
