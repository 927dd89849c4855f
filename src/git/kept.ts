// Answers about git objects named by their full id, kept by this thread: what an id names
// never changes, and one job's checks ask the same questions of the same commits (each
// check its own source of a catalog root, each its own list of catalog roots).
import { isObjectId } from './object-id.js';

/**
 * What one kind of listing may keep, in bytes (estimated from path lengths): a hostile pull
 * request's tree of many long paths is held no longer than its own job needs it, so it
 * cannot take the heap of the next job in the same check worker (docs/security.md).
 */
export const KEPT_LISTING_BYTES = 8 * 1024 * 1024;

/**
 * Answers kept by their question, the least recently used dropped first once their weight
 * (`weigh`: the bytes held, say) is over `maxWeight`. A failed answer is not kept. A pending
 * answer is shared by all who ask for it meanwhile.
 */
export class KeptAnswers<T> {
  private readonly kept = new Map<string, { answer: Promise<T>; weight: number }>();
  private weight = 0;

  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (answer: T) => number,
  ) {}

  /**
   * `compute`'s answer to a question about `revs` in `where` (the repository, with whatever
   * else names the question): kept when every rev is a full object id; a ref moves, so a
   * question naming one is asked each time.
   */
  ask(where: string, revs: readonly string[], compute: () => Promise<T>): Promise<T> {
    if (!revs.every(isObjectId)) return compute();
    const key = [where, ...revs].join('\0');
    const hit = this.kept.get(key);
    if (hit) {
      this.kept.delete(key); // the most recently used last
      this.kept.set(key, hit);
      return hit.answer;
    }
    const held = { answer: compute(), weight: 0 };
    this.kept.set(key, held);
    held.answer.then(
      (answer) => {
        if (this.kept.get(key) !== held) return;
        held.weight = this.weigh(answer);
        this.weight += held.weight;
        for (const [oldest, o] of this.kept) {
          if (this.weight <= this.maxWeight) break;
          this.kept.delete(oldest);
          this.weight -= o.weight;
        }
      },
      () => {
        if (this.kept.get(key) === held) this.kept.delete(key);
      },
    );
    return held.answer;
  }
}
