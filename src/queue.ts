// The job queue between webhook handlers and the work they ask for. Handlers answer
// GitHub fast and enqueue; jobs run later, one at a time per group (a repository). A job
// is data only (a kind and a JSON payload), so a Redis-backed queue (BullMQ, `REDIS_URL`:
// README "Running the GitHub App") can carry it to another replica; the app gives the
// queue the function that runs a job (`start`).

export interface JobSpec<T = unknown> {
  /** Unique id of the job; the webhook delivery id (`X-GitHub-Delivery`) for webhook work. */
  key: string;
  /** Jobs of one group run one after another (the repository); other groups run in parallel. */
  group?: string;
  /** Which job runner handles it (e.g. `pr-checks`). */
  kind: string;
  /** Plain JSON: what the job needs. */
  data: T;
  /**
   * What the job works on, when other work must not be queued for it twice: a pull request
   * head's checks (`checksSubject`), carried from the checks job to the job writing their
   * results. `busy(subject)` answers for every replica.
   */
  subject?: string;
}

export type JobRunner = (job: JobSpec) => Promise<void>;

export interface JobQueue {
  /**
   * Queue a job. Resolves false, and drops the job, when a job with the same key is pending,
   * running or finished recently (a delivery that arrives twice is done once).
   */
  enqueue(job: JobSpec): Promise<boolean>;
  /** Start running jobs with `run` (the app calls this once); `onError` hears of jobs that throw. */
  start(run: JobRunner, onError?: (error: unknown, job: JobSpec) => void): void;
  /** Jobs pending or running (in this process's view). */
  readonly size: number;
  /** Resolves when no job is pending or running (tests, graceful shutdown). */
  onIdle(): Promise<void>;
  /** Stop taking jobs; running ones finish (within `graceMs`, if given). */
  close(options?: CloseOptions): Promise<void>;
  /** Whether the queue can take and run jobs now (GET /healthz, readiness). */
  health(): QueueHealth;
  /**
   * Whether a job with this `subject` is waiting, delayed or running (in any replica). Work
   * that only catches up (reconciliation) queues nothing for a busy subject.
   */
  busy(subject: string): Promise<boolean>;
}

/**
 * The queue cannot take a job now (Redis unreachable). Work that meets it is not done and not
 * failed: the job is tried again once the queue is back (docs/replicas.md).
 */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}

/** The subject of a pull request head's checks and of the job writing their results. */
export function checksSubject(repoId: number, number: number, headSha: string): string {
  return `checks:${repoId}:${number}:${headSha}`;
}

export interface CloseOptions {
  /** The longest to wait for running jobs; what is still running then is left unfinished. */
  graceMs?: number;
  /** Told the keys of the jobs left unfinished (a Redis queue hands them to another replica). */
  onHandedBack?: (keys: string[]) => void;
}

/** Readiness of a queue: `reason` says, in a few words, why it cannot work. */
export interface QueueHealth {
  ready: boolean;
  reason?: string;
}

export interface InProcessQueueOptions {
  /** How many finished keys to remember against duplicates (default 10 000). */
  rememberFinished?: number;
  /** Called when a job throws (jobs should handle their own errors; this is a last resort). */
  onError?: (error: unknown, job: JobSpec) => void;
  /** Starts per job: a job that throws is run again, up to this many starts in all (default 5). */
  attempts?: number;
  /** Wait before the first retry, doubled for each next one (default 1000 ms). */
  backoffMs?: number;
}

/**
 * The embedded queue: in memory, concurrency 1 per group, nothing survives a restart. A job
 * that throws (GitHub rate limiting or failing, a registry down) is retried with exponential
 * back-off like the Redis queue's jobs; meanwhile the group's other jobs go on.
 */
export class InProcessQueue implements JobQueue {
  readonly #groups = new Map<string, JobSpec[]>();
  readonly #active = new Set<string>();
  /** subject -> keys of its jobs not finished yet. */
  readonly #subjects = new Map<string, Set<string>>();
  readonly #finished = new Set<string>();
  readonly #remember: number;
  readonly #attempts: number;
  readonly #backoffMs: number;
  /** Starts so far of the jobs that are waiting to be retried or running again. */
  readonly #started = new Map<string, number>();
  #onError: (error: unknown, job: JobSpec) => void;
  #run: JobRunner | undefined;
  #closed = false;
  #count = 0;
  #idle: (() => void)[] = [];

  constructor(options: InProcessQueueOptions = {}) {
    this.#remember = options.rememberFinished ?? 10_000;
    this.#attempts = Math.max(1, options.attempts ?? 5);
    this.#backoffMs = options.backoffMs ?? 1000;
    this.#onError = options.onError ?? (() => undefined);
  }

