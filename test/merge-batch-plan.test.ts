// The pure parts of the bot's batch merge (src/flows/merge-batch/plan.ts): which listed pull
// requests may be ready and in which order, the order in which a failing batch's prefixes are
// checked, and the culprit's hidden mark (only at the head it names).
import { describe, expect, it } from 'vitest';
import { LABELS } from '../src/handlers/pr-state.js';
import {
  culpritMark,
  mayBeReady,
  namedCulpritAt,
  prefixOrder,
  type ListedPull,
} from '../src/flows/merge-batch/plan.js';

const sha = (c: string) => c.repeat(40);
const pull = (number: number, labels: string[], extra: Partial<ListedPull> = {}): ListedPull => ({
  number,
  labels: labels.map((name) => ({ name })),
  head: { sha: sha(String(number % 10)) },
  base: { ref: 'main' },
  ...extra,
});

describe('merge batch plan', () => {
  it('takes approved pull requests into the base (and the one that asked), not drafts nor held ones, in number order', () => {
    const listed = [
      pull(9, ['approved']),
      pull(3, ['approved', 'lgtm']),
      pull(5, ['approved', LABELS.hold]),
      pull(4, ['approved'], { draft: true }),
      pull(7, []),
      pull(2, ['approved'], { base: { ref: 'release-1' } }),
      pull(6, ['approved']),
    ];
    expect(mayBeReady(listed, 'main', LABELS, 9).map((p) => p.number)).toEqual([3, 6, 9]);
    expect(mayBeReady(listed, 'release-1', LABELS, 9).map((p) => p.number)).toEqual([2]);
    // The one that asked is looked at without the label (the gate decides), never when held.
    expect(mayBeReady(listed, 'main', LABELS, 7).map((p) => p.number)).toEqual([3, 6, 7, 9]);
    expect(mayBeReady(listed, 'main', LABELS, 5).map((p) => p.number)).toEqual([3, 6, 9]);
  });

  it('checks prefixes shortest first, after those known to pass, the whole batch last', () => {
    expect(prefixOrder(4, 0)).toEqual([1, 2, 3, 4]);
    expect(prefixOrder(4, 2)).toEqual([3, 4]);
    expect(prefixOrder(3, 3)).toEqual([]);
    expect(prefixOrder(1, 0)).toEqual([1]);
  });

  it('a culprit mark names one head: another head, a mangled or a quoted mark does not count', () => {
    const head = sha('a');
    const body = `Not merged with its batch...\n${culpritMark(head)}`;
    expect(namedCulpritAt([body], head)).toBe(true);
    expect(namedCulpritAt([body], sha('b'))).toBe(false);
    expect(namedCulpritAt([null, undefined, 'nothing'], head)).toBe(false);
    // What a reply quotes cannot open an HTML comment (replyText), so it marks nothing.
    expect(namedCulpritAt([`<\u200b!-- catalog-bot:batch-culprit ${head} -->`], head)).toBe(false);
    expect(namedCulpritAt([`<!-- catalog-bot:batch-culprit ${head.slice(1)} -->`], head)).toBe(false);
  });
});
