// Issue 21: a burst on a busy catalog repository, against a GitHub that paces content-creating
// requests like github.com (one at a time, a gap apart; sooner is a secondary rate limit).
// 20 pull requests x 10 signed deliveries (opened, 4 pushes of real commits, the 4 pushes
// delivered again, a title edit), all sent within a couple of seconds to the App as `npm
// start` runs it (in-process queue, its write pacing on). Every final head must have exactly
// one completed run per check within 4 minutes, and no head superseded before the App looked
// at its pull request may have any.
//
// Time runs four times faster than on github.com: GitHub's gap is 250 ms here, and the App
// is told so (CATALOG_BOT_WRITE_PACING=250, its pacing otherwise unchanged). Each final head
// needs a run per check that applies (7 here; none for the checks that do not apply,
// docs/github-limits.md), a status comment and a label: about 180 writes, 45 s of writes
// (180 s at github.com's pace: BURST_GAP_MS=1000).
//
// It is in `npm test` (the system layer, test/layers.ts), started first beside the other
// files (vitest.config.ts): much of its time is waiting between writes.
// CATALOG_BOT_BURST_TEST=0 leaves it out of a local run.
//
// BURST_UNPACED=1 measures writes without pacing (neither the fake nor the App pace), e.g.
// to compare with an older version of the App quickly; the assertions stay the same.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { CATALOG_CHANGE_CHECKS, recordedChecks } from './helpers/checks.js';
import { InProcessQueue } from '../src/queue.js';
import { pullRequestPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { makeBareRepo, until } from './helpers/fleet.js';
import { GitHubServer, isWrite, type ServerPull, type ServerRepo } from './helpers/github-server.js';

const PRS = Number(process.env.BURST_PRS ?? 20);
const HEADS = 5; // opened + 4 pushes
const DEADLINE_MS = 4 * 60_000;
const unpaced = process.env.BURST_UNPACED === '1';
const GAP_MS = Number(process.env.BURST_GAP_MS ?? 250);

describe.skipIf(process.env.CATALOG_BOT_BURST_TEST === '0')(
  'a burst of deliveries against a GitHub that paces writes (issue 21)',
  () => {
    let dir: string;
    let gh: GitHubServer;
    let app: AppServer;
    let queue: InProcessQueue;
    let repo: ServerRepo;
    const prs: { pull: ServerPull; heads: string[]; supersededAt: number[] }[] = [];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'catalog-bot-burst-'));
      const bare = join(dir, 'catalog.git');
      mkdirSync(bare);
      const heads = makeBareRepo(bare, PRS, HEADS, false);
      gh = await GitHubServer.start();
      if (!unpaced) gh.paceWrites({ minGapMs: GAP_MS, toleranceMs: Math.min(100, GAP_MS / 4) });
      repo = gh.addRepo({ owner: 'burst', name: 'catalog', id: 770_001, bare });
      for (const [number, list] of heads) {
        execFileSync('git', ['-C', bare, 'update-ref', `refs/pull/${number}/head`, list[0]!]);
        prs.push({
          pull: gh.addPull(repo, { number, head: list[0]!, author: 'alice' }),
          heads: list,
          supersededAt: [],
        });
      }
      queue = new InProcessQueue();
      app = await startAppServer(
        gh,
        { queue, workDir: join(dir, 'work') },
        { CATALOG_BOT_WRITE_PACING: unpaced ? 'off' : String(GAP_MS) },
      );
    });
    afterAll(async () => {
      await app?.stop();
      void queue?.close();
      await gh?.close();
      rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it(
      '20 pull requests x 10 deliveries: each final head checked once within 4 minutes, superseded heads never',
      async () => {
        const started = Date.now();
        const statuses: number[] = [];
        const id = (n: number, what: string) => `burst-${n}-${what}`;
        // Round 0 opens every pull request; rounds 1-4 push a new commit to each (the head moves
        // on GitHub, then the delivery goes out); then every push is delivered again, then edited.
        for (let k = 0; k < HEADS; k++) {
          const sent = prs.map(async (pr) => {
            const { pull, heads } = pr;
            if (k > 0) {
              execFileSync('git', [
                '-C',
                repo.bare,
                'update-ref',
                `refs/pull/${pull.number}/head`,
                heads[k]!,
              ]);
              pull.head = heads[k]!;
              pr.supersededAt[k - 1] = Date.now();
            }
            const action = k === 0 ? 'opened' : 'synchronize';
            return app.send(
              'pull_request',
              pullRequestPayload(repo, pull, action, heads[k]!),
              id(pull.number, `${k}`),
            );
          });
          statuses.push(...(await Promise.all(sent)));
        }
        // Sent 20 at a time, as the rounds are.
        const again = prs.flatMap(({ pull, heads }) => [
          ...[1, 2, 3, 4].map(
            (k) => () =>
              app.send(
                'pull_request',
                pullRequestPayload(repo, pull, 'synchronize', heads[k]!),
                id(pull.number, `${k}`),
              ),
          ),
          () =>
            app.send(
              'pull_request',
              pullRequestPayload(repo, pull, 'edited', heads[HEADS - 1]!),
              id(pull.number, 'edit'),
            ),
        ]);
        for (let i = 0; i < again.length; i += PRS)
          statuses.push(...(await Promise.all(again.slice(i, i + PRS).map((send) => send()))));
        const sentIn = Date.now() - started;
        expect(statuses).toHaveLength(PRS * 10);
        expect(statuses.every((s) => s === 200)).toBe(true);

        const full = `${repo.owner}/${repo.name}`;
        const completedFinal = (pr: (typeof prs)[number]) =>
          gh
            .runsFor(full, pr.heads.at(-1)!)
            .filter((r) => r.status === 'completed' && r.conclusion !== 'skipped');
        const settled = await until(
          () =>
            prs.every((pr) => completedFinal(pr).length >= CATALOG_CHANGE_CHECKS.length) && queue.size === 0,
          DEADLINE_MS - (Date.now() - started),
          250,
        );
        const tookMs = Date.now() - started;

        // What it cost: writes GitHub accepted, and writes it refused for coming too soon.
        const writes = gh.writes;
        const refused = gh.requests.filter((r) => isWrite(r.method, r.path) && r.status === 403).length;
        const kinds = (re: RegExp) => writes.filter((w) => re.test(`${w.method} ${w.path}`)).length;
        const figures = {
          pacing: unpaced ? 'off' : `one write per ${GAP_MS} ms`,
          deliveriesSentInMs: sentIn,
          settledInMs: tookMs,
          writes: writes.length,
          writesPerPullRequest: writes.length / PRS,
          checkRunWrites: kinds(/check-runs/),
          commentWrites: kinds(/comments/),
          labelWrites: kinds(/labels/),
          refusedWrites: refused,
          checkRuns: gh.checkRuns.length,
        };
        console.log(`burst: ${JSON.stringify(figures)}`);
        if (process.env.BURST_TRACE)
          writeFileSync(
            process.env.BURST_TRACE,
            gh.requests.map((r) => `${r.at - started} ${r.method} ${r.path} ${r.status}`).join('\n'),
          );

        expect(settled, `not settled in ${DEADLINE_MS} ms`).toBe(true);
        for (const pr of prs) {
          const final = pr.heads.at(-1)!;
          const runs = gh.runsFor(full, final);
          // A run per check that applies, as every run's record says; none for the others.
          expect(recordedChecks(runs), `#${pr.pull.number}`).toEqual([[...CATALOG_CHANGE_CHECKS].sort()]);
          for (const name of PR_CHECK_NAMES.filter((n) => CATALOG_CHANGE_CHECKS.includes(n))) {
            const mine = runs.filter((r) => r.name === name);
            expect(
              mine.map((r) => r.status),
              `#${pr.pull.number} ${name}`,
            ).toEqual(['completed']);
            expect(['success', 'neutral'], `#${pr.pull.number} ${name}`).toContain(mine[0]!.conclusion);
          }
          expect(runs).toHaveLength(CATALOG_CHANGE_CHECKS.length);
          // A head already superseded when the App first read the pull request: nobody will look at it.
          const firstLook = gh.requests.find(
            (r) =>
              r.method === 'GET' && r.path === `/repos/${full}/pulls/${pr.pull.number}` && r.status === 200,
          )?.at;
          expect(firstLook).toBeDefined();
          pr.heads.slice(0, -1).forEach((head, k) => {
            if (pr.supersededAt[k]! < firstLook!)
              expect(gh.runsFor(full, head), `#${pr.pull.number} head ${k}`).toEqual([]);
          });
        }
        expect(gh.checkRuns.every((r) => r.status === 'completed')).toBe(true);
      },
      DEADLINE_MS + 60_000,
    );
  },
);
