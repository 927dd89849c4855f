// GitHub's merge queue (docs/merge-queue.md), through the real Probot server with signed
// webhooks, a real bare repository, the real mirror and checks, and GitHub as the nock fake
// with the queue model of helpers/merge-queue.ts (merge groups as queue branches, the
// `merge_group` deliveries, the REST refusal, the GraphQL mutations):
// - three pull requests into a branch that requires the queue, two of which give a channel
//   two heads together (each fine alone): the group holding both fails and names the later
//   one, which leaves the queue; the other two merge; main ends valid;
// - `/hold` and a withdrawn approval take a queued pull request out of the queue;
// - an attack: a push after the approved head was queued fails the group on permissions;
// - bad input: a group destroyed while it is checked, a queue branch deleted mid-check, a
//   group whose base moved: no crash, no stale green run, and the queue still merges.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  fooCatalogValidOnMain,
  fooThreePullsOrigin,
  originCopies,
  startAppHarness,
  type AppHarness,
} from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';
import type { MergeQueueModel } from './helpers/merge-queue.js';

vi.setConfig({ testTimeout: 60_000 });

/** What branch protection requires on the queue's groups. */
const REQUIRED = ['catalog-bot/validate', 'catalog-bot/upgrade-graph', 'catalog-bot/permissions'];

/**
 * foo owned by bob; #1 (`top`) and #2 (`bottom`) by bob give the channel two heads together;
 * #3 (`readme`): alice (maintainer) changes the README; `readme2`: she changes the notes (a
 * push to main outside the queue).
 */
const makeRepo = () =>
  fooThreePullsOrigin('catalog-bot-mq-', { automerge: 'merge' }, (repo, { base }) => {
    const readme2 = repo.commit('readme2', { 'NOTES.md': 'more notes\n' }, base);
    repo.push(readme2, 'refs/heads/readme2');
    return { readme2 };
  });

