// The App's write pacing (src/github/write-pacing.ts, docs/github-limits.md): writes of one
// installation start a gap apart, notifications three gaps apart, installations apart, and
// CATALOG_BOT_WRITE_PACING read strictly.
import { describe, expect, it } from 'vitest';
import { DEFAULT_WRITE_GAP_MS, writeGapMs, writePacing } from '../src/github/write-pacing.js';

async function startTimes(schedule: (task: () => number) => Promise<number>, n: number): Promise<number[]> {
  const t0 = Date.now();
  return Promise.all(Array.from({ length: n }, () => schedule(() => Date.now() - t0)));
}

describe('write pacing', () => {
  it('starts the writes of one installation a gap apart, in order, and returns what each task returns', async () => {
    const { write } = writePacing(60);
    const starts = await startTimes((task) => write.key('1').schedule({}, task), 4);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(55);
    expect(starts[0]).toBeLessThan(50);
  });

  it('paces notifications three gaps apart and each installation on its own', async () => {
    const { write, notifications } = writePacing(40);
    const [a, b] = await Promise.all([
      startTimes((task) => notifications.key('1').schedule({}, task), 2),
      startTimes((task) => write.key('2').schedule({}, task), 1),
    ]);
    expect(a[1]! - a[0]!).toBeGreaterThanOrEqual(115);
    // Installation 2's first write does not wait behind installation 1.
    expect(b[0]).toBeLessThan(40);
  });

  it('with no gap, runs every task at once', async () => {
    const { write } = writePacing(0);
    const starts = await startTimes((task) => write.key('1').schedule({}, task), 5);
    expect(Math.max(...starts)).toBeLessThan(40);
  });

  it('passes task arguments and failures through', async () => {
    const { write } = writePacing(1);
    await expect(write.key('1').schedule({}, (x) => `got ${String(x)}`, 7)).resolves.toBe('got 7');
    await expect(
      write.key('1').schedule({}, () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
  });

  it('reads CATALOG_BOT_WRITE_PACING: unset, off, milliseconds; anything else is refused with the reason', () => {
    expect(writeGapMs(undefined)).toBe(DEFAULT_WRITE_GAP_MS);
    expect(writeGapMs('')).toBe(1000);
    expect(writeGapMs('off')).toBe(0);
    expect(writeGapMs('250')).toBe(250);
    for (const bad of ['-1', '1.5', 'fast', '1e3', ' 250', '9999999'])
      expect(() => writeGapMs(bad), bad).toThrow(
        /CATALOG_BOT_WRITE_PACING=.*expected `off` or the milliseconds/,
      );
  });
});
