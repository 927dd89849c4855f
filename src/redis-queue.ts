// The shared queue for several replicas (README "Running the GitHub App": `REDIS_URL` set).
// Jobs are data (see queue.ts) in a BullMQ queue; any replica's worker may run any job.
// What the in-process queue does in memory is done in Redis here:
// - a delivery is done once: the first replica to claim its key (SET NX, kept a day)
//   queues it, the others drop it;
// - one job per group (repository) at a time across all replicas: a worker takes the
//   group's lock (SET NX with a short expiry it keeps renewing) before running the job,
//   and otherwise puts the job back for a moment;
// - a replica that dies mid-job loses its job lock; BullMQ's stalled-job check hands the
//   job to another replica, and the group lock expires on its own;
// - a job that throws is retried with exponential backoff (the jobs are written so that
//   running one again is harmless: it updates the same check runs, merges only the sha it
//   checked).
import { DelayedError, Queue, Worker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { JobQueue, JobRunner, JobSpec } from './queue.js';

export interface RedisQueueOptions {
  url: string;
  /** Queue name (default `catalog-bot`). */
  name?: string;
  /** Jobs one replica runs at once (default 4). */
  concurrency?: number;
  /** How long a claimed delivery key is remembered (default one day). */
  dedupeSeconds?: number;
  /** How long a replica may go silent before its job is given to another (default 30 s). */
  lockMs?: number;
  /** Attempts per job (default 5). */
  attempts?: number;
  onError?: (error: unknown, job: JobSpec) => void;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export class RedisQueue implements JobQueue {
  readonly #connection: Redis;
  readonly #queue: Queue;
  readonly #options: Required<Omit<RedisQueueOptions, 'onError'>> & Pick<RedisQueueOptions, 'onError'>;
  #worker: Worker | undefined;
  #running = 0;

  constructor(options: RedisQueueOptions) {
    this.#options = {
      name: 'catalog-bot',
      concurrency: 4,
      dedupeSeconds: 86_400,
      lockMs: 30_000,
      attempts: 5,
      ...options,
    };
    // BullMQ's workers block on Redis: they need `maxRetriesPerRequest: null`.
    this.#connection = this.#connect(new Redis(options.url, { maxRetriesPerRequest: null }));
    this.#queue = new Queue(this.#options.name, { connection: this.#connection });
  }

  /** ioredis reconnects by itself; its errors (Redis restarting) are reported, not thrown. */
  #connect(connection: Redis): Redis {
    connection.on('error', (error: unknown) =>
      this.#options.onError?.(error, { key: '', kind: 'redis', data: null }),
    );
    return connection;
  }

  #key(kind: string, id: string): string {
    return `${this.#options.name}:${kind}:${id}`;
  }

  async enqueue(job: JobSpec): Promise<boolean> {
    // The claim is `claimed` until the job is in the queue, then `queued`. A claim whose add
    // never finished (Redis failing in between, the replica dying, or the add throwing: the
    // webhook is answered with an error and GitHub delivers it again) is not a duplicate: it
    // is added again, under the same job id, which BullMQ keeps once.
    const seen = this.#key('seen', job.key);
    const claimed = await this.#connection.set(seen, 'claimed', 'EX', this.#options.dedupeSeconds, 'NX');
    if (claimed !== 'OK' && (await this.#connection.get(seen)) !== 'claimed') return false;
    await this.#queue.add(
      job.kind,
      { spec: job },
      {
        // BullMQ job ids cannot contain ':'.
        jobId: job.key.replace(/:/g, '_'),
        attempts: this.#options.attempts,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 86_400 },
      },
    );
    await this.#connection.set(seen, 'queued', 'EX', this.#options.dedupeSeconds);
    return true;
  }

  start(run: JobRunner, onError?: (error: unknown, job: JobSpec) => void): void {
    if (this.#worker) return;
    if (onError) this.#options.onError ??= onError;
    const { lockMs } = this.#options;
    this.#worker = new Worker(
      this.#options.name,
      async (job: BullJob<{ spec: JobSpec }>, token?: string) => {
        const spec = job.data.spec;
        const lock = spec.group === undefined ? undefined : this.#key('group', spec.group);
        const owner = randomUUID();
        if (lock !== undefined) {
          const got = await this.#connection.set(lock, owner, 'PX', lockMs, 'NX');
          if (got !== 'OK') {
            // Another replica runs this repository's job: come back shortly.
            await job.moveToDelayed(Date.now() + 250 + Math.floor(Math.random() * 250), token);
            throw new DelayedError();
          }
        }
        const renew =
          lock === undefined
            ? undefined
            : setInterval(
                () => void this.#connection.eval(RENEW, 1, lock, owner, lockMs).catch(() => undefined),
                lockMs / 3,
              );
        this.#running++;
        try {
          // Which start of the job this is (a retry, or a stalled job taken over, is > 1):
          // jobs that create things on GitHub look for what an earlier start made.
          const started: JobSpec & { attempt: number } = { ...spec, attempt: job.attemptsStarted };
          await run(started);
        } catch (error) {
          this.#options.onError?.(error, spec);
          throw error;
        } finally {
          this.#running--;
          if (renew) clearInterval(renew);
          if (lock !== undefined) await this.#connection.eval(RELEASE, 1, lock, owner).catch(() => undefined);
        }
      },
      {
        connection: this.#connect(this.#connection.duplicate()),
        concurrency: this.#options.concurrency,
        lockDuration: lockMs,
        stalledInterval: Math.max(1000, Math.floor(lockMs / 2)),
        maxStalledCount: 3,
      },
    );
    this.#worker.on('error', (error) =>
      this.#options.onError?.(error, { key: '', kind: 'worker', data: null }),
    );
  }

  /** Jobs this replica runs right now. */
  get size(): number {
    return this.#running;
  }

  /** Resolves when no job is waiting, delayed or running in any replica. */
  async onIdle(): Promise<void> {
    for (;;) {
      const counts = await this.#queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'prioritized',
        'waiting-children',
      );
      if (Object.values(counts).every((n) => n === 0) && this.#running === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Finish the jobs this replica runs, take no more, and let go of Redis. */
  async close(): Promise<void> {
    await this.#worker?.close();
    await this.#queue.close();
    this.#connection.disconnect();
  }
}
