// Bounded work (docs/security.md): one repository's hostile pull request never stalls the
// App. Through the real HTTP server with signed webhooks, real git repositories and the
// real checks (in their worker); only GitHub's API is the one fake (test/helpers/github-model.ts, its nock skin).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEL_COST_LIMIT, celCost, compileCel } from '../src/catalog/olm/dependencies.js';
import { CheckLimitError, checkWorkerUse, runIsolated } from '../src/checks/isolate.js';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { commandInWorker, MAX_COMMAND_REPLY } from '../src/handlers/command-worker.js';
import { InProcessQueue } from '../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { longChannelJson, oneBundlePackageYaml } from './helpers/catalogs.js';
import { GitHubModel, type ModelCheckRun } from './helpers/github-model.js';
import { WorkRepo } from './helpers/foo-repo.js';
import { webhookExample } from './helpers/github.js';

const OWNER = 'Codertocat';
const exampleBase = fileURLToPath(new URL('../examples/catalog-repo/base/', import.meta.url));
const dirs: string[] = [];

/** A bare repository: `main` = the example catalog, `refs/pull/1/head` on it adds `files`. */
function repoWith(files: Record<string, string>): { bare: string; base: string; head: string } {
  const repo = new WorkRepo('catalog-bot-bounded-');
  dirs.push(repo.root);
  cpSync(exampleBase, repo.work, { recursive: true });
  const base = repo.commit('base', {});
  const head = repo.commit('head', files);
  repo.push(base, 'refs/heads/main');
  repo.push(head, 'refs/pull/1/head');
  return { bare: repo.bare, base, head };
}

/** A package whose one bundle carries `properties` (YAML lines) and an olm.constraint with `rule`. */
function packageWith(name: string, rule: string, properties = ''): Record<string, string> {
  const constraint = `  - type: olm.constraint
    value:
      failureMessage: needs something
      cel:
        rule: ${JSON.stringify(rule)}
`;
  return {
    [`catalogs/v4.21/${name}/catalog.yaml`]: oneBundlePackageYaml(
      name,
      `quay.io/example/${name}-bundle:v1.0.0`,
      properties + constraint,
    ),
  };
}

const ordinary = packageWith(
  'plain',
  'properties.exists(p, p.type == "olm.package" && p.value.packageName == "example-operator")',
);

/** `bytes` of JSON bundles of package `x` that validation rejects (two findings each). */
function invalidEntries(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = JSON.stringify({ schema: 'olm.bundle', package: 'x', name: `x.v${i}`, image: 'Q' });
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n') + '\n';
}

const X_PACKAGE = {
  'catalogs/v4.21/x/catalog.json': '{"schema":"olm.package","name":"x","defaultChannel":"s"}\n',
};

/** GitHub for every repository of these tests: the one fake (test/helpers/github-model.ts). */
const github = new GitHubModel({ account: OWNER });

/** Repository `name` on the fake, with pull request #1 by alice; what the App wrote to its check runs. */
function mockRepo(name: string, repo: { bare: string; head: string }, id: number) {
  const full = `${OWNER}/${name}`;
  github.addPull(github.addRepo({ owner: OWNER, name, id, bare: repo.bare }), {
    number: 1,
    head: repo.head,
    author: 'alice',
  });
  const completed = () =>
    github.checkRuns
      .filter((r) => r.repo === full && r.status === 'completed')
      .map((run) => ({
        at: run.completedAt!,
        body: run as ModelCheckRun & { output: { title: string; summary: string } },
      }));
  const byName = (check: string) => completed().find((u) => u.body.name === check);
  /** The updates (PATCH) the App sent to the run of `check`. */
  const requestsFor = (check: string) => {
    const run = github.checkRuns.find((r) => r.repo === full && r.name === check);
    return github.requests
      .filter((q) => q.method === 'PATCH' && q.path === `/repos/${full}/check-runs/${run?.id}`)
      .map((q) => ({ body: q.body as { output: object } }));
  };
  return { completed, byName, requestsFor };
}

/**
 * One package of `count` bundles in one channel, each replacing the one before, as JSON:
 * about 2 MB for 8,000 (the catalog that stalled the App for 50 s when /explain ran on its
 * event loop).
 */
function bigCatalog(count: number): Record<string, string> {
  return { 'catalogs/v4.21/big/catalog.json': longChannelJson('big', count) };
}

