// One App test set-up for the flows that talk to the stateful GitHub fake: a bare origin
// holding the refs a test needs, the real Probot server (app-server.ts) with signed
// webhooks, and deliveries that resolve once every job they caused is done.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { GitTreeSource, validateCatalog } from '../../src/catalog/index.js';
import { readState } from '../../src/handlers/pr-state.js';
import { InProcessQueue } from '../../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './app-server.js';
import { FakeGitHub, type FakeComment, type FakePull } from './fake-github.js';
import {
  fooCatalogFiles,
  FOO_BASE_VERSIONS,
  fooConfig,
  FOO_OWNERS,
  fooTwoHeads,
  WorkRepo,
  type FooConfig,
} from './foo-repo.js';
import { gitIn } from './git.js';
import { webhookExample, type Payload } from './github.js';

/** A bare repository (default branch `main`) holding `refspecs` pushed from `source`. */
export function bareOrigin(source: string, refspecs: string[]): { bare: string; cleanup: () => void } {
  const bare = mkdtempSync(join(tmpdir(), 'catalog-bot-origin-'));
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  if (refspecs.length) execFileSync('git', ['-C', source, 'push', '-q', bare, ...refspecs]);
  return { bare, cleanup: () => rmSync(bare, { recursive: true, force: true }) };
}

/** A test's origin: the bare repository, git in it, its removal, and the commits the test names. */
export type Origin<Commits> = Commits & {
  bare: string;
  git: (...args: string[]) => string;
  cleanup: () => void;
};

/** The origin of `repo` (its bare repository) with `commits`. */
export function originOf<Commits extends object>(repo: WorkRepo, commits: Commits): Origin<Commits> {
  return {
    ...commits,
    bare: repo.bare,
    git: (...args) => repo.gitIn(repo.bare, ...args),
    cleanup: () => repo.cleanup(),
  };
}

/** What the base commit of a merge test holds besides foo's catalog (fooBaseCommit). */
export interface FooBase {
  config: FooConfig;
  owners: string[];
  versions?: string[];
  files?: Record<string, string>;
}

/**
 * The base commit of the App's merge tests: catalog-bot.yml of `config`, foo (its releases
 * `versions`, test/helpers/foo-repo.ts) owned by `owners`, and `files` more.
 */
export function fooBaseCommit(repo: WorkRepo, o: FooBase): string {
  return repo.commit('base', {
    '.github/catalog-bot.yml': fooConfig(o.config),
    [FOO_OWNERS]: `approvers: [${o.owners.join(', ')}]\n`,
    ...o.files,
    ...fooCatalogFiles(o.versions ?? FOO_BASE_VERSIONS),
  });
}

/**
 * A merge test's origin, built in a work repository (`prefix` names its temporary directory):
 * main at fooBaseCommit(`o`), and the commits `build` makes on it (it pushes the refs the
 * test needs), named as it returns them.
 */
export function fooOrigin<Commits extends object>(
  prefix: string,
  o: FooBase,
  build: (repo: WorkRepo, base: string) => Commits,
): Origin<{ base: string } & Commits> {
  const repo = new WorkRepo(prefix);
  const base = fooBaseCommit(repo, o);
  repo.push(base, 'refs/heads/main');
  return originOf(repo, { base, ...build(repo, base) });
}

/**
 * foo's two releases that give its channel two heads together (fooTwoHeads in foo-repo.ts):
 * `top` adds v1.2.0 at the top, `bottom` v1.1.0 at the bottom, each fine alone.
 */
export interface FooTwoHeadCommits {
  base: string;
  top: string;
  bottom: string;
}

/**
 * fooOrigin with foo's two releases that give the channel two heads together as pull
 * requests #1 (`top`) and #2 (`bottom`), and what `more` commits and pushes besides.
 */
export function fooTwoHeadsOrigin<More extends object>(
  prefix: string,
  o: FooBase,
  more: (repo: WorkRepo, commits: FooTwoHeadCommits) => More,
): Origin<FooTwoHeadCommits & More> {
  return fooOrigin(prefix, o, (repo, base) => {
    const { top, bottom } = fooTwoHeads(repo, base);
    repo.push(top, 'refs/pull/1/head');
    repo.push(bottom, 'refs/pull/2/head');
    return { top, bottom, ...more(repo, { base, top, bottom }) };
  });
}

/**
 * The origin of the merge queue and batch tests: fooTwoHeadsOrigin with foo owned by bob, a
 * README and notes on main, and #3 (`readme`) changing the README; `more` adds the rest.
 */
