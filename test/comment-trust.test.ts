// Comments are commands only as their author wrote them, for what the author saw, and never
// write to a branch the bot must not push to (docs/security.md). End to end through the App:
// signed webhooks, a real bare repository, GitHub's API as a stateful fake (nock).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPrChecks } from '../src/checks/pr.js';
import { readState, stateCommentBody } from '../src/handlers/pr-state.js';
import { issueCommentPayload } from './helpers/app-server.js';
import { fooOrigin, originCopies, startAppHarness, type AppHarness } from './helpers/app-harness.js';
import type { FakeGitHub } from './helpers/fake-github.js';
import { fooBundle as bundle, fooChannel, FOO_ROOT } from './helpers/foo-repo.js';
import { webhookExample, type Payload } from './helpers/github.js';

const ROOT = FOO_ROOT;
const channel = (extra = '') => fooChannel(['1.0.0', '1.0.1'], extra);

/**
 * foo owned by bob; `reviewed` (#2, branch pr-2): carol (no rights on foo) adds v1.1.0, what bob
 * reviews; `swapped`: her next commit on top, v1.1.0 now pointing at her own image (a
 * fast-forward); `rewritten`: another history from base, v1.1.0 with her image at once (a
 * force-push).
 */
function makeRepo() {
  const o = { config: { automerge: 'squash' as const }, owners: ['bob'], versions: ['1.0.0', '1.0.1'] };
  return fooOrigin('catalog-bot-trust-', o, (repo, base) => {
    const added = { [`${ROOT}/catalog.yaml`]: channel('  - name: foo.v1.1.0\n    replaces: foo.v1.0.1\n') };
    const reviewed = repo.commit(
      'add 1.1.0',
      { ...added, [`${ROOT}/bundle-1.1.0.yaml`]: bundle('1.1.0') },
      base,
    );
    const evil = bundle('1.1.0', 'quay.io/carol/anything:latest');
    const swapped = repo.commit('tweak', { [`${ROOT}/bundle-1.1.0.yaml`]: evil }, reviewed);
    const rewritten = repo.commit('add 1.1.0', { ...added, [`${ROOT}/bundle-1.1.0.yaml`]: evil }, base);
    repo.push(reviewed, 'refs/pull/2/head', 'refs/heads/pr-2');
    repo.push(swapped, 'refs/heads/swapped');
    repo.push(rewritten, 'refs/heads/rewritten');
    return { reviewed, swapped, rewritten };
  });
}
type Repo = ReturnType<typeof makeRepo>;

