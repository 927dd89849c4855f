// Issue 30, item 8 ("Operating it"), on the real server process (`node dist/server.js`, as
// `npm start` runs it) with a real redis-server: readiness that follows Redis, liveness that
// does not, one log line per Redis state change, a start-up line with the effective
// configuration and no secret, a log line for each job's start and end, and SIGTERM done
// within 30 s while GitHub does not answer, the running job left to the queue. Run
// `npx tsc -p tsconfig.build.json` first (the server runs dist/).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveConfig, healthRoutes, shutdownGraceMs } from '../src/server.js';
import { InProcessQueue } from '../src/queue.js';
import { describeJob, jobSubject } from '../src/jobs.js';
import { CATALOG_CHANGE_CHECKS } from './helpers/checks.js';
import { Fleet, freePort, haveRedis, sleep, until } from './helpers/fleet.js';
import { webhookExample } from './helpers/github.js';

const server = fileURLToPath(new URL('../dist/server.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A redis-server with a password, that can be killed and started again on its port. */
class PasswordRedis {
  child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly password: string,
  ) {}
  start(): void {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--requirepass', this.password],
      { stdio: 'ignore' },
    );
  }
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

const status = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(
    async (res) => ({ status: res.status, body: await res.text() }),
    () => ({ status: 0, body: '' }),
  );

describe('configuration and job descriptions (pure)', () => {
  it('the start-up configuration names the queue, Redis host, work directory, ports and GitHub, no password', () => {
    const config = effectiveConfig({
      REDIS_URL: 'redis://queue-user:hunter2-secret@redis.internal:6380/2',
      CATALOG_BOT_WORKDIR: '/var/lib/catalog-bot',
      CATALOG_BOT_METRICS_PORT: '9999',
      LOG_LEVEL: 'debug',
      GHE_HOST: 'ghe.example.test',
      GHE_PROTOCOL: 'https',
    });
    expect(config).toMatchObject({
      queue: 'redis',
      redis: 'redis://redis.internal:6380/2',
      workDir: '/var/lib/catalog-bot',
      metrics: '127.0.0.1:9999',
      logLevel: 'debug',
      github: 'https://ghe.example.test',
    });
    expect(JSON.stringify(config)).not.toMatch(/hunter2|queue-user/);
    expect(effectiveConfig({}).queue).toBe('in-process');
  });

  it('a write pacing that is neither `off` nor milliseconds stops the server at start with the reason, exit 2', () => {
    if (!existsSync(server)) throw new Error('dist/server.js is missing: npx tsc -p tsconfig.build.json');
    const run = spawnSync(process.execPath, [server], {
      env: {
        PATH: process.env.PATH,
        APP_ID: '1',
        PRIVATE_KEY: 'x',
        WEBHOOK_SECRET: 'x',
        CATALOG_BOT_WRITE_PACING: 'fast',
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      'catalog-bot: CATALOG_BOT_WRITE_PACING="fast": expected `off` or the milliseconds between writes (e.g. 1000)',
    );
  });

  it('SIGTERM waits at most 25 s for running jobs, whatever is configured', () => {
    expect(shutdownGraceMs({})).toBe(20_000);
    expect(shutdownGraceMs({ CATALOG_BOT_SHUTDOWN_GRACE_SECONDS: '600' })).toBe(25_000);
    expect(shutdownGraceMs({ CATALOG_BOT_SHUTDOWN_GRACE_SECONDS: 'soon' })).toBe(20_000);
  });

  it('the in-process queue: close() waits at most graceMs for a job that hangs, names it, and readiness turns 503', async () => {
    const queue = new InProcessQueue();
    queue.start(() => new Promise<void>(() => undefined)); // GitHub never answers
    queue.add({ key: 'hangs', kind: 'pr-checks', data: null });
    await sleep(10);
    const route = healthRoutes(queue);
    const answer = async (path: string) => {
      let status = 0;
      let body = '';
      const res = {
        writeHead: (s: number) => ((status = s), res),
        end: (b?: string) => void (body = b ?? ''),
      };
      expect(route({ url: path, method: 'GET' } as never, res as never)).toBe(true);
      return { status, body };
    };
    expect((await answer('/healthz')).status).toBe(200);
    let left: string[] = [];
    const started = performance.now();
    const closing = queue.close({ graceMs: 300, onHandedBack: (keys) => (left = keys) });
    expect(await answer('/healthz')).toEqual({
      status: 503,
      body: '{"status":"unavailable","reason":"shutting down"}\n',
    });
    expect((await answer('/livez')).status).toBe(200);
    await closing;
    expect(performance.now() - started).toBeLessThan(2000);
    expect(left).toEqual(['hangs']);
  });

  it('a job is described by its repository, pull request and commit', () => {
    const prJob = {
      ref: { owner: 'acme', repo: 'catalogs' },
      number: 7,
      headSha: '1a2b3c4d5e6f',
      repoId: 1,
      cloneUrl: 'x',
    };
    const subject = jobSubject({ job: prJob, completions: {} });
    expect(subject).toEqual({ repository: 'acme/catalogs', pull: 7, sha: '1a2b3c4d5e6f' });
    expect(describeJob('pr-results', subject)).toBe('pr-results acme/catalogs#7 @1a2b3c4d');
  });
});

describe.skipIf(!haveRedis())('the server process (real redis-server)', () => {
  it('readiness fails while Redis is down and comes back by itself; liveness stays up; one log line per change; no secret in the log', async () => {
    if (!existsSync(server)) throw new Error('dist/server.js is missing: npx tsc -p tsconfig.build.json');
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-ops-'));
    dirs.push(dir);
    const secrets = {
      redisPassword: 'redis-pw-7f3a9c',
      webhook: 'webhook-secret-51d2e8',
      registry: 'registry-password-0c9b4e',
    };
    const privateKey = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }).privateKey;
    const redis = new PasswordRedis(await freePort(), secrets.redisPassword);
    redis.start();
    const port = await freePort();
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [server], {
      env: {
        PATH: process.env.PATH,
        APP_ID: '1',
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: secrets.webhook,
        REGISTRY_USERNAME: 'robot',
        REGISTRY_PASSWORD: secrets.registry,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        REDIS_URL: `redis://:${secrets.redisPassword}@127.0.0.1:${redis.port}`,
        CATALOG_BOT_WORKDIR: join(dir, 'work'),
        CATALOG_BOT_METRICS_PORT: String(metricsPort),
        CATALOG_BOT_RECONCILE_MINUTES: '0',
        GHE_HOST: '127.0.0.1:1',
        GHE_PROTOCOL: 'http',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      expect(await until(async () => (await status(`${base}/healthz`)).status === 200, 20_000, 50)).toBe(
        true,
      );
      // The start-up line: the configuration in effect.
      const startup = out.split('\n').find((l) => l.includes('catalog-bot starting'));
      expect(startup, out).toBeDefined();
      const config = JSON.parse(startup!).config;
      expect(config).toMatchObject({
        queue: 'redis',
        redis: `redis://127.0.0.1:${redis.port}`,
        // This replica's own slot of the work directory (docs/replicas.md).
        workDir: join(dir, 'work', 'replica-0'),
        metrics: `127.0.0.1:${metricsPort}`,
        logLevel: 'info',
        github: 'http://127.0.0.1:1',
      });

      await redis.kill();
      expect(await until(async () => (await status(`${base}/healthz`)).status === 503, 5000, 50)).toBe(true);
      const down = await status(`${base}/healthz`);
      expect(JSON.parse(down.body)).toMatchObject({ status: 'unavailable' });
      expect(JSON.parse(down.body).reason).toMatch(/Redis unreachable/);
      // The probe is on the public port: it does not tell where Redis is.
      expect(down.body).not.toContain(String(redis.port));
      expect((await status(`${base}/livez`)).status).toBe(200);
      // A webhook is answered at once (an error: nothing can be queued), not after a wait.
      const started = performance.now();
      const body = JSON.stringify({ ...webhookExample('pull_request', 'opened'), installation: { id: 1 } });
      const hook = await fetch(`${base}/api/github/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'pull_request',
          'x-github-delivery': 'while-redis-is-down',
          'x-hub-signature-256': `sha256=${createHmac('sha256', secrets.webhook).update(body).digest('hex')}`,
        },
        body,
      });
      await hook.arrayBuffer();
      const webhookMs = performance.now() - started;
      expect(hook.status).toBeGreaterThanOrEqual(500);
      expect(webhookMs).toBeLessThan(1000);
      // Four seconds of outage: ioredis retries many times; the log says so once.
      const linesBefore = out.split('\n').length;
      await sleep(4000);
      const outageLines = out.split('\n').length - linesBefore;
      expect(outageLines, out).toBeLessThanOrEqual(6);
      expect(out.match(/Redis is unreachable/g)).toHaveLength(1);

      redis.start();
      expect(await until(async () => (await status(`${base}/healthz`)).status === 200, 15_000, 100)).toBe(
        true,
      );
      expect(out.match(/Redis is reachable again/g)).toHaveLength(1);
      console.log(
        `operations: ${outageLines} log lines in 4 s of Redis outage; webhook answered in ${Math.round(webhookMs)} ms`,
      );

      // No secret anywhere in what the process wrote.
      for (const secret of [...Object.values(secrets), privateKey.split('\n')[1]!])
        expect(out).not.toContain(secret);
    } finally {
      child.kill('SIGKILL');
      await redis.kill();
    }
  }, 45_000);

  it('logs each job start and end with the pull request; SIGTERM with GitHub hanging exits in time and leaves the job to the queue', async () => {
    if (!existsSync(server)) throw new Error('dist/server.js is missing: npx tsc -p tsconfig.build.json');
    const fleet = await Fleet.start({
      server,
      repos: 1,
      prsPerRepo: 1,
      headsPerPr: 1,
      replicas: 1,
      env: {
        CATALOG_BOT_ANNOUNCE_AFTER_SECONDS: '600',
        CATALOG_BOT_LOCK_MS: '2000',
        CATALOG_BOT_SHUTDOWN_GRACE_SECONDS: '3',
      },
    });
    try {
      const [pr] = fleet.prs as [(typeof fleet.prs)[0]];
      const sha = pr.heads[0]!;
      const jobLines = (index: number) =>
        fleet
          .logOf(index)
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.pull === pr.pull.number && l.sha === sha);
      // GitHub stops answering: every request hangs.
      const hang = fleet.gh.hold(() => true);
      expect((await fleet.advance(pr, 0)).status).toBe(200);
      await hang.waitFor(1);
      // The job's start is logged at info level with its pull request and commit (whichever of
      // the pull request's jobs took the repository's turn first: pr-checks or note-head).
      const startLine = () =>
        jobLines(0).find((l) => /^job started: (pr-checks|note-head) /.test(String(l.msg)));
      await until(() => startLine() !== undefined, 10_000, 50);
      const started = startLine();
      expect(started, fleet.logOf(0)).toMatchObject({ level: 30, repository: fleet.fullName(pr) });
      expect(String(started!.msg)).toContain(`#${pr.pull.number} @${sha.slice(0, 8)}`);
      const replica = fleet.replicas[0]!;
      const exited = new Promise((resolve) => replica.child.once('exit', resolve));
      const signalled = performance.now();
      replica.child.kill('SIGTERM');
      const inTime = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
      const shutdownMs = performance.now() - signalled;
      expect(inTime).toBe(true);
      console.log(`operations: SIGTERM with GitHub hanging: exited in ${Math.round(shutdownMs)} ms`);
      expect(fleet.logOf(0)).toMatch(/left to the queue/);
      // The job was not lost: GitHub answers again, another replica does it.
      hang.drop();
      await fleet.startReplica(1);
      expect(await until(() => fleet.settled(CATALOG_CHANGE_CHECKS), 20_000, 100)).toBe(true);
      expect(fleet.verify(CATALOG_CHANGE_CHECKS)).toEqual([]);
      // Its end too, with the outcome and how long it took ("checks written").
      expect(await until(() => fleet.logOf(1).includes('job done: pr-results'), 5000, 50)).toBe(true);
      const done = jobLines(1).find((l) => String(l.msg).startsWith('job done: pr-results'));
      expect(done, fleet.logOf(1)).toMatchObject({ level: 30, outcome: 'done' });
      expect(done!.seconds).toBeTypeOf('number');
    } finally {
      await fleet.stop(1000);
    }
  }, 60_000);
});
