// `npm start`: the GitHub App server. Configuration is Probot's environment (APP_ID,
// PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT, HOST, GHE_HOST, GHE_PROTOCOL,
// LOG_LEVEL); webhooks arrive at /api/github/webhooks, GET /healthz answers 200 and
// GET /metrics serves Prometheus metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { run, type ApplicationFunction } from 'probot';
import { createApp, type AppOptions } from './app.js';
import { AppMetrics } from './metrics.js';
import { InProcessQueue, type JobQueue } from './queue.js';
import { RedisQueue } from './redis-queue.js';

/** GET /healthz: 200 while the process can serve. */
export function healthz(req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/healthz' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(req.method === 'HEAD' ? undefined : 'ok\n');
  return true;
}

/** The app plus the HTTP routes the runtime contract asks for. */
export function serverApp(options: AppOptions = {}): ApplicationFunction {
  const metrics = options.metrics ?? new AppMetrics();
  const app = createApp({ ...options, metrics });
  return async (probot, appOptions) => {
    appOptions.addHandler(healthz);
    appOptions.addHandler(metrics.handler());
    await app(probot, appOptions);
  };
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
  // REDIS_URL: replicas share a Redis-backed queue; otherwise the in-process one.
  const queue: JobQueue = process.env.REDIS_URL
    ? new RedisQueue({ url: process.env.REDIS_URL })
    : new InProcessQueue();
  // Reconciliation: at start and every CATALOG_BOT_RECONCILE_MINUTES (default 15; 0 turns it off).
  const minutes = Number(process.env.CATALOG_BOT_RECONCILE_MINUTES ?? 15);
  const reconcileEveryMs = Number.isFinite(minutes) && minutes > 0 ? minutes * 60_000 : 0;
  run(serverApp({ queue, reconcileEveryMs })).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
  // Graceful shutdown: take no new jobs, let running ones finish (a Redis queue hands back
  // what it has not started), then leave.
  const stop = (signal: string) => {
    console.error(`catalog-bot: ${signal}, finishing running jobs`);
    queue.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
