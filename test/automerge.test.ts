// Comment commands and auto-merge, end to end through the App: Probot's server on 127.0.0.1
// with signed webhooks, a real bare repository, the real mirror and checks, and GitHub's API
// as the one fake (test/helpers/github-model.ts, its nock skin).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOG_CHANGE_CHECKS } from './helpers/checks.js';
import { readState } from '../src/handlers/pr-state.js';
import { jobRunner } from '../src/jobs.js';
import { InProcessQueue } from '../src/queue.js';
import { reconcile } from '../src/reconcile.js';
import { enqueueChecks } from '../src/handlers/pull-request.js';
import {
  fooTwoHeadsOrigin,
  originCopies,
  startAppHarness,
  type AppHarness,
  type CommentEvent,
} from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';
import { FOO_ROOT, fooBundle } from './helpers/foo-repo.js';
import { testProbot } from './helpers/github.js';

const bundle = fooBundle;
const ROOT = FOO_ROOT;

/**
 * foo owned by bob and erin, a README on main; #1 (`top`): bob adds v1.2.0 at the top of the
 * channel; #2 (`bottom`, branch pr-2): carol (no rights) adds v1.1.0 at the bottom, alone
 * fine, with `top` two heads; on top of `bottom` carol changes foo again (`bottomChanged`:
 * v1.1.0's image) or only the README (`bottomReadme`).
 */
function buildRepo() {
  const o = {
    config: { automerge: 'squash' as const },
    owners: ['bob', 'erin'],
    files: { 'README.md': 'catalog\n' },
  };
  return fooTwoHeadsOrigin('catalog-bot-merge-', o, (r, { bottom }) => {
    const fixed = bundle('1.1.0').replace('foo-bundle:v1.1.0', 'foo-bundle:v1.1.0-fixed');
    const bottomChanged = r.commit('bottom changed', { [`${ROOT}/bundle-1.1.0.yaml`]: fixed }, bottom);
    const bottomReadme = r.commit('bottom readme', { 'README.md': 'catalog, with notes\n' }, bottom);
    r.push(bottom, 'refs/heads/pr-2');
    r.push(bottomChanged, 'refs/heads/bottom-changed');
    r.push(bottomReadme, 'refs/heads/bottom-readme');
    return { bottomChanged, bottomReadme };
  });
}
type Repo = ReturnType<typeof buildRepo>;

// The repository is built once (about twenty git commands) and each test gets its own copy
// of the bare repository: the same commits, and nothing a test changes reaches another.
const nextRepo = originCopies(buildRepo);

// Every test below: the App on its own copy, dave with write access (no package of his own).
let repo: Repo;
let app: AppHarness;
let gh: FakeGitHub;
beforeEach(async () => {
  repo = nextRepo();
  // No grace before a plain /approve counts: test/comment-trust.test.ts holds that rule.
  app = await startAppHarness(repo.bare, [], { approveGraceMs: 0 });
  gh = app.gh;
  gh.permissions.set('dave', 'write');
});
afterEach(async () => {
  await app.stop();
  repo.cleanup();
});

const reactionsTo = (id: number) => app.reactionsTo(id);

