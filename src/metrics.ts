// Prometheus metrics for GET /metrics (README "Running the GitHub App"): webhooks received,
// job durations, queue depth and check outcomes. One registry per app instance, so tests
// (and several apps in one process) never share counters.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { checkWorkerUse } from './checks/isolate.js';
import type { JobQueue, JobRunner } from './queue.js';

export class AppMetrics {
  readonly registry = new Registry();
  readonly webhooks = new Counter({
    name: 'catalog_bot_webhooks_received_total',
    help: 'Webhook deliveries received, by event and action.',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'catalog_bot_job_duration_seconds',
    help: 'Time a queued job ran, by kind and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly checkOutcomes = new Counter({
    name: 'catalog_bot_check_outcomes_total',
    help: 'Completed check runs, by check name and conclusion.',
    labelNames: ['check', 'conclusion'] as const,
    registers: [this.registry],
  });
  /** Retries the publish watchdog queued (docs/publishing.md, "Watchdog"). */
  readonly publishWatchdogRetries = new Counter({
    name: 'catalog_bot_publish_watchdog_retries_total',
    help: 'Merge commits the publish watchdog queued again: no successful catalog-bot/publish in time.',
    registers: [this.registry],
  });
  /** Merge commits found overdue by the last reconciliation pass. */
  readonly publishOverdue = new Gauge({
    name: 'catalog_bot_publish_overdue_commits',
    help: 'Merge commits that changed a catalog and had no successful catalog-bot/publish in time, at the last reconciliation.',
    registers: [this.registry],
  });
  /** What reconciliation did with each open pull request head lacking its runs (docs/replicas.md). */
  readonly reconciledHeads = new Counter({
    name: 'catalog_bot_reconciled_heads_total',
    help: 'Pull request heads without a complete set of runs found by reconciliation: queued, or left to the checks job already queued, running or being written (busy).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly #queues: JobQueue[] = [];

  constructor(options: { processMetrics?: boolean } = {}) {
    const queues = this.#queues;
    new Gauge({
      name: 'catalog_bot_queue_depth',
      help: 'Jobs pending or running.',
      registers: [this.registry],
      collect() {
        this.set(queues.reduce((sum, q) => sum + q.size, 0));
      },
    });
    new Gauge({
      name: 'catalog_bot_queue_ready',
      help: 'Whether the queue can take and run jobs (1) or not (0: Redis unreachable, shutting down); as GET /healthz.',
      registers: [this.registry],
      collect() {
        this.set(queues.every((q) => q.health().ready) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'catalog_bot_check_workers',
      help: 'Pull requests whose checks run in a worker (busy) or wait for one (waiting).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const use = checkWorkerUse();
        this.set({ state: 'busy' }, use.busy);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Report this queue's depth. */
  watch(queue: JobQueue): void {
    this.#queues.push(queue);
  }

  /** A job runner whose runs are timed by kind and outcome. */
  timed(run: JobRunner): JobRunner {
    return async (job) => {
      const stop = this.jobDuration.startTimer({ kind: job.kind });
      try {
        await run(job);
        stop({ outcome: 'done' });
      } catch (error) {
        stop({ outcome: 'error' });
        throw error;
      }
    };
  }

  /** The GET /metrics route, for Probot's `addHandler`. */
  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || req.method !== 'GET') return false;
      this.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': this.registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          res.end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`);
        },
      );
      return true;
    };
  }
}
