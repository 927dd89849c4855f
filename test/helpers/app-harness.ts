// One App test set-up for the flows that talk to the stateful GitHub fake: a bare origin
// holding the refs a test needs, the real Probot server (app-server.ts) with signed
// webhooks, and deliveries that resolve once every job they caused is done.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { InProcessQueue } from '../../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './app-server.js';
import { FakeGitHub, type FakePull } from './fake-github.js';
import {
  fooCatalogFiles,
  FOO_BASE_VERSIONS,
  fooConfig,
  FOO_OWNERS,
  type FooConfig,
  type WorkRepo,
} from './foo-repo.js';
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

/**
 * The base commit of the App's merge tests: catalog-bot.yml of `config`, foo (its releases
 * `versions`, test/helpers/foo-repo.ts) owned by `owners`, and `files` more.
 */
export function fooBaseCommit(
  repo: WorkRepo,
  o: { config: FooConfig; owners: string[]; versions?: string[]; files?: Record<string, string> },
): string {
  return repo.commit('base', {
    '.github/catalog-bot.yml': fooConfig(o.config),
    [FOO_OWNERS]: `approvers: [${o.owners.join(', ')}]\n`,
    ...o.files,
    ...fooCatalogFiles(o.versions ?? FOO_BASE_VERSIONS),
  });
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
  stop(): Promise<void>;
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
  const server = await startAppServer(gh, { queue, workDir, ...options });
  let delivery = 0;
  let commentId = 7000;
  const deliver = async (event: string, payload: Payload) => {
    expect(await server.send(event, payload, `delivery-${++delivery}`)).toBe(200);
    await queue.onIdle();
  };
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
