// The App as `npm start` runs it, in this process: Probot's HTTP server with the App's own
// GitHub client (octokitFromEnv: its write pacing, retries and rate-limit handling), pointed
// at the fake GitHub API server (github-server.ts). Webhooks are signed pull_request
// deliveries made from @octokit/webhooks-examples.
import { createHmac } from 'node:crypto';
import { Probot, Server } from 'probot';
import type { AppOptions } from '../../src/app.js';
import { octokitFromEnv, serverApp } from '../../src/server.js';
import { freePort } from './fleet.js';
import { privateKey, quietLog, webhookExample, type Payload } from './github.js';
import type { GitHubServer, ServerPull, ServerRepo } from './github-server.js';

export interface AppServer {
  /** Send a signed webhook; resolves to the HTTP status. */
  send(event: string, payload: unknown, id: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startAppServer(
  gh: GitHubServer,
  options: AppOptions,
  env: NodeJS.ProcessEnv = {},
): Promise<AppServer> {
  const secret = 'app-server-secret';
  const port = await freePort();
  const server = new Server({
    Probot: Probot.defaults({
      appId: 1,
      privateKey: privateKey(),
      secret,
      baseUrl: gh.baseUrl,
      Octokit: octokitFromEnv(env),
      logLevel: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'fatal',
    }),
    host: '127.0.0.1',
    port,
    log: await quietLog(),
  });
  await server.load(serverApp({ reconcileEveryMs: 0, ...options }));
  await server.start();
  return {
    async send(event, payload, id) {
      const body = JSON.stringify(payload);
      // A kept-alive connection the server just closed: GitHub delivers again, so does this.
      const post = () =>
        fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': event,
            'x-github-delivery': id,
            'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          },
          body,
        });
      const res = await post().catch(post);
      await res.arrayBuffer();
      return res.status;
    },
    stop: () => server.stop(),
  };
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
  payload.installation = { id: 4242 };
  Object.assign(payload.repository, {
    id: repo.id,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    clone_url: repo.bare,
  });
  payload.repository.owner.login = repo.owner;
  Object.assign(payload.pull_request, { number: pull.number, draft: false, title: `Add p${pull.number}` });
  payload.pull_request.user.login = pull.author;
  payload.pull_request.head.sha = sha;
  // An edit of the title only (the base stays): no new checks are asked for.
  if (action === 'edited') payload.changes = { title: { from: `p${pull.number}` } };
  return payload;
}
