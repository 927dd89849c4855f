// Output a person can act on (issue 30 item 5, docs/output.md): the release pull request of
// clusterpulse 1.0.2 on a repository laid out like community-operators-prod prints the
// findings the change caused first, the base's folded per rule, the same finding in five
// byte-identical catalogs once; a wrong `replaces` gives one root cause with one fix.
// The real CLI (dist/, `npm run build` first) on real git repositories.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Diagnostic } from '../src/catalog/diagnostics.js';
import { catalogsLabel, groupAcrossCatalogs, markPreExisting } from '../src/checks/findings.js';
import { runPrChecks } from '../src/checks/pr.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';

const cliJs = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const run = promisify(execFile);

async function check(repo: string, head: string, ...more: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run(
      'node',
      [cliJs, 'check', '--repo', repo, '--base', 'main', '--head', head, ...more],
      {
        maxBuffer: 64 << 20,
      },
    );
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? -1, out: e.stdout ?? '' };
  }
}

interface JsonFinding {
  rule: string;
  level: string;
  message: string;
  file: string | null;
  line: number | null;
  hint: string | null;
  new: boolean;
  catalogs: string[];
  cause: string | null;
}
interface JsonCheck {
  name: string;
  conclusion: string;
  findings: JsonFinding[];
}
interface JsonResult {
  checks: JsonCheck[];
  causes: { rules: string[]; fix: string; catalogs: string[]; findings: number }[];
}

/** A line of text output that is one finding (`file:line...: level RULE: message`). */
const FINDING_LINE = /^ {2}\S.*: (error|warning|notice) [A-Z][A-Z0-9-]+: /;

/** What the text output was before: every finding on its own line and its hint on the next. */
function flatLines(result: JsonResult): number {
  let lines = 1; // changed catalogs
  for (const c of result.checks) {
    lines += 2; // blank line and the check's line
    for (const d of c.findings) lines += d.hint ? 2 : 1;
  }
  return lines;
}

/** The entry of clusterpulse.v1.0.2 in every catalog: `replaces` the old head's predecessor. */
function wrongReplaces(repo: CopRepo, replaces: string): void {
  for (const v of ['v4.17', 'v4.18', 'v4.19', 'v4.20', 'v4.21']) {
    const file = join(repo.repo, 'catalogs', v, 'clusterpulse', 'catalog.yaml');
    const text = readFileSync(file, 'utf8');
    const entry = '- name: clusterpulse.v1.0.2\n  skips:\n  - clusterpulse.v1.0.0\n  - clusterpulse.v1.0.1\n';
    expect(text).toContain(entry);
    writeFileSync(file, text.replace(entry, `- name: clusterpulse.v1.0.2\n  replaces: ${replaces}\n`));
  }
}

