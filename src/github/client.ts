// Probot's GitHub client as the App configures it: write pacing and rate-limit waits
// (docs/github-limits.md).
import { ProbotOctokit } from 'probot';
import { writeGapMs, writePacing } from './write-pacing.js';

/**
 * The GitHub client. Each replica throttles its own requests: given REDIS_URL, Probot would
 * share its throttling between replicas through Redis (Bottleneck clustering), and once
 * Redis loses those keys (a restart without persistence, a flush) every request fails, for
 * good, with `ERR SETTINGS_KEY_NOT_FOUND`. The queue already keeps one job per repository
 * across replicas.
 *
 * Writes are paced (write-pacing.ts): every POST/PATCH/PUT/DELETE a second apart, GitHub.com's
 * advice against its secondary rate limits (about one pull-request head per 12 s per
 * replica). CATALOG_BOT_WRITE_PACING sets the gap in milliseconds, or `off` for a GitHub
 * Enterprise Server without such limits (or a test host). Rate-limit answers are still
 * waited out, or the job is retried.
 *
 * Rate-limit answers are waited out as GitHub asks, within bounds (waitOut), and logged.
 */
export function octokitFromEnv(env: NodeJS.ProcessEnv = process.env): typeof ProbotOctokit {
  const pacing = writePacing(writeGapMs(env.CATALOG_BOT_WRITE_PACING));
  // CATALOG_BOT_RATE_LIMIT_WAIT_SECONDS: the longest one request waits out a rate limit (default 300).
  const wait = Number(env.CATALOG_BOT_RATE_LIMIT_WAIT_SECONDS ?? 300);
  const maxWaitSeconds = Number.isFinite(wait) && wait >= 0 ? wait : 300;
  return ProbotOctokit.defaults((options: Record<string, unknown>) => {
    const {
      connection: _connection,
      Bottleneck: _bottleneck,
      ...throttle
    } = (options.throttle ?? {}) as Record<string, unknown>;
    return {
      ...options,
      throttle: {
        ...throttle,
        onSecondaryRateLimit: waitOut('secondary rate limit', maxWaitSeconds),
        onRateLimit: waitOut('rate limit', maxWaitSeconds),
        write: pacing.write,
        notifications: pacing.notifications,
      },
    };
  });
}

/**
 * What a request does when GitHub answers with a rate limit (docs/github-limits.md): it
 * waits as long as GitHub says (`retry-after`, or until `x-ratelimit-reset`) and goes on, up
 * to `maxWaitSeconds` and 4 times per request; beyond that the request fails and the queue
 * runs its job again later (with back-off, and not before GitHub's time). Logged either way.
 */
export function waitOut(
  what: string,
  maxWaitSeconds: number,
): (
  retryAfter: number,
  options: { method?: string; url?: string },
  octokit: { log: { warn: (message: string) => void } },
  retryCount?: number,
) => boolean {
  return (retryAfter, options, octokit, retryCount = 0) => {
    const request = `${options.method ?? ''} ${options.url ?? ''}`;
    if (retryCount < 4 && retryAfter <= maxWaitSeconds) {
      octokit.log.warn(`GitHub ${what} on "${request}": waiting ${retryAfter} s as asked, then trying again`);
      return true;
    }
    octokit.log.warn(
      `GitHub ${what} on "${request}": asked to wait ${retryAfter} s (try ${retryCount + 1}); not waiting here, the job is retried later`,
    );
    return false;
  };
}
