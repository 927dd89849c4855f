// The bot's own batch merge (docs/merge-queue.md, "Batch merge without GitHub's merge
// queue"), through the real Probot server with signed webhooks, a real bare repository, the
// real mirror and checks, and GitHub as the nock fake (no merge queue on the branch):
// - three approved, green pull requests, two of which give a channel two heads together
//   (each fine alone): the batch fails, the later of the two is named in one comment and
//   stays open, the other two merge at their checked heads, main validates;
// - an attack: a head pushed while the batch is checked is not merged at the checked sha
//   (the bot sees it before asking GitHub), the rest of the batch merges; a culprit mark
//   written by someone other than the App keeps nobody out of a batch;
// - a burst: one combined check for all, a pull request that conflicts named once;
// - a batch of one is the single merge of the merge gate.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  fooCatalogValidOnMain,
  fooThreePullsOrigin,
  originCopies,
  startAppHarness,
  type AppHarness,
} from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';

// Each test opens its pull requests through the real checks first: slow on a loaded machine.
vi.setConfig({ testTimeout: 90_000 });

/**
 * foo owned by bob; #1 (`top`) and #2 (`bottom`) by bob give the channel two heads together;
 * #3 (`readme`): alice (maintainer) changes the README, and `notes` is her push onto it that
 * changes the notes instead; #10-#13 (`pages`): she adds a page each, four pull requests that
 * touch nothing of each other's; #14 (`otherPage`) adds the first page otherwise: it
 * conflicts with #10.
 */
const makeRepo = () =>
  fooThreePullsOrigin('catalog-bot-batch-', { automerge: 'merge', batch: 8 }, (repo, { base, readme }) => {
    const notes = repo.commit('notes', { 'NOTES.md': 'more notes\n' }, readme);
    repo.push(notes, 'refs/heads/notes');
    const pages = [0, 1, 2, 3].map((i) =>
      repo.commit(`page ${i}`, { [`docs/page-${i}.md`]: `page ${i}\n` }, base),
    );
    pages.forEach((page, i) => repo.push(page, `refs/pull/${10 + i}/head`));
    const otherPage = repo.commit('other page', { 'docs/page-0.md': 'another page 0\n' }, base);
    repo.push(otherPage, 'refs/pull/14/head');
    return { notes, pages, otherPage };
  });

