import { describe, expect, it } from 'vitest';
import { InProcessQueue, type JobSpec } from '../src/queue.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

/** A queue whose jobs call `work(data)`; jobs are data, as they would be through Redis. */
function queue(
  work: (job: JobSpec) => Promise<void>,
  options?: ConstructorParameters<typeof InProcessQueue>[0],
) {
  const q = new InProcessQueue(options);
  q.start(work);
  return q;
}

describe('InProcessQueue', () => {
  it('runs jobs of one group one at a time, in order', async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const q = queue(async (job) => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${job.key}`);
      await tick();
      log.push(`end ${job.key}`);
      running--;
    });
    for (const k of ['a', 'b', 'c']) await q.enqueue({ key: k, group: 'repo', kind: 't', data: null });
    await q.onIdle();
    expect(most).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs different groups in parallel', async () => {
    let running = 0;
    let most = 0;
    const q = queue(async () => {
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
    });
    for (const g of ['r1', 'r2']) await q.enqueue({ key: g, group: g, kind: 't', data: null });
    await q.onIdle();
    expect(most).toBe(2);
  });

  it('refuses a duplicate key while pending, running and after it finished', async () => {
    let runs = 0;
    const q = queue(async () => void runs++);
    const job = { key: 'delivery-1', kind: 't', data: null };
    expect(await q.enqueue(job)).toBe(true);
    expect(await q.enqueue(job)).toBe(false);
    await q.onIdle();
    expect(await q.enqueue(job)).toBe(false);
    await q.onIdle();
    expect(runs).toBe(1);
  });

  it('forgets the oldest finished keys beyond its memory', async () => {
    let runs = 0;
    const q = queue(async () => void runs++, { rememberFinished: 1 });
    await q.enqueue({ key: 'a', kind: 't', data: null });
    await q.enqueue({ key: 'b', kind: 't', data: null });
    await q.onIdle();
    expect(await q.enqueue({ key: 'a', kind: 't', data: null })).toBe(true);
    expect(await q.enqueue({ key: 'b', kind: 't', data: null })).toBe(false);
    await q.onIdle();
    expect(runs).toBe(3);
  });

  it('does not start a job inside enqueue, and survives a job that throws', async () => {
    let started = false;
    const q = queue(async () => void (started = true));
    q.add({ key: 'x', kind: 't', data: null });
    expect(started).toBe(false);
    await q.onIdle();
    expect(started).toBe(true);
    const errors: unknown[] = [];
    const seen: string[] = [];
    const q2 = queue(
      async (job) => {
        if (job.key === 'boom') throw new Error('boom');
        seen.push(job.key);
      },
      { onError: (e) => errors.push(e), attempts: 3, backoffMs: 5 },
    );
    await q2.enqueue({ key: 'boom', group: 'g', kind: 't', data: null });
    await q2.enqueue({ key: 'next', group: 'g', kind: 't', data: null });
    await q2.onIdle();
    expect(seen).toEqual(['next']);
    // Given up after its third start, and then done once: a redelivery is a duplicate.
    expect(errors).toHaveLength(3);
    expect(q2.size).toBe(0);
    expect(await q2.enqueue({ key: 'boom', group: 'g', kind: 't', data: null })).toBe(false);
  });

  it('retries a job that throws with back-off, telling it which start it is; the group goes on meanwhile', async () => {
    // A job rate limited twice by GitHub, then answered: it must not be dropped.
    const starts: { key: string; attempt: number; at: number }[] = [];
    const t0 = Date.now();
    const q = queue(
      async (job) => {
        const attempt = (job as JobSpec & { attempt: number }).attempt;
        starts.push({ key: job.key, attempt, at: Date.now() - t0 });
        if (job.key === 'announce' && attempt < 3) throw new Error('403 secondary rate limit');
      },
      { backoffMs: 40 },
    );
    await q.enqueue({ key: 'announce', group: 'repo', kind: 't', data: null });
    await q.enqueue({ key: 'other', group: 'repo', kind: 't', data: null });
    await q.onIdle();
    expect(starts.map((s) => `${s.key}#${s.attempt}`)).toEqual([
      'announce#1',
      'other#1',
      'announce#2',
      'announce#3',
    ]);
    const retries = starts.filter((s) => s.key === 'announce').map((s) => s.at);
    // 40 ms, then 80 ms: exponential.
    expect((retries[1] as number) - (retries[0] as number)).toBeGreaterThanOrEqual(35);
    expect((retries[2] as number) - (retries[1] as number)).toBeGreaterThanOrEqual(75);
    expect(q.size).toBe(0);
  });

  it('holds jobs until started, and takes none after close', async () => {
    const q = new InProcessQueue();
    const seen: unknown[] = [];
    await q.enqueue({ key: 'early', group: 'g', kind: 't', data: { n: 1 } });
    await tick();
    expect(seen).toEqual([]);
    q.start(async (job) => void seen.push(job.data));
    await q.onIdle();
    expect(seen).toEqual([{ n: 1 }]);
    await q.close();
    expect(await q.enqueue({ key: 'late', kind: 't', data: null })).toBe(false);
  });

  it('is idle at once when empty', async () => {
    await new InProcessQueue().onIdle();
  });
});
