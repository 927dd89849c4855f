// `npm start`: the GitHub App server. Configuration is Probot's environment (APP_ID,
// PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT, HOST, GHE_HOST, GHE_PROTOCOL,
// LOG_LEVEL); webhooks arrive at /api/github/webhooks. GET /healthz (readiness) answers 200
// while the queue can work, GET /livez while the process runs (README "Operating it").
// Prometheus metrics are served on a port of their own (metricsServer), never on the
// webhook port.
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { run, type ApplicationFunction, type Probot } from 'probot';
import { octokitFromEnv } from './github/client.js';

// The App's GitHub client, as bench/github-app.mjs and the tests build it.
export { octokitFromEnv, waitOut } from './github/client.js';
import { createApp, type AppOptions } from './app.js';
import { probotGitHubApp } from './github/adapter.js';
import { pagesRepository } from './flows/pages/repository.js';
import { pagesRoutes } from './flows/pages/routes.js';
import { defaultWorkDir } from './git/mirror.js';
import { claimWorkDir, type WorkDirSlot } from './work-dir.js';
import { AppMetrics } from './metrics.js';
import { InProcessQueue, type JobQueue } from './queue.js';
import { RedisQueue } from './redis-queue.js';

/**
 * GET /healthz, readiness: 200 `ok` while the queue can take and run jobs; 503 with a JSON
 * reason while it cannot (Redis unreachable, shutting down), so a load balancer sends
 * webhooks to a replica that can queue them. It comes back by itself with Redis.
 * GET /livez, liveness: 200 while the process answers at all; it never asks Redis, so an
 * outage of Redis does not get every replica restarted.
 */
export function healthRoutes(queue: Pick<JobQueue, 'health'>) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if ((path !== '/healthz' && path !== '/livez') || (req.method !== 'GET' && req.method !== 'HEAD'))
      return false;
    const health = path === '/livez' ? { ready: true } : queue.health();
    if (health.ready) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : 'ok\n');
    } else {
      res.writeHead(503, { 'content-type': 'application/json' });
      const body = JSON.stringify({ status: 'unavailable', reason: health.reason ?? 'not ready' });
      res.end(req.method === 'HEAD' ? undefined : body + '\n');
    }
    return true;
  };
}

/** The app plus the HTTP routes the runtime contract asks for. */
export function serverApp(
  options: AppOptions & {
    /** Called with the app's logger once it exists (start-up line, Redis state changes). */
    onLog?: (log: Probot['log']) => void;
  } = {},
): ApplicationFunction {
  const metrics = options.metrics ?? new AppMetrics();
  const queue = options.queue ?? new InProcessQueue();
  const app = createApp({ ...options, queue, metrics });
  return async (probot, appOptions) => {
    appOptions.addHandler(healthRoutes(queue));
    // Catalog pages of the public repositories the App is installed on (docs/site.md).
    appOptions.addHandler(
      pagesRoutes({
        workDir: options.workDir ?? defaultWorkDir(),
        repository: pagesRepository(probotGitHubApp(probot)),
        onError: (error) => probot.log.warn({ err: error }, 'a catalog page could not be made'),
      }),
    );
    options.onLog?.(probot.log);
    await app(probot, appOptions);
  };
}

/**
 * The configuration in effect, for the start-up log line: what an operator needs to see
 * (which queue, where the mirrors are, which ports) and never a secret. The Redis URL is
 * reduced to its host, port and database: it may carry a password.
 */
export function effectiveConfig(env: NodeJS.ProcessEnv = process.env): Record<string, string | number> {
  let redis = '';
  if (env.REDIS_URL) {
    try {
      const url = new URL(env.REDIS_URL);
      redis = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
    } catch {
      redis = '(REDIS_URL is not a URL)';
    }
  }
  return {
    queue: env.REDIS_URL ? 'redis' : 'in-process',
    ...(redis ? { redis } : {}),
    role: env.CATALOG_BOT_ROLE ?? 'all',
    port: Number(env.PORT ?? 3000),
    workDir: defaultWorkDir(env),
    metrics:
      env.CATALOG_BOT_METRICS_PORT === 'off'
        ? 'off'
        : `${env.CATALOG_BOT_METRICS_HOST || '127.0.0.1'}:${env.CATALOG_BOT_METRICS_PORT ?? '9464'}`,
    logLevel: env.LOG_LEVEL ?? 'info',
    github: env.GHE_HOST ? `${env.GHE_PROTOCOL ?? 'https'}://${env.GHE_HOST}` : 'https://github.com',
    reconcileMinutes: Number(env.CATALOG_BOT_RECONCILE_MINUTES ?? 15),
    shutdownGraceSeconds: shutdownGraceMs(env) / 1000,
  };
}

/**
 * How long SIGTERM waits for running jobs (CATALOG_BOT_SHUTDOWN_GRACE_SECONDS, default 20,
 * at most 25): the process is gone within 30 s whatever GitHub does, inside Kubernetes'
 * default grace period.
 */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.CATALOG_BOT_SHUTDOWN_GRACE_SECONDS ?? 20);
  return Math.min(Number.isFinite(seconds) && seconds >= 0 ? seconds : 20, 25) * 1000;
}

/**
 * GET /metrics on its own port: CATALOG_BOT_METRICS_PORT (default 9464; `off` serves none)
 * on CATALOG_BOT_METRICS_HOST (default 127.0.0.1). The webhook port faces GitHub and the
 * internet; metrics (repository names, job counts) are for the operator's scraper only
 * (docs/security.md). A port that cannot be bound is logged, not fatal: metrics are not
 * worth losing webhooks for.
 */
