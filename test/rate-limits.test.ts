// Issue 21: GitHub rate limiting and failing, on the App's defaults (in-process queue, its
// own GitHub client with write pacing), through the real Probot server with signed webhooks
// against the fake GitHub API server, which paces writes like github.com, four times faster
// (a 250 ms gap, and the App told so: CATALOG_BOT_WRITE_PACING=250).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { CATALOG_CHANGE_CHECKS, recordedChecks } from './helpers/checks.js';
import { InProcessQueue, waitAskedFor } from '../src/queue.js';
import { pullRequestPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { makeBareRepo, until } from './helpers/fleet.js';
import { GitHubServer, isWrite, type PlannedFault } from './helpers/github-server.js';

describe('rate limits and 5xx answers on the App defaults (issue 21)', () => {
  let dir: string | undefined;
  let gh: GitHubServer | undefined;
  let app: AppServer | undefined;
  afterEach(async () => {
    await app?.stop();
    await gh?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    app = gh = dir = undefined;
  });

  /** One repository with auto-merge on and one pull request, opened. */
  async function openOne(
    faults: PlannedFault[],
    match?: (r: { method: string; path: string }) => boolean,
    env: NodeJS.ProcessEnv = {},
  ) {
    dir = mkdtempSync(join(tmpdir(), 'catalog-bot-limits-'));
    const bare = join(dir, 'catalog.git');
    mkdirSync(bare);
    const [head] = makeBareRepo(bare, 1, 1, true).get(1)!;
    execFileSync('git', ['-C', bare, 'update-ref', 'refs/pull/1/head', head!]);
    gh = await GitHubServer.start();
    gh.paceWrites({ minGapMs: 250, toleranceMs: 60 });
    const repo = gh.addRepo({ owner: 'limits', name: 'catalog', id: 880_001, bare });
    const pull = gh.addPull(repo, { number: 1, head: head!, author: 'alice' });
    const queue = new InProcessQueue();
    app = await startAppServer(
      gh,
      { queue, workDir: join(dir, 'work') },
      { CATALOG_BOT_WRITE_PACING: '250', ...env },
    );
    gh.injectFaults(faults, match);
    const sentAt = Date.now();
    expect(await app.send('pull_request', pullRequestPayload(repo, pull, 'opened', head!), 'limits-1')).toBe(
      200,
    );
    return { gh, head: head!, sentAt, full: `${repo.owner}/${repo.name}`, queue };
  }

  it('two secondary rate limits, then three 502s: the checks complete and the pull request merges within a minute', async () => {
    const secondary = { kind: 'secondary' as const, seconds: 1 };
    // On the App's writes (what github.com rate-limits first).
    const { gh, head, sentAt, full } = await openOne([secondary, secondary, 502, 502, 502], (r) =>
      isWrite(r.method, r.path),
    );
    const merged = await until(() => gh.merges.length > 0, 60_000, 100);
    expect(merged, 'merged within a minute').toBe(true);
    expect(gh.merges[0]).toMatchObject({ repo: full, number: 1, sha: head });
    expect(gh.merges[0]!.at - sentAt).toBeLessThan(60_000);
    // The faults were answered (and to the App's own calls).
    const faults = gh.requests.filter((r) => r.fault).map((r) => r.fault);
    if (process.env.LIMITS_TRACE)
      for (const r of gh.requests) console.log(r.at - sentAt, r.method, r.path, r.status, r.fault ?? '');
    expect(faults).toEqual(['403', '403', '502', '502', '502']);
    // A run per check that applies (the record in each names them), none for the others.
    expect(recordedChecks(gh.runsFor(full, head))).toEqual([[...CATALOG_CHANGE_CHECKS].sort()]);
    for (const name of PR_CHECK_NAMES) {
      const runs = gh.runsFor(full, head, name);
      expect(
        runs.map((r) => [r.status, r.conclusion]),
        name,
      ).toEqual(
        CATALOG_CHANGE_CHECKS.includes(name) ? [['completed', expect.stringMatching(/success|neutral/)]] : [],
      );
    }
  }, 90_000);

  it('a rate limit longer than the client waits fails the job; the queue runs it again after the time GitHub asked for', async () => {
    // The App's client waits out no rate limit here (bound 0 s): the checks job's read of the
    // pull request is refused for 2 s, the job fails, and the queue retries it no sooner.
    const { gh, head, full, queue } = await openOne(
      [{ kind: 'secondary', seconds: 2 }],
      (r) => r.method === 'GET' && r.path.endsWith('/pulls/1'),
      { CATALOG_BOT_RATE_LIMIT_WAIT_SECONDS: '0' },
    );
    expect(await until(() => gh.merges.length > 0, 60_000, 100)).toBe(true);
    await queue.onIdle();
    const refused = gh.requests.find((r) => r.fault === '403')!;
    expect(refused.path).toBe(`/repos/${full}/pulls/1`);
    const firstRun = gh.requests.find((r) => r.method === 'POST' && r.path.endsWith('/check-runs'))!;
    expect(firstRun.at - refused.at).toBeGreaterThanOrEqual(2000);
    // No "could not check" verdict was left: one completed, green run per check.
    expect(recordedChecks(gh.runsFor(full, head))).toEqual([[...CATALOG_CHANGE_CHECKS].sort()]);
    for (const name of PR_CHECK_NAMES)
      expect(
        gh.runsFor(full, head, name).map((r) => r.conclusion),
        name,
      ).toEqual(CATALOG_CHANGE_CHECKS.includes(name) ? [expect.stringMatching(/success|neutral/)] : []);
  }, 90_000);

  it('waits as long as GitHub asks: retry-after, or the rate limit reset', () => {
    const now = 1_700_000_000_000;
    expect(waitAskedFor({ response: { headers: { 'retry-after': '7' } } }, now)).toBe(7000);
    expect(
      waitAskedFor(
        {
          response: {
            headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 30) },
          },
        },
        now,
      ),
    ).toBe(31_000);
    expect(waitAskedFor({ response: { headers: { 'x-ratelimit-remaining': '12' } } }, now)).toBe(0);
    expect(waitAskedFor(new Error('no answer'), now)).toBe(0);
    // Bounded: never more than an hour.
    expect(waitAskedFor({ response: { headers: { 'retry-after': '999999' } } }, now)).toBe(3_600_000);
  });
});
