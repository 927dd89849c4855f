// A check run records what it was computed against (docs/security.md: results belong to
// (head, base, config)); the merge gate reads it back and picks the runs for its pull
// request and base.
import { describe, expect, it } from 'vitest';
import { checkedText, readChecked } from '../src/handlers/check-runs.js';
import { resultsFor } from '../src/handlers/merge.js';

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
});
