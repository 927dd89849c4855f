// The App, end to end, on a bundle pull request: a repository holding the real clusterpulse
// package of community-operators-prod (its bundle directories, ci.yaml, semver template,
// and its catalogs in 6 OpenShift versions, v4.17 to v4.22) gets a pull request that adds
// one bundle directory (1.0.3: the 1.0.2 bundle with its version raised). GitHub's API is
// answered locally (nock); git, the mirror, every check, the in-memory release of the
// bundle to the 6 catalogs and the check-run updates are real. Measures the time from the
// signed webhook to all check runs completed, with the mirror already cached.
import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { Probot, ProbotOctokit, Server } from 'probot';
import { PR_CHECK_NAMES } from '../dist/handlers/check-runs.js';
import { InProcessQueue } from '../dist/queue.js';
import { serverApp } from '../dist/server.js';

const [snapshot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const pkg = 'clusterpulse';
const require = createRequire(import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-bundle-'));
const git = (cwd, ...args) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    encoding: 'utf8',
  }).trim();

try {
  const src = join(work, 'src');
  git(work, 'init', '-q', '-b', 'main', src);
  cpSync(join(snapshot, 'operators', pkg), join(src, 'operators', pkg), { recursive: true });
  let catalogs = 0;
  for (const v of readdirSync(join(snapshot, 'catalogs'))) {
    const from = join(snapshot, 'catalogs', v, pkg);
    if (!existsSync(from)) continue;
    cpSync(from, join(src, 'catalogs', v, pkg), { recursive: true });
    catalogs++;
  }
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'base');
  const base = git(src, 'rev-parse', 'HEAD');
  const from = join(src, 'operators', pkg, '1.0.2');
  const to = join(src, 'operators', pkg, '1.0.3');
  cpSync(from, to, { recursive: true });
  const csv = join(to, 'manifests', `${pkg}.clusterserviceversion.yaml`);
  writeFileSync(csv, readFileSync(csv, 'utf8').replaceAll('1.0.2', '1.0.3'));
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'head: bundle 1.0.3');
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
  payload.pull_request.user.login = 'asamoorerh';
  payload.pull_request.base.sha = base;
  payload.pull_request.head.sha = head;
  const repoPath = `/repos/${payload.repository.owner.login}/${payload.repository.name}`;

  nock.disableNetConnect();
  let completed = 0;
  const names = new Map();
  const results = new Map();
  nock('https://api.github.com')
    .persist()
    .post('/app/installations/4242/access_tokens')
    .reply(201, { token: 'ghs_bench', expires_at: new Date(Date.now() + 3600_000).toISOString() })
    .post(`${repoPath}/check-runs`)
    .reply(201, (_u, body) => {
      const id = Math.floor(Math.random() * 1e9);
      names.set(id, body.name);
      return { id, name: body.name };
    })
    .get(`${repoPath}/pulls/1`)
    .reply(200, { number: 1, head: { sha: head }, base: { sha: base }, user: { login: 'asamoorerh' } })
    .patch(/\/check-runs\/\d+$/)
    .reply(200, (uri, body) => {
      if (body.conclusion) {
        completed++;
        results.set(names.get(Number(uri.split('/').pop())), body);
      }
      return {};
    })
    .get(/\/orgs\/.*\/members/)
    .reply(200, [])
    .get('/app')
    .reply(200, { id: 1, slug: 'catalog-bot' })
    .get(`${repoPath}/issues/1/comments`)
    .query(true)
    .reply(200, [])
    .post(`${repoPath}/issues/1/labels`)
    .reply(200, [])
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
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  nock.enableNetConnect('127.0.0.1');
  const secret = 'bench-secret';
  const quiet = new Probot({ appId: 1, privateKey, secret, Octokit, logLevel: 'fatal' });
  await quiet.load(() => undefined);
  const server = new Server({
    Probot: Probot.defaults({ appId: 1, privateKey, secret, Octokit, logLevel: 'fatal' }),
    host: '127.0.0.1',
    port,
    log: quiet.log,
  });
  const queue = new InProcessQueue();
  await server.load(serverApp({ queue, workDir: join(work, 'mirrors') }));
  await server.start();
  try {
    const body = JSON.stringify(payload);
    const totals = [];
    for (let i = 0; i <= runs; i++) {
      const before = completed;
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'pull_request',
          'x-github-delivery': `bench-bundle-${i}`,
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`delivery ${i}: HTTP ${res.status}`);
      await queue.onIdle();
      if (completed - before !== PR_CHECK_NAMES.length)
        throw new Error(`run ${i}: ${completed - before} check runs completed`);
      const bundle = results.get('catalog-bot/bundle');
      // The measurement counts only when the bundle was released to every catalog in the check.
      if (bundle?.conclusion !== 'success' || !/catalog update of \d+ files/.test(bundle.output.title))
        throw new Error(`run ${i}: catalog-bot/bundle ${bundle?.conclusion}: ${bundle?.output.title}`);
      totals.push(performance.now() - started);
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    process.stdout.write(
      JSON.stringify({
        package: pkg,
        catalogs,
        title: results.get('catalog-bot/bundle').output.title,
        firstRun: totals[0],
        total: median(totals.slice(1)),
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
