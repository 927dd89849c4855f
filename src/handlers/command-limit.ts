// One user cannot fill a repository's queue with catalog work: a comment with a command
// that loads catalogs (`/explain`, `/promote`, …) is queued only while its author has fewer
// than MAX_COSTLY_PER_USER such comments queued or running (docs/security.md, bounded work).
// Anyone may comment `/explain`, and each one may take a check worker up to its deadline.

/** Comments with a catalog-loading command one user may have queued or running at once. */
export const MAX_COSTLY_PER_USER = 3;

/**
 * The count is this replica's: a job another replica ran (the Redis queue) is never seen
 * finishing here, so it stops counting after this long (longer than a command runs).
 */
const FORGET_AFTER_MS = 30 * 60_000;

export class CostlyCommands {
  /** user (lower case) -> job key -> when it was queued. */
  readonly #byUser = new Map<string, Map<string, number>>();

  constructor(
    readonly max = MAX_COSTLY_PER_USER,
    readonly forgetAfterMs = FORGET_AFTER_MS,
  ) {}

  /** Count job `key` for `user`; false, counting nothing, when they have `max` already. */
  take(user: string, key: string, now = Date.now()): boolean {
    const name = user.toLowerCase();
    const jobs = this.#byUser.get(name) ?? new Map<string, number>();
    for (const [k, at] of jobs) if (now - at > this.forgetAfterMs) jobs.delete(k);
    if (jobs.size >= this.max && !jobs.has(key)) return false;
    jobs.set(key, now);
    this.#byUser.set(name, jobs);
    return true;
  }

  /** Job `key` of `user` is done (or was never queued). */
  release(user: string, key: string): void {
    const name = user.toLowerCase();
    const jobs = this.#byUser.get(name);
    if (!jobs) return;
    jobs.delete(key);
    if (jobs.size === 0) this.#byUser.delete(name);
  }

  /** How many `user` has queued or running. */
  count(user: string): number {
    return this.#byUser.get(user.toLowerCase())?.size ?? 0;
  }
}

/** This process's count (the webhook handler takes, the comment job releases). */
export const costlyCommands = new CostlyCommands();
