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
import {
  QueueUnavailableError,
  type CloseOptions,
  type JobQueue,
  type JobRunner,
  type JobSpec,
  type QueueHealth,
} from './queue.js';

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
  /**
   * Told when Redis becomes unreachable or reachable again, once per change (not once per
   * failed reconnection attempt: those come every few hundred ms while Redis is down).
   */
  onConnection?: (reachable: boolean, detail: string) => void;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export class RedisQueue implements JobQueue {
  readonly #connection: Redis;
  readonly #queue: Queue;
  readonly #options: Required<Omit<RedisQueueOptions, 'onError' | 'onConnection'>> &
    Pick<RedisQueueOptions, 'onError' | 'onConnection'>;
  #worker: Worker | undefined;
  #running = 0;
  /** The jobs this replica runs, to hand back to the queue if shutdown cannot wait for them. */
  readonly #active = new Map<
    string,
    { job: BullJob; token: string | undefined; release: () => Promise<unknown> }
  >();
  readonly #connections: Redis[] = [];
  /** Whether Redis was reachable at the last change (undefined: not connected yet). */
  #reachable: boolean | undefined;
  #lastError = '';
  #closing = false;

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

  /**
   * ioredis reconnects by itself. Its errors (Redis restarting, unreachable) come once per
   * attempt; they are reported as one change of state, and again when it is back.
   */
  #connect(connection: Redis): Redis {
    this.#connections.push(connection);
    connection.on('error', (error: unknown) => {
      this.#lastError = error instanceof Error ? error.message : String(error);
      if (connection.status !== 'ready') this.#changed(false);
    });
    connection.on('close', () => {
      if (!this.#closing) this.#changed(false);
    });
    connection.on('ready', () => {
      if (this.#connections.every((c) => c.status === 'ready')) this.#changed(true);
    });
    return connection;
  }

  #changed(reachable: boolean): void {
    if (this.#reachable === reachable || this.#closing) return;
    // The first connection is not news; losing it, or getting it back, is.
    const first = this.#reachable === undefined;
    this.#reachable = reachable;
    if (first && reachable) return;
    this.#options.onConnection?.(
      reachable,
      reachable
        ? 'Redis is reachable again'
        : `Redis is unreachable: ${this.#lastError || 'connection closed'}`,
    );
  }

  /** Ready while every connection to Redis is up and the replica is not shutting down. */
  health(): QueueHealth {
    if (this.#closing) return { ready: false, reason: 'shutting down' };
    if (this.#connections.every((c) => c.status === 'ready')) return { ready: true };
    // The error itself (it names Redis's address) goes to the log, not to whoever asks.
    return { ready: false, reason: 'Redis unreachable' };
  }

  #key(kind: string, id: string): string {
    return `${this.#options.name}:${kind}:${id}`;
  }

  async enqueue(job: JobSpec): Promise<boolean> {
    // Without Redis a webhook would wait for it (commands are held until it is back):
    // answer at once instead; GitHub records the failed delivery and reconciliation catches up.
    if (this.#connection.status !== 'ready' && this.#reachable === false)
      throw new QueueUnavailableError(`the queue cannot take jobs: ${this.health().reason}`);
    // The claim is `claimed` until the job is in the queue, then `queued`. A claim whose add
    // never finished (Redis failing in between, the replica dying, or the add throwing: the
    // webhook is answered with an error and GitHub delivers it again) is not a duplicate: it
    // is added again, under the same job id, which BullMQ keeps once.
    const seen = this.#key('seen', job.key);
    const claimed = await this.#connection.set(seen, 'claimed', 'EX', this.#options.dedupeSeconds, 'NX');
    if (claimed !== 'OK' && (await this.#connection.get(seen)) !== 'claimed') return false;
    // BullMQ job ids cannot contain ':'.
    const jobId = job.key.replace(/:/g, '_');
    if (job.subject !== undefined) {
      // Named before the job exists: a replica that dies in between leaves an id that is no
      // job (not busy), never a job nobody knows the subject of.
      const subject = this.#key('subject', job.subject);
      await this.#connection.multi().sadd(subject, jobId).expire(subject, this.#options.dedupeSeconds).exec();
    }
    await this.#queue.add(
      job.kind,
      { spec: job },
      {
        jobId,
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
        const release = () =>
          lock === undefined ? Promise.resolve() : this.#connection.eval(RELEASE, 1, lock, owner);
        this.#active.set(job.id ?? spec.key, { job, token, release });
        try {
          // Which start of the job this is (a retry, or a stalled job taken over, is > 1):
          // jobs that create things on GitHub look for what an earlier start made.
          const started: JobSpec & { attempt: number } = { ...spec, attempt: job.attemptsStarted };
          await run(started);
        } catch (error) {
          this.#options.onError?.(error, spec);
          throw error;
        } finally {
          this.#active.delete(job.id ?? spec.key);
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
    // While Redis is away the worker fails each poll: that is the one "unreachable" report.
    this.#worker.on('error', (error) => {
      if (this.#reachable === false || this.#closing) return;
      this.#options.onError?.(error, { key: '', kind: 'worker', data: null });
    });
  }

  /**
   * Whether a job of `subject` is waiting, delayed or running in any replica: the queue's own
   * state of each job named for it (a job lost with Redis's data is no longer busy). Jobs
   * that are done are forgotten; the list itself expires with the delivery keys.
   */
  async busy(subject: string): Promise<boolean> {
    const key = this.#key('subject', subject);
    for (const id of await this.#connection.smembers(key)) {
      const state = await this.#queue.getJobState(id);
      if (['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'].includes(state)) return true;
      // Not `unknown`: that is also a job another replica is adding right now.
      if (state === 'completed' || state === 'failed') await this.#connection.srem(key, id);
    }
    return false;
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

  /**
   * Take no more jobs and finish the running ones, waiting at most `graceMs`: jobs still
   * running then (GitHub not answering) are put back in the queue for another replica,
   * their repository's lock let go. Then let go of Redis.
   */
  async close(options: CloseOptions = {}): Promise<void> {
    this.#closing = true;
    const finished = this.#worker?.close() ?? Promise.resolve();
    const grace = options.graceMs;
    let timer: NodeJS.Timeout | undefined;
    const inTime =
      grace === undefined
        ? await finished.then(() => true)
        : await Promise.race([
            finished.then(() => true),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), grace))),
          ]);
    clearTimeout(timer);
    if (!inTime) {
      const left = [...this.#active.values()];
      this.#active.clear();
      // Redis may be the reason: each hand-back gets a moment, not the rest of the shutdown.
      await Promise.race([
        Promise.allSettled(left.map(async (a) => (await a.job.moveToWait(a.token), await a.release()))),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]);
      options.onHandedBack?.(left.map((a) => String(a.job.id)));
      void this.#worker?.close(true).catch(() => undefined);
    }
    await Promise.race([this.#queue.close(), new Promise((resolve) => setTimeout(resolve, 1000))]);
    for (const c of this.#connections) c.disconnect();
  }
}
