// Trust model (docs/security.md): results belong to (head, base, config), and mirrors follow
// the repository, not its name. End to end through the real Probot server with signed
// webhooks, real bare repositories (some behind a private git host that wants the token),
// the real mirror and checks; GitHub's REST API is the one fake (github-model.ts, nock skin).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOG_CHANGE_CHECKS } from './helpers/checks.js';
import { InProcessQueue } from '../src/queue.js';
import { startAppServer, type AppServer } from './helpers/app-server.js';
import { closeNetwork, FakeGitHub, openNetwork, type FakePull } from './helpers/fake-github.js';
import {
  FOO_OWNERS,
  FOO_ROOT,
  fooBundle,
  fooCatalogFiles,
  fooChannel,
  fooConfig,
  WorkRepo,
} from './helpers/foo-repo.js';
import { startGitHttp, type GitHttpServer } from './helpers/git-http.js';
import { installationToken } from './helpers/github-model.js';
import { webhookExample, type Payload } from './helpers/github.js';

const config = (maintainers: string[], automerge: 'merge' | 'squash' = 'squash') =>
  fooConfig({ maintainers, automerge });
const CHANNEL = fooChannel(['1.0.0', '1.0.1', '1.0.2']);
const bundle = fooBundle;
const ROOT = FOO_ROOT;
const OWNERS = FOO_OWNERS;

/** foo (test/helpers/foo-repo.ts) owned by `owners`, on `main` of a bare origin. */
class Repo extends WorkRepo {
  readonly base: string;

  constructor(owners: string[]) {
    super('catalog-bot-trust-');
    this.base = this.commit('base', {
      '.github/catalog-bot.yml': config(['alice']),
      [OWNERS]: `approvers: [${owners.join(', ')}]\n`,
      'README.md': 'catalog\n',
      ...fooCatalogFiles(['1.0.0', '1.0.1', '1.0.2']),
    });
    this.push(this.base, 'refs/heads/main');
  }

  /** bob (an owner of foo) adds v1.2.0 at the top of the channel. */
  top(): string {
    return this.commit(
      'top',
      {
        [`${ROOT}/catalog.yaml`]: CHANNEL.replace(
          'entries:\n',
          'entries:\n  - name: foo.v1.2.0\n    replaces: foo.v1.0.2\n',
        ),
        [`${ROOT}/bundle-1.2.0.yaml`]: bundle('1.2.0'),
      },
      this.base,
    );
  }

  /** carol adds v1.1.0 at the bottom of the channel. */
  bottom(): string {
    return this.commit(
      'bottom',
      {
        [`${ROOT}/catalog.yaml`]: CHANNEL + '  - name: foo.v1.1.0\n    replaces: foo.v1.0.2\n',
        [`${ROOT}/bundle-1.1.0.yaml`]: bundle('1.1.0'),
      },
      this.base,
    );
  }

  /** A commit on main (a merge someone did by hand); returns it. */
  advanceMain(message: string, files: Record<string, string>): string {
    const next = this.commit(message, files, this.gitIn(this.bare, 'rev-parse', 'refs/heads/main'));
    this.push(next, 'refs/heads/main');
    return next;
  }
}

const TIMEOUT = 180_000;