describe('GitHub merge queue', () => {
  let repo: ReturnType<typeof makeRepo>;
  let app: AppHarness;
  let gh: FakeGitHub;
  let mq: MergeQueueModel;
  /** Deliveries of the queue wait for this (to fill the queue before any group is checked). */
  let gate: Promise<void> = Promise.resolve();
  /** Called when a flow's checks are done (mid-job), with the flow's name. */
  let midCheck: (flow: string) => void = () => undefined;

  const nextRepo = originCopies(makeRepo);

  beforeEach(async () => {
    repo = nextRepo();
    app = await startAppHarness(repo.bare, [], {
      approveGraceMs: 0,
      observeChecks: (flow) => midCheck(flow),
    });
    gh = app.gh;
    mq = gh.requireMergeQueue('main', REQUIRED);
    mq.deliver = async (event, payload, id) => {
      await gate;
      expect(await app.server.send(event, payload, id)).toBe(200);
    };
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
    midCheck = () => undefined;
    gate = Promise.resolve();
  });

  /** Until the queue's deliveries and the App's jobs are all done. */
  async function settle() {
    for (;;) {
      await mq.delivered();
      await app.queue.onIdle();
      if (mq.idle) return;
    }
  }

  /** The three pull requests open; the queue's deliveries wait until the returned function is called. */
  function addPullsHoldingTheQueue(): () => void {
    gh.addPull({ number: 1, head: repo.top, author: 'bob' });
    gh.addPull({ number: 2, head: repo.bottom, author: 'bob' });
    gh.addPull({ number: 3, head: repo.readme, author: 'alice' });
    return holdTheQueue();
  }

  /** The queue's deliveries wait until the returned function is called. */
  function holdTheQueue(): () => void {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    return open;
  }

  const opened = (number: number) => app.pullRequest(number, 'opened');
  const comment = (number: number, login: string, body: string) => app.comment(number, login, body);
  const replies = (number: number) => app.replies(number);
  const groupRuns = (head: string) => gh.runsFor(head);
  const mainSha = () => repo.git('rev-parse', 'refs/heads/main');

  const mainValid = () => fooCatalogValidOnMain(repo.bare);

  it('three pull requests, two of which give a channel two heads together: that group fails and names the later one, which leaves the queue; the other two merge; main is valid', async () => {
    const open = addPullsHoldingTheQueue();
    for (const n of [1, 2, 3]) await opened(n);
    // Each was fine alone and queued with the head that was checked, not merged through REST.
    expect(gh.merges).toEqual([]);
    expect(mq.entries.map((e) => e.number)).toEqual([1, 2, 3]);
    const groups = [...mq.entries];
    open();
    await settle();

    // The group holding 1 and 2 failed and names 2; the group of 1 alone passed.
    const both = groups[1]!;
    const validate = groupRuns(both.head).find((r) => r.name === 'catalog-bot/validate');
    expect(validate?.conclusion).toBe('failure');
    expect(validate?.output?.title).toContain('broken by #2');
    expect(groupRuns(groups[0]!.head).find((r) => r.name === 'catalog-bot/validate')?.conclusion).toBe(
      'success',
    );
    // The group of 1, 2 and 3 was destroyed before it was checked: no run on its head.
    expect(groupRuns(groups[2]!.head)).toEqual([]);
    // Every check name is on a group's head (any of them can be required).
    expect(new Set(groupRuns(groups[0]!.head).map((r) => r.name)).size).toBeGreaterThanOrEqual(
      REQUIRED.length,
    );

    expect(mq.dequeued).toEqual([2]);
    expect(mq.mergedPulls).toEqual([1, 3]);
    expect(gh.pulls.get(2)!.merged).toBeFalsy();
    const said = replies(2).at(-1)?.body ?? '';
    expect(said).toContain('Taken out of the merge queue');
    expect(said).toMatch(/multiple channel heads|C-MULTIPLE-HEADS|more than one head/i);
    // main holds 1 and 3, not 2, and is valid.
    expect(repo.git('merge-base', '--is-ancestor', repo.top, 'main')).toBe('');
    expect(repo.git('merge-base', '--is-ancestor', repo.readme, 'main')).toBe('');
    expect(() => repo.git('merge-base', '--is-ancestor', repo.bottom, 'main')).toThrow();
    expect(await mainValid()).toBe(true);
    expect(app.failedJobs).toEqual([]);
  });

  it("the culprit is ahead of the group's own pull request: the group of #3, checked before the group of #2, fails because #2 broke it; #2 is named, told once and taken out; 1 and 3 merge", async () => {
    const open = addPullsHoldingTheQueue();
    // GitHub does not order its deliveries: the group of #3 arrives (and is checked) before
    // the group of #2, so the group that fails is #3's while #2 is the one that breaks it.
    let held: (() => Promise<void>) | undefined;
    const queueBranch = (payload: { merge_group?: { head_ref?: string } }) =>
      payload.merge_group?.head_ref ?? '';
    mq.deliver = async (event, payload, id) => {
      await gate;
      const send = async () => void expect(await app.server.send(event, payload, id)).toBe(200);
      const action = (payload as { action?: string }).action;
      if (
        event === 'merge_group' &&
        action === 'checks_requested' &&
        !held &&
        /\/pr-2-/.test(queueBranch(payload))
      ) {
        held = send;
        return;
      }
      await send();
      if (event === 'merge_group' && action === 'checks_requested' && /\/pr-3-/.test(queueBranch(payload))) {
        const late = held;
        held = async () => undefined;
        await late?.();
      }
    };
    for (const n of [1, 2, 3]) await opened(n);
    const groups = [...mq.entries];
    expect(groups.map((g) => g.number)).toEqual([1, 2, 3]);
    open();
    await settle();

    // The group of #2 was destroyed before its (late) checks: no run; #3's group failed.
    expect(groupRuns(groups[1]!.head)).toEqual([]);
    const ofThree = groupRuns(groups[2]!.head).find((r) => r.name === 'catalog-bot/validate');
    expect(ofThree?.conclusion).toBe('failure');
    expect(ofThree?.output?.title).toContain('broken by #2');
    // #2 is the one taken out and told (once), not #3, whose group it was.
    expect(mq.dequeued).toEqual([2]);
    const said = replies(2);
    expect(said).toHaveLength(1);
    expect(said[0]!.body).toContain('Taken out of the merge queue');
    expect(said[0]!.body).toContain('#1 ahead of this pull request');
    expect(replies(3)).toEqual([]);
    expect(mq.mergedPulls).toEqual([1, 3]);
    expect(gh.pulls.get(2)!.merged).toBeFalsy();
    expect(await mainValid()).toBe(true);
    expect(app.failedJobs).toEqual([]);
  });

  it('no REST merge on the branch (the queue instead); /hold and a withdrawn approval take a queued pull request out of the queue', async () => {
    const open = addPullsHoldingTheQueue();
    await opened(3);
    expect(mq.entries.map((e) => e.number)).toEqual([3]);
    await comment(3, 'alice', '/hold');
    expect(mq.entries).toEqual([]);
    expect(mq.dequeued).toEqual([3]);
    // carol's pull request is queued once bob (an owner of foo) approves, and leaves the
    // queue when he withdraws the approval.
    repo.git('update-ref', 'refs/pull/4/head', repo.bottom);
    gh.addPull({ number: 4, head: repo.bottom, author: 'carol' });
    await opened(4);
    expect(mq.entries.map((e) => e.number)).toEqual([]);
    await comment(4, 'bob', '/approve');
    expect(mq.entries.map((e) => e.number)).toEqual([4]);
    await comment(4, 'bob', '/approve cancel');
    expect(mq.entries).toEqual([]);
    expect(mq.dequeued).toEqual([3, 4]);
    open();
    await settle();
    expect(mq.mergedPulls).toEqual([]);
    expect(gh.pulls.get(3)!.state).toBe('open');
    expect(gh.merges).toEqual([]);
  });

  it('an attack: the author pushes after the approved head was queued; the group fails on permissions, names the pull request, and it leaves the queue unmerged', async () => {
    const open = addPullsHoldingTheQueue();
    await opened(1);
    const [group] = mq.entries;
    // The head moves under the queue (the model keeps the group, as a slow GitHub would).
    gh.forcePush(1, repo.bottom);
    open();
    await settle();
    const permissions = groupRuns(group!.head).find((r) => r.name === 'catalog-bot/permissions');
    expect(permissions?.conclusion).toBe('failure');
    expect(permissions?.output?.title).toContain('#1');
    expect(permissions?.output?.summary).toContain(`not ${repo.top.slice(0, 12)} as merged in the group`);
    expect(mq.dequeued).toEqual([1]);
    expect(mq.mergedPulls).toEqual([]);
    expect(app.failedJobs).toEqual([]);
  });

  it('bad input: a queue branch deleted mid-check, a group destroyed while it is checked, a group whose base moved: no crash, no stale green run, and the queue still merges', async () => {
    const open = addPullsHoldingTheQueue();
    await opened(1);
    await opened(3);
    const [first, second] = mq.entries;
    // While the group of 1 is checked its queue branch is deleted, with no event; while the
    // group of 1 and 3 is checked GitHub destroys it (3 taken out of the queue).
    const seen: string[] = [];
    midCheck = (flow) => {
      if (flow !== 'merge-group') return;
      seen.push(flow);
      if (seen.length === 1) repo.git('update-ref', '-d', `refs/heads/${first!.branch}`);
      if (seen.length === 2)
        mq.graphql({
          query: 'mutation { dequeuePullRequest }',
          variables: { pullRequestId: 'PR_kwDOfake3' },
        });
    };
    open();
    await settle();
    expect(seen.length).toBe(2);
    expect(groupRuns(first!.head)).toEqual([]);
    expect(groupRuns(second!.head)).toEqual([]);
    expect(mq.events).toContainEqual(
      expect.objectContaining({ action: 'destroyed', reason: 'dequeued', number: 3 }),
    );
    expect(app.failedJobs).toEqual([]);
    midCheck = () => undefined;
    // GitHub takes 1 out on its timeout; 3 is queued again, and main moves under its group
    // (a push that bypassed the queue) before it is checked.
    const reopen = holdTheQueue();
    mq.graphql({ query: 'mutation { dequeuePullRequest }', variables: { pullRequestId: 'PR_kwDOfake1' } });
    mq.graphql({
      query: 'mutation { enqueuePullRequest }',
      variables: { pullRequestId: 'PR_kwDOfake3', expectedHeadOid: repo.readme },
    });
    const stale = mq.entries.find((e) => e.number === 3)!;
    const moved = repo.git('commit-tree', `${repo.readme2}^{tree}`, '-p', mainSha(), '-m', 'bypass');
    repo.git('update-ref', 'refs/heads/main', moved);
    reopen();
    await settle();
    expect(groupRuns(stale.head)).toEqual([]);
    expect(app.failedJobs).toEqual([]);
    // Built again on the moved base (as GitHub does), the group is checked and merges.
    mq.baseMoved();
    await settle();
    expect(mq.mergedPulls).toEqual([3]);
    expect(await mainValid()).toBe(true);
  });
});