describe.skipIf(!haveRealRepo)('findings an author can act on (clusterpulse 1.0.2)', () => {
  let cop: CopRepo;
  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
    cop.branch('pr', () => cop.applyRelease()); // the release pull request
    cop.branch('wrong', () => {
      cop.applyRelease();
      wrongReplaces(cop, 'clusterpulse.v1.0.0'); // forgets the previous head, 1.0.1
    });
  });
  afterAll(() => cop?.cleanup());

  test("the release PR: its own findings first, the base's counted per rule, five catalogs once", async () => {
    const [text, json, full] = await Promise.all([
      check(cop.repo, 'pr'),
      check(cop.repo, 'pr', '--format', 'json'),
      check(cop.repo, 'pr', '--all'),
    ]);
    expect(json.code).toBe(0); // green stays green: no conclusion changes
    expect(text.code).toBe(0);
    const result = JSON.parse(json.out) as JsonResult;
    expect(result.causes).toEqual([]);
    const all = result.checks.flatMap((c) => c.findings);
    // JSON keeps every finding (design.md), with how it is presented.
    const untouched = all.filter((d) => d.message.includes('channel "fast-v0"'));
    expect(untouched.length).toBeGreaterThanOrEqual(45);
    expect(untouched.every((d) => !d.new)).toBe(true);
    const mine = all.filter((d) => d.new);
    expect(mine.every((d) => !d.message.includes('fast-v0'))).toBe(true);
    // The CRDs are compared from the bundle directories (the catalogs carry only
    // olm.csv.metadata): the older edges' findings are the base's, once per group of catalogs.
    const crd = all.filter((d) => d.rule.startsWith('CRD-'));
    expect(crd.length).toBeGreaterThan(0);
    expect(crd.every((d) => !d.new && d.catalogs.length === 5)).toBe(true);

    const lines = text.out.trimEnd().split('\n');
    const toRead = lines.filter((l) => FINDING_LINE.test(l));
    // One line per finding of the change, identical catalogs once.
    const groups = new Set(
      mine.map((d) => JSON.stringify([d.rule, d.message.replace(/v4\.\d+/g, ''), d.line])),
    );
    expect(toRead).toHaveLength(groups.size);
    expect(text.out).toContain('(v4.17-v4.21, 5 catalogs)');
    expect(text.out).not.toContain('fast-v0');
    // The base's findings: one line per rule with its count, and how to list them.
    expect(text.out).toMatch(
      /20 pre-existing G11-DIVERGENCE notices in clusterpulse \(v4\.17-v4\.21, 5 catalogs\)/,
    );
    expect(text.out).toContain('--all` lists them');
    const before = flatLines(result);
    console.log(
      `release PR: before ${before} lines, ${all.length} findings; after ${lines.length} lines, ${toRead.length} findings to read`,
    );
    expect(lines.length * 4).toBeLessThan(before);

    // --all still lists every pre-existing finding (once per group of identical catalogs).
    expect(full.out).toContain('already on the base branch');
    expect(full.out.match(/G6-CLASSIC-DEAD-END/g)?.length).toBe(4);
  }, 120_000);

  test('a wrong replaces: one root cause, one fix that works, one annotation in the App', async () => {
    const [text, result] = await Promise.all([
      check(cop.repo, 'wrong'),
      runPrChecks({ repo: cop.repo, base: 'main', head: 'wrong' }),
    ]);
    expect(text.code).toBe(1); // still fails: the conclusions are the checks' own
    expect(result.causes).toHaveLength(1);
    const cause = result.causes![0]!;
    expect(cause.rules).toEqual(
      expect.arrayContaining(['C-MULTIPLE-HEADS', 'G12-NO-WAY-FORWARD', 'G7-V1-NO-PROGRESS']),
    );
    expect(cause.fix).toContain('`replaces: clusterpulse.v1.0.1`');
    expect(cause.fix).toContain('`skips: [clusterpulse.v1.0.0]`');
    expect(cause.roots).toHaveLength(5);
    const caused = result.checks.flatMap((c) => c.findings).filter((d) => d.cause !== undefined);
    expect(caused).toHaveLength(cause.findings);
    // Text: the cause once, and none of the rules' own (different) fixes.
    expect(text.out.match(/root cause 1:/g)).toHaveLength(1);
    for (const rule of cause.rules)
      expect(text.out).not.toMatch(new RegExp(`: (error|warning|notice) ${rule}:`));
    expect(text.out).not.toContain('Make clusterpulse.v1.0.2 the only head');

    // The App: the cause is the first annotation, identical catalogs annotated once, the base's last.
    const graph = result.checks.find((c) => c.name === 'catalog-bot/upgrade-graph')!;
    const first = graph.annotations[0]!;
    expect(first.title).toMatch(/^root cause of 15 findings/);
    expect(first.message).toContain('`replaces: clusterpulse.v1.0.1`');
    expect(first.message).toContain('v4.17-v4.21, 5 catalogs');
    expect(graph.findings).toHaveLength(60);
    expect(graph.annotations.length).toBeLessThan(graph.findings.length / 3);
    const old = graph.annotations.filter((a) => a.message.includes('Already so on the base branch'));
    expect(old.length).toBeGreaterThan(0);
    expect(graph.annotations.slice(-old.length)).toEqual(old);
    for (const a of old)
      for (const v of ['v4.18', 'v4.19', 'v4.20', 'v4.21']) expect(a.message).toContain(`catalogs/${v}/`);
    expect(graph.summary).toMatch(/One root cause for 15 of these findings/);
    expect(graph.summary).toMatch(/45 of 60 findings were already on the base branch/);
    // Its findings table: one row per finding of five identical catalogs.
    const rows = graph.summary.split('\n').filter((l) => l.startsWith('| catalogs/'));
    expect(rows.length).toBeLessThan(graph.findings.length / 3);
    expect(rows.every((r) => r.includes('(v4.17-v4.21, 5 catalogs)'))).toBe(true);

    // The one fix, applied as written, clears every finding the cause explained.
    cop.branch('fixed', () => {
      cop.applyRelease();
      wrongReplaces(cop, 'clusterpulse.v1.0.1\n  skips:\n  - clusterpulse.v1.0.0');
    });
    const fixed = await runPrChecks({ repo: cop.repo, base: 'main', head: 'fixed' });
    const left = fixed.checks
      .flatMap((c) => c.findings)
      .filter((d) => !d.preExisting && cause.rules.includes(d.rule));
    expect(left).toEqual([]);
  }, 120_000);
});

