// The App, end to end: a pull request that changes one package of a repository holding
// community-operators-prod v4.21. GitHub's API is answered locally (nock); git, the
// mirror, the checks and the check-run updates are real. Measures the webhook answer and
// the time until all the check runs are completed, with the mirror already cached. The
// webhooks go through the real HTTP server (the one `npm start` runs), signed.
import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { Probot, ProbotOctokit, Server } from 'probot';
import { PR_CHECK_NAMES } from '../dist/handlers/check-runs.js';
import { InProcessQueue } from '../dist/queue.js';
import { serverApp } from '../dist/server.js';

const [catalogRoot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const answerRuns = 200;
const require = createRequire(import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-app-'));
const git = (cwd, ...args) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    encoding: 'utf8',
  }).trim();

try {
  // A repository whose pull request adds a skipRange to one package's head entry.
  const src = join(work, 'src');
  git(work, 'init', '-q', '-b', 'main', src);
  cpSync(catalogRoot, join(src, 'catalogs', 'v4.21'), { recursive: true });
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'base');
  const base = git(src, 'rev-parse', 'HEAD');
  const file = join(src, 'catalogs/v4.21/kepler-operator/catalog.yaml');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      /^(- name: kepler-operator\.v[^\n]+)$/m,
      "$1\n  skipRange: '>=0.0.1 <0.0.2'",
    ),
  );
  git(src, 'commit', '-qam', 'head');
  const head = git(src, 'rev-parse', 'HEAD');
  const bare = join(work, 'repo.git');
  git(work, 'clone', '-q', '--bare', src, bare);
  git(bare, 'update-ref', 'refs/pull/1/head', head);

  const examples = JSON.parse(
    readFileSync(require.resolve('@octokit/webhooks-examples/api.github.com/index.json'), 'utf8'),
  );
  const payload = structuredClone(
    examples.find((e) => e.name === 'pull_request').examples.find((e) => e.action === 'opened'),
  );
  payload.installation = { id: 4242 };
  payload.repository.clone_url = bare;
  Object.assign(payload.pull_request, { number: 1 });
  payload.pull_request.user.login = 'alice';
  payload.pull_request.base.sha = base;
  payload.pull_request.head.sha = head;
  const repoPath = `/repos/${payload.repository.owner.login}/${payload.repository.name}`;

  nock.disableNetConnect();
  let completed = 0;
  const conclusions = [];
  nock('https://api.github.com')
    .persist()
    .post('/app/installations/4242/access_tokens')
    .reply(201, { token: 'ghs_bench', expires_at: new Date(Date.now() + 3600_000).toISOString() })
    .post(`${repoPath}/check-runs`)
    .reply(201, (_u, body) => ({ id: Math.floor(Math.random() * 1e9), name: body.name }))
    .get(`${repoPath}/pulls/1`)
    .reply(200, { number: 1, head: { sha: head }, base: { sha: base }, user: { login: 'alice' } })
    .patch(/\/check-runs\/\d+$/)
    .reply(200, (_u, body) => {
      if (body.conclusion) completed++;
      conclusions.push(body.conclusion);
      return {};
    })
    .get(/\/orgs\/.*\/members/)
    .reply(200, [])
    // Who the App is, its status comment (none yet), the approved label.
    .get('/app')
    .reply(200, { id: 1, slug: 'catalog-bot' })
    .get(`${repoPath}/issues/1/comments`)
    .query(true)
    .reply(200, [])
    .post(`${repoPath}/issues/1/labels`)
    .reply(200, [])
    // The heads the App notes for approvals: the timeline, and its status comment.
    .get(`${repoPath}/issues/1/timeline`)
    .query(true)
    .reply(200, [])
    .post(`${repoPath}/issues/1/comments`)
    .reply(201, (_u, body) => ({ id: 1, body: body.body, user: { login: 'catalog-bot[bot]', type: 'Bot' } }))
    .patch(/\/issues\/comments\/\d+$/)
    .reply(200, {});

  const privateKey = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
  const Octokit = ProbotOctokit.defaults((o) => ({
    ...o,
    retry: { enabled: false },
    throttle: { ...o.throttle, enabled: false },
  }));
  // The real HTTP server of `npm start`, on a free loopback port.
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  nock.enableNetConnect('127.0.0.1');
  const secret = 'bench-secret';
  // Probot builds its logger asynchronously: take a quiet one from a loaded instance.
  const quiet = new Probot({ appId: 1, privateKey, secret, Octokit, logLevel: 'fatal' });
  await quiet.load(() => undefined);
  const log = quiet.log;
  const server = new Server({
    Probot: Probot.defaults({ appId: 1, privateKey, secret, Octokit, logLevel: 'fatal' }),
    host: '127.0.0.1',
    port,
    log,
  });
  const queue = new InProcessQueue();
  await server.load(serverApp({ queue, workDir: join(work, 'mirrors') }));
  await server.start();
  const deliver = async (id, body) => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`delivery ${id}: HTTP ${res.status}`);
    return performance.now() - started;
  };

  try {
    const body = JSON.stringify(payload);
    const totals = [];
    for (let i = 0; i <= runs; i++) {
      const before = completed;
      const started = performance.now();
      await deliver(`bench-${i}`, body);
      await queue.onIdle();
      // A job that could not check completes its runs as failures with a reason: not a measurement.
      if (i === 0 && conclusions.every((c) => c === 'failure'))
        throw new Error('every check run failed: the job did not run the checks');
      if (completed - before !== PR_CHECK_NAMES.length)
        throw new Error(`run ${i}: ${completed - before} check runs completed`);
      totals.push(performance.now() - started);
    }
    // Webhook answers while the queue is busy: synchronize events whose head has already
    // moved on (the job finds that out from the API and skips), sent back to back.
    const stale = JSON.stringify({
      ...payload,
      action: 'synchronize',
      pull_request: { ...payload.pull_request, head: { ...payload.pull_request.head, sha: '0'.repeat(40) } },
    });
    const answers = [];
    for (let i = 0; i < answerRuns; i++) answers.push(await deliver(`answer-${i}`, stale));
    await queue.onIdle();
    const sorted = [...answers].sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
    // The first run clones the mirror; the rest find it cached.
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    process.stdout.write(
      JSON.stringify({
        firstRun: totals[0],
        total: median(totals.slice(1)),
        answers: answerRuns,
        answerP50: pct(50),
        answerP99: pct(99),
        answerMax: sorted[sorted.length - 1],
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