export function metricsServer(
  metrics: AppMetrics,
  env: NodeJS.ProcessEnv = process.env,
  onError: (error: Error) => void = (error) => console.error(`catalog-bot: metrics server: ${error.message}`),
): HttpServer | undefined {
  const portText = env.CATALOG_BOT_METRICS_PORT ?? '9464';
  if (portText === 'off') return undefined;
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    onError(new Error(`CATALOG_BOT_METRICS_PORT must be a port number or off; got ${portText}`));
    return undefined;
  }
  const route = metrics.handler();
  const server = createServer((req, res) => {
    if (route(req, res)) return;
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
  });
  server.on('error', onError);
  server.listen(port, env.CATALOG_BOT_METRICS_HOST || '127.0.0.1');
  return server;
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  // The app's logger, once Probot has made it; until then (and for what it cannot say) stderr.
  let log: Probot['log'] | undefined;
  // REDIS_URL: replicas share a Redis-backed queue; otherwise the in-process one.
  const queue: JobQueue = process.env.REDIS_URL
    ? new RedisQueue({
        url: process.env.REDIS_URL,
        // Once per change: an unreachable Redis fails every reconnection attempt.
        onConnection: (reachable, detail) =>
          log ? log[reachable ? 'info' : 'error'](detail) : console.error(`catalog-bot: ${detail}`),
        // How long a replica may go silent before its job is given to another (default 30 s).
        ...(Number(process.env.CATALOG_BOT_LOCK_MS) > 0
          ? { lockMs: Number(process.env.CATALOG_BOT_LOCK_MS) }
          : {}),
      })
    : new InProcessQueue();
  // Reconciliation: at start and every CATALOG_BOT_RECONCILE_MINUTES (default 15; 0 turns it off).
  const minutes = Number(process.env.CATALOG_BOT_RECONCILE_MINUTES ?? 15);
  const reconcileEveryMs = Number.isFinite(minutes) && minutes > 0 ? minutes * 60_000 : 0;
  // CATALOG_BOT_ROLE=web: answer webhooks and queue only (needs REDIS_URL and worker
  // replicas); worker or all (default): run jobs too. Checks are CPU work: web replicas
  // kept free of it answer webhooks fast however busy the workers are.
  const role = process.env.CATALOG_BOT_ROLE ?? 'all';
  if (!['web', 'worker', 'all'].includes(role) || (role === 'web' && !process.env.REDIS_URL)) {
    console.error(
      `catalog-bot: CATALOG_BOT_ROLE must be web, worker or all (web needs REDIS_URL); got ${role}`,
    );
    process.exit(2);
  }
  let Octokit: ReturnType<typeof octokitFromEnv>;
  try {
    Octokit = octokitFromEnv();
  } catch (error) {
    console.error(`catalog-bot: ${(error as Error).message}`);
    process.exit(2);
  }
  // This replica's own slot of the work directory: replicas sharing a host or a volume
  // never prune or re-clone each other's mirrors (docs/replicas.md).
  let slot: WorkDirSlot;
  try {
    slot = await claimWorkDir(defaultWorkDir());
  } catch (error) {
    console.error(`catalog-bot: work directory: ${(error as Error).message}`);
    process.exit(2);
  }
  const workDir = slot.dir;
  const metrics = new AppMetrics();
  const metricsHttp = metricsServer(metrics);
  const onLog = (appLog: Probot['log']) => {
    log = appLog;
    const config = { ...effectiveConfig(), workDir };
    log.info({ config }, `catalog-bot starting: ${describeConfig(config)}`);
  };
  run(serverApp({ queue, metrics, reconcileEveryMs, runJobs: role !== 'web', onLog, workDir }), {
    Octokit,
    // Probot given REDIS_URL opens a Redis client of its own for request throttling
    // (octokitFromEnv does not use it) that logs every failed reconnection: thousands of
    // lines while Redis is down. The queue is the only user of Redis.
    env: { ...process.env, REDIS_URL: '' },
  }).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
  // Graceful shutdown: take no new jobs (readiness turns 503), let running ones finish
  // within the grace period, hand back what is still running then (GitHub not answering:
  // a Redis queue gives it to another replica), and leave. A last timer makes sure of it.
  const stop = (signal: string) => {
    const graceMs = shutdownGraceMs();
    console.error(`catalog-bot: ${signal}, finishing running jobs (at most ${graceMs / 1000} s)`);
    metricsHttp?.close();
    setTimeout(() => {
      console.error('catalog-bot: shutdown did not finish in time; exiting');
      process.exit(1);
    }, graceMs + 4000).unref();
    queue
      .close({
        graceMs,
        onHandedBack: (keys) =>
          console.error(
            `catalog-bot: ${keys.length} job(s) still running after ${graceMs / 1000} s, ${
              process.env.REDIS_URL
                ? 'left to the queue for another replica'
                : "lost with this process (the next start's reconciliation finds them)"
            }: ${keys.join(', ')}`,
          ),
      })
      .then(
        () => slot.release().then(() => process.exit(0)),
        () => process.exit(1),
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** One line: `queue=redis (redis://host:6379) role=all port=3000 ...`. */
function describeConfig(config: Record<string, string | number>): string {
  return Object.entries(config)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
}
