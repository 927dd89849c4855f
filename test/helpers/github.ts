// Test helpers for the GitHub App: a real bare git repository made from
// examples/catalog-repo, a Probot instance with a throw-away key, and a realistic
// pull_request payload from @octokit/webhooks-examples pointed at that repository.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Probot, ProbotOctokit } from 'probot';

const examples = fileURLToPath(new URL('../../examples/catalog-repo/', import.meta.url));

export interface ExampleRepo {
  /** The bare repository (what `clone_url` points at). */
  bare: string;
  base: string;
  head: string;
  /** Another commit on top of head, for stale-head tests. */
  newer: string;
  cleanup: () => void;
}

/** A bare repo: `main` = examples/catalog-repo/base, `refs/pull/1/head` = head. */
export function makeExampleRepo(prNumber = 1): ExampleRepo {
  const root = mkdtempSync(join(tmpdir(), 'catalog-bot-app-'));
  const work = join(root, 'work');
  const bare = join(root, 'origin.git');
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  cpSync(join(examples, 'base'), work, { recursive: true });
  git(work, 'add', '-A');
  git(work, 'commit', '-qm', 'base');
  const base = git(work, 'rev-parse', 'HEAD');
  git(work, 'checkout', '-q', '-b', 'pr');
  rmSync(join(work, 'catalogs'), { recursive: true });
  cpSync(join(examples, 'head'), work, { recursive: true });
  git(work, 'add', '-A');
  git(work, 'commit', '-qm', 'head');
  const head = git(work, 'rev-parse', 'HEAD');
  git(work, 'commit', '-q', '--allow-empty', '-m', 'newer');
  const newer = git(work, 'rev-parse', 'HEAD');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  git(work, 'push', '-q', bare, `main:refs/heads/main`, `${head}:refs/pull/${prNumber}/head`);
  return { bare, base, head, newer, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

const require = createRequire(import.meta.url);
interface Example {
  name: string;
  examples: Record<string, unknown>[];
}

/** A webhook payload, edited freely by tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Payload = any;

let webhookExamples: Example[] | undefined;

/** A copy of a real payload from @octokit/webhooks-examples (the 4 MB file is read once). */
export function webhookExample(name: string, action?: string): Payload {
  const file = require.resolve('@octokit/webhooks-examples/api.github.com/index.json');
  webhookExamples ??= JSON.parse(readFileSync(file, 'utf8')) as Example[];
  const example = webhookExamples.find((e) => e.name === name)?.examples.find((e) => e.action === action);
  if (!example) throw new Error(`no ${name}.${action} example`);
  return structuredClone(example) as Payload;
}

export function prPayload(
  repo: ExampleRepo,
  options: { author: string; action?: string; number?: number },
): Payload {
  const payload = webhookExample('pull_request', 'opened');
  payload.action = options.action ?? 'opened';
  const number = options.number ?? 1;
  payload.number = number;
  payload.installation = { id: 4242, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==' };
  payload.repository.clone_url = repo.bare;
  payload.pull_request.number = number;
  payload.pull_request.user.login = options.author;
  payload.pull_request.base.sha = repo.base;
  payload.pull_request.head.sha = repo.head;
  return payload;
}

export const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { ...(o.throttle as object), enabled: false },
}));

let key: string | undefined;
export function privateKey(): string {
  key ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
  return key;
}

export function testProbot(secret = 'test-secret'): Probot {
  return new Probot({
    appId: 123,
    privateKey: privateKey(),
    secret,
    Octokit: TestOctokit,
    logLevel: 'fatal',
  });
}

/** A logger that only reports fatal errors (Probot builds its logger asynchronously). */
export async function quietLog(): Promise<Probot['log']> {
  const probot = testProbot();
  await probot.load(() => undefined);
  return probot.log;
}
