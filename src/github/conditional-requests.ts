// Conditional requests: GitHub answers a GET with `304 Not Modified` for free (it does not
// count against the rate limit) when the `If-None-Match` ETag still matches. The App
// re-reads the same things often (the pull request, its comments, check runs, team
// members), so every installation client keeps the last ETag and answer per URL.
import type { Octokit } from './types.js';

interface Cached {
  etag: string;
  response: { status: number; url: string; headers: Record<string, unknown>; data: unknown };
}

/** ETag cache shared by every client of the process: most recently used first, bounded. */
export class ConditionalCache {
  readonly #entries = new Map<string, Cached>();
  hits = 0;
  constructor(readonly limit = 2000) {}

  get(key: string): Cached | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Cached): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.limit) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Make `octokit`'s GETs conditional. `scope` keeps installations apart (their answers differ). */
export function useConditionalRequests(octokit: Octokit, cache: ConditionalCache, scope: string): void {
  octokit.hook.wrap('request', async (request, options) => {
    if (options.method !== 'GET') return request(options);
    const endpoint = octokit.request.endpoint.parse(options);
    const key = `${scope} ${endpoint.url}`;
    const cached = cache.get(key);
    if (cached) options.headers = { ...options.headers, 'if-none-match': cached.etag };
    try {
      const response = await request(options);
      const etag = response.headers.etag;
      if (typeof etag === 'string')
        cache.set(key, { etag, response: { ...response, headers: { ...response.headers } } });
      return response;
    } catch (error) {
      if ((error as { status?: number }).status === 304 && cached) {
        cache.hits++;
        return cached.response as Awaited<ReturnType<typeof request>>;
      }
      throw error;
    }
  });
}
