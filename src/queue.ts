// The job queue between webhook handlers and the work they ask for. Handlers answer
// GitHub fast and enqueue; jobs run later, one at a time per repository. The interface is
// small so that a Redis-backed queue (BullMQ, design.md: `REDIS_URL`) can replace the
// in-process one without touching the handlers.

export interface Job {
  /** Unique id of the job; the webhook delivery id (`X-GitHub-Delivery`) for webhook work. */
  key: string;
  /** Jobs of one group run one after another (the repository); other groups run in parallel. */
  group?: string;
  /** What the job does, for metrics and logs (e.g. `pr-checks`). */
  kind?: string;
  run: () => Promise<void>;
}

export interface JobQueue {
  /**
   * Queue a job. Returns false, and drops the job, when a job with the same key is pending,
   * running or finished recently (a delivery that arrives twice is done once).
   */
  enqueue(job: Job): boolean;
  /** Jobs pending or running. */
  readonly size: number;
  /** Resolves when no job is pending or running (tests, graceful shutdown). */
  onIdle(): Promise<void>;
}

export interface InProcessQueueOptions {
  /** How many finished keys to remember against duplicates (default 10 000). */
  rememberFinished?: number;
  /** Called when a job throws (jobs should handle their own errors; this is a last resort). */
  onError?: (error: unknown, job: Job) => void;
}

/** The embedded queue: in memory, concurrency 1 per group, nothing survives a restart. */
export class InProcessQueue implements JobQueue {
  readonly #groups = new Map<string, Job[]>();
  readonly #active = new Set<string>();
  readonly #finished = new Set<string>();
  readonly #remember: number;
  readonly #onError: (error: unknown, job: Job) => void;
  #count = 0;
  #idle: (() => void)[] = [];

  constructor(options: InProcessQueueOptions = {}) {
    this.#remember = options.rememberFinished ?? 10_000;
    this.#onError = options.onError ?? (() => undefined);
  }

  enqueue(job: Job): boolean {
    if (this.#active.has(job.key) || this.#finished.has(job.key)) return false;
    this.#active.add(job.key);
    this.#count++;
    const group = job.group ?? job.key;
    const waiting = this.#groups.get(group);
    if (waiting) {
      waiting.push(job);
    } else {
      this.#groups.set(group, [job]);
      // Never run inside enqueue: the caller may still be setting up what the job awaits.
      queueMicrotask(() => void this.#drain(group));
    }
    return true;
  }

  /** Jobs pending or running. */
  get size(): number {
    return this.#count;
  }

  onIdle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #drain(group: string): Promise<void> {
    const jobs = this.#groups.get(group);
    while (jobs && jobs.length > 0) {
      const job = jobs[0] as Job;
      try {
        await job.run();
      } catch (error) {
        try {
          this.#onError(error, job);
        } catch {
          // a failing error reporter must not stop the queue
        }
      }
      jobs.shift();
      this.#finish(job.key);
    }
    this.#groups.delete(group);
    if (this.#count === 0) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
  }

  #finish(key: string): void {
    this.#active.delete(key);
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
