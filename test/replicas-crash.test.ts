// Issue 36: replicas on Redis never run a head's checks twice and never lose one. Two
// `node dist/server.js` replicas on one redis-server with an append-only file, webhooks
// spread round robin as a load balancer does, reconciliation on (a pass at every start), the
// fake GitHub API as an HTTP server. Run `npx tsc -p tsconfig.build.json` first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { CATALOG_CHANGE_CHECKS } from './helpers/checks.js';
import { Fleet, haveRedis, sleep, until } from './helpers/fleet.js';

const server = fileURLToPath(new URL('../dist/server.js', import.meta.url));
const names = CATALOG_CHANGE_CHECKS;

/** Every head (final or superseded) with more than one completed run of any check. */
function duplicates(f: Fleet): string[] {
  const out: string[] = [];
  for (const pr of f.prs)
    for (const head of pr.heads.slice(0, pr.sent + 1)) {
      const runs = f.gh.runsFor(f.fullName(pr), head).filter((r) => r.status === 'completed');
      for (const name of PR_CHECK_NAMES) {
        const n = runs.filter((r) => r.name === name).length;
        if (n > 1) out.push(`${f.fullName(pr)}#${pr.pull.number}@${head.slice(0, 8)} ${name} x${n}`);
      }
    }
  return out;
}

/**
 * What keeps a final head from one completed set: fleet's verify(), less a check that does
 * not apply shown once as "Not run" (a head whose checks were shown in progress first,
 * docs/github-limits.md): that is not a second run of anything.
 */
function setProblems(f: Fleet): string[] {
  const notRun = (problem: string) => {
    const m = /^(.*)#(\d+)@\w+: unexpected run (\S+)$/.exec(problem);
    const pr = m && f.prs.find((p) => f.fullName(p) === m[1] && p.pull.number === Number(m[2]));
    const runs = pr ? f.finalRuns(pr).filter((r) => r.name === m![3]) : [];
    return runs.length === 1 && runs[0]!.conclusion === 'neutral' && runs[0]!.output?.title === 'Not run';
  };
  return f.verify(names).filter((p) => !notRun(p));
}