describe('what counts as pre-existing', () => {
  const finding = (over: Partial<Diagnostic> = {}): Diagnostic => ({
    rule: 'G12-NO-WAY-FORWARD',
    level: 'error',
    message: 'installed bundle a.v1 in channel "stable" of package "a" would be stranded',
    file: 'catalogs/v4.17/a/catalog.yaml',
    line: 10,
    package: 'a',
    ...over,
  });

  test('the same rule, package, file and message, whatever the line; as many as the base has', () => {
    const marked = markPreExisting([finding({ line: 40 }), finding({ line: 41 })], [finding()]);
    expect(marked.map((d) => d.preExisting === true)).toEqual([true, false]);
    expect(
      markPreExisting([finding({ file: 'catalogs/v4.18/a/catalog.yaml' })], [finding()])[0]!.preExisting,
    ).toBe(undefined);
    expect(markPreExisting([finding({ package: 'b' })], [finding()])[0]!.preExisting).toBe(undefined);
  });

  test('an error is not folded because its message ends like an old one (a name the PR wrote)', () => {
    const tail = finding({
      message: 'bundle name "x" of package "a" is invalid: x (already so before this change)',
    });
    expect(markPreExisting([tail], [])[0]!.preExisting).toBe(undefined);
    expect(markPreExisting([{ ...tail, level: 'warning' }], [])[0]!.preExisting).toBe(true);
  });

  test('identical findings of consecutive catalogs read as a range; others as names', () => {
    const roots = ['catalogs/v4.16', 'catalogs/v4.17', 'catalogs/v4.18', 'catalogs/v4.19'];
    const groups = groupAcrossCatalogs(
      roots.map((r) => finding({ file: `${r}/a/catalog.yaml`, hint: `edit ${r}/a/catalog.yaml` })),
      roots,
    );
    expect(groups).toHaveLength(1);
    expect(catalogsLabel(groups[0]!.roots, roots)).toBe('v4.16-v4.19, 4 catalogs');
    expect(catalogsLabel(['catalogs/v4.16', 'catalogs/v4.18'], roots)).toBe('v4.16, v4.18, 2 catalogs');
    // A different line in one catalog: not the same finding.
    expect(
      groupAcrossCatalogs([finding(), finding({ file: 'catalogs/v4.18/a/catalog.yaml', line: 11 })], roots),
    ).toHaveLength(2);
  });
});
