// The App, end to end: a pull request that changes one package of a repository holding
// community-operators-prod v4.21. GitHub's API is answered locally (nock); git, the
// mirror, the checks and the check-run updates are real. Measures the webhook answer and
// the time until all three check runs are completed, with the mirror already cached.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { Probot, ProbotOctokit } from 'probot';
import { createApp } from '../dist/app.js';
import { InProcessQueue } from '../dist/queue.js';

const [catalogRoot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
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
      return {};
    })
    .get(/\/orgs\/.*\/members/)
    .reply(200, []);

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
  const probot = new Probot({ appId: 1, privateKey, secret: 's', Octokit, logLevel: 'fatal' });
  const queue = new InProcessQueue();
  await probot.load(createApp({ queue, workDir: join(work, 'mirrors') }));

  const answers = [];
  const totals = [];
  for (let i = 0; i <= runs; i++) {
    const before = completed;
    const started = performance.now();
    await probot.receive({ id: `bench-${i}`, name: 'pull_request', payload });
    answers.push(performance.now() - started);
    await queue.onIdle();
    if (completed - before !== 3) throw new Error(`run ${i}: ${completed - before} check runs completed`);
    totals.push(performance.now() - started);
  }
  // The first run clones the mirror; the rest find it cached.
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  process.stdout.write(
    JSON.stringify({ firstRun: totals[0], answer: median(answers.slice(1)), total: median(totals.slice(1)) }),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
