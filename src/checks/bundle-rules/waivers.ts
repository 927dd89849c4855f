// The waivers a catalog repository already keeps for operator-pipelines' static tests:
// community-operators-prod's `config.yaml` `tests: [{name, ignore_operators: [regex]}]`, read as
// operator-pipelines reads them (apply_test_waivers.py: Python's re.match, anchored at the
// start of the package name). A finding is waived when every operator-pipelines test it stands
// for is waived for the package (docs/bundle-rules.md "Waivers").
import { isMap } from './context.js';

export interface Waiver {
  /** The static test, like `check_dangling_bundles`. */
  test: string;
  /** The pattern as written. */
  pattern: string;
  regex: RegExp;
}

/** What a waived finding carries: which entry of config.yaml waived it. */
export interface WaivedBy {
  test: string;
  pattern: string;
}

/** Patterns longer than this are not read: a package name is a DNS label. */
const MAX_PATTERN = 200;
/**
 * A group that repeats and holds a repetition, like `(a+)+`: it can take exponential time on
 * a crafted name, so such a pattern is refused rather than run.
 */
const NESTED_REPETITION = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{?]/;

/** The waivers of a repository's config.yaml, and the entries that cannot be used, with why. */
export function parseWaivers(config: unknown): { waivers: Waiver[]; problems: string[] } {
  const waivers: Waiver[] = [];
  const problems: string[] = [];
  const tests = isMap(config) ? config.tests : undefined;
  if (!Array.isArray(tests)) return { waivers, problems };
  for (const [i, t] of tests.entries()) {
    const name = isMap(t) ? t.name : undefined;
    const patterns = isMap(t) ? t.ignore_operators : undefined;
    if (typeof name !== 'string' || !Array.isArray(patterns)) {
      problems.push(`tests[${i}] has no name and ignore_operators list`);
      continue;
    }
    for (const p of patterns) {
      if (typeof p !== 'string' || p.length > MAX_PATTERN || NESTED_REPETITION.test(p)) {
        problems.push(
          `tests[${i}] (${name}): pattern ${JSON.stringify(p)} is not used (not a string, over ${MAX_PATTERN} characters, or a repetition inside a repetition)`,
        );
        continue;
      }
      try {
        // Python's re.match: at the start of the name only.
        waivers.push({ test: name, pattern: p, regex: new RegExp(`^(?:${p})`, 'u') });
      } catch {
        problems.push(`tests[${i}] (${name}): pattern ${JSON.stringify(p)} is not a regular expression`);
      }
    }
  }
  return { waivers, problems };
}

const PIPELINES = 'operator-pipelines:';

/** The waiver entry that waives a finding for a package, if every pipelines test it stands for is waived. */
export function waiverFor(
  upstream: readonly string[],
  pkg: string,
  waivers: readonly Waiver[],
): WaivedBy | undefined {
  const tests = upstream.filter((u) => u.startsWith(PIPELINES)).map((u) => u.slice(PIPELINES.length));
  if (tests.length === 0 || pkg.length > 253) return undefined;
  let first: WaivedBy | undefined;
  for (const test of tests) {
    const w = waivers.find((x) => x.test === test && x.regex.test(pkg));
    if (!w) return undefined;
    first ??= { test: w.test, pattern: w.pattern };
  }
  return first;
}