describe('comment commands: who wrote them, what they saw, where they write', () => {
  let repo: Repo;
  let gh: FakeGitHub;
  let app: AppHarness;
  let commentId = 7000;
  /** GitHub account ids: an edit is told apart by id as well as by login. */
  const ids: Record<string, number> = { alice: 11, bob: 12, carol: 13, dave: 14 };

  const nextRepo = originCopies(makeRepo);

  beforeEach(async () => {
    repo = nextRepo();
    app = await startAppHarness(repo.bare, []);
    gh = app.gh;
    gh.permissions.set('dave', 'write');
  });
  afterEach(async () => {
    await app.stop();
    repo.cleanup();
  });

  /** A `pull_request` delivery for the head the pull request has now. */
  const prEvent = (action: 'opened' | 'synchronize', number = 2) => app.pullRequest(number, action);

  /** A comment as GitHub has it: written (created_at) now on GitHub's clock, delivered by deliver(). */
  function write(login: string, body: string, number = 2): Payload {
    const id = ++commentId;
    return issueCommentPayload({
      bare: repo.bare,
      number,
      id,
      login,
      userId: ids[login],
      body,
      at: gh.tick(),
    });
  }

  /** `editor` edits the comment to `body` (GitHub: action edited, the editor is the sender). */
  function edit(comment: Payload, editor: string, body: string): Payload {
    const payload = structuredClone(comment);
    payload.action = 'edited';
    payload.changes = { body: { from: comment.comment.body } };
    payload.comment.body = body;
    payload.comment.updated_at = gh.tick().toISOString();
    payload.sender = { ...payload.sender, login: editor, id: ids[editor] };
    return payload;
  }

  async function deliver(payload: Payload) {
    await app.deliver('issue_comment', payload);
  }

  let reviewId = 9000;
  /**
   * A `pull_request_review` delivery: `login` reviews `commit` (GitHub records the commit a
   * review was given on), or a dismissal of review `id`.
   */
  async function review(login: string, commit: string, opts: { state?: string; dismiss?: number } = {}) {
    const payload = webhookExample('pull_request_review', 'submitted');
    const pr = webhookExample('pull_request', 'opened');
    pr.repository.clone_url = repo.bare;
    payload.action = opts.dismiss === undefined ? 'submitted' : 'dismissed';
    payload.installation = { id: 4242 };
    payload.repository = pr.repository;
    payload.pull_request.number = 2;
    const user = { ...payload.review.user, login, id: ids[login], type: 'User' };
    Object.assign(payload.review, {
      id: opts.dismiss ?? ++reviewId,
      user,
      commit_id: commit,
      state: opts.dismiss === undefined ? (opts.state ?? 'approved') : 'dismissed',
      submitted_at: gh.tick().toISOString(),
    });
    payload.sender = user;
    await app.deliver('pull_request_review', payload);
    return payload.review.id as number;
  }

  /** carol pushes a commit on top of the head (a fast-forward); the synchronize is delivered. */
  async function pushOnTop(sha: string) {
    repo.git('update-ref', 'refs/pull/2/head', sha);
    gh.pulls.get(2)!.head = sha;
    await prEvent('synchronize');
  }

  /** Longer than the grace a head needs before a plain /approve counts for it (60 s by default). */
  const PAST_GRACE = 61_000;

  const approvals = (number = 2) =>
    gh
      .botComments(number)
      .map((c) => readState(c.body))
      .find(Boolean)?.approvals ?? [];
  const lastReply = (number = 2) => app.lastReply(number);
  const permissions = (sha: string) => gh.runsFor(sha, 'catalog-bot/permissions').at(-1)?.conclusion;

  it('/approve written before a force-push does not approve the pushed head; a new /approve does', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol' });
    await prEvent('opened');
    expect(permissions(repo.reviewed)).toBe('failure'); // foo is bob's
    // bob reviews the head and approves; before the bot gets to his comment, carol
    // force-pushes another history (its synchronize delivery is still on its way).
    const approve = write('bob', 'LGTM\n/approve');
    gh.tick(2000);
    gh.forcePush(2, repo.rewritten);
    await deliver(approve);
    expect(approvals()).toEqual([]);
    expect(gh.merges).toEqual([]);
    expect(lastReply()).toContain('@bob `/approve`: catalog-bot cannot tell that');
    expect(lastReply()).toContain(`comment \`/approve ${repo.rewritten.slice(0, 7)}\` to approve it`);
    expect(gh.reactions.filter((r) => r.comment === approve.comment.id).map((r) => r.content)).toEqual([
      'confused',
    ]);
    // The synchronize arrives: the pushed head is checked, and still needs bob.
    await prEvent('synchronize');
    expect(permissions(repo.rewritten)).toBe('failure');
    expect(gh.merges).toEqual([]);
    // bob looks at the new head for a while and approves it: that counts, for what he saw.
    gh.tick(PAST_GRACE);
    const again = write('bob', '/approve');
    await deliver(again);
    expect(approvals()).toMatchObject([{ login: 'bob', comment: again.comment.id, sha: repo.rewritten }]);
    expect(gh.merges).toEqual([{ number: 2, sha: repo.rewritten, method: 'squash' }]);
  });

  it('/approve written before a fast-forward push does not approve it, whichever delivery comes first', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol' });
    await prEvent('opened');
    const approve = write('bob', '/approve');
    gh.tick(2000);
    // carol pushes a commit on top; GitHub delivers the synchronize before the comment.
    repo.git('update-ref', 'refs/pull/2/head', repo.swapped);
    gh.pulls.get(2)!.head = repo.swapped;
    await prEvent('synchronize');
    await deliver(approve);
    expect(approvals()).toEqual([]);
    expect(permissions(repo.swapped)).toBe('failure');
    expect(gh.merges).toEqual([]);
    expect(lastReply()).toContain('cannot tell that');
  });

  it('an /approve written on a head older than the grace counts (and merges)', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', onMerge: () => 'f'.repeat(40) });
    await prEvent('opened');
    gh.tick(PAST_GRACE);
    const approve = write('bob', '/approve');
    await deliver(approve);
    expect(approvals()).toMatchObject([{ login: 'bob', sha: repo.reviewed }]);
    expect(gh.merges).toEqual([{ number: 2, sha: repo.reviewed, method: 'squash' }]);
  });

  it('a push seconds before a plain /approve is not approved; /approve <sha> of the head is, of an older commit is not', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', onMerge: () => 'f'.repeat(40) });
    await prEvent('opened');
    // bob reads the head for two minutes; carol pushes on top; bob's /approve comes 3 s later.
    gh.tick(120_000);
    await pushOnTop(repo.swapped);
    gh.tick(2000);
    await deliver(write('bob', 'LGTM\n/approve'));
    expect(approvals()).toEqual([]);
    expect(permissions(repo.swapped)).toBe('failure');
    expect(gh.merges).toEqual([]);
    // The reply names the head it would approve and how to approve it.
    expect(lastReply()).toContain(
      `@bob \`/approve\`: catalog-bot cannot tell that ${repo.swapped.slice(0, 12)}`,
    );
    expect(lastReply()).toContain(`comment \`/approve ${repo.swapped.slice(0, 7)}\` to approve it`);
    // Naming the commit he read, now that it is not the head, approves nothing.
    await deliver(write('bob', `/approve ${repo.reviewed.slice(0, 7)}`));
    expect(approvals()).toEqual([]);
    expect(gh.merges).toEqual([]);
    expect(lastReply()).toContain(`\`/approve ${repo.reviewed.slice(0, 7)}\`: that is not the head`);
    // Naming the head approves it, however recently it was pushed.
    const named = write('bob', `/approve ${repo.swapped.slice(0, 7)}`);
    await deliver(named);
    expect(approvals()).toMatchObject([{ login: 'bob', comment: named.comment.id, sha: repo.swapped }]);
    expect(gh.merges).toEqual([{ number: 2, sha: repo.swapped, method: 'squash' }]);
  });

  it('an approving review counts for the commit it was given on only, when that is the head', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', onMerge: () => 'f'.repeat(40) });
    await prEvent('opened');
    // bob's review of the first head arrives after carol pushed on top of it.
    await pushOnTop(repo.swapped);
    await review('bob', repo.reviewed);
    expect(approvals()).toEqual([]);
    expect(permissions(repo.swapped)).toBe('failure');
    expect(gh.merges).toEqual([]);
    expect(lastReply()).toContain(
      `@bob your approving review was given on ${repo.reviewed.slice(0, 12)}, and the head is now ${repo.swapped.slice(0, 12)}: it approves nothing`,
    );
    // A review that comments approves nothing either.
    await review('bob', repo.swapped, { state: 'commented' });
    expect(approvals()).toEqual([]);
    // bob approves the head in a review: that counts, at once (the review names its commit).
    const id = await review('bob', repo.swapped);
    expect(approvals()).toMatchObject([{ login: 'bob', review: id, sha: repo.swapped }]);
    expect(gh.merges).toEqual([{ number: 2, sha: repo.swapped, method: 'squash' }]);
  });

  it('an approving review by someone who may not approve does nothing; a dismissed review stops counting', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', mergeable_state: 'blocked' });
    await prEvent('opened');
    const replies = () => app.replies(2).length;
    const before = replies();
    // dave has write access but does not own foo: his approving review is not an approval.
    await review('dave', repo.reviewed);
    expect(approvals()).toEqual([]);
    expect(permissions(repo.reviewed)).toBe('failure');
    // bob owns foo: his is.
    const bobs = await review('bob', repo.reviewed);
    expect(approvals()).toMatchObject([{ login: 'bob', review: bobs, sha: repo.reviewed }]);
    expect(permissions(repo.reviewed)).toBe('success');
    // Someone dismisses bob's review: the approval it gave is gone, and the checks say so.
    await review('dave', repo.reviewed, { dismiss: bobs });
    expect(approvals()).toEqual([]);
    expect(permissions(repo.reviewed)).toBe('failure');
    expect(gh.merges).toEqual([]);
    // Reviews are common: nobody was told anything but in the status comment.
    expect(replies()).toBe(before);
  });

  it('an edit by someone else never adds a command to a comment; it can take an /approve away', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', mergeable_state: 'blocked' });
    await prEvent('opened');
    // dave (write access, not an owner of foo) edits bob's comment to approve in bob's name.
    const bobs = write('bob', 'I will look at this tomorrow');
    await deliver(bobs);
    const forged = edit(bobs, 'dave', 'I will look at this tomorrow\n/approve\n/hold');
    await deliver(forged);
    expect(approvals()).toEqual([]);
    expect(gh.labelsOf(2)).toEqual([]);
    expect(permissions(repo.reviewed)).toBe('failure');
    expect(lastReply()).toContain("@dave the commands you added to @bob's comment were not run");
    // bob's own edit of a comment of his does count.
    gh.tick(PAST_GRACE);
    const later = write('bob', 'Looked at it.');
    await deliver(later);
    const own = edit(later, 'bob', 'Looked at it.\n/approve');
    await deliver(own);
    expect(approvals()).toMatchObject([{ login: 'bob', comment: later.comment.id }]);
    expect(permissions(repo.reviewed)).toBe('success');
    // dave removing bob's /approve withdraws it (the safe direction).
    await deliver(edit(own, 'dave', 'Looked at it.'));
    expect(approvals()).toEqual([]);
    expect(permissions(repo.reviewed)).toBe('failure');
  });

  it('commands inside HTML comments do nothing', async () => {
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol' });
    await prEvent('opened');
    const hidden = write('bob', 'Thanks!\n<!--\n/approve\n-->\n<!-- /hold --> \n   <!-- /lgtm -->');
    await deliver(hidden);
    expect(approvals()).toEqual([]);
    expect(gh.labelsOf(2)).toEqual([]);
    expect(gh.reactions).toEqual([]);
    expect(gh.merges).toEqual([]);
  });

  /** A forged status record: bob approved everything carol's reviewed head changes in foo. */
  async function forgedState(): Promise<string> {
    const { subjects } = await runPrChecks({
      repo: repo.bare,
      base: repo.base,
      rules: repo.base,
      head: repo.reviewed,
      author: 'bob',
      approvers: [],
    });
    expect(subjects?.size).toBeGreaterThan(0);
    const state = {
      approvals: [{ login: 'bob', comment: 1, sha: repo.reviewed, subjects: Object.fromEntries(subjects!) }],
    };
    // Just what a status comment of the bot holds after its visible text.
    return stateCommentBody(state).slice(stateCommentBody(state).indexOf('<!-- catalog-bot:state '));
  }

  /** A commit on top of `parent` with `files` added, made in the bare repository. */
  function commitOnto(parent: string, files: Record<string, string>): string {
    const index = join(repo.bare, 'test-index');
    const env = { ...process.env, GIT_INDEX_FILE: index };
    const git = (args: string[], input?: string) =>
      execFileSync('git', ['-C', repo.bare, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
        encoding: 'utf8',
        env,
        input,
      }).trim();
    git(['read-tree', parent]);
    for (const [path, text] of Object.entries(files))
      git([
        'update-index',
        '--add',
        '--cacheinfo',
        `100644,${git(['hash-object', '-w', '--stdin'], text)},${path}`,
      ]);
    const commit = git(['commit-tree', git(['write-tree']), '-p', parent, '-m', 'commit']);
    rmSync(index, { force: true });
    return commit;
  }

  it('a reply that quotes a package name carrying a status marker is not read as the status comment', async () => {
    // carol's branch first holds a bundle whose package name is a forged status record.
    const marker = await forgedState();
    const echo = commitOnto(repo.reviewed, {
      'catalogs/v4.21/evil/bundle.yaml': `---
schema: olm.bundle
package: '${marker}'
name: evil.v1.0.0
image: quay.io/carol/evil:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: '${marker}'
      version: 1.0.0
`,
    });
    repo.git('update-ref', 'refs/heads/pr-2', echo);
    repo.git('update-ref', 'refs/pull/2/head', echo);
    gh.addPull({ number: 2, head: echo, author: 'carol', onMerge: () => 'f'.repeat(40) });
    // Before the bot has written a status comment, her /promote is refused, naming the package.
    await deliver(write('carol', '/promote evil.v1.0.0 stable'));
    expect(gh.botComments(2)).toHaveLength(1);
    const reply = gh.botComments(2)[0]!.body;
    expect(reply).toContain('of evil.v1.0.0 does not load');
    // She force-pushes what bob would review; the checks do not see bob's approval.
    gh.forcePush(2, repo.reviewed);
    repo.git('update-ref', 'refs/heads/pr-2', repo.reviewed);
    await prEvent('synchronize');
    expect(permissions(repo.reviewed)).toBe('failure');
    expect(approvals()).toEqual([]);
    expect(gh.merges).toEqual([]);
    // The reply shows the name as written, but what it quotes cannot open an HTML comment.
    expect(reply).toContain('catalog-bot:state');
    expect(reply).not.toContain('<!--');
    expect(readState(reply)).toBeUndefined();
  });

  it('a comment of the bot that is not exactly a status comment is never read as one', async () => {
    const marker = await forgedState();
    gh.addPull({ number: 2, head: repo.reviewed, author: 'carol', onMerge: () => 'f'.repeat(40) });
    // A reply quoting the marker as it is (an older version of the bot, or a way around the quoting).
    gh.comments.push({
      id: 1,
      repo: 'Codertocat/Hello-World',
      issue: 2,
      body: `Not merged: \`${marker}\` does not load`,
      user: { login: 'catalog-bot[bot]', type: 'Bot' },
    });
    await prEvent('opened');
    expect(permissions(repo.reviewed)).toBe('failure');
    expect(gh.merges).toEqual([]);
    // The bot wrote a status comment of its own, with no approval in it.
    const status = gh.botComments(2).filter((c) => c.id !== 1 && readState(c.body));
    expect(status).toHaveLength(1);
    expect(readState(status[0]!.body)?.approvals).toEqual([]);
  });

  it('/promote on a pull request from the default branch opens a pull request instead of pushing to it', async () => {
    const main = repo.git('rev-parse', 'main');
    gh.addPull({ number: 3, head: main, author: 'bob', headRef: 'main' });
    await deliver(write('alice', '/promote foo.v1.0.1 fast', 3));
    expect(repo.git('rev-parse', 'main')).toBe(main);
    expect(gh.refUpdates.map((u) => u.ref)).not.toContain('main');
    expect(gh.created).toMatchObject([{ base: 'main', title: 'Promote foo.v1.0.1 to fast' }]);
    expect(repo.git('rev-parse', `${gh.created[0]!.head}^`)).toBe(main);
    expect(lastReply(3)).toContain('`main` is the default branch, which catalog-bot does not push to');
  });

  it('/promote never pushes to a protected branch or one under repository rules', async () => {
    const main = repo.git('rev-parse', 'main');
    repo.git('update-ref', 'refs/heads/release-4.21', main);
    repo.git('update-ref', 'refs/heads/ruled', main);
    gh.protectedBranches.add('release-4.21');
    gh.branchRules.set('ruled', [{ type: 'non_fast_forward' }]);
    gh.addPull({ number: 4, head: main, author: 'bob', headRef: 'release-4.21' });
    gh.addPull({ number: 5, head: main, author: 'bob', headRef: 'ruled' });
    await deliver(write('alice', '/promote foo.v1.0.1 fast', 4));
    await deliver(write('alice', '/promote foo.v1.0.0 candidate', 5));
    expect(repo.git('rev-parse', 'release-4.21')).toBe(main);
    expect(repo.git('rev-parse', 'ruled')).toBe(main);
    expect(gh.created.map((c) => c.base)).toEqual(['release-4.21', 'ruled']);
    expect(lastReply(4)).toContain('`release-4.21` is a protected branch');
    // An unprotected branch of the same repository still gets the commit itself.
    repo.git('update-ref', 'refs/heads/topic', main);
    gh.addPull({ number: 6, head: main, author: 'bob', headRef: 'topic' });
    await deliver(write('alice', '/promote foo.v1.0.1 fast', 6));
    expect(gh.refUpdates.at(-1)!.ref).toBe('topic');
    expect(lastReply(6)).toContain('Pushed');
  });
});
