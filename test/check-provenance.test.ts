// A check run records what it was computed against (docs/security.md: results belong to
// (head, base, config)); the merge gate reads it back and picks the runs for its pull
// request and base.
import { describe, expect, it } from 'vitest';
import { checkedText, PR_CHECK_NAMES, readChecked } from '../src/handlers/check-runs.js';
import { requiredChecks, resultsFor, unanswered } from '../src/handlers/merge.js';

describe('what a check run says it was computed against', () => {
  it('round-trips any branch name, and the gate takes the newest run per name for its pull request and base only', () => {
    const against = {
      base: 'release-->4.21 `x`',
      sha: 'a'.repeat(40),
      pr: 7,
      author: 'carol',
      config: 'b'.repeat(40),
    };
    const text = checkedText(against);
    expect(text).toContain('for #7 by @carol');
    expect(readChecked(text)).toEqual(against);
    expect(readChecked('Checked against `main`. <!-- catalog-bot:checked {"base":1} -->')).toBeUndefined();
    expect(readChecked('<!-- catalog-bot:checked {"base":"main","sha":"c","pr":"7"} -->')).toBeUndefined();
    const run = (
      id: number,
      base: string | undefined,
      conclusion: string | null,
      status = 'completed',
      pr: number | null = 7, // null: a record written before the pull request was kept
    ) => ({
      id,
      name: 'catalog-bot/validate',
      status,
      conclusion,
      output: {
        text:
          base === undefined
            ? null
            : checkedText({ base, sha: 'c'.repeat(40), ...(pr === null ? {} : { pr }), config: '' }),
      },
    });
    // Newer runs for another base, and completed runs that carry no base (superseded), do not count.
    const picked = resultsFor(
      [run(1, 'main', 'failure'), run(2, 'old', 'success'), run(3, undefined, 'skipped')],
      'main',
      7,
    );
    expect(picked.get('catalog-bot/validate')?.id).toBe(1);
    // Newer runs on the same head for another pull request into the same base do not count,
    // nor do records that name no pull request (written before it was kept).
    const mine = resultsFor(
      [
        run(1, 'main', 'failure'),
        run(2, 'main', 'success', 'completed', 8),
        run(3, 'main', 'success', 'completed', null),
      ],
      'main',
      7,
    );
    expect(mine.get('catalog-bot/validate')?.id).toBe(1);
    expect(resultsFor([run(2, 'main', 'success', 'completed', 8)], 'main', 7).size).toBe(0);
    // A run still in progress is the newest: nothing is green until it completes.
    expect(
      resultsFor([run(1, 'main', 'success'), run(4, undefined, null, 'in_progress')], 'main', 7).get(
        'catalog-bot/validate',
      )?.id,
    ).toBe(4);
  });

  it("a newer job's runs are not hidden by an older job's results written after them (higher ids)", () => {
    // Job A (started 10:00) computed green results that waited in the write queue; job B
    // (started 10:01, e.g. after "/approve cancel") showed its runs in progress first, so A's
    // completed runs got the higher ids. The gate must see B's runs still running.
    const record = (pr: number) => checkedText({ base: 'main', sha: 'c'.repeat(40), pr, config: '' });
    const runs = [
      {
        id: 5,
        name: 'catalog-bot/permissions',
        status: 'in_progress',
        conclusion: null,
        started_at: '2026-01-01T10:01:00Z',
        output: { text: null },
      },
      {
        id: 9,
        name: 'catalog-bot/permissions',
        status: 'completed',
        conclusion: 'success',
        started_at: '2026-01-01T10:00:00Z',
        output: { text: record(7) },
      },
    ];
    const results = resultsFor(runs, 'main', 7);
    expect(results.get('catalog-bot/permissions')?.id).toBe(5);
    expect(unanswered(results, true)).toBe('catalog-bot/permissions is still running');
  });

  it('the checks that apply come from the newest record of this pull request; a listed check without a run is missing, never "does not apply"', () => {
    const always = [
      'catalog-bot/permissions',
      'catalog-bot/validate',
      'catalog-bot/upgrade-graph',
      'catalog-bot/dependencies',
      'catalog-bot/crd-upgrade',
    ];
    const record = (checks: string[] | undefined, pr = 7, base = 'main') =>
      checkedText({ base, sha: 'c'.repeat(40), pr, config: '', ...(checks ? { checks } : {}) });
    const run = (
      id: number,
      name: string,
      conclusion: string,
      text: string | null,
      status = 'completed',
    ) => ({
      id,
      name,
      status,
      conclusion,
      output: { text },
    });
    const applying = [...always, 'catalog-bot/images', 'catalog-bot/templates'];
    expect(readChecked(record(applying))?.checks).toEqual(applying);
    // A list that is not a list of names: the record does not count at all.
    expect(
      readChecked('<!-- catalog-bot:checked {"base":"main","sha":"c","pr":7,"checks":"all"} -->'),
    ).toBeUndefined();
    const greens = (ids: number, names: string[], text: string) =>
      names.map((name, i) => run(ids + i, name, 'success', text));
    // Every applying check green: answered, and the checks that do not apply need no run.
    const all = resultsFor(greens(1, applying, record(applying)), 'main', 7);
    expect(requiredChecks(all).sort()).toEqual([...applying].sort());
    expect(unanswered(all, true)).toBeUndefined();
    // The templates run was never written (an error): missing, not "does not apply".
    const lost = resultsFor(greens(1, applying.slice(0, -1), record(applying)), 'main', 7);
    expect(unanswered(lost, true)).toBe('catalog-bot/templates has no run');
    expect(unanswered(lost)).toBe('catalog-bot/templates has no run');
    // A failing applying run stops the merge.
    const red = resultsFor(
      [
        ...greens(1, applying.slice(0, -1), record(applying)),
        run(20, 'catalog-bot/templates', 'failure', record(applying)),
      ],
      'main',
      7,
    );
    expect(unanswered(red, true)).toBe('catalog-bot/templates is not green');
    expect(unanswered(red)).toBeUndefined();
    // A record that lists nothing (older runs, a job that failed early): every check applies.
    const old = resultsFor(greens(1, applying, record(undefined)), 'main', 7);
    expect(requiredChecks(old).sort()).toEqual([...PR_CHECK_NAMES].sort());
    expect(unanswered(old, true)).toBe('catalog-bot/ocp-continuity has no run');
    // No run at all: every check applies.
    expect(requiredChecks(new Map()).sort()).toEqual([...PR_CHECK_NAMES].sort());
    // A record that lists fewer checks never drops the ones decided on every change.
    const short = resultsFor(
      greens(1, ['catalog-bot/validate'], record(['catalog-bot/validate'])),
      'main',
      7,
    );
    expect(requiredChecks(short).sort()).toEqual([...always].sort());
    expect(unanswered(short, true)).toBe('catalog-bot/permissions has no run');
    // The list of another pull request (or another base) on the same head is not this one's.
    const other = resultsFor(
      [...greens(1, always, record(always)), run(30, 'catalog-bot/images', 'success', record(always, 8))],
      'main',
      7,
    );
    expect(requiredChecks(other).sort()).toEqual([...always].sort());
    const mixed = resultsFor(
      [...greens(1, applying, record(applying)), ...greens(40, always, record(always, 7, 'old'))],
      'main',
      7,
    );
    expect(requiredChecks(mixed).sort()).toEqual([...applying].sort());
    // Anything still running: not answered yet, whatever the list says.
    const running = resultsFor(
      [...greens(1, always, record(always)), run(50, 'catalog-bot/bundle', 'success', null, 'in_progress')],
      'main',
      7,
    );
    expect(unanswered(running)).toBe('catalog-bot/bundle is still running');
  });
});
