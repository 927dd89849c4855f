// Each replica's own slot of a shared work directory (src/work-dir.ts, docs/replicas.md):
// replicas on one host or volume never share mirrors, slots of dead replicas are reused; and
// a Redis outage is retried by a checks job, not reported as a failure.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneMirrors } from '../src/git/mirror.js';
import { claimWorkDir } from '../src/work-dir.js';
import { isTransient } from '../src/handlers/pull-request.js';
import { QueueUnavailableError } from '../src/queue.js';

const LOCK = 'catalog-bot-replica.lock';
let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));
const fresh = () => (base = mkdtempSync(join(tmpdir(), 'catalog-bot-workdir-')));

describe('work directory slots', () => {
  it('two replicas on one work directory get a slot each; a released slot is taken again', async () => {
    fresh();
    const a = await claimWorkDir(base, { host: 'h', pid: 101, alive: () => true });
    const b = await claimWorkDir(base, { host: 'h', pid: 102, alive: () => true });
    expect([a.dir, b.dir]).toEqual([join(base, 'replica-0'), join(base, 'replica-1')]);
    expect(JSON.parse(readFileSync(join(a.dir, LOCK), 'utf8'))).toEqual({ host: 'h', pid: 101 });
    await a.release();
    expect(existsSync(join(a.dir, LOCK))).toBe(false);
    const c = await claimWorkDir(base, { host: 'h', pid: 103, alive: () => true });
    expect(c.dir).toBe(a.dir);
    await Promise.all([b.release(), c.release()]);
  });

  it("a dead replica's slot on this host is taken over at once (a restart finds its mirrors)", async () => {
    fresh();
    const dead = await claimWorkDir(base, { host: 'h', pid: 201, alive: () => true });
    const restarted = await claimWorkDir(base, { host: 'h', pid: 202, alive: (pid) => pid !== 201 });
    expect(restarted.dir).toBe(dead.dir);
    // The dead one's release (a late shutdown path) does not free what is no longer its own.
    await dead.release();
    expect(JSON.parse(readFileSync(join(restarted.dir, LOCK), 'utf8'))).toEqual({ host: 'h', pid: 202 });
    await restarted.release();
  });

  it("another host's slot is left alone while it is touched, and taken over once it is silent", async () => {
    fresh();
    const other = await claimWorkDir(base, { host: 'pod-a', pid: 1, staleMs: 60_000 });
    const mine = await claimWorkDir(base, { host: 'pod-b', pid: 1, staleMs: 60_000 });
    expect(mine.dir).toBe(join(base, 'replica-1'));
    await mine.release();
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(other.dir, LOCK), old, old);
    const later = await claimWorkDir(base, { host: 'pod-b', pid: 1, staleMs: 60_000 });
    expect(later.dir).toBe(other.dir);
    await Promise.all([other.release(), later.release()]);
  });

  it('a half-written lock is judged by its age, not trusted and not fatal', async () => {
    fresh();
    mkdirSync(join(base, 'replica-0'), { recursive: true });
    writeFileSync(join(base, 'replica-0', LOCK), '{"host":');
    const slot = await claimWorkDir(base, { host: 'h', pid: 5, staleMs: 60_000 });
    expect(slot.dir).toBe(join(base, 'replica-1'));
    await slot.release();
  });

  it("one replica's pruning never removes another's mirror", async () => {
    fresh();
    const a = await claimWorkDir(base, { host: 'h', pid: 301, alive: () => true });
    const b = await claimWorkDir(base, { host: 'h', pid: 302, alive: () => true });
    for (const slot of [a, b]) {
      mkdirSync(join(slot.dir, 'mirrors', 'github.com-1.git'), { recursive: true });
      writeFileSync(join(slot.dir, 'mirrors', 'github.com-1.git', 'HEAD'), 'ref: refs/heads/main\n');
    }
    // A budget of nothing: a removes all of its own mirrors, and only those.
    expect(await pruneMirrors(a.dir, 0)).toEqual([join(a.dir, 'mirrors', 'github.com-1.git')]);
    expect(existsSync(join(b.dir, 'mirrors', 'github.com-1.git', 'HEAD'))).toBe(true);
    await Promise.all([a.release(), b.release()]);
  });
});

describe('what a checks job retries instead of reporting as a failure', () => {
  it('the queue away and failed connections are transient; a plain error is not', () => {
    expect(isTransient(new QueueUnavailableError('the queue cannot take jobs: Redis unreachable'))).toBe(
      true,
    );
    expect(
      isTransient(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
    expect(isTransient(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBe(true);
    expect(isTransient(Object.assign(new Error('Server Error'), { status: 502 }))).toBe(true);
    expect(isTransient(new Error('fatal: bad object'))).toBe(false);
    expect(isTransient(Object.assign(new Error('Not Found'), { status: 404 }))).toBe(false);
  });
});
