// The App end to end for the benchmarks (app.mjs, bundle.mjs): the real HTTP server of
// `npm start` in this process, fed signed webhooks, against the fake GitHub API server the
// tests use (test/helpers/github-server.ts, transpiled here: the bench is plain Node), so
// the bench and the tests fake GitHub one way. git, the mirror and the checks are real.
import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { Probot, Server } from 'probot';
import { InProcessQueue } from '../dist/queue.js';
import { octokitFromEnv, serverApp } from '../dist/server.js';
import { roundProblem } from './check-round.mjs';

const project = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * GitHubServer from test/helpers/github-server.ts with the model it serves (github-model.ts)
 * and its contract checker (test/helpers/github-contract.ts), transpiled into the project's cache so that their
 * packages (ajv, @octokit/openapi) resolve; vitest's hooks, which only fail a running test,
 * are stubbed.
 */
export async function loadGitHubServer() {
  const cache = join(project, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const out = mkdtempSync(join(cache, 'catalog-bot-bench-gh-'));
  try {
    const transpile = (name, rewrite) => {
      const source = readFileSync(join(project, 'test', 'helpers', `${name}.ts`), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      });
      writeFileSync(join(out, `${name}.mjs`), rewrite(outputText));
    };
    writeFileSync(
      join(out, 'vitest-hooks.mjs'),
      'export const afterAll = () => {};\nexport const afterEach = () => {};\n',
    );
    transpile('github-contract', (text) => text.replace(/from ['"]vitest['"]/, "from './vitest-hooks.mjs'"));
    transpile('github-model', (text) =>
      text.replace(/from ['"]\.\/github-contract\.js['"]/, "from './github-contract.mjs'"),
    );
    transpile('github-server', (text) =>
      text.replace(/from ['"]\.\/github-model\.js['"]/g, "from './github-model.mjs'"),
    );
    return await import(pathToFileURL(join(out, 'github-server.mjs')).href);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export const git = (cwd, ...args) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    encoding: 'utf8',
  }).trim();

async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

/**
 * Start the fake GitHub with `bare` as Codertocat/Hello-World and pull request #1 at `head`
 * by `author`, and the App against it. `deliver()` sends the pull_request webhook and
 * resolves to its HTTP answer time; `round()` delivers it, waits for the queue, and returns
 * the time to the last check run completed and the runs written.
 */
export async function startBenchApp({ work, bare, base, head, author }) {
  // GitHub's base is the base branch's tip: the bare's main must be the base, not the head.
  git(bare, 'update-ref', 'refs/heads/main', base);
  const { GitHubServer } = await loadGitHubServer();
  const gh = await GitHubServer.start();
  const examples = JSON.parse(
    readFileSync(require.resolve('@octokit/webhooks-examples/api.github.com/index.json'), 'utf8'),
  );
  const payload = structuredClone(
    examples.find((e) => e.name === 'pull_request').examples.find((e) => e.action === 'opened'),
  );
  const { owner, name, id } = {
    owner: payload.repository.owner.login,
    name: payload.repository.name,
    id: payload.repository.id,
  };
  const repo = gh.addRepo({ owner, name, id, bare });
  gh.addPull(repo, { number: 1, head, author });
  payload.installation = { id: 4242 };
  payload.repository.clone_url = bare;
  payload.number = 1;
  Object.assign(payload.pull_request, { number: 1, draft: false });
  payload.pull_request.user.login = author;
  payload.pull_request.base.sha = base;
  payload.pull_request.head.sha = head;

  const privateKey = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
  // The App's own GitHub client; writes unpaced: the fake does not pace, and a second per
  // write would measure the pacing, not the App (docs/github-limits.md).
  const Octokit = octokitFromEnv({ CATALOG_BOT_WRITE_PACING: 'off' });
  const secret = 'bench-secret';
  const options = { appId: 1, privateKey, secret, Octokit, baseUrl: gh.baseUrl, logLevel: 'fatal' };
  // Probot builds its logger asynchronously: take a quiet one from a loaded instance.
  const quiet = new Probot(options);
  await quiet.load(() => undefined);
  const port = await freePort();
  const server = new Server({ Probot: Probot.defaults(options), host: '127.0.0.1', port, log: quiet.log });
  const queue = new InProcessQueue();
  await server.load(serverApp({ queue, workDir: join(work, 'mirrors'), reconcileEveryMs: 0 }));
  await server.start();

  const deliver = async (deliveryId, body) => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': deliveryId,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`delivery ${deliveryId}: HTTP ${res.status}`);
    return performance.now() - started;
  };
  const body = JSON.stringify(payload);
  let last = 0;
  gh.onCompleted = () => {
    last = performance.now();
  };
  const round = async (deliveryId) => {
    const before = gh.checkRuns.length;
    const started = performance.now();
    await deliver(deliveryId, body);
    await queue.onIdle();
    const runs = gh.checkRuns.slice(before).filter((r) => r.head_sha === head);
    const problem = roundProblem(runs);
    if (problem) throw new Error(`${deliveryId}: ${problem}`);
    return { ms: last - started, runs };
  };
  return {
    gh,
    payload,
    queue,
    deliver,
    round,
    async stop() {
      await server.stop();
      await gh.close();
    },
  };
}
