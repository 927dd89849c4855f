// The Redis-backed queue with a real redis-server on 127.0.0.1, replicas as separate queue
// instances and, for the crash test, a separate process killed mid-job.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisQueue } from '../src/redis-queue.js';
import type { JobSpec } from '../src/queue.js';

const haveRedis = spawnSync('sh', ['-c', 'command -v redis-server']).status === 0;
const distQueue = fileURLToPath(new URL('../dist/redis-queue.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!haveRedis)('RedisQueue (real redis-server)', () => {
  let redis: ChildProcess;
  let url: string;
  let port: number;
  let name: string;
  let n = 0;
  const open: RedisQueue[] = [];

  beforeAll(async () => {
    port = await freePort();
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    url = `redis://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (
        spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG'
      )
        break;
      await sleep(50);
    }
  });
  afterAll(async () => {
    await Promise.all(open.map((q) => q.close().catch(() => undefined)));
    redis.kill('SIGKILL');
  });
  beforeEach(() => {
    name = `test-${++n}`; // a queue of its own per test
  });

  const replica = (options: Partial<ConstructorParameters<typeof RedisQueue>[0]> = {}) => {
    const q = new RedisQueue({ url, name, ...options });
    open.push(q);
    return q;
  };
  const job = (key: string, group?: string, data: unknown = null): JobSpec => ({
    key,
    kind: 't',
    data,
    ...(group ? { group } : {}),
  });

  it('does a delivery once, whichever replica gets it and however often', async () => {
    const a = replica();
    const b = replica();
    const ran: string[] = [];
    a.start(async (j) => void ran.push(`a:${j.key}`));
    b.start(async (j) => void ran.push(`b:${j.key}`));
    expect(await a.enqueue(job('delivery-1'))).toBe(true);
    expect(await b.enqueue(job('delivery-1'))).toBe(false);
    await a.onIdle();
    expect(await a.enqueue(job('delivery-1'))).toBe(false); // also after it ran
    await a.onIdle();
    expect(ran.map((r) => r.slice(2))).toEqual(['delivery-1']);
  });

  it('a subject is busy, for every replica, from the moment its job is queued until the last of its jobs is done', async () => {
    const a = replica();
    const b = replica();
    const subject = 'checks:1:2:abc';
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    expect(await b.busy(subject)).toBe(false);
    // Queued, nobody running jobs yet: waiting counts.
    expect(await a.enqueue({ ...job('delivery-s1', 'repo:1'), subject })).toBe(true);
    expect(await b.busy(subject)).toBe(true);
    // Running, then handing over to a second job of the same subject (checks -> results).
    a.start(async (j) => {
      if (j.key === 'delivery-s1') {
        await a.enqueue({ ...job('delivery-s1:results', 'writes:1'), subject });
        await held;
      }
    });
    await sleep(300);
    expect(await b.busy(subject)).toBe(true);
    release();
    await a.onIdle();
    expect(await b.busy(subject)).toBe(false);
    expect(await b.busy('checks:1:2:other')).toBe(false);
  });

  it('runs one job per repository at a time across replicas, and other repositories in parallel', async () => {
    const replicas = [replica(), replica()];
    const running = new Map<string, number>();
    let mostInOneGroup = 0;
    let mostOverall = 0;
    let overall = 0;
    const done: string[] = [];
    for (const q of replicas)
      q.start(async (j) => {
        const g = j.group!;
        running.set(g, (running.get(g) ?? 0) + 1);
        overall++;
        mostInOneGroup = Math.max(mostInOneGroup, running.get(g)!);
        mostOverall = Math.max(mostOverall, overall);
        await sleep(40);
        running.set(g, running.get(g)! - 1);
        overall--;
        done.push(j.key);
      });
    for (let i = 0; i < 6; i++) {
      await replicas[i % 2]!.enqueue(job(`r1-${i}`, 'repo:1'));
      await replicas[(i + 1) % 2]!.enqueue(job(`r2-${i}`, 'repo:2'));
    }
    await replicas[0]!.onIdle();
    expect(done.sort()).toEqual([...Array(6).keys()].flatMap((i) => [`r1-${i}`, `r2-${i}`]).sort());
    expect(mostInOneGroup).toBe(1);
    expect(mostOverall).toBeGreaterThan(1);
  });

  it('retries a job that throws, with backoff', async () => {
    let tries = 0;
    const errors: unknown[] = [];
    const q2 = replica({ attempts: 3, onError: (e) => errors.push(e) });
    q2.start(async () => {
      tries++;
      if (tries < 2) throw new Error('GitHub answered 502');
    });
    await q2.enqueue(job('flaky'));
    await q2.onIdle();
    expect(tries).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('a replica killed mid-job: the job completes on another, and the repository lock frees itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-replica-'));
    try {
      // The doomed replica: takes the job, says so, then hangs.
      const script = join(dir, 'replica.mjs');
      writeFileSync(
        script,
        [
          `import { RedisQueue } from ${JSON.stringify(distQueue)};`,
          `const q = new RedisQueue({ url: ${JSON.stringify(url)}, name: ${JSON.stringify(name)}, lockMs: 1000 });`,
          `q.start(async () => { process.stdout.write('started\\n'); await new Promise(() => {}); });`,
          `process.stdout.write('ready\\n');`,
        ].join('\n'),
      );
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      while (!out.includes('ready')) await sleep(20);
      const survivor = replica({ lockMs: 1000 });
      await survivor.enqueue(job('long', 'repo:9', { n: 1 }));
      while (!out.includes('started')) await sleep(20);
      child.kill('SIGKILL');
      const ran: unknown[] = [];
      survivor.start(async (j) => void ran.push(j.data));
      const deadline = Date.now() + 20_000;
      while (ran.length === 0 && Date.now() < deadline) await sleep(100);
      expect(ran).toEqual([{ n: 1 }]);
      // The same repository's next job is not blocked by the dead replica's lock.
      await survivor.enqueue(job('next', 'repo:9', { n: 2 }));
      await survivor.onIdle();
      expect(ran).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});

describe.skipIf(!haveRedis)('the server with REDIS_URL (npm start, a separate process)', () => {
  it('serves /healthz and /metrics, and on SIGTERM finishes and exits 0', async () => {
    const redisPort = await freePort();
    const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', ''], {
      stdio: 'ignore',
    });
    const port = await freePort();
    const metricsPort = await freePort();
    const { generateKeyPairSync } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const server = spawn(process.execPath, [fileURLToPath(new URL('../dist/server.js', import.meta.url))], {
      env: {
        ...process.env,
        APP_ID: '1',
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: 'secret',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'fatal',
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        CATALOG_BOT_RECONCILE_MINUTES: '0', // no GitHub here to reconcile with
        CATALOG_BOT_METRICS_PORT: String(metricsPort),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      // Readiness: 503 until the queue has reached Redis, then 200 (README, "Operating it").
      let health: Response | undefined;
      for (let i = 0; i < 100 && health?.status !== 200; i++) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (health?.status !== 200) await sleep(100);
      }
      expect(health?.status).toBe(200);
      // Metrics on their own port (127.0.0.1 by default), not the webhook port.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('catalog_bot_queue_depth 0');
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toContain('SIGTERM, finishing running jobs');
    } finally {
      server.kill('SIGKILL');
      redis.kill('SIGKILL');
    }
  }, 30_000);
});
