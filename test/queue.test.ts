import { describe, expect, it } from 'vitest';
import { InProcessQueue } from '../src/queue.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('InProcessQueue', () => {
  it('runs jobs of one group one at a time, in order', async () => {
    const q = new InProcessQueue();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    for (const k of ['a', 'b', 'c']) {
      q.enqueue({
        key: k,
        group: 'repo',
        run: async () => {
          running++;
          most = Math.max(most, running);
          log.push(`start ${k}`);
          await tick();
          log.push(`end ${k}`);
          running--;
        },
      });
    }
    await q.onIdle();
    expect(most).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs different groups in parallel', async () => {
    const q = new InProcessQueue();
    let running = 0;
    let most = 0;
    for (const g of ['r1', 'r2']) {
      q.enqueue({
        key: g,
        group: g,
        run: async () => {
          running++;
          most = Math.max(most, running);
          await tick();
          running--;
        },
      });
    }
    await q.onIdle();
    expect(most).toBe(2);
  });

  it('refuses a duplicate key while pending, running and after it finished', async () => {
    const q = new InProcessQueue();
    let runs = 0;
    const job = { key: 'delivery-1', run: async () => void runs++ };
    expect(q.enqueue(job)).toBe(true);
    expect(q.enqueue(job)).toBe(false);
    await q.onIdle();
    expect(q.enqueue(job)).toBe(false);
    await q.onIdle();
    expect(runs).toBe(1);
  });

  it('forgets the oldest finished keys beyond its memory', async () => {
    const q = new InProcessQueue({ rememberFinished: 1 });
    let runs = 0;
    q.enqueue({ key: 'a', run: async () => void runs++ });
    q.enqueue({ key: 'b', run: async () => void runs++ });
    await q.onIdle();
    expect(q.enqueue({ key: 'a', run: async () => void runs++ })).toBe(true);
    expect(q.enqueue({ key: 'b', run: async () => void runs++ })).toBe(false);
    await q.onIdle();
    expect(runs).toBe(3);
  });

  it('does not start a job inside enqueue, and survives a job that throws', async () => {
    const q = new InProcessQueue();
    const errors: unknown[] = [];
    const q2 = new InProcessQueue({ onError: (e) => errors.push(e) });
    let started = false;
    q.enqueue({ key: 'x', run: async () => void (started = true) });
    expect(started).toBe(false);
    await q.onIdle();
    expect(started).toBe(true);
    let after = false;
    q2.enqueue({ key: 'boom', group: 'g', run: async () => Promise.reject(new Error('boom')) });
    q2.enqueue({ key: 'next', group: 'g', run: async () => void (after = true) });
    await q2.onIdle();
    expect(after).toBe(true);
    expect(errors).toHaveLength(1);
    expect(q2.size).toBe(0);
  });

  it('is idle at once when empty', async () => {
    await new InProcessQueue().onIdle();
  });
});