describe('batch merge without a merge queue', () => {
  let repo: ReturnType<typeof makeRepo>;
  let app: AppHarness;
  let gh: FakeGitHub;
  /** Called when a flow's checks are done (mid-job), with the flow's name. */
  let midCheck: (flow: string) => void = () => undefined;
  const flows: string[] = [];

  const nextRepo = originCopies(makeRepo);

  beforeEach(async () => {
    repo = nextRepo();
    app = await startAppHarness(repo.bare, [], {
      approveGraceMs: 0,
      observeChecks: (flow) => {
        flows.push(flow);
        midCheck(flow);
      },
    });
    gh = app.gh;
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
    midCheck = () => undefined;
    flows.length = 0;
  });

  const opened = (number: number) => app.pullRequest(number, 'opened');
  /** Another App's required check completes on these pull requests (they may now be ready). */
  const otherChecksDone = (numbers: number[]) => app.otherChecksDone(numbers);
  const replies = (number: number) => app.replies(number);
  const onMain = (sha: string) => {
    try {
      repo.git('merge-base', '--is-ancestor', sha, 'refs/heads/main');
      return true;
    } catch {
      return false;
    }
  };

  const mainValid = () => fooCatalogValidOnMain(repo.bare);

  /** Pull requests approved and green, waiting for another required check (GitHub: blocked). */
  async function waiting(pulls: { number: number; head: string; author: string }[]) {
    for (const pull of pulls)
      gh.addPull({
        ...pull,
        mergeable_state: 'blocked',
        onMerge: () => gh.mergeForReal('main', pull.head),
      });
    for (const pull of pulls) await opened(pull.number);
    expect(gh.merges).toEqual([]);
    for (const pull of pulls) {
      expect(gh.labelsOf(pull.number)).toContain('approved');
      gh.pulls.get(pull.number)!.mergeable_state = 'clean';
    }
  }

  it('three ready pull requests, two of which give a channel two heads together: the batch names the later one once, it stays open, the other two merge at their checked heads, main is valid', async () => {
    await waiting([
      { number: 1, head: repo.top, author: 'bob' },
      { number: 2, head: repo.bottom, author: 'bob' },
      { number: 3, head: repo.readme, author: 'alice' },
    ]);
    flows.length = 0;
    await otherChecksDone([1, 2, 3]);

    // Checked together on the combined result, not one by one against main.
    expect(flows).toContain('merge-batch');
    expect(flows).not.toContain('merge');
    expect(gh.merges).toEqual([
      { number: 1, sha: repo.top, method: 'merge' },
      { number: 3, sha: repo.readme, method: 'merge' },
    ]);
    expect(gh.pulls.get(2)!.state).toBe('open');
    expect(gh.pulls.get(2)!.merged).toBeFalsy();
    const said = replies(2);
    expect(said).toHaveLength(1);
    expect(said[0]!.body).toContain('breaks the catalog together with #1');
    expect(said[0]!.body).toMatch(/multiple channel heads|C-MULTIPLE-HEADS|more than one head/i);
    expect(replies(1)).toEqual([]);
    expect(replies(3)).toEqual([]);
    expect(onMain(repo.top) && onMain(repo.readme)).toBe(true);
    expect(onMain(repo.bottom)).toBe(false);
    expect(await mainValid()).toBe(true);

    // Its checks stay green, but later rounds leave it out: told once, never merged.
    await otherChecksDone([2]);
    expect(replies(2)).toHaveLength(1);
    expect(gh.pulls.get(2)!.merged).toBeFalsy();
    expect(app.failedJobs).toEqual([]);
  });

  it('a burst: four ready pull requests and a fifth that conflicts with the first: one combined check, the four merged in number order, the fifth named once', async () => {
    const burst = repo.pages.map((head, i) => ({ number: 10 + i, head, author: 'alice' }));
    await waiting([...burst, { number: 14, head: repo.otherPage, author: 'alice' }]);
    flows.length = 0;
    await otherChecksDone([10, 11, 12, 13, 14]);
    // One combined check instead of one per merge against a base that moves each time: the
    // conflict ends the combined result, and what was built before it passes.
    expect(flows).toEqual(['merge-batch']);
    expect(gh.merges).toEqual(burst.map((p) => ({ number: p.number, sha: p.head, method: 'merge' })));
    expect(repo.pages.every(onMain)).toBe(true);
    const said = replies(14);
    expect(said).toHaveLength(1);
    expect(said[0]!.body).toContain('conflicts with the base together with #10, #11, #12, #13');
    expect(gh.pulls.get(14)!.state).toBe('open');
    expect(app.failedJobs).toEqual([]);
  });

  it('a batch of one is the single merge: checked against main and merged at its head', async () => {
    await waiting([{ number: 3, head: repo.readme, author: 'alice' }]);
    flows.length = 0;
    await otherChecksDone([3]);
    expect(flows).toEqual(['merge']);
    expect(gh.merges).toEqual([{ number: 3, sha: repo.readme, method: 'merge' }]);
    expect(onMain(repo.readme)).toBe(true);
    expect(app.failedJobs).toEqual([]);
  });

  it('an attack: a head pushed while the batch is checked is not merged at the checked sha; the rest merges; a culprit mark by someone else keeps nobody out', async () => {
    await waiting([
      { number: 1, head: repo.top, author: 'bob' },
      { number: 3, head: repo.readme, author: 'alice' },
    ]);
    // carol writes the App's hidden culprit mark for #1's head: only the App's own count.
    gh.comments.push({
      id: 99001,
      repo: `${gh.owner}/${gh.repo}`,
      issue: 1,
      body: `<!-- catalog-bot:batch-culprit ${repo.top} -->`,
      user: { login: 'carol', type: 'User' },
    });
    midCheck = (flow) => {
      if (flow === 'merge-batch' && gh.pulls.get(3)!.head === repo.readme) gh.forcePush(3, repo.notes);
    };
    await otherChecksDone([1, 3]);

    expect(flows).toContain('merge-batch');
    expect(gh.merges).toEqual([{ number: 1, sha: repo.top, method: 'merge' }]);
    expect(gh.pulls.get(3)!.state).toBe('open');
    expect(onMain(repo.readme)).toBe(false);
    // The bot stopped before asking GitHub: no refused merge to report.
    expect(replies(3)).toEqual([]);
    expect(await mainValid()).toBe(true);
    expect(app.failedJobs).toEqual([]);
  });
});
