// Issue 9: replicas under load and faults, all real and on 127.0.0.1: a redis-server,
// `node dist/server.js` replicas as separate processes sharing its queue, the fake GitHub
// API as an HTTP server (helpers/github-server.ts) and bare git repositories. Run
// `npx tsc -p tsconfig.build.json` first (the replicas run dist/).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CATALOG_CHANGE_CHECKS } from './helpers/checks.js';
import { Fleet, haveRedis, sleep, until, type FleetOptions, type FleetPr } from './helpers/fleet.js';

const server = fileURLToPath(new URL('../dist/server.js', import.meta.url));
// The checks of these changes: a run for each, none for the others (docs/github-limits.md).
const names = CATALOG_CHANGE_CHECKS;

describe.skipIf(!haveRedis())('replicas sharing Redis (real processes)', () => {
  let fleet: Fleet | undefined;
  // `lockMs`: how long a replica holds a job before another may take it (CATALOG_BOT_LOCK_MS).
  const start = async ({ lockMs, ...options }: Omit<FleetOptions, 'server'> & { lockMs?: number }) => {
    if (!existsSync(server)) throw new Error('dist/server.js is missing: npx tsc -p tsconfig.build.json');
    // Results are written once, each run created completed, however slow the machine. Checks
    // slower than CATALOG_BOT_ANNOUNCE_AFTER_SECONDS (10 s) first show a run in progress for
    // every check (docs/github-limits.md) and complete those that do not apply as "Not run"
    // (src/handlers/pull-request.ts): verify() counts those as unexpected runs, 3 per slow
    // final head, so under load (a) failed now and then. The App tests cover that path
    // (announceAfterMs: 0).
    fleet = await Fleet.start({
      server,
      ...options,
      env: {
        CATALOG_BOT_ANNOUNCE_AFTER_SECONDS: '600',
        ...(lockMs === undefined ? {} : { CATALOG_BOT_LOCK_MS: String(lockMs) }),
        ...options.env,
      },
    });
    return fleet;
  };
  afterEach(async () => {
    await fleet?.stop(1000);
    fleet = undefined;
  });

  /** Every head of every pull request, round by round, alternating between the replicas. */
  async function deliverAll(f: Fleet, options: { replicas?: number[]; concurrency?: number } = {}) {
    const replicas = options.replicas ?? f.replicas.map((r) => r.index);
    const rounds = Math.max(...f.prs.map((pr) => pr.heads.length));
    let n = 0;
    const statuses: number[] = [];
    for (let k = 0; k < rounds; k++) {
      const round = f.prs.filter((pr) => pr.sent < pr.heads.length - 1);
      const concurrency = options.concurrency ?? 8;
      for (let i = 0; i < round.length; i += concurrency) {
        const batch = round.slice(i, i + concurrency);
        const answers = await Promise.all(batch.map((pr) => f.advance(pr, replicas[n++ % replicas.length]!)));
        statuses.push(...answers.map((a) => a.status));
      }
    }
    return statuses;
  }

  /** Every final head checked and the shared queue idle (nothing left to run), or `ms` pass. */
  const settle = (f: Fleet, ms: number) => until(() => f.settled(names) && f.queueIdle(), ms, 200);

  it('(a) 100 deliveries for 20 pull requests in 4 repositories, to 2 replicas: each final head checked once', async () => {
    const f = await start({ repos: 4, prsPerRepo: 5, headsPerPr: 5 });
    const statuses = await deliverAll(f);
    expect(statuses).toHaveLength(100);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await settle(f, 90_000)).toBe(true);
    expect(f.verify(names)).toEqual([]);
    // Both replicas did work: each answered deliveries, and both ran jobs.
    expect(f.answers.length).toBe(100);
    // The final heads are judged for real: the catalogs are valid (neutral: the images are
    // out of reach, there are no CRDs to compare).
    for (const pr of f.prs)
      for (const run of f.finalRuns(pr)) expect(['success', 'neutral'], run.name).toContain(run.conclusion);
  }, 120_000);

  it('(b) a replica killed mid-job (SIGKILL): another finishes its jobs, each check run once', async () => {
    const f = await start({ repos: 2, prsPerRepo: 1, headsPerPr: 1, replicas: 1, lockMs: 2000 });
    const [first, second] = f.prs as [FleetPr, FleetPr];
    // Replica 0 is mid-announce on the first pull request (3 of its 6 runs created) and
    // mid-check on the second (its runs created, the pull request being read).
    const announcing = f.gh.hold(
      (r) => r.method === 'POST' && r.path === `/repos/${f.fullName(first)}/check-runs`,
      { skip: 3 },
    );
    const checking = f.gh.hold(
      (r) => r.method === 'GET' && r.path === `/repos/${f.fullName(second)}/pulls/${second.pull.number}`,
    );
    expect((await f.advance(first, 0)).status).toBe(200);
    expect((await f.advance(second, 0)).status).toBe(200);
    await Promise.all([announcing.waitFor(1), checking.waitFor(1)]);
    await f.startReplica(1);
    await f.killReplica(0);
    // What the dead replica was asking never reached GitHub.
    announcing.drop();
    checking.drop();
    expect(f.gh.runsFor(f.fullName(first), first.heads[0]!)).toHaveLength(3);
    expect(await settle(f, 30_000)).toBe(true);
    expect(f.verify(names)).toEqual([]);
    // The first pull request's retried announce reused the 3 runs it had made.
    expect(f.gh.runsFor(f.fullName(first), first.heads[0]!)).toHaveLength(names.length);
    expect(f.logOf(1)).not.toBe('');
  }, 60_000);

  it('(d) GitHub answering 502, then rate limited (primary, then secondary): every head still checked once', async () => {
    const f = await start({ repos: 2, prsPerRepo: 4, headsPerPr: 2 });
    // 502 for the first 3 s, from the first delivery on.
    const startedAt = Date.now();
    f.gh.failFor(3000, 502);
    const first = f.prs.map((pr) => f.advance(pr, pr.pull.number % 2));
    expect((await Promise.all(first)).map((a) => a.status)).toEqual(f.prs.map(() => 200));
    await until(() => f.gh.requests.some((r) => r.fault === '502'), 5000, 20);
    await until(() => Date.now() >= startedAt + 3000, 5000, 50);
    // Primary rate limit (403, x-ratelimit-remaining 0, reset in 5 s) while the next heads
    // arrive: long enough that their jobs (queued behind the first heads' retries) meet it.
    f.gh.rateLimitFor(5000, 'primary');
    const second = f.prs.map((pr) => f.advance(pr, (pr.pull.number + 1) % 2));
    expect((await Promise.all(second)).map((a) => a.status)).toEqual(f.prs.map(() => 200));
    await sleep(2500);
    // Secondary rate limit (403 with retry-after): Probot does not retry it; the queue does.
    f.gh.rateLimitFor(5000, 'secondary');
    expect(await settle(f, 60_000)).toBe(true);
    expect(f.verify(names)).toEqual([]);
    const faults = new Set(f.gh.requests.map((r) => r.fault).filter(Boolean));
    expect(faults).toEqual(new Set(['502', '403']));
    // Transient errors are not verdicts: the final heads are green, not "could not check".
    for (const pr of f.prs)
      for (const run of f.finalRuns(pr)) expect(run.conclusion, run.name).not.toBe('failure');
  }, 90_000);

  // A Redis restart with an append-only file, and with a replica killed at the same time:
  // test/replicas-crash.test.ts.
  it('(c) without persistence a Redis restart loses queued jobs: reconciliation checks every head again', async () => {
    // What the design needs when Redis keeps nothing: the webhooks were answered, so GitHub
    // will not send them again; the periodic reconciliation (every 1.2 s here) finds the open
    // pull requests whose head lacks a completed set and queues them again.
    const f = await start({
      repos: 2,
      prsPerRepo: 4,
      headsPerPr: 3,
      appendonly: false,
      lockMs: 3000,
      env: { CATALOG_BOT_RECONCILE_MINUTES: '0.02' },
    });
    for (let k = 0; k < 3; k++) {
      const answers = await Promise.all(f.prs.map((pr) => f.advance(pr, (pr.pull.number + k) % 2)));
      expect(answers.map((a) => a.status)).toEqual(f.prs.map(() => 200));
    }
    // The last heads' jobs are queued or running: Redis dies and comes back empty.
    await f.redis.kill();
    await sleep(500);
    await f.redis.restart();
    // Every final head ends with its newest run of each name completed and not failed.
    const judged = () =>
      f.prs.every((pr) =>
        names.every((name) => {
          const latest = f
            .finalRuns(pr)
            .filter((r) => r.name === name)
            .at(-1);
          return latest?.status === 'completed' && latest.conclusion !== 'skipped';
        }),
      );
    expect(await until(() => judged() && f.queueIdle(), 60_000, 250)).toBe(true);
    for (const pr of f.prs)
      for (const run of f.finalRuns(pr).filter((r) => r.status === 'completed'))
        expect(['success', 'neutral'], run.name).toContain(run.conclusion);
  }, 90_000);

  it('(e) auto-merge merges only heads whose checks it saw green, never one that moved on', async () => {
    const f = await start({ repos: 2, prsPerRepo: 3, headsPerPr: 3, automerge: true });
    await deliverAll(f, { concurrency: 6 });
    // Every pull request ends merged, or with its final head checked.
    const done = () =>
      f.prs.every((pr) => {
        if (pr.pull.merged) return true;
        const runs = f.finalRuns(pr).filter((r) => r.status === 'completed' && r.conclusion !== 'skipped');
        return runs.length >= names.length;
      });
    expect(await until(() => done() && f.queueIdle(), 40_000, 200)).toBe(true);
    expect(f.gh.merges.length).toBeGreaterThan(0);
    for (const m of f.gh.merges) {
      const runs = f.gh.runsFor(m.repo, m.sha!);
      for (const name of names) {
        const green = runs.filter(
          (r) =>
            r.name === name &&
            r.status === 'completed' &&
            (r.conclusion === 'success' || r.conclusion === 'neutral') &&
            r.completedAt! <= m.at,
        );
        expect(green.length, `${m.repo}#${m.number} ${m.sha} ${name}`).toBeGreaterThan(0);
      }
      // The merged sha was that pull request's head when merged: the fake refuses others (409).
      const pr = f.prs.find((p) => f.fullName(p) === m.repo && p.pull.number === m.number)!;
      expect(pr.heads).toContain(m.sha);
    }
    // One merge per pull request at most.
    const merged = f.gh.merges.map((m) => `${m.repo}#${m.number}`);
    expect(new Set(merged).size).toBe(merged.length);
  }, 60_000);
});
