import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Probot } from 'probot';
import { createApp } from '../src/app.js';
import { ensureMirror, fetchMissingBlobs, mirrorDir, pruneMirrors, withMirror } from '../src/git/mirror.js';
import { completeCheckRun, PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import type { GitHub } from '../src/github/port.js';
import { InProcessQueue } from '../src/queue.js';
import { AppMetrics } from '../src/metrics.js';
import { metricsServer } from '../src/server.js';
import { postSignedWebhook, startAppServer, type AppServer } from './helpers/app-server.js';
import {
  makeExampleRepo,
  prPayload,
  testProbot,
  webhookExample,
  type ExampleRepo,
  type Payload,
} from './helpers/github.js';
import { answerFromModel, closeNetwork, openNetwork } from './helpers/fake-github.js';
import { GitHubModel } from './helpers/github-model.js';

const API = 'https://api.github.com';
const REPO = '/repos/Codertocat/Hello-World';

type EventName = Parameters<Probot['receive']>[0]['name'];

interface Update {
  id: number;
  body: {
    status?: string;
    conclusion?: string;
    output: { title: string; summary: string; annotations?: { path: string; annotation_level: string }[] };
  };
}

/** A short back-off keeps the tests fast; the retries themselves are tested in queue.test.ts. */
const RETRY_MS = 20;

/**
 * GitHub as the one fake (test/helpers/github-model.ts) for Codertocat/Hello-World cloned
 * from `bare`, pull request #1 at `head`.
 */
function helloWorldModel(options: { bare: string; head: string }): GitHubModel {
  const github = new GitHubModel({ account: 'Codertocat' });
  const hello = github.addRepo({
    owner: 'Codertocat',
    name: 'Hello-World',
    id: 186853002,
    bare: options.bare,
  });
  github.addPull(hello, { number: 1, head: options.head, author: 'alice' });
  return github;
}

/** helloWorldModel answering every request of this process to GitHub; what the App asked of it. */
function mockGitHub(options: { bare: string; head: string }) {
  const github = helloWorldModel(options);
  answerFromModel(github);
  return whatWasAsked(github);
}

/** What the App asked of `github`, read as the tests here check it. */
function whatWasAsked(github: GitHubModel) {
  const asked = (method: string, path: RegExp) =>
    github.requests.filter((q) => q.method === method && path.test(q.path));
  const sent = {
    get token() {
      return asked('POST', /^\/app\/installations\/\d+\/access_tokens$/).length;
    },
    get created() {
      return asked('POST', new RegExp(`^${REPO}/check-runs$`)).map(
        (q) => q.body as { name: string; status: string; head_sha: string },
      );
    },
    get updates(): Update[] {
      return asked('PATCH', new RegExp(`^${REPO}/check-runs/\\d+$`)).map((q) => ({
        id: Number(q.path.split('/').pop()),
        body: q.body as Update['body'],
      }));
    },
    get labels() {
      return asked('POST', new RegExp(`^${REPO}/issues/1/labels$`)).flatMap(
        (q) => (q.body as { labels: string[] }).labels,
      );
    },
  };
  const byName = (name: string) => {
    const run = github.checkRuns.find((r) => r.name === name);
    return sent.updates.filter((u) => u.id === run?.id);
  };
  /** Whether the job asked all a pull-request job asks: a token, the pull request, one run per check made and completed. */
  const askedAll = () =>
    sent.token > 0 &&
    asked('GET', new RegExp(`^${REPO}/pulls/1$`)).length > 0 &&
    sent.created.length === PR_CHECK_NAMES.length &&
    PR_CHECK_NAMES.every((name) => byName(name).some((u) => u.body.status === 'completed'));
  return { github, sent, byName, askedAll, asked };
}

describe('catalog-bot app: pull_request', () => {
  let repo: ExampleRepo;
  let workDir: string;
  beforeAll(() => {
    repo = makeExampleRepo();
  });
  afterAll(() => {
    repo.cleanup();
  });
  beforeEach(() => {
    closeNetwork();
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
  });
  afterEach(() => {
    openNetwork();
    rmSync(workDir, { recursive: true, force: true });
  });

  function setup() {
    const queue = new InProcessQueue({ backoffMs: RETRY_MS });
    const probot = testProbot();
    // Runs shown in progress at once, then completed (quick results are written completed:
    // test/burst.test.ts).
    probot.load(createApp({ queue, workDir, announceAfterMs: 0 }));
    return { queue, probot };
  }

  /** GitHub answering for pull request #1 at `head` (the example's head unless said). */
  const fakeGitHub = (head = repo.head) => mockGitHub({ bare: repo.bare, head });

  /** `payload` delivered as event `name` (delivery `id`) to a new App; resolves when every job it queued is done. */
  async function receive(id: string, name: EventName, payload: Payload): Promise<void> {
    const { queue, probot } = setup();
    await probot.receive({ id, name, payload } as Parameters<Probot['receive']>[0]);
    await queue.onIdle();
  }

  /** A "Re-run" (`rerequested`) delivery of `event` for the example's repository and installation. */
  function rerequested(event: 'check_run' | 'check_suite'): Payload {
    const pr = prPayload(repo, { author: 'alice' });
    const payload = webhookExample(event, 'rerequested');
    payload.installation = pr.installation;
    payload.repository = pr.repository;
    return payload;
  }

  it('creates the three check runs in progress and completes them from the checks', async () => {
    const gh = fakeGitHub();
    await receive('delivery-1', 'pull_request', prPayload(repo, { author: 'alice' }));
    expect(gh.askedAll()).toBe(true);
    expect(gh.sent.token).toBe(1);
    expect(gh.sent.created.map((c) => c.name).sort()).toEqual([
      'catalog-bot/bundle',
      'catalog-bot/crd-upgrade',
      'catalog-bot/dependencies',
      'catalog-bot/images',
      'catalog-bot/ocp-continuity',
      'catalog-bot/permissions',
      'catalog-bot/prune',
      'catalog-bot/templates',
      'catalog-bot/upgrade-graph',
      'catalog-bot/validate',
    ]);
    for (const c of gh.sent.created) {
      expect(c.status).toBe('in_progress');
      expect(c.head_sha).toBe(repo.head);
    }
    const [permissions] = gh.byName('catalog-bot/permissions');
    const [validate] = gh.byName('catalog-bot/validate');
    const [graph] = gh.byName('catalog-bot/upgrade-graph');
    expect(permissions?.body).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(gh.sent.labels).toEqual(['approved']);
    expect(validate?.body).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(graph?.body).toMatchObject({ status: 'completed', conclusion: 'failure' });
    const validateAnnotations = validate?.body.output.annotations ?? [];
    expect(validateAnnotations.some((a) => a.path === 'catalogs/v4.21/other-operator/catalog.json')).toBe(
      true,
    );
    expect(JSON.stringify(validateAnnotations)).toContain('PR-VERSION');
    const graphAnnotations = graph?.body.output.annotations ?? [];
    expect(graphAnnotations.some((a) => a.path === 'catalogs/v4.21/example-operator/catalog.yaml')).toBe(
      true,
    );
    expect(JSON.stringify(graphAnnotations)).toContain('G12');
  });

  it('fails the permissions check for an author who may not change the packages', async () => {
    const gh = fakeGitHub();
    await receive('delivery-2', 'pull_request', prPayload(repo, { author: 'bob' }));
    expect(gh.askedAll()).toBe(true);
    expect(gh.byName('catalog-bot/permissions')[0]?.body.conclusion).toBe('failure');
  });

  it('resolves org/team maintainers through the API', async () => {
    const gh = fakeGitHub();
    gh.github.teams.set('my-org/catalog-admins', ['carol']);
    // The App keeps a team's members for minutes per installation, and the example's config
    // names this team in every test here: another installation asks again.
    const payload = prPayload(repo, { author: 'carol' });
    payload.installation = { id: 4343 };
    await receive('delivery-team', 'pull_request', payload);
    expect(gh.askedAll()).toBe(true);
    expect(gh.asked('GET', /^\/orgs\/my-org\/teams\/catalog-admins\/members(\?|$)/)).toHaveLength(1);
    expect(gh.byName('catalog-bot/permissions')[0]?.body.conclusion).toBe('success');
  });

  it('checks the pull request again when a catalog-bot check run is re-run', async () => {
    const gh = fakeGitHub();
    const payload = rerequested('check_run');
    const { repository } = payload;
    payload.check_run.name = 'catalog-bot/validate';
    payload.check_run.head_sha = repo.head;
    payload.check_run.pull_requests = [
      {
        number: 1,
        head: { sha: repo.head, ref: 'pr', repo: repository },
        base: { sha: repo.base, ref: 'main', repo: repository },
      },
    ];
    await receive('delivery-rerun', 'check_run', payload);
    expect(gh.askedAll()).toBe(true);
    expect(gh.sent.created.map((c) => c.head_sha)).toEqual(PR_CHECK_NAMES.map(() => repo.head));
    expect(gh.byName('catalog-bot/validate')[0]?.body.conclusion).toBe('failure');
  });

  it('checks the pull requests of a suite again on "Re-run all checks"', async () => {
    const gh = fakeGitHub();
    const payload = rerequested('check_suite');
    payload.check_suite.head_sha = repo.head;
    // The example's pull request, renumbered to ours; its base repo is this repository.
    payload.check_suite.pull_requests[0].number = 1;
    payload.check_suite.pull_requests[0].base.repo.id = payload.repository.id;
    await receive('delivery-suite', 'check_suite', payload);
    expect(gh.askedAll()).toBe(true);
    expect(gh.byName('catalog-bot/upgrade-graph')[0]?.body.conclusion).toBe('failure');
  });

  it("ignores re-runs of check runs that are not catalog-bot's", async () => {
    const gh = fakeGitHub();
    const payload = rerequested('check_run');
    payload.check_run.name = 'other-ci/lint';
    payload.check_run.pull_requests = [
      { number: 1, head: { sha: repo.head }, base: { sha: repo.base, repo: payload.repository } },
    ];
    await receive('delivery-other', 'check_run', payload);
    expect(gh.github.requests).toEqual([]); // nothing was asked of GitHub
  });

  it('runs a delivery that arrives twice once', async () => {
    const { queue, probot } = setup();
    const gh = fakeGitHub();
    const payload = prPayload(repo, { author: 'alice' });
    await probot.receive({ id: 'delivery-dup', name: 'pull_request', payload });
    await probot.receive({ id: 'delivery-dup', name: 'pull_request', payload });
    await queue.onIdle();
    await probot.receive({ id: 'delivery-dup', name: 'pull_request', payload });
    await queue.onIdle();
    expect(gh.askedAll()).toBe(true);
    expect(gh.sent.created).toHaveLength(PR_CHECK_NAMES.length);
    expect(gh.sent.updates).toHaveLength(PR_CHECK_NAMES.length);
  });

  it('writes nothing for a head that moved on before its job started', async () => {
    const gh = fakeGitHub(repo.newer);
    await receive('delivery-stale', 'pull_request', prPayload(repo, { author: 'alice' }));
    // Issue 21: a superseded head gets no check runs at all (it used to get a skipped set).
    expect(gh.asked('GET', new RegExp(`^${REPO}/pulls/1$`))).not.toEqual([]); // the head was looked at
    expect(gh.sent.created).toEqual([]);
    expect(gh.sent.updates).toEqual([]);
  });

  it('a webhook-only replica (runJobs: false) queues the work and runs none of it', async () => {
    const gh = fakeGitHub();
    const queue = new InProcessQueue({ backoffMs: RETRY_MS });
    const probot = testProbot();
    probot.load(createApp({ queue, workDir, runJobs: false }));
    await probot.receive({
      id: 'delivery-web',
      name: 'pull_request',
      payload: prPayload(repo, { author: 'alice' }),
    });
    expect(queue.size).toBe(2); // the checks and noting the head (for /approve), waiting for a worker
    expect(gh.github.requests).toEqual([]); // nothing asked of GitHub
  });

  it('ignores edits that do not change the base', async () => {
    const { queue, probot } = setup();
    const payload = prPayload(repo, { author: 'alice', action: 'edited' });
    payload.changes = { title: { from: 'old' } };
    await probot.receive({ id: 'delivery-edit', name: 'pull_request', payload });
    await queue.onIdle();
    expect(queue.size).toBe(0);
  });

  it("checks a fork's pull request through the base repository's refs/pull/N/head", async () => {
    const gh = fakeGitHub();
    const payload = prPayload(repo, { author: 'alice' });
    // The fork is not reachable: only the base repository's pull ref carries the head.
    payload.pull_request.head.repo = {
      ...payload.pull_request.head.repo,
      id: 999,
      full_name: 'alice/Hello-World',
      clone_url: join(workDir, 'unreachable-fork.git'),
    };
    await receive('delivery-fork', 'pull_request', payload);
    expect(gh.askedAll()).toBe(true);
    expect(gh.byName('catalog-bot/permissions')[0]?.body.conclusion).toBe('success');
    expect(gh.byName('catalog-bot/validate')[0]?.body.conclusion).toBe('failure');
  });

  it('checks the open pull requests of a repository added to the installation', async () => {
    const gh = fakeGitHub();
    const payload = webhookExample('installation_repositories', 'added');
    payload.installation.id = 4242;
    payload.repositories_added = [
      {
        ...payload.repositories_added[0],
        id: 186853002,
        name: 'Hello-World',
        full_name: 'Codertocat/Hello-World',
      },
    ];
    await receive('delivery-added', 'installation_repositories', payload);
    const listed = gh
      .asked('GET', new RegExp(`^${REPO}/pulls\\?`))
      .map((q) => new URL(q.path, API).searchParams);
    expect(listed.map((q) => Object.fromEntries(q))).toEqual([
      { state: 'open', sort: 'created', direction: 'desc', per_page: '100' },
    ]);
    expect(gh.askedAll()).toBe(true);
    expect(gh.sent.created.map((c) => c.head_sha)).toEqual(PR_CHECK_NAMES.map(() => repo.head));
    expect(gh.byName('catalog-bot/upgrade-graph')[0]?.body.conclusion).toBe('failure');
  });

  it('deletes the mirror of a repository removed from the installation', async () => {
    const gh = fakeGitHub();
    const payload = webhookExample('installation_repositories', 'removed');
    const removed = payload.repositories_removed[0].id as number;
    const kept = join(workDir, 'mirrors', `github.com-${removed}2.git`);
    mkdirSync(join(workDir, 'mirrors', `github.com-${removed}.git`), { recursive: true });
    mkdirSync(join(workDir, 'mirrors', `${removed}.git`), { recursive: true }); // an older version's name
    mkdirSync(kept, { recursive: true });
    await receive('delivery-removed', 'installation_repositories', payload);
    expect(readdirSync(join(workDir, 'mirrors'))).toEqual([`github.com-${removed}2.git`]);
    expect(gh.github.requests).toEqual([]);
  });

  it('completes the check runs as failed, with the reason, when the repository cannot be fetched', async () => {
    const gh = fakeGitHub();
    const payload = prPayload(repo, { author: 'alice' });
    payload.repository.clone_url = join(workDir, 'does-not-exist.git');
    await receive('delivery-broken', 'pull_request', payload);
    expect(gh.askedAll()).toBe(true);
    for (const u of gh.sent.updates) {
      expect(u.body.conclusion).toBe('failure');
      expect(u.body.output.title).toBe('catalog-bot could not check this pull request');
      expect(u.body.output.summary).toContain('git clone failed');
    }
  });
});

describe('catalog-bot server (real HTTP, signed webhooks)', () => {
  let repo: ExampleRepo;
  let workDir: string;
  let github: GitHubModel;
  let app: AppServer;
  let queue: InProcessQueue;
  let metricsUrl: string;
  let metricsHttp: ReturnType<typeof metricsServer>;

  beforeAll(async () => {
    repo = makeExampleRepo();
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    queue = new InProcessQueue({ backoffMs: RETRY_MS });
    github = helloWorldModel({ bare: repo.bare, head: repo.head });
    const metrics = new AppMetrics();
    app = await startAppServer(github, { queue, workDir, metrics, announceAfterMs: 0 });
    metricsHttp = metricsServer(metrics, { CATALOG_BOT_METRICS_PORT: '0' })!;
    await new Promise((r) => metricsHttp!.once('listening', r));
    metricsUrl = `http://127.0.0.1:${(metricsHttp!.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    metricsHttp?.close();
    await app?.stop();
    repo.cleanup();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('answers GET /healthz with 200', async () => {
    const res = await fetch(`${app.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it('checks a pull request from a signed webhook', async () => {
    const gh = whatWasAsked(github);
    expect(await app.send('pull_request', prPayload(repo, { author: 'alice' }), 'e2e-1')).toBe(200);
    await queue.onIdle();
    expect(gh.askedAll()).toBe(true);
    expect(gh.byName('catalog-bot/permissions')[0]?.body.conclusion).toBe('success');
    expect(gh.byName('catalog-bot/validate')[0]?.body.conclusion).toBe('failure');
    expect(gh.byName('catalog-bot/upgrade-graph')[0]?.body.conclusion).toBe('failure');
    expect(gh.byName('catalog-bot/dependencies')[0]?.body.conclusion).toBe('success');
    // The example's images are not reachable from the tests, and their registry is not
    // listed in images.unverifiableRegistries: failure, saying how to accept them unchecked.
    expect(gh.byName('catalog-bot/images')[0]?.body.conclusion).toBe('failure');
    expect(gh.byName('catalog-bot/images')[0]?.body.output.summary).toContain(
      'images.unverifiableRegistries',
    );
  });

  it('serves Prometheus metrics on their own port (127.0.0.1), not on the webhook port', async () => {
    expect((await fetch(`${app.url}/metrics`)).status).toBe(404);
    expect((metricsHttp!.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('serves Prometheus metrics: webhooks, job durations, queue depth, check outcomes', async () => {
    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const value = (line: string) =>
      Number(text.match(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm'))?.[1]);
    expect(value('catalog_bot_webhooks_received_total{event="pull_request.opened"}')).toBe(1);
    expect(value('catalog_bot_job_duration_seconds_count{kind="pr-checks",outcome="done"}')).toBe(1);
    expect(value('catalog_bot_queue_depth')).toBe(0);
    expect(
      value('catalog_bot_check_outcomes_total{check="catalog-bot/permissions",conclusion="success"}'),
    ).toBe(1);
    expect(value('catalog_bot_check_outcomes_total{check="catalog-bot/validate",conclusion="failure"}')).toBe(
      1,
    );
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('refuses a webhook with a bad signature and does nothing', async () => {
    const payload = prPayload(repo, { author: 'alice' });
    const res = await postSignedWebhook(app.url, 'wrong-secret', 'pull_request', payload, 'e2e-bad');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(queue.size).toBe(0);
  });
});

describe('git mirror', () => {
  it('clones blobless over file:// and fetches the blobs of the commits it was asked for', async () => {
    const repo = makeExampleRepo(7);
    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    try {
      const { execFileSync } = await import('node:child_process');
      execFileSync('git', ['-C', repo.bare, 'config', 'uploadpack.allowFilter', 'true']);
      execFileSync('git', ['-C', repo.bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true']);
      const dir = await ensureMirror(
        { cloneUrl: `file://${repo.bare}`, repoId: 9, fetch: [repo.base, 'refs/pull/7/head'] },
        workDir,
      );
      // The blobs of both commits came with them: nothing is left for a lazy fetch.
      expect(await fetchMissingBlobs(dir, [repo.base, repo.head])).toBe(0);
      // A second call reuses the mirror.
      await ensureMirror(
        { cloneUrl: `file://${repo.bare}`, repoId: 9, fetch: ['refs/pull/7/head'] },
        workDir,
      );
      expect(readdirSync(join(workDir, 'mirrors'))).toEqual(['local-9.git']);
    } finally {
      repo.cleanup();
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('sends the token as x-access-token basic auth in a header, never in the URL, config or errors', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const http = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    try {
      const { port } = http.address() as AddressInfo;
      const token = 'ghs_secretToken123';
      const error = await ensureMirror(
        { cloneUrl: `http://127.0.0.1:${port}/o/r.git`, repoId: 1, token, fetch: [] },
        workDir,
      ).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).toMatch(/git clone failed/);
      expect(error?.message).not.toContain(token);
      const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
      expect(seen[0]?.authorization?.toLowerCase()).toBe(`basic ${basic}`.toLowerCase());
      // Nothing half-cloned is left behind, so nothing can hold the token.
      expect(readdirSync(join(workDir, 'mirrors'))).toEqual([]);
    } finally {
      http.close();
      rmSync(workDir, { recursive: true, force: true });
    }
  });
});

describe('mirror disk budget', () => {
  let workDir: string;
  beforeEach(() => {
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
  });
  afterEach(() => rmSync(workDir, { recursive: true, force: true }));

  /** A stand-in mirror of `bytes` bytes, last used `age` seconds ago. */
  function fakeMirror(id: number, bytes: number, age: number): string {
    const dir = mirrorDir({ cloneUrl: 'https://github.com/o/r.git', repoId: id }, workDir);
    mkdirSync(join(dir, 'objects'), { recursive: true });
    writeFileSync(join(dir, 'objects', 'pack'), Buffer.alloc(bytes));
    const marker = join(dir, 'catalog-bot-last-used');
    writeFileSync(marker, '');
    const when = new Date(Date.now() - age * 1000);
    utimesSync(marker, when, when);
    return dir;
  }

  it('removes the least recently used mirrors until the rest fit, keeping the ones asked for', async () => {
    const oldest = fakeMirror(1, 4000, 300);
    const middle = fakeMirror(2, 4000, 200);
    const newest = fakeMirror(3, 4000, 100);
    expect(await pruneMirrors(workDir, 100_000)).toEqual([]);
    expect(await pruneMirrors(workDir, 9000, [oldest])).toEqual([middle]);
    expect(existsSync(oldest) && existsSync(newest)).toBe(true);
    expect(await pruneMirrors(workDir, 5000)).toEqual([oldest]);
    expect(readdirSync(join(workDir, 'mirrors'))).toEqual(['github.com-3.git']);
  });

  it('never removes a mirror a job is using, and keeps the one just used', async () => {
    const repo = makeExampleRepo(3);
    try {
      const other = fakeMirror(2, 4000, 1);
      const req = { cloneUrl: repo.bare, repoId: 1, fetch: [repo.base] };
      const seen = await withMirror(
        req,
        async (dir) => {
          // Another job prunes with no budget at all while this one runs.
          const removed = await pruneMirrors(workDir, 0);
          expect(removed).toEqual([other]);
          return existsSync(join(dir, 'HEAD'));
        },
        { workDir, maxBytes: 0 },
      );
      expect(seen).toBe(true);
      expect(readdirSync(join(workDir, 'mirrors'))).toEqual(['local-1.git']);
    } finally {
      repo.cleanup();
    }
  });
});

describe('check-run completion', () => {
  it('sends annotations in batches of 50 and truncates the summary to 65535 characters', async () => {
    const calls: Record<string, unknown>[] = [];
    // The port's check runs alone: what the completion asks of GitHub.
    const github = {
      checks: {
        update: async (_ref: unknown, _id: number, p: Record<string, unknown>) => void calls.push(p),
      },
    } as unknown as GitHub;
    const annotations = Array.from({ length: 120 }, (_, i) => ({
      path: 'catalogs/v4.21/x/catalog.yaml',
      line: i + 1,
      level: 'warning' as const,
      title: 'R',
      message: 'm',
    }));
    await completeCheckRun(github, { owner: 'o', repo: 'r' }, 5, {
      conclusion: 'failure',
      title: 't',
      summary: 'x'.repeat(70_000),
      annotations,
    });
    expect(calls).toHaveLength(3);
    const outputs = calls.map((c) => c.output as { summary: string; annotations: unknown[] });
    expect(outputs.map((o) => o.annotations.length)).toEqual([50, 50, 20]);
    expect(outputs[0]?.summary.length).toBe(65_535);
    expect(calls.map((c) => c.conclusion)).toEqual([undefined, undefined, 'failure']);
    expect(calls[2]?.status).toBe('completed');
  });
});