export function fooThreePullsOrigin<More extends object>(
  prefix: string,
  config: FooConfig,
  more: (repo: WorkRepo, commits: FooTwoHeadCommits & { readme: string }) => More,
): Origin<FooTwoHeadCommits & { readme: string } & More> {
  const files = { 'README.md': 'catalog\n', 'NOTES.md': 'notes\n' };
  return fooTwoHeadsOrigin(prefix, { config, owners: ['bob'], files }, (repo, commits) => {
    const readme = repo.commit('readme', { 'README.md': 'catalog, with notes\n' }, commits.base);
    repo.push(readme, 'refs/pull/3/head');
    return { readme, ...more(repo, { ...commits, readme }) };
  });
}

/** A copy of `origin`'s bare repository (the same commits; what a test changes stays in its copy). */
export function copyOrigin<Commits extends object>(origin: Origin<Commits>): Origin<Commits> {
  const root = mkdtempSync(join(tmpdir(), 'catalog-bot-origin-copy-'));
  const bare = join(root, 'origin.git');
  // Every ref (refs/pull/* too), the objects hard-linked: a copy of the files took seconds.
  execFileSync('git', ['clone', '-q', '--mirror', origin.bare, bare]);
  return { ...origin, bare, git: gitIn(bare), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * `make`'s origin made once, on first use (its commits take a few dozen git commands), and a
 * copy of it for each call: each test changes only its own. Call it where hooks may be
 * registered (a file or describe block): the original is removed after them.
 */
export function originCopies<Commits extends object>(make: () => Origin<Commits>): () => Origin<Commits> {
  let template: Origin<Commits> | undefined;
  afterAll(() => template?.cleanup());
  return () => copyOrigin((template ??= make()));
}

/** Does foo's catalog (catalogs/v4.21) validate at the tip of main of the bare repository `bare`? */
export async function fooCatalogValidOnMain(bare: string): Promise<boolean> {
  const main = gitIn(bare)('rev-parse', 'refs/heads/main');
  return (await validateCatalog(new GitTreeSource(bare, main, 'catalogs/v4.21'))).valid;
}

export type PullAction = 'opened' | 'synchronize' | 'closed' | 'reopened' | 'edited';

export interface AppHarness {
  gh: FakeGitHub;
  queue: InProcessQueue;
  server: AppServer;
  /**
   * A pull_request delivery for the fake's pull request `number` (at `sha`, else its head;
   * merged and its merge commit as the fake has them); resolves when its jobs are done.
   */
  pullRequest(number: number, action: PullAction, sha?: string, edit?: (p: Payload) => void): Promise<void>;
  /** Any signed delivery; resolves when its jobs are done. */
  deliver(event: string, payload: Payload): Promise<void>;
  /** `login` comments `body` on issue or pull request `number`; resolves to the comment's id when its jobs are done. */
  comment(number: number, login: string, body: string): Promise<number>;
  /** Any issue_comment delivery (a bot's, an edit, a deletion); resolves to the comment's id when its jobs are done. */
  commentEvent(c: CommentEvent): Promise<number>;
  /** Another App's check suite completed on pull requests `numbers` (they may be ready to merge now). */
  otherChecksDone(numbers: number[]): Promise<void>;
  /** Where the App keeps its mirrors (removed on stop()). */
  workDir: string;
  /** The jobs that threw, each time (the queue retries them): a test that expects none says so. */
  failedJobs: FailedJob[];
  /** The reactions on comment `id` (`+1`: done, `confused`: refused). */
  reactionsTo(id: number): string[];
  /** The bot's replies on pull request `number` (its comments but the status comment). */
  replies(number: number): FakeComment[];
  /** The text of the bot's last reply on pull request `number` ('' when none). */
  lastReply(number: number): string;
  stop(): Promise<void>;
}

/** An issue_comment delivery: `login` writes, edits (from the text `from`) or deletes comment `id` (a new id unless given). */
export interface CommentEvent {
  number: number;
  login: string;
  body: string;
  action?: 'created' | 'edited' | 'deleted';
  id?: number;
  from?: string;
  userType?: 'User' | 'Bot';
}

export interface FailedJob {
  error: unknown;
  /** The job's key. */
  job: string;
}

/**
 * The App against a fake GitHub for Codertocat/Hello-World cloned from `bare`, with `pulls`
 * open. Work directories are removed on stop().
 */
export async function startAppHarness(
  bare: string,
  pulls: FakePull[],
  options: Partial<AppOptions> = {},
): Promise<AppHarness> {
  const gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
  for (const pull of pulls) gh.addPull(pull);
  const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
  const queue = new InProcessQueue({ backoffMs: 20 });
  const failedJobs: FailedJob[] = [];
  const start = queue.start.bind(queue);
  queue.start = (run, onError) =>
    start(run, (error, job) => {
      failedJobs.push({ error, job: job.key });
      onError?.(error, job);
    });
  const server = await startAppServer(gh, { queue, workDir, ...options });
  let delivery = 0;
  let commentId = 7000;
  const deliver = async (event: string, payload: Payload) => {
    expect(await server.send(event, payload, `delivery-${++delivery}`)).toBe(200);
    await queue.onIdle();
  };
  const replies = (number: number) => gh.botComments(number).filter((c) => readState(c.body) === undefined);
  return {
    gh,
    queue,
    server,
    async pullRequest(number, action, sha, edit) {
      const pull = gh.pulls.get(number);
      const payload = webhookExample('pull_request', 'opened');
      payload.action = action;
      payload.installation = { id: 4242 };
      payload.repository.clone_url = bare;
      payload.number = number;
      Object.assign(payload.pull_request, {
        number,
        merged: pull?.merged ?? false,
        merge_commit_sha: pull?.mergeCommit ?? null,
      });
      if (pull) payload.pull_request.user.login = pull.author;
      payload.pull_request.head.sha = sha ?? pull?.head;
      payload.pull_request.base.ref = pull?.base ?? 'main';
      edit?.(payload);
      await deliver('pull_request', payload);
    },
    deliver,
    async comment(number, login, body) {
      const id = ++commentId;
      const payload = issueCommentPayload({ bare, number, id, login, body, at: gh.tick() });
      await deliver('issue_comment', payload);
      return id;
    },
    async commentEvent({ from, ...c }) {
      const id = c.id ?? ++commentId;
      const payload = issueCommentPayload({ ...c, bare, id, at: gh.tick() });
      if (from !== undefined) payload.changes = { body: { from } };
      await deliver('issue_comment', payload);
      return id;
    },
    async otherChecksDone(numbers) {
      const suite = webhookExample('check_suite', 'completed');
      suite.installation = { id: 4242 };
      suite.repository.clone_url = bare;
      suite.check_suite.app = { ...suite.check_suite.app, slug: 'other-ci' };
      suite.check_suite.pull_requests = numbers.map((number) => ({
        number,
        base: { repo: { id: suite.repository.id } },
      }));
      await deliver('check_suite', suite);
    },
    workDir,
    failedJobs,
    reactionsTo: (id) => gh.reactions.filter((r) => r.comment === id).map((r) => r.content),
    replies,
    lastReply: (number) => replies(number).at(-1)?.body ?? '',
    async stop() {
      await server.stop();
      await queue.close();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * The App with one pull request open: #1 by alice at `head` of the work repository `source`,
 * onto its main (both pushed to a bare origin, which stop() removes too).
 */
export async function startAppWithPull(source: string, head: string): Promise<AppHarness> {
  return startAppOnOrigin(source, [`${head}:refs/pull/1/head`], [{ number: 1, head, author: 'alice' }]);
}

/**
 * The App (startAppHarness) for the work repository `source`: its main and `refspecs` pushed
 * to a bare origin, which stop() removes too; `pulls` open.
 */
export async function startAppOnOrigin(
  source: string,
  refspecs: string[],
  pulls: FakePull[],
  options: Partial<AppOptions> = {},
): Promise<AppHarness> {
  const origin = bareOrigin(source, ['main:refs/heads/main', ...refspecs]);
  const app = await startAppHarness(origin.bare, pulls, options);
  const stop = app.stop;
  app.stop = async () => {
    await stop();
    origin.cleanup();
  };
  return app;
}

/** What appWithPullForSuite gives the tests of a describe, filled in before them. */
export interface PullSuite<Made> {
  app: AppHarness;
  made: Made;
  head: string;
}

/**
 * For the tests of the calling describe: before them, the work repository and head `make()`
 * gives, and the App with that head open as pull request #1 (startAppWithPull); after them,
 * the App stopped and the repository removed.
 */
export function appWithPullForSuite<Made extends { repo: string; cleanup: () => void }>(
  make: () => { made: Made; head: string },
): PullSuite<Made> {
  const suite = {} as PullSuite<Made>;
  beforeAll(async () => {
    Object.assign(suite, make());
    suite.app = await startAppWithPull(suite.made.repo, suite.head);
  }, 60_000);
  afterAll(async () => {
    await suite.app?.stop();
    suite.made?.cleanup();
  });
  return suite;
}
