// The pace of the App's writes (docs/github-limits.md): GitHub.com asks for content-creating
// requests one at a time, about a second apart, and answers faster writers with a secondary
// rate limit. Probot's throttling plugin takes its limiters from `throttle.write` and
// `throttle.notifications`; these are ours, so the gap is configurable.

/** The limiter shape plugin-throttling schedules on: `limiter.key(id).schedule(options, task)`. */
export interface Limiter {
  key(id: string): {
    schedule<T>(
      options: unknown,
      task: (...args: unknown[]) => T | Promise<T>,
      ...args: unknown[]
    ): Promise<T>;
  };
}

export interface WritePacing {
  write: Limiter;
  /** Writes that notify people (comments, pull requests, reviews): three gaps apart, as Probot paces them. */
  notifications: Limiter;
}

/** The default gap between writes of one installation, as GitHub.com asks. */
export const DEFAULT_WRITE_GAP_MS = 1000;

/**
 * `CATALOG_BOT_WRITE_PACING`: unset for one write a second, `off` for none (a GitHub
 * Enterprise Server without secondary rate limits, a test host), or the gap in
 * milliseconds (a host with other limits; tests that replay GitHub's pacing faster).
 */
export function writeGapMs(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_WRITE_GAP_MS;
  if (value === 'off') return 0;
  if (!/^\d{1,6}$/.test(value))
    throw new Error(
      `CATALOG_BOT_WRITE_PACING=${JSON.stringify(value.slice(0, 40))}: expected \`off\` or the milliseconds between writes (e.g. 1000)`,
    );
  return Number(value);
}

/** Limiters that start each task of one key at least `gapMs` after the previous one. */
export function writePacing(gapMs: number): WritePacing {
  return { write: spacedBy(gapMs), notifications: spacedBy(gapMs * 3) };
}

function spacedBy(gapMs: number): Limiter {
  // When the next task of each key may start (keys are installations: Probot's throttle id).
  const nextStart = new Map<string, number>();
  return {
    key: (id) => ({
      schedule: async (_options, task, ...args) => {
        if (gapMs > 0) {
          const now = Date.now();
          const at = Math.max(now, nextStart.get(id) ?? 0);
          nextStart.set(id, at + gapMs);
          if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
        }
        return task(...args);
      },
    }),
  };
}