describe(
  'trust: results belong to (head, base, config); mirrors follow the repository',
  { timeout: TIMEOUT },
  () => {
    let repo: Repo;
    let workDir: string;
    let gh: FakeGitHub;
    let queue: InProcessQueue;
    let server: AppServer | undefined;
    let git: GitHttpServer | undefined;
    let delivery = 0;
    let cloneUrl: string;

    async function start(owners: string[]) {
      repo = new Repo(owners);
      cloneUrl = repo.bare;
      gh = new FakeGitHub('Codertocat', 'Hello-World', repo.bare);
      queue = new InProcessQueue();
      server = await startAppServer(gh, { queue, workDir });
    }

    beforeEach(() => {
      closeNetwork();
      workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
      // A lazy fetch without credentials must fail, never wait for a prompt.
      process.env.GIT_TERMINAL_PROMPT = '0';
    });
    afterEach(async () => {
      await server?.stop();
      server = undefined;
      await git?.close();
      git = undefined;
      openNetwork();
      repo?.cleanup();
      rmSync(workDir, { recursive: true, force: true });
    });

    /** A signed webhook to the real server, then everything it queued. */
    async function deliver(name: string, payload: Payload) {
      payload.installation = { id: 4242 };
      expect(await server!.send(name, payload, `trust-${++delivery}`)).toBe(200);
      await queue.onIdle();
    }

    function repository(): Payload {
      const payload = webhookExample('pull_request', 'opened');
      payload.repository.clone_url = cloneUrl;
      return payload.repository;
    }

    async function pullRequest(number: number, action = 'opened', extra: Payload = {}) {
      const pull = gh.pulls.get(number)!;
      const payload = webhookExample('pull_request', 'opened');
      payload.action = action;
      payload.repository = repository();
      payload.number = number;
      Object.assign(payload.pull_request, { number, draft: false });
      payload.pull_request.user.login = pull.author;
      payload.pull_request.head.sha = pull.head;
      payload.pull_request.base.ref = pull.base ?? 'main';
      Object.assign(payload, extra);
      await deliver('pull_request', payload);
    }

    /** Another App's checks completed on the pull requests: the merge gate looks again. */
    async function otherSuiteCompleted(...numbers: number[]) {
      const suite = webhookExample('check_suite', 'completed');
      suite.repository = repository();
      suite.check_suite.app = { ...suite.check_suite.app, slug: 'other-ci' };
      suite.check_suite.pull_requests = numbers.map((number) => ({
        number,
        base: { repo: { id: suite.repository.id } },
      }));
      await deliver('check_suite', suite);
    }

    /** The repository behind a private git host that wants the installation's token; payloads carry its address. */
    async function servePrivately(): Promise<GitHttpServer> {
      git = await startGitHttp(installationToken(4242));
      cloneUrl = git.serve('/Codertocat/Hello-World.git', repo.bare);
      return git;
    }

    /**
     * bob's v1.2.0 at the top of the channel (Repo.top) as pull request 1 into main (with
     * `more` of the head), opened; its head.
     */
    async function openTopPull(more: (head: string) => Partial<FakePull> = () => ({})): Promise<string> {
      const head = repo.top();
      repo.push(head, 'refs/pull/1/head');
      addPull(1, 'bob', head, more(head));
      await pullRequest(1);
      return head;
    }

    /** Pull request `number` by `author` at `head` into main; GitHub's merge of it moves main for real. */
    function addPull(number: number, author: string, head: string, more: Partial<FakePull> = {}): void {
      gh.addPull({ number, head, author, onMerge: () => gh.mergeForReal('main', head), ...more });
    }

    const newest = (sha: string, name: string) => gh.runsFor(sha, name).at(-1);
    /** The newest run of every catalog check on `head` passed. */
    function expectGreen(head: string): void {
      for (const name of CATALOG_CHANGE_CHECKS)
        expect(['success', 'neutral']).toContain(newest(head, name)?.conclusion);
    }
    /** Nothing was merged: main is still the base. */
    function expectNothingMerged(): void {
      expect(gh.merges).toEqual([]);
      expect(repo.gitIn(repo.bare, 'rev-parse', 'refs/heads/main')).toBe(repo.base);
    }
    const botReplies = (number: number) =>
      gh.botComments(number).filter((c) => c.body.startsWith('Not merged'));

    it('a green result for the same head into another branch (whose config makes the author a maintainer) does not count for main', async () => {
      await start(['bob']);
      const head = repo.bottom(); // carol changes foo, which only bob owns on main
      const old = repo.commit(
        'old branch',
        { '.github/catalog-bot.yml': config(['alice', 'carol']) },
        repo.base,
      );
      repo.push(old, 'refs/heads/old');
      repo.push(head, 'refs/pull/1/head', 'refs/pull/3/head');
      addPull(1, 'carol', head);
      gh.addPull({ number: 3, head, author: 'carol', base: 'old', mergeable_state: 'blocked' });
      await pullRequest(1);
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('failure');
      await pullRequest(3);
      // The newest runs on the head are all green (computed against `old`).
      expectGreen(head);
      await otherSuiteCompleted(1);
      expectNothingMerged();
    });

    it('a result for the same head in another pull request into the same base does not count, either way', async () => {
      await start(['bob']);
      const head = repo.top(); // bob (foo's owner) adds v1.2.0 on his branch
      repo.push(head, 'refs/pull/1/head', 'refs/pull/2/head');
      // carol opens #2 from bob's branch into main: the same head, under her name.
      addPull(2, 'carol', head);
      await pullRequest(2);
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('failure');
      expect(gh.merges).toEqual([]);
      // bob's own #1 (waiting for another App's required check) is checked after: its green
      // runs are now the newest on the head, for the same base, config and rules.
      addPull(1, 'bob', head, { mergeable_state: 'blocked' });
      await pullRequest(1);
      expectGreen(head);
      // Any event that runs the gate for #2 does not merge it on #1's results.
      await otherSuiteCompleted(2);
      expectNothingMerged();
      // And the other way: carol's red runs, checked again and now the newest, do not hold #1 back.
      await pullRequest(2, 'reopened');
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('failure');
      gh.pulls.get(1)!.mergeable_state = 'clean';
      await otherSuiteCompleted(1);
      expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'squash' }]);
    });

    it('a result computed under an older config of the base branch does not count: the checks run again before the merge', async () => {
      await start(['bob']);
      // A private repository: the gate reads the new config with the token, not by a lazy fetch.
      const host = await servePrivately();
      const runsAtMerge: number[] = [];
      const head = await openTopPull((head) => ({
        mergeable_state: 'blocked',
        onMerge: () => {
          runsAtMerge.push(gh.runsFor(head).filter((r) => r.status === 'completed').length);
          return gh.mergeForReal('main', head);
        },
      }));
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('success');
      repo.advanceMain('merge method', { '.github/catalog-bot.yml': config(['alice'], 'merge') });
      gh.pulls.get(1)!.mergeable_state = 'clean';
      await otherSuiteCompleted(1);
      expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'merge' }]);
      // Merged only on a second set of runs, computed under the new config.
      expect(runsAtMerge).toEqual([2 * CATALOG_CHANGE_CHECKS.length]);
      const [first, second] = gh.runsFor(head, 'catalog-bot/validate').map((r) => r.output?.text);
      expect(second).toMatch(/Checked against `main`/);
      expect(second).not.toBe(first);
      expect(host.requests.every((r) => r.authorized)).toBe(true);
    });

    it('permissions are decided again under the current base: an owner removed on main no longer merges her waiting pull request', async () => {
      await start(['bob', 'carol']);
      const head = repo.bottom();
      repo.push(head, 'refs/pull/2/head');
      addPull(2, 'carol', head, { labels: ['do-not-merge/hold'] });
      await pullRequest(2);
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('success');
      // bob takes carol off foo's owners; then the hold comes off.
      repo.advanceMain('carol no longer owns foo', { [OWNERS]: 'approvers: [bob]\n' });
      gh.pulls.get(2)!.labels = [];
      await pullRequest(2, 'unlabeled', { label: { name: 'do-not-merge/hold' } });
      expect(gh.merges).toEqual([]);
      const said = botReplies(2);
      expect(said).toHaveLength(1);
      expect(said[0]!.body).toContain('`catalog-bot/permissions` fails');
      // The permissions run now says so too, and the gate does not repeat itself.
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('failure');
      await otherSuiteCompleted(2);
      expect(gh.merges).toEqual([]);
      expect(botReplies(2)).toHaveLength(1);
    });

    it('/hold put on while the pre-merge re-check runs stops the merge', async () => {
      await start(['bob']);
      const head = await openTopPull(() => ({ mergeable_state: 'blocked' }));
      expect(newest(head, 'catalog-bot/validate')?.conclusion).toBe('success');
      gh.pulls.get(1)!.mergeable_state = 'clean';
      // The gate reads the base branch right before its re-check: someone says /hold then.
      gh.onBranch = () => {
        const labels = gh.pulls.get(1)!.labels!;
        if (!labels.includes('do-not-merge/hold')) labels.push('do-not-merge/hold');
      };
      await otherSuiteCompleted(1);
      expect(gh.labelsOf(1)).toContain('do-not-merge/hold');
      expect(gh.merges).toEqual([]);
    });

    it('a private repository: a pull request behind its base is checked and merged (merge-base blobs fetched with the token)', async () => {
      await start(['bob']);
      const host = await servePrivately();
      // main moved on since: the same file changed on both sides, so the merge base's
      // version of it is in neither the base tip nor the head.
      repo.advanceMain('a note', { [`${ROOT}/catalog.yaml`]: CHANNEL + '# maintained by bob\n' });
      const head = await openTopPull();
      for (const name of CATALOG_CHANGE_CHECKS) {
        const run = newest(head, name)!;
        expect(run.output?.title).not.toBe('catalog-bot could not check this pull request');
        expect(['success', 'neutral']).toContain(run.conclusion);
      }
      expect(gh.merges).toEqual([{ number: 1, sha: head, method: 'squash' }]);
      expect(host.requests.length).toBeGreaterThan(0);
      expect(host.requests.every((r) => r.authorized)).toBe(true);
    });

    it('a renamed repository (same id, new clone_url) is fetched from its new address', async () => {
      await start(['bob']);
      const host = await servePrivately();
      const head = await openTopPull(() => ({ mergeable_state: 'blocked' }));
      expect(newest(head, 'catalog-bot/permissions')?.conclusion).toBe('success');
      // Renamed: the old address is gone; the payloads carry the new one.
      host.unserve('/Codertocat/Hello-World.git');
      cloneUrl = host.serve('/Codertocat/Renamed.git', repo.bare);
      const newer = repo.commit(
        'newer',
        { [`${ROOT}/bundle-1.2.0.yaml`]: bundle('1.2.0') + '# note\n' },
        head,
      );
      repo.push(newer, 'refs/pull/1/head');
      gh.pulls.get(1)!.head = newer;
      await pullRequest(1, 'synchronize');
      for (const name of CATALOG_CHANGE_CHECKS) {
        const run = newest(newer, name)!;
        expect(run.output?.title).not.toBe('catalog-bot could not check this pull request');
        expect(run.status).toBe('completed');
      }
      expect(newest(newer, 'catalog-bot/permissions')?.conclusion).toBe('success');
      // One mirror, the same one: it is the repository's, whatever its name.
      expect(readdirSync(join(workDir, 'mirrors')).filter((n) => n.endsWith('.git'))).toHaveLength(1);
      expect(host.requests.some((r) => r.path.startsWith('/Codertocat/Renamed.git/'))).toBe(true);
    });
  },
);