describe.skipIf(!haveRedis())('replicas on Redis: crashes and restarts (issue 36)', () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop(1000);
    fleet = undefined;
  });

  /**
   * Replicas of the built server on Redis with an append-only file, jobs leased for 3 s,
   * results written once (no run shown in progress first), on 2 repositories of `prsPerRepo`
   * pull requests with 2 heads each; stopped after the test.
   */
  async function start(
    prsPerRepo: number,
    options: { sharedWorkDir?: boolean; reconcileMinutes?: number } = {},
  ): Promise<Fleet> {
    if (!existsSync(server)) throw new Error('dist/server.js is missing: npx tsc -p tsconfig.build.json');
    const env: Record<string, string> = {
      CATALOG_BOT_LOCK_MS: '3000',
      CATALOG_BOT_ANNOUNCE_AFTER_SECONDS: '600',
    };
    if (options.reconcileMinutes !== undefined)
      env.CATALOG_BOT_RECONCILE_MINUTES = String(options.reconcileMinutes);
    const { sharedWorkDir } = options;
    fleet = await Fleet.start({
      server,
      repos: 2,
      prsPerRepo,
      headsPerPr: 2,
      appendonly: true,
      sharedWorkDir,
      env,
    });
    return fleet;
  }

  it('a burst, one replica SIGKILLed and restarted mid-burst, Redis restarted: one completed set per final head, no duplicate run', async () => {
    // Both on one work directory, as replicas sharing a host or a volume.
    const f = await start(5, { sharedWorkDir: true, reconcileMinutes: 15 });
    const started = Date.now();
    // GitHub holds the check runs' writes until replica 1 is back: however fast the machine,
    // every head's results are still on their way when it reconciles.
    const writes = f.gh.hold((r) => r.method === 'POST' && r.path.endsWith('/check-runs'));
    // Opened, round robin.
    const opened = await Promise.all(f.prs.map((pr, i) => f.advance(pr, i % 2)));
    expect(opened.map((a) => a.status)).toEqual(f.prs.map(() => 200));
    // One push each, round robin the other way; replica 1 dies in the middle and comes back.
    const half = Math.floor(f.prs.length / 2);
    for (const [i, pr] of f.prs.slice(0, half).entries())
      expect((await f.advance(pr, (i + 1) % 2)).status).toBe(200);
    await f.killReplica(1);
    for (const pr of f.prs.slice(half)) expect((await f.advance(pr, 0)).status).toBe(200);
    await writes.waitFor(1);
    // Its reconciliation at start finds every final head without runs, and every one of them
    // already on its way (the old code queued all ten again).
    const passes = () => [...f.logOf(1).matchAll(/"checksQueued":(\d+),"checksBusy":(\d+)/g)];
    const before = passes().length;
    await f.startReplica(1);
    expect(await until(() => passes().length > before, 60_000, 200)).toBe(true);
    expect(passes()[before]!.slice(1).map(Number)).toEqual([0, f.prs.length]);
    writes.release();
    // Then Redis stops (SIGKILL) and comes back on the same data.
    await f.redis.kill();
    await sleep(1000);
    await f.redis.restart();
    const settled = await until(() => f.settled(names) && f.queueIdle(), 120_000, 250);
    const figures = {
      deliveries: f.answers.length,
      runs: f.gh.checkRuns.length,
      writes: f.gh.writes.length,
      settleMs: Date.now() - started,
    };
    console.log(`replicas-crash: ${JSON.stringify(figures)}`);
    expect(settled).toBe(true);
    expect(duplicates(f)).toEqual([]);
    expect(setProblems(f)).toEqual([]);
    // Each replica in its own slot of the shared work directory; the restarted one took its
    // slot back (its mirrors were still there).
    const slots = [0, 1].map((i) =>
      [...f.logOf(i).matchAll(/catalog-bot starting: .*?workDir=(\S+)/g)].map((m) =>
        m[1]!.replace(f.dir, ''),
      ),
    );
    // Which replica claims which slot first is a race; the restarted one gets its own back.
    expect(slots[0]).toHaveLength(1);
    expect(slots[1]).toHaveLength(2);
    expect([slots[0]![0], slots[1]![0]].sort()).toEqual(['/work/replica-0', '/work/replica-1']);
    expect(slots[1]![1]).toBe(slots[1]![0]);
    // Both ready; what an operator watches shows the heads reconciliation left alone.
    const metrics = await Promise.all([0, 1].map((i) => f.metricsOf(i)));
    for (const text of metrics) expect(text).toMatch(/^catalog_bot_queue_ready 1$/m);
    expect(metrics[1]).toMatch(
      new RegExp(`^catalog_bot_reconciled_heads_total\\{outcome="busy"\\} ${f.prs.length}$`, 'm'),
    );
  }, 180_000);

  it('Redis stopped for 30 s mid-burst: no job lost, no duplicate, readiness follows Redis, a bounded log', async () => {
    const f = await start(3);
    const started = Date.now();
    const opened = await Promise.all(f.prs.map((pr, i) => f.advance(pr, i % 2)));
    expect(opened.map((a) => a.status)).toEqual(f.prs.map(() => 200));
    const linesBefore = [0, 1].map((i) => f.logOf(i).split('\n').length);
    await f.redis.kill();
    const ready = async (i: number) =>
      (await fetch(`http://127.0.0.1:${f.replicas[i]!.port}/healthz`).catch(() => undefined))?.status;
    expect(await until(async () => (await ready(0)) === 503 && (await ready(1)) === 503, 10_000, 200)).toBe(
      true,
    );
    // Pushes while Redis is away: not accepted (GitHub keeps the delivery and sends it again).
    const refused = await Promise.all(f.prs.map((pr, i) => f.advance(pr, (i + 1) % 2, `outage-${i}`)));
    expect(refused.every((a) => a.status >= 500)).toBe(true);
    await sleep(30_000);
    const outageLines = [0, 1].map((i) => f.logOf(i).split('\n').length - linesBefore[i]!);
    await f.redis.restart();
    expect(await until(async () => (await ready(0)) === 200 && (await ready(1)) === 200, 20_000, 200)).toBe(
      true,
    );
    // GitHub's redelivery of the refused pushes (same delivery ids).
    for (const [i, pr] of f.prs.entries())
      expect((await f.send(i % 2, 'pull_request', f.payload(pr, 1), `outage-${i}`)).status).toBe(200);
    const settled = await until(() => f.settled(names) && f.queueIdle(), 90_000, 250);
    console.log(
      `replicas-outage: ${JSON.stringify({ runs: f.gh.checkRuns.length, writes: f.gh.writes.length, outageLogLines: outageLines, settleMs: Date.now() - started })}`,
    );
    expect(settled).toBe(true);
    expect(duplicates(f)).toEqual([]);
    expect(setProblems(f)).toEqual([]);
    // Told once that Redis went away (and once per job it could not finish), not once per retry.
    for (const n of outageLines) expect(n).toBeLessThan(30);
  }, 180_000);
});
