// A check run records what it was computed against (docs/security.md: results belong to
// (head, base, config)); the merge gate reads it back and picks the runs for its base.
import { describe, expect, it } from 'vitest';
import { checkedText, readChecked } from '../src/handlers/check-runs.js';
import { resultsFor } from '../src/handlers/merge.js';

describe('what a check run says it was computed against', () => {
  it('round-trips any branch name, and the gate takes the newest run per name for its base only', () => {
    const against = { base: 'release-->4.21 `x`', sha: 'a'.repeat(40), config: 'b'.repeat(40) };
    const text = checkedText(against);
    expect(readChecked(text)).toEqual(against);
    expect(readChecked('Checked against `main`. <!-- catalog-bot:checked {"base":1} -->')).toBeUndefined();
    const run = (id: number, base: string | undefined, conclusion: string | null, status = 'completed') => ({
      id,
      name: 'catalog-bot/validate',
      status,
      conclusion,
      output: { text: base === undefined ? null : checkedText({ base, sha: 'c'.repeat(40), config: '' }) },
    });
    // Newer runs for another base, and completed runs that carry no base (superseded), do not count.
    const picked = resultsFor(
      [run(1, 'main', 'failure'), run(2, 'old', 'success'), run(3, undefined, 'skipped')],
      'main',
    );
    expect(picked.get('catalog-bot/validate')?.id).toBe(1);
    // A run still in progress is the newest: nothing is green until it completes.
    expect(
      resultsFor([run(1, 'main', 'success'), run(4, undefined, null, 'in_progress')], 'main').get(
        'catalog-bot/validate',
      )?.id,
    ).toBe(4);
  });
});