  start(run: JobRunner, onError?: (error: unknown, job: JobSpec) => void): void {
    this.#run = run;
    if (onError) this.#onError = onError;
    for (const group of this.#groups.keys()) queueMicrotask(() => void this.#drain(group));
  }

  async enqueue(job: JobSpec): Promise<boolean> {
    return this.add(job);
  }

  /** The same as `enqueue`, answered at once. */
  add(job: JobSpec): boolean {
    if (this.#closed || this.#active.has(job.key) || this.#finished.has(job.key)) return false;
    this.#active.add(job.key);
    if (job.subject !== undefined) {
      const keys = this.#subjects.get(job.subject) ?? new Set<string>();
      this.#subjects.set(job.subject, keys.add(job.key));
    }
    this.#count++;
    const group = job.group ?? `key:${job.key}`;
    const waiting = this.#groups.get(group);
    if (waiting) {
      waiting.push(job);
    } else {
      this.#groups.set(group, [job]);
      // Never run inside enqueue: the caller may still be setting up.
      if (this.#run) queueMicrotask(() => void this.#drain(group));
    }
    return true;
  }

  get size(): number {
    return this.#count;
  }

  onIdle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async close(options: CloseOptions = {}): Promise<void> {
    this.#closed = true;
    if (options.graceMs === undefined) return this.onIdle();
    let timer: NodeJS.Timeout | undefined;
    const idle = await Promise.race([
      this.onIdle().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), options.graceMs))),
    ]);
    clearTimeout(timer);
    // Nothing survives this process: the reconciliation pass of the next start finds the work.
    if (!idle) options.onHandedBack?.([...this.#active]);
  }

  health(): QueueHealth {
    return this.#closed ? { ready: false, reason: 'shutting down' } : { ready: true };
  }

  async busy(subject: string): Promise<boolean> {
    return (this.#subjects.get(subject)?.size ?? 0) > 0;
  }

  readonly #draining = new Set<string>();

  async #drain(group: string): Promise<void> {
    if (this.#draining.has(group) || !this.#run) return;
    this.#draining.add(group);
    const jobs = this.#groups.get(group);
    while (jobs && jobs.length > 0) {
      const job = jobs[0] as JobSpec;
      const attempt = (this.#started.get(job.key) ?? 0) + 1;
      let failed = false;
      let failure: unknown;
      try {
        // `attempt` > 1 tells jobs that create things on GitHub to look for what an earlier start made.
        await this.#run({ ...job, attempt } as JobSpec);
      } catch (error) {
        failed = true;
        failure = error;
        try {
          this.#onError(error, job);
        } catch {
          // a failing error reporter must not stop the queue
        }
      }
      jobs.shift();
      if (failed) this.#retryOrFinish(job, attempt, failure);
      else {
        this.#started.delete(job.key);
        this.#finish(job);
      }
    }
    this.#groups.delete(group);
    this.#draining.delete(group);
    if (this.#count === 0) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
  }

  /** After a throw: queue the job again after its back-off, or give up on it. */
  #retryOrFinish(job: JobSpec, attempt: number, error?: unknown): void {
    if (attempt >= this.#attempts || this.#closed) {
      this.#started.delete(job.key);
      this.#finish(job);
      return;
    }
    this.#started.set(job.key, attempt);
    const timer = setTimeout(
      () => {
        const group = job.group ?? `key:${job.key}`;
        const waiting = this.#groups.get(group);
        if (waiting) waiting.push(job);
        else this.#groups.set(group, [job]);
        void this.#drain(group);
      },
      // GitHub said how long to wait (a rate limit): not sooner than that.
      Math.max(this.#backoffMs * 2 ** (attempt - 1), waitAskedFor(error)),
    );
    // A pending retry must not keep a stopping process alive; close() still waits for it.
    timer.unref?.();
  }

  #finish({ key, subject }: JobSpec): void {
    this.#active.delete(key);
    if (subject !== undefined) {
      const keys = this.#subjects.get(subject);
      keys?.delete(key);
      if (keys?.size === 0) this.#subjects.delete(subject);
    }
    this.#count--;
    if (this.#remember <= 0) return;
    this.#finished.add(key);
    if (this.#finished.size > this.#remember) {
      // Sets iterate in insertion order: drop the oldest.
      const oldest = this.#finished.values().next().value;
      if (oldest !== undefined) this.#finished.delete(oldest);
    }
  }
}

/** The longest a retry waits for a rate limit to pass (GitHub's primary limits reset hourly). */
export const MAX_RATE_LIMIT_WAIT_MS = 60 * 60_000;

/**
 * How long GitHub asked to wait before trying again, from a failed request's answer:
 * `retry-after` (secondary rate limits), or `x-ratelimit-reset` when `x-ratelimit-remaining`
 * is 0 (the primary limit); 0 when it did not say. Bounded by MAX_RATE_LIMIT_WAIT_MS.
 */
export function waitAskedFor(error: unknown, now = Date.now()): number {
  const headers = (error as { response?: { headers?: Record<string, unknown> } } | undefined)?.response
    ?.headers;
  if (!headers) return 0;
  let ms = 0;
  const after = Number(headers['retry-after']);
  if (Number.isFinite(after) && after > 0) ms = after * 1000;
  const reset = Number(headers['x-ratelimit-reset']);
  if (String(headers['x-ratelimit-remaining']) === '0' && Number.isFinite(reset))
    ms = Math.max(ms, reset * 1000 - now + 1000);
  return Math.min(Math.max(0, ms), MAX_RATE_LIMIT_WAIT_MS);
}
