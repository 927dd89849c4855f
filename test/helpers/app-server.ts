// The App as `npm start` runs it, in this process: Probot's HTTP server on 127.0.0.1, fed
// signed webhooks made from @octokit/webhooks-examples. Against the fake GitHub API server
// (github-server.ts) it uses the App's own GitHub client (octokitFromEnv: its write pacing,
// retries and rate-limit handling); against the nock fake (fake-github.ts, or a GitHubModel of
// several repositories answered through its nock skin, both at GitHub's own address) the test
// client, without retries or pacing.
import { createHmac } from 'node:crypto';
import { Probot, Server } from 'probot';
import type { AppOptions } from '../../src/app.js';
import { octokitFromEnv, serverApp } from '../../src/server.js';
import { answerFromModel, closeNetwork, FakeGitHub, openNetwork } from './fake-github.js';
import { freePort, nameRepository } from './fleet.js';
import { privateKey, quietLog, TestOctokit, webhookExample, type Payload } from './github.js';
import { GitHubModel } from './github-model.js';
import type { GitHubServer, ServerPull, ServerRepo } from './github-server.js';

export interface AppServer {
  /** Send a signed webhook; resolves to the HTTP status. */
  send(event: string, payload: unknown, id: string): Promise<number>;
  /** The server's address, like http://127.0.0.1:12345 (for its other routes). */
  url: string;
  stop(): Promise<void>;
}

/**
 * Start the App against `gh`. With the nock fake (a FakeGitHub, or a GitHubModel, answered
 * from here on), the network is closed but for 127.0.0.1 (webhooks are posted to it) until
 * stop().
 */
export async function startAppServer(
  gh: GitHubServer | FakeGitHub | GitHubModel,
  options: AppOptions,
  env: NodeJS.ProcessEnv = {},
): Promise<AppServer> {
  const nocked = gh instanceof FakeGitHub || gh instanceof GitHubModel;
  if (nocked) closeNetwork();
  if (gh instanceof GitHubModel) answerFromModel(gh);
  const secret = 'app-server-secret';
  const port = await freePort();
  const server = new Server({
    Probot: Probot.defaults({
      appId: 1,
      privateKey: privateKey(),
      secret,
      ...(nocked ? { Octokit: TestOctokit } : { baseUrl: gh.baseUrl, Octokit: octokitFromEnv(env) }),
      logLevel: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'fatal',
    }),
    host: '127.0.0.1',
    port,
    log: await quietLog(),
  });
  await server.load(serverApp({ reconcileEveryMs: 0, ...options }));
  await server.start();
  return {
    url: `http://127.0.0.1:${port}`,
    async send(event, payload, id) {
      // A kept-alive connection the server just closed: GitHub delivers again, so does this.
      const post = () => postSignedWebhook(`http://127.0.0.1:${port}`, secret, event, payload, id);
      const res = await post().catch(post);
      await res.arrayBuffer();
      return res.status;
    },
    async stop() {
      await server.stop();
      if (nocked) openNetwork();
    },
  };
}

/** POST `payload` as webhook `event` (delivery `id`) to the App at `url`, signed with `secret` as GitHub signs. */
export function postSignedWebhook(
  url: string,
  secret: string,
  event: string,
  payload: unknown,
  id: string,
): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`${url}/api/github/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
}

export interface IssueComment {
  /** The bare repository the delivery's repository is cloned from. */
  bare: string;
  /** The pull request commented on. */
  number: number;
  id: number;
  login: string;
  /** The commenter's user id, when the test tells users apart by it. */
  userId?: number;
  /** The commenter's account type (User unless said). */
  userType?: 'User' | 'Bot';
  body: string;
  /** When it was written (the fake's clock). */
  at: Date;
  action?: 'created' | 'edited' | 'deleted';
}

/** An issue_comment delivery: `login` comments `body` on pull request `number` of Codertocat/Hello-World. */
export function issueCommentPayload(c: IssueComment): Payload {
  const payload = webhookExample('issue_comment', 'created');
  const pr = webhookExample('pull_request', 'opened');
  pr.repository.clone_url = c.bare;
  payload.action = c.action ?? 'created';
  payload.installation = { id: 4242 };
  payload.repository = pr.repository;
  payload.issue.number = c.number;
  payload.issue.pull_request = {
    url: `https://api.github.com/repos/Codertocat/Hello-World/pulls/${c.number}`,
  };
  payload.comment.id = c.id;
  payload.comment.body = c.body;
  payload.comment.created_at = payload.comment.updated_at = c.at.toISOString();
  const user = {
    login: c.login,
    type: c.userType ?? 'User',
    ...(c.userId === undefined ? {} : { id: c.userId }),
  };
  payload.comment.user = { ...payload.comment.user, ...user };
  payload.sender = { ...payload.sender, ...user };
  return payload;
}

const examples = new Map<string, Payload>();

/** A pull_request delivery for the fake server's pull request at head `sha`. */
export function pullRequestPayload(
  repo: ServerRepo,
  pull: ServerPull,
  action: 'opened' | 'synchronize' | 'edited',
  sha: string,
): Payload {
  // The examples file is large: read it once.
  const kind = action === 'synchronize' ? 'synchronize' : 'opened';
  if (!examples.has(kind)) examples.set(kind, webhookExample('pull_request', kind));
  const payload = structuredClone(examples.get(kind));
  payload.action = action;
  payload.number = pull.number;
  nameRepository(payload, repo);
  Object.assign(payload.pull_request, { number: pull.number, draft: false, title: `Add p${pull.number}` });
  payload.pull_request.user.login = pull.author;
  payload.pull_request.head.sha = sha;
  // An edit of the title only (the base stays): no new checks are asked for.
  if (action === 'edited') payload.changes = { title: { from: `p${pull.number}` } };
  return payload;
}

/**
 * A push delivery: `ref` (main unless said) moved from `before` to `after`, in the repository
 * of the fake GitHub API server (`repo`) or, for the nock fake, cloned from the bare `origin`.
 */
export function pushPayload(
  origin: string | ServerRepo,
  before: string,
  after: string,
  ref = 'refs/heads/main',
): Payload {
  const payload = webhookExample('push');
  Object.assign(payload, { ref, before, after, deleted: false, installation: { id: 4242 } });
  payload.repository.default_branch = 'main';
  if (typeof origin === 'string') payload.repository.clone_url = origin;
  else nameRepository(payload, origin);
  return payload;
}

/** A check_run delivery: "Re-run" on the App's check `name` at `sha` of the repository cloned from `bare`. */
export function checkRunRerunPayload(bare: string, name: string, sha: string): Payload {
  const payload = webhookExample('check_run', 'rerequested');
  payload.installation = { id: 4242 };
  payload.repository = { ...webhookExample('push').repository, clone_url: bare, default_branch: 'main' };
  payload.check_run.name = name;
  payload.check_run.head_sha = sha;
  return payload;
}