describe('comment commands and auto-merge', () => {
  /** What GitHub does on a merge: the pull request's head merged into main. */
  const mergeForReal = (head: string) => () => gh.mergeForReal('main', head);
  const opened = (number: number) => app.pullRequest(number, 'opened');
  const comment = (number: number, login: string, body: string) => app.comment(number, login, body);
  const replies = (number: number) => app.replies(number);
  const conclusion = (sha: string, name: string) => gh.runsFor(sha, name).at(-1)?.conclusion;

  it("merges an owner's green pull request with the configured method, passing the checked sha", async () => {
    gh.addPull({ number: 1, head: repo.top, author: 'bob', onMerge: mergeForReal(repo.top) });
    await opened(1);
    for (const name of [
      'catalog-bot/permissions',
      'catalog-bot/validate',
      'catalog-bot/upgrade-graph',
      'catalog-bot/dependencies',
    ])
      expect(conclusion(repo.top, name)).toBe('success');
    // No manifests in the catalog, images out of reach: neutral does not hold a merge back.
    expect(conclusion(repo.top, 'catalog-bot/crd-upgrade')).toBe('neutral');
    expect(conclusion(repo.top, 'catalog-bot/images')).toBe('neutral');
    expect(gh.merges).toEqual([{ number: 1, sha: repo.top, method: 'squash' }]);
    expect(gh.labelsOf(1)).toContain('approved');
  });

  it('does not merge a head that moved after the check (GitHub refuses the sha): says so once, no retry', async () => {
    gh.addPull({
      number: 1,
      head: repo.top,
      author: 'bob',
      onMerge: () => {
        throw { status: 409, message: 'Head branch was modified. Review and try the merge again.' };
      },
    });
    await opened(1);
    expect(gh.merges).toEqual([]);
    const said = replies(1);
    expect(said).toHaveLength(1);
    expect(said[0]!.body).toContain('GitHub refused to merge');
    expect(said[0]!.body).toContain('HTTP 409');
  });

  it('never merges a head whose checks it has not seen green', async () => {
    // Green, but branch protection still waits for another required check.
    gh.addPull({
      number: 1,
      head: repo.top,
      author: 'bob',
      mergeable_state: 'blocked',
      onMerge: mergeForReal(repo.top),
    });
    await opened(1);
    expect(conclusion(repo.top, 'catalog-bot/validate')).toBe('success');
    expect(gh.merges).toEqual([]);
    // A push lands (its webhook not yet here), then the other required check completes.
    gh.pulls.get(1)!.head = repo.bottom;
    gh.pulls.get(1)!.mergeable_state = 'clean';
    await app.otherChecksDone([1]);
    expect(gh.merges).toEqual([]);
    // Back on the checked head, the same event merges it.
    gh.pulls.get(1)!.head = repo.top;
    await app.otherChecksDone([1]);
    expect(gh.merges).toEqual([{ number: 1, sha: repo.top, method: 'squash' }]);
  });

  it('holds: /hold blocks the merge, /hold cancel lets it go', async () => {
    gh.addPull({ number: 1, head: repo.top, author: 'bob', labels: [], onMerge: mergeForReal(repo.top) });
    const hold = await comment(1, 'bob', '/hold');
    expect(gh.labelsOf(1)).toContain('do-not-merge/hold');
    expect(reactionsTo(hold)).toEqual(['+1']);
    await opened(1);
    expect(conclusion(repo.top, 'catalog-bot/validate')).toBe('success');
    expect(gh.merges).toEqual([]);
    await comment(1, 'bob', '/hold cancel');
    expect(gh.labelsOf(1)).not.toContain('do-not-merge/hold');
    expect(gh.merges).toEqual([{ number: 1, sha: repo.top, method: 'squash' }]);
  });

  it("an approval by someone who does not own the package does not count; the owner's does", async () => {
    gh.addPull({ number: 2, head: repo.bottom, author: 'carol', onMerge: mergeForReal(repo.bottom) });
    await opened(2);
    expect(conclusion(repo.bottom, 'catalog-bot/permissions')).toBe('failure');
    // dave has write access but does not own foo
    const daves = await comment(2, 'dave', '/approve');
    expect(reactionsTo(daves)).toEqual(['confused']);
    expect(replies(2).at(-1)!.body).toMatch(/@dave `\/approve`: you may not approve everything/);
    expect(gh.merges).toEqual([]);
    const state = gh
      .botComments(2)
      .map((c) => readState(c.body))
      .find(Boolean);
    expect(state?.approvals ?? []).toEqual([]);
    // bob owns foo: his approval is recorded with what it saw, the checks re-run, it merges.
    const bobs = await comment(2, 'bob', '/approve');
    expect(reactionsTo(bobs)).toEqual(['+1']);
    const recorded = gh
      .botComments(2)
      .map((c) => readState(c.body))
      .find(Boolean)!;
    expect(recorded.approvals).toMatchObject([{ login: 'bob', comment: bobs, sha: repo.bottom }]);
    expect(Object.keys(recorded.approvals[0]!.subjects)).toContain('package foo (catalogs/v4.21)');
    expect(conclusion(repo.bottom, 'catalog-bot/permissions')).toBe('success');
    expect(gh.merges).toEqual([{ number: 2, sha: repo.bottom, method: 'squash' }]);
  });

  it('an approval counts for the content it saw: a push that changes the package needs a new one, others keep it', async () => {
    gh.addPull({ number: 2, head: repo.bottom, author: 'carol', mergeable_state: 'blocked' });
    await opened(2);
    await comment(2, 'bob', '/approve');
    expect(conclusion(repo.bottom, 'catalog-bot/permissions')).toBe('success');
    // carol pushes a README change: foo's content is what bob saw.
    repo.git('update-ref', 'refs/pull/2/head', repo.bottomReadme);
    gh.pulls.get(2)!.head = repo.bottomReadme;
    await opened(2);
    expect(conclusion(repo.bottomReadme, 'catalog-bot/permissions')).toBe('failure'); // README.md: maintainers only
    const readmeRun = gh.runsFor(repo.bottomReadme, 'catalog-bot/permissions').at(-1)!;
    expect(readmeRun.output?.summary).toMatch(
      /package foo \(catalogs\/v4\.21\) \| changed \| .* \| yes, by `bob`/,
    );
    // carol changes foo: bob's approval no longer covers it.
    repo.git('update-ref', 'refs/pull/2/head', repo.bottomChanged);
    gh.pulls.get(2)!.head = repo.bottomChanged;
    await opened(2);
    const changedRun = gh.runsFor(repo.bottomChanged, 'catalog-bot/permissions').at(-1)!;
    expect(changedRun.conclusion).toBe('failure');
    expect(changedRun.output?.summary).toMatch(
      /package foo \(catalogs\/v4\.21\) \| changed \| .* \| \*\*no\*\*/,
    );
    expect(gh.labelsOf(2)).not.toContain('approved');
  });

  it('two pull requests each fine alone but two heads together: the second is not merged, and says why', async () => {
    gh.addPull({ number: 1, head: repo.top, author: 'bob', onMerge: mergeForReal(repo.top) });
    gh.addPull({ number: 2, head: repo.bottom, author: 'carol', onMerge: mergeForReal(repo.bottom) });
    await opened(2);
    await comment(2, 'bob', '/hold');
    await comment(2, 'bob', '/approve'); // green now, but held
    expect(conclusion(repo.bottom, 'catalog-bot/permissions')).toBe('success');
    await opened(1); // merged; main moves
    expect(gh.merges.map((m) => m.number)).toEqual([1]);
    await comment(2, 'bob', '/hold cancel');
    expect(gh.merges.map((m) => m.number)).toEqual([1]);
    const said = replies(2).at(-1)!.body;
    expect(said).toContain(
      'Not merged: this pull request is fine on its own, but together with the current `main`',
    );
    expect(said).toMatch(/multiple channel heads|C-MULTIPLE-HEADS|more than one head/i);
  });
});