/** Repository `name` on the fake, with pull request #1 from its branch pr-1: the replies and reactions it gets. */
function mockComments(name: string, repo: { bare: string; head: string }) {
  const full = `${OWNER}/${name}`;
  // What an edit command (`/promote`) reads of the branch it would write to.
  execFileSync('git', ['-C', repo.bare, 'update-ref', 'refs/heads/pr-1', repo.head]);
  mockRepo(name, repo, 90_000 + github.repos.size);
  return {
    get replies() {
      return github.comments.filter((c) => c.repo === full).map((c) => ({ body: c.body }));
    },
    get reactions() {
      return github.reactions
        .filter((r) => r.repo === full)
        .map(({ comment, content }) => ({ comment, content }));
    },
  };
}

describe('bounded work: a hostile pull request does not stall the App', () => {
  let app: AppServer;
  let queue: InProcessQueue;
  const saved = process.env.CATALOG_BOT_CHECK_TIMEOUT_MS;

  beforeAll(async () => {
    // A short deadline, so that the test of it does not take two minutes.
    process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = '8000';
    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-bounded-work-'));
    dirs.push(workDir);
    queue = new InProcessQueue();
    // Runs shown in progress at once, then completed: the mocks below count the completions.
    app = await startAppServer(github, { queue, workDir, announceAfterMs: 0 });
    // A running App: it has answered pull requests before, with two check workers started.
    await Promise.all(
      ['warm-1', 'warm-2'].map(async (name, i) => {
        const repo = repoWith(ordinary);
        mockRepo(name, repo, 100 * (i + 1));
        await deliver(name, 9000 - i, repo);
      }),
    );
    await queue.onIdle();
  }, 120_000);

  afterAll(async () => {
    if (saved === undefined) delete process.env.CATALOG_BOT_CHECK_TIMEOUT_MS;
    else process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = saved;
    await app?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function deliver(name: string, id: number, repo: { bare: string; base: string; head: string }) {
    const payload = webhookExample('pull_request', 'opened');
    payload.installation = { id: 4242 };
    payload.number = 1;
    Object.assign(payload.repository, { id, name, full_name: `${OWNER}/${name}`, clone_url: repo.bare });
    payload.repository.owner.login = OWNER;
    payload.pull_request.number = 1;
    payload.pull_request.user.login = 'alice';
    payload.pull_request.base.sha = repo.base;
    payload.pull_request.head.sha = repo.head;
    expect(await app.send('pull_request', payload, `delivery-${name}`)).toBe(200);
  }

  /** eve's comment `body` on pull request #1 of repository `name`. */
  async function deliverComment(
    name: string,
    id: number,
    repo: { bare: string },
    body: string,
    commentId: number,
  ) {
    const payload = issueCommentPayload({
      bare: repo.bare,
      number: 1,
      id: commentId,
      login: 'eve',
      body,
      at: new Date(),
    });
    Object.assign(payload.repository, { id, name, full_name: `${OWNER}/${name}` });
    payload.repository.owner.login = OWNER;
    expect(await app.send('issue_comment', payload, `delivery-comment-${commentId}`)).toBe(200);
  }

  /** GET /healthz every 100 ms until `done`; the slowest answer, in ms. */
  async function slowestHealthz(done: () => boolean): Promise<number> {
    let slowest = 0;
    while (!done()) {
      const started = performance.now();
      const res = await fetch(`${app.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      expect(res.status).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 100));
    }
    return slowest;
  }

  /**
   * The hostile work (`sendHostile`), then an ordinary pull request (`sendOrdinary`, whose checks
   * `ordinary` records): the ordinary one completes within 10 s of being sent, and /healthz
   * answers within 1 s the whole time.
   */
  async function expectNotDelayed(
    ordinary: ReturnType<typeof mockRepo>,
    sendHostile: () => Promise<unknown>,
    sendOrdinary: () => Promise<unknown>,
  ): Promise<void> {
    let finished = false;
    const healthz = slowestHealthz(() => finished);
    await sendHostile();
    const sent = Date.now();
    await sendOrdinary();
    await queue.onIdle();
    finished = true;
    const slowest = await healthz;
    expect(ordinary.completed()).toHaveLength(PR_CHECK_NAMES.length);
    const done = Math.max(...ordinary.completed().map((u) => u.at)) - sent;
    expect(done).toBeLessThan(10_000);
    expect(slowest).toBeLessThan(1000);
  }

  /** A's hostile pull request, then B's ordinary one: B completes within 10 s, /healthz within 1 s. */
  async function race(hostile: Record<string, string>, names: [string, string], ids: [number, number]) {
    const a = repoWith(hostile);
    const b = repoWith(ordinary);
    const ghA = mockRepo(names[0], a, 1000);
    const ghB = mockRepo(names[1], b, 2000);
    const started = performance.now();
    await expectNotDelayed(
      ghB,
      () => deliver(names[0], ids[0], a),
      () => deliver(names[1], ids[1], b),
    );
    expect(ghA.completed()).toHaveLength(PR_CHECK_NAMES.length);
    return { ghA, ms: performance.now() - started };
  }

  it('a CEL rule over the cost budget fails catalog-bot/dependencies naming the limit; another repository is not delayed', async () => {
    // Nested .all() over 60-element lists, depth 4: 13 million iterations per bundle.
    const list = `[${Array.from({ length: 60 }, (_, i) => i).join(',')}]`;
    const rule = `${list}.all(a, ${list}.all(b, ${list}.all(c, ${list}.all(d, a + b + c + d >= 0))))`;
    const { ghA } = await race(packageWith('hostile', rule), ['repo-a', 'repo-b'], [9001, 9002]);
    const deps = ghA.byName('catalog-bot/dependencies')!;
    expect(deps.body.conclusion).toBe('failure');
    expect(deps.body.output.summary).toContain('D-CEL-COST');
    expect(deps.body.output.summary).toContain("over catalog-bot's CEL cost budget");
    expect(deps.body.output.summary).toContain('the limit is 100,000');
    // The other checks of A still ran.
    expect(ghA.byName('catalog-bot/validate')!.body.output.title).not.toContain('could not check');
  }, 60_000);

  it('checks that run past the wall-clock deadline are stopped and fail naming it; another repository is not delayed', async () => {
    // Cheap by the estimate, but a backtracking regex (cel-js uses JavaScript's) takes minutes.
    const redos = `  - type: test.text
    value: ${'a'.repeat(32)}!
`;
    const rule = 'properties.exists(p, p.type == "test.text" && string(p.value).matches("^(a|a)+$"))';
    const { ghA } = await race(packageWith('redos', rule, redos), ['repo-c', 'repo-d'], [9003, 9004]);
    for (const u of ghA.completed()) {
      expect(u.body.conclusion).toBe('failure');
      expect(u.body.output.summary).toContain(
        "ran longer than catalog-bot's wall-clock limit of 8 s (CATALOG_BOT_CHECK_TIMEOUT_MS)",
      );
    }
  }, 60_000);

  it('/explain on a 2 MB catalog of 8,000 bundles runs in a check worker: /healthz answers within 1 s, another repository is not delayed, and the reply is the answer or names the deadline', async () => {
    const big = repoWith(bigCatalog(8000));
    const b = repoWith(ordinary);
    const comments = mockComments('big', big);
    const ghB = mockRepo('repo-g', b, 4000);
    await expectNotDelayed(
      ghB,
      () => deliverComment('big', 9010, big, '/explain big.v1.79.99', 71),
      () => deliver('repo-g', 9011, b),
    );
    // One reply: the answer, or (on a slow machine: loading 2 MB takes seconds) the deadline
    // it hit. Never silence.
    expect(comments.replies).toHaveLength(1);
    const [reply] = comments.replies.map((r) => r.body);
    if (reply!.includes('ran longer'))
      expect(reply).toBe(
        "@eve `/explain` ran longer than catalog-bot's wall-clock limit of 8 s (CATALOG_BOT_CHECK_TIMEOUT_MS) and was stopped.",
      );
    else {
      expect(reply).toContain('big.v1.79.99 (1.79.99) is in package big');
      expect(reply!.length).toBeLessThan(MAX_COMMAND_REPLY + 100);
    }
    expect(comments.reactions).toHaveLength(1);
  }, 60_000);

  it('/explain and /promote that need more heap than the cap are stopped and the reply names the limit; the next command runs', async () => {
    // 20,000 bundles need well over 70 MiB to load (8,000 fit in 40 since the chain walk is linear).
    const big = repoWith(bigCatalog(20_000));
    const comments = mockComments('big-heap', big);
    const saved = { ...process.env };
    process.env.CATALOG_BOT_CHECK_MEMORY_MB = '40';
    process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = '50000';
    try {
      await deliverComment('big-heap', 9012, big, '/explain big.v1.79.99', 72);
      await queue.onIdle();
      // An edit command plans on the same catalogs, in a worker too.
      await deliverComment('big-heap', 9012, big, '/promote big.v1.79.99 fast', 74);
      await queue.onIdle();
    } finally {
      process.env.CATALOG_BOT_CHECK_MEMORY_MB = saved.CATALOG_BOT_CHECK_MEMORY_MB;
      process.env.CATALOG_BOT_CHECK_TIMEOUT_MS = saved.CATALOG_BOT_CHECK_TIMEOUT_MS;
      if (saved.CATALOG_BOT_CHECK_MEMORY_MB === undefined) delete process.env.CATALOG_BOT_CHECK_MEMORY_MB;
    }
    expect(comments.replies.map((r) => r.body)).toEqual([
      "@eve `/explain` needed more than catalog-bot's memory limit of 40 MiB (CATALOG_BOT_CHECK_MEMORY_MB) and was stopped.",
      "@eve `/promote`: `the /promote edit needed more than catalog-bot's memory limit of 40 MiB (CATALOG_BOT_CHECK_MEMORY_MB) and was stopped`",
    ]);
    // The job completed, and the next command of the repository runs in a fresh worker.
    await deliverComment('big-heap', 9012, big, '/explain other.v1.0.0', 73);
    await queue.onIdle();
    expect(comments.replies[2]!.body).toContain(
      '@eve `/explain`: no catalog root of this pull request has a bundle `other.v1.0.0`',
    );
    expect(comments.reactions).toEqual([
      { comment: 72, content: 'confused' },
      { comment: 74, content: 'confused' },
      { comment: 73, content: 'confused' },
    ]);
  }, 60_000);

  it('a file of thousands of bad entries gets at most 200 annotations (4 requests), and the summary says how to list the rest', async () => {
    // 128 KiB: about 1,900 entries, 3,800 findings, well past the 1000 validation keeps and
    // the 200 annotations shown (a bigger file only costs time; the heap tests below use 10 MB).
    const repo = repoWith({ ...X_PACKAGE, 'catalogs/v4.21/x/bad.json': invalidEntries(128 * 1024) });
    const gh = mockRepo('repo-e', repo, 3000);
    await deliver('repo-e', 9005, repo);
    await queue.onIdle();
    expect(gh.completed()).toHaveLength(PR_CHECK_NAMES.length);
    const requests = gh.requestsFor('catalog-bot/validate');
    expect(requests.length).toBeLessThanOrEqual(4);
    const annotations = requests.flatMap(
      (u) => (u.body.output as { annotations?: unknown[] }).annotations ?? [],
    );
    expect(annotations).toHaveLength(200);
    const done = gh.byName('catalog-bot/validate')!;
    expect(done.body.conclusion).toBe('failure');
    const summary = done.body.output.summary;
    expect(summary).toMatch(/^> \*\*800 more findings are not shown as annotations\*\*/);
    expect(summary).toContain(`catalog-bot check --base ${repo.base} --head ${repo.head} --author alice`);
    // Validation kept 1000 findings of the root and counted the rest.
    expect(summary).toMatch(
      /catalogs\/v4\.21: \d+ more findings not listed .*catalog-bot validate catalogs\/v4\.21/,
    );
    // No check run takes more than 4 requests (annotations go 50 per request).
    for (const name of PR_CHECK_NAMES) expect(gh.requestsFor(name).length).toBeLessThanOrEqual(4);
  }, 120_000);
});

/** One repository with a 10 MB file of bad entries, made once for the heap tests that only read it. */
let tenMegabytes: ReturnType<typeof repoWith> | undefined;
const tenMegabyteRepo = () =>
  (tenMegabytes ??= repoWith({
    ...X_PACKAGE,
    'catalogs/v4.21/x/bad.json': invalidEntries(10 * 1024 * 1024),
  }));

describe('bounded work: catalog-bot check on a 10 MB file of bad entries', () => {
  it('keeps its memory bounded: the checks fit in a 192 MB heap', () => {
    const repo = tenMegabyteRepo();
    const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
    const hooks = new URL('../src/checks/worker-ts-hooks.mjs', import.meta.url).href;
    const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(hooks)})`;
    const res = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=192',
        '--import',
        register,
        cli,
        'check',
        '--repo',
        repo.bare,
        '--base',
        repo.base,
        '--head',
        repo.head,
        '--format',
        'json',
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(res.stderr).toBe('');
    expect(res.status).toBe(1);
    const { checks } = JSON.parse(res.stdout) as {
      checks: { name: string; findings: unknown[]; notes?: string[] }[];
    };
    const validate = checks.find((c) => c.name === 'catalog-bot/validate')!;
    expect(validate.findings).toHaveLength(1000);
    expect(validate.notes?.[0]).toMatch(
      /^catalogs\/v4\.21: \d{6} more findings not listed .*catalog-bot validate catalogs\/v4\.21$/,
    );
  }, 300_000);
});

describe('bounded work: limits of the check worker and of CEL rules', () => {
  it('checks that need more heap than the cap are stopped and the error names the limit', async () => {
    const repo = tenMegabyteRepo();
    const run = runIsolated(
      { repo: repo.bare, base: repo.base, head: repo.head },
      { timeoutMs: 120_000, memoryMb: 48 },
    );
    await expect(run).rejects.toThrow(CheckLimitError);
    await expect(run).rejects.toThrow(
      "needed more than catalog-bot's memory limit of 48 MiB (CATALOG_BOT_CHECK_MEMORY_MB)",
    );
    // The next pull request gets a fresh worker.
    const ok = repoWith(ordinary);
    const { checks } = await runIsolated({ repo: ok.bare, base: ok.base, head: ok.head });
    expect(checks.map((c) => c.name)).toContain('catalog-bot/validate');
  }, 180_000);

  it('a comment command in a worker: its answer is cut to MAX_COMMAND_REPLY, and a failure is a reply, never silence', async () => {
    const work = new URL('./helpers/command-work.ts', import.meta.url);
    const huge = await commandInWorker('`/explain`', work, 'hugeAnswer', { size: 200_000 });
    expect(huge.ok).toBe(true);
    expect(huge.say!.length).toBeLessThanOrEqual(MAX_COMMAND_REPLY);
    expect(huge.say).toMatch(/\n… \(cut\)$/);
    expect(await commandInWorker('`/explain`', work, 'failing', {})).toEqual({
      ok: false,
      say: '`/explain` failed: `` bad input from `the pull request` ``',
    });
    expect(checkWorkerUse()).toEqual({ busy: 0, waiting: 0 });
  }, 60_000);

  it('a burst of pull requests runs at most CATALOG_BOT_CHECK_WORKERS workers at once; the rest wait and complete', async () => {
    const ok = repoWith(ordinary);
    const limits = { timeoutMs: 120_000, memoryMb: 256, workers: 1 };
    let maxBusy = 0;
    let maxWaiting = 0;
    const sample = setInterval(() => {
      const use = checkWorkerUse();
      maxBusy = Math.max(maxBusy, use.busy);
      maxWaiting = Math.max(maxWaiting, use.waiting);
    }, 5);
    try {
      const results = await Promise.all(
        [1, 2, 3, 4].map(() => runIsolated({ repo: ok.bare, base: ok.base, head: ok.head }, limits)),
      );
      for (const { checks } of results) expect(checks.map((c) => c.name)).toContain('catalog-bot/validate');
    } finally {
      clearInterval(sample);
    }
    expect(maxBusy).toBe(1);
    expect(maxWaiting).toBe(3);
    expect(checkWorkerUse()).toEqual({ busy: 0, waiting: 0 });
  }, 180_000);

  it('estimates CEL cost: real rules pass, nested comprehensions over long lists do not', () => {
    const cost = (rule: string) => {
      const compiled = compileCel(rule);
      return 'program' in compiled ? celCost(compiled.program.ast).cost : compiled;
    };
    // What catalogs use: one pass over the properties.
    expect(
      cost(
        'properties.exists(p, p.type == "olm.package" && p.value.packageName == "etcd" && semver_compare(p.value.version, "0.9.0") >= 0)',
      ),
    ).toBeLessThan(CEL_COST_LIMIT / 10);
    const list = `[${Array.from({ length: 60 }, (_, i) => i).join(',')}]`;
    for (const rule of [
      `${list}.all(a, ${list}.all(b, ${list}.all(c, a + b + c >= 0)))`,
      'properties.exists(p, properties.exists(q, properties.exists(r, p.type == r.type)))',
      // A list bound to a name is as long as its value.
      `cel.bind(l, ${list}, l.all(a, l.all(b, l.all(c, a + b + c >= 0))))`,
      // split makes a list as long as its string.
      `properties.all(p, string(p.type).split("").all(a, string(p.type).split("").all(b, a == b)))`,
    ])
      expect(compileCel(rule)).toMatchObject({
        overBudget: true,
        error: expect.stringContaining('the limit is 100,000'),
      });
  });
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