describe('comment commands: replies and permissions', () => {
  beforeEach(() => gh.addPull({ number: 2, head: repo.bottom, author: 'carol', mergeable_state: 'blocked' }));

  /** `login` writes (or edits, or deletes) a comment on #2. */
  const send = (
    action: CommentEvent['action'],
    login: string,
    body: string,
    extra: { id?: number; from?: string; type?: 'User' | 'Bot' } = {},
  ) =>
    app.commentEvent({
      number: 2,
      action,
      login,
      body,
      id: extra.id,
      from: extra.from,
      userType: extra.type,
    });
  /** The pull request's `opened` delivery: the bot checks it and notes its head. */
  const opened = () => app.pullRequest(2, 'opened');
  const lastReply = () => app.lastReply(2);
  /** `login`'s comment `body` on #2 is refused: a `confused` reaction and a reply saying each of `why`. */
  async function refused(login: string, body: string, why: string[]) {
    const id = await send('created', login, body);
    expect(reactionsTo(id)).toEqual(['confused']);
    for (const said of why) expect(lastReply()).toContain(said);
  }

  it('/help answers with every command', async () => {
    const id = await send('created', 'carol', '/help');
    expect(reactionsTo(id)).toEqual(['+1']);
    for (const c of ['/approve', '/lgtm', '/hold', '/retest', '/promote', '/render', '/help'])
      expect(lastReply()).toContain(c);
  });

  it('answers an unknown command once, with the reason and the help', async () => {
    await refused('carol', 'please\n/aprove\n/lgtm now', [
      '`/aprove` is not a catalog-bot command',
      '`/lgtm` takes no argument other than `cancel`',
      'catalog-bot commands',
    ]);
    expect(gh.botComments(2)).toHaveLength(1);
  });

  it('/lgtm: not by the author; yes by someone with write access; cancel takes it off', async () => {
    await refused('carol', '/lgtm', ['you cannot LGTM your own pull request']);
    expect(gh.labelsOf(2)).toEqual([]);
    await send('created', 'dave', '/lgtm');
    expect(gh.labelsOf(2)).toEqual(['lgtm']);
    await send('created', 'dave', '/lgtm cancel');
    expect(gh.labelsOf(2)).toEqual([]);
  });

  it('/hold and /retest: refused for someone with no rights, done for the author', async () => {
    const eve = await send('created', 'eve', '/hold\n/retest');
    expect(reactionsTo(eve)).toEqual(['confused']);
    expect(gh.labelsOf(2)).toEqual([]);
    expect(gh.checkRuns).toEqual([]);
    const carol = await send('created', 'carol', '/hold\n/retest');
    expect(reactionsTo(carol)).toEqual(['+1']);
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    expect(
      gh
        .runsFor(repo.bottom)
        .map((r) => r.name)
        .sort(),
    ).toEqual([...CATALOG_CHANGE_CHECKS].sort());
    await send('created', 'carol', '/unhold');
    expect(gh.labelsOf(2)).toEqual([]);
  });

  it('a hold is lifted only by whoever put it on, or by someone with write access', async () => {
    const recorded = () =>
      gh
        .botComments(2)
        .map((c) => readState(c.body))
        .find((s) => s !== undefined)?.hold;
    await send('created', 'bob', '/hold'); // bob owns the package; no write access
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    expect(recorded()?.login).toBe('bob');
    // Another owner's `/hold` on a held pull request does not make the hold theirs to lift.
    const taken = await send('created', 'erin', '/hold\n/unhold');
    expect(reactionsTo(taken)).toEqual(['confused']);
    expect(recorded()?.login).toBe('bob');
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    await refused('carol', '/unhold', ['the hold was put on by `bob`']);
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    await send('created', 'bob', '/hold cancel');
    expect(gh.labelsOf(2)).toEqual([]);
    expect(recorded()).toBeUndefined();
    // A hold added by hand in GitHub's page: the timeline says who.
    gh.labelByHand(2, 'do-not-merge/hold', 'dave');
    await refused('carol', '/unhold', ['the hold was put on by `dave`']);
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    const bobs = await send('created', 'bob', '/unhold');
    expect(reactionsTo(bobs)).toEqual(['confused']);
    await send('created', 'dave', '/unhold'); // write access
    expect(gh.labelsOf(2)).toEqual([]);
  });

  it('a 1 MB comment is read up to its first 64 KiB: one reaction, no flood', async () => {
    const id = await send('created', 'carol', '/hold\n' + 'spam '.repeat(210_000) + '\n/approve');
    expect(gh.labelsOf(2)).toEqual(['do-not-merge/hold']);
    expect(reactionsTo(id)).toEqual(['+1']);
    expect(gh.comments).toEqual([]); // the /approve past the limit was never read
  });

  it('ignores comments by bots, and commands in code blocks', async () => {
    await send('created', 'other-bot[bot]', '/hold', { type: 'Bot' });
    await send('created', 'carol', '```\n/hold\n```');
    expect(gh.labelsOf(2)).toEqual([]);
    expect(gh.reactions).toEqual([]);
    expect(gh.comments).toEqual([]);
  });

  it('an edit runs only the commands it added; removing /approve withdraws it; so does deleting the comment', async () => {
    await opened();
    const id = await send('created', 'bob', 'looks right');
    expect(gh.reactions).toEqual([]);
    await send('edited', 'bob', 'looks right\n/approve', { id, from: 'looks right' });
    const state = () =>
      gh
        .botComments(2)
        .map((c) => readState(c.body))
        .find(Boolean)!;
    expect(state().approvals.map((a) => a.login)).toEqual(['bob']);
    await send('edited', 'bob', 'looks right (typo fixed)\n/approve', { id, from: 'looks right\n/approve' });
    expect(state().approvals.map((a) => a.login)).toEqual(['bob']);
    expect(reactionsTo(id)).toEqual(['+1']); // the typo fix ran nothing
    await send('edited', 'bob', 'on second thought, no', { id, from: 'looks right (typo fixed)\n/approve' });
    expect(state().approvals).toEqual([]);
    await send('edited', 'bob', '/approve', { id, from: 'on second thought, no' });
    expect(state().approvals.map((a) => a.login)).toEqual(['bob']);
    await send('deleted', 'bob', '/approve', { id });
    expect(state().approvals).toEqual([]);
    expect(gh.botComments(2).filter((c) => readState(c.body))).toHaveLength(1); // one status comment, updated
  });

  const show = (rev: string, path: string) => repo.git('show', `${rev}:${path}`);

  it("/promote by the package's owner commits the edit to the open pull request's branch", async () => {
    const id = await send('created', 'bob', '/promote foo.v1.0.2 fast');
    expect(reactionsTo(id)).toEqual(['+1']);
    expect(gh.refUpdates.map((u) => u.ref)).toEqual(['pr-2']);
    const pushed = gh.refUpdates[0]!.sha;
    expect(repo.git('rev-parse', `${pushed}^`)).toBe(repo.bottom); // on top of the branch, no force
    const after = show(pushed, `${ROOT}/catalog.yaml`);
    const before = show(repo.bottom, `${ROOT}/catalog.yaml`);
    expect(after.startsWith(before)).toBe(true); // the existing text is untouched
    expect(after.slice(before.length)).toBe(
      [
        '',
        '---',
        'schema: olm.channel',
        'name: fast',
        'package: foo',
        'entries:',
        '  - name: foo.v1.0.2',
      ].join('\n'),
    );
    expect(lastReply()).toContain('Pushed');
    expect(lastReply()).toContain('```diff');
  });

  it('/promote by someone who does not own the package is refused, and nothing is written', async () => {
    await refused('carol', '/promote foo.v1.0.2 fast', [
      'only the owners of what it changes or a maintainer may ask for it',
    ]);
    expect(gh.refUpdates).toEqual([]);
  });

  it('/promote on a merged pull request opens a new one from the default branch', async () => {
    Object.assign(gh.pulls.get(2)!, { state: 'closed', merged: true });
    await send('created', 'alice', '/promote foo.v1.0.1 candidate');
    expect(gh.created).toHaveLength(1);
    expect(gh.created[0]).toMatchObject({ base: 'main', title: 'Promote foo.v1.0.1 to candidate' });
    const branch = gh.refUpdates[0]!;
    expect(branch.ref).toBe(gh.created[0]!.head);
    expect(repo.git('rev-parse', `${branch.sha}^`)).toBe(repo.base);
    expect(lastReply()).toContain('Opened #100');
  });

  it('/promote of a bundle no catalog has says so', async () => {
    await send('created', 'alice', '/promote foo.v9.9.9 fast');
    expect(lastReply()).toContain('foo.v9.9.9 is in no catalog root');
    expect(gh.refUpdates).toEqual([]);
  });

  it('reconciliation queues the checks of a head that has none, once', async () => {
    const probot = testProbot();
    const q = new InProcessQueue();
    const options = { queue: q, workDir: app.workDir, appSlug: async () => 'catalog-bot' };
    q.start(jobRunner(probot, options));
    const first = await reconcile(probot, options);
    await q.onIdle();
    expect(first).toEqual({
      repositories: 1,
      checksQueued: 1,
      checksBusy: 0,
      publishQueued: 0,
      publishOverdue: 0,
    });
    // Options without a registry: no `catalog-bot/images` check.
    expect(
      gh
        .runsFor(repo.bottom)
        .filter((r) => r.status === 'completed')
        .map((r) => r.name)
        .sort(),
    ).toEqual(CATALOG_CHANGE_CHECKS.filter((name) => name !== 'catalog-bot/images').sort());
    // Everything is complete now: a second pass (another replica, a restart) queues nothing.
    expect(await reconcile(probot, options)).toEqual({
      repositories: 1,
      checksQueued: 0,
      checksBusy: 0,
      publishQueued: 0,
      publishOverdue: 0,
    });
  });

  it('reconciliation leaves alone a head whose checks are already queued: one run per check, not two', async () => {
    const probot = testProbot();
    const q = new InProcessQueue();
    const options = { queue: q, workDir: app.workDir, appSlug: async () => 'catalog-bot' };
    // The delivery's job is waiting (the queue not started yet, as in a replica that took it over).
    const pr = gh.pulls.get(2)!;
    const job = {
      ref: { owner: gh.owner, repo: gh.repo },
      number: 2,
      headSha: repo.bottom,
      author: pr.author,
      installationId: 4242,
      cloneUrl: gh.bare,
      repoId: 186853002,
    };
    expect(await enqueueChecks(probot, options, job, 'delivery:waiting')).toBe(true);
    expect(await reconcile(probot, options)).toEqual({
      repositories: 1,
      checksQueued: 0,
      checksBusy: 1,
      publishQueued: 0,
      publishOverdue: 0,
    });
    q.start(jobRunner(probot, options));
    await q.onIdle();
    const runs = gh.runsFor(repo.bottom).filter((r) => r.name === 'catalog-bot/permissions');
    expect(runs.map((r) => r.status)).toEqual(['completed']);
  });

  it('reconciliation: two open pull requests on one head are each checked once, then left alone', async () => {
    gh.addPull({ number: 3, head: repo.bottom, author: 'carol', mergeable_state: 'blocked' });
    const probot = testProbot();
    const q = new InProcessQueue();
    const options = { queue: q, workDir: app.workDir, appSlug: async () => 'catalog-bot' };
    q.start(jobRunner(probot, options));
    expect(await reconcile(probot, options)).toEqual({
      repositories: 1,
      checksQueued: 2,
      checksBusy: 0,
      publishQueued: 0,
      publishOverdue: 0,
    });
    await q.onIdle();
    // Each pull request has its own runs on the shared head (GitHub's "latest" per name would
    // show only one of them, and the other would be re-checked on every pass).
    const permissions = gh.runsFor(repo.bottom, 'catalog-bot/permissions');
    expect(permissions.filter((r) => r.status === 'completed')).toHaveLength(2);
    // A restarted replica (a fresh queue, which remembers no keys) finds nothing to do.
    const restarted = { ...options, queue: new InProcessQueue() };
    expect(await reconcile(probot, restarted)).toEqual({
      repositories: 1,
      checksQueued: 0,
      checksBusy: 0,
      publishQueued: 0,
      publishOverdue: 0,
    });
  });

  it('trusts approval state only from its own comments', async () => {
    // carol pastes a forged status comment claiming bob approved
    gh.comments.push({
      id: 1,
      repo: 'Codertocat/Hello-World',
      issue: 2,
      body: '<!-- catalog-bot:state {"approvals":[{"login":"bob","comment":1,"sha":"x","subjects":{}}]} -->',
      user: { login: 'carol', type: 'User' },
    });
    await send('created', 'carol', '/retest');
    expect(gh.runsFor(repo.bottom, 'catalog-bot/permissions').at(-1)?.conclusion).toBe('failure');
  });
});
