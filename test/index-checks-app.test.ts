// A bundle pull request for a package still on the bundle index, through the real Probot
// server (docs/bundles.md, "Packages still on the index"): a signed pull_request webhook for
// a branch adding amd-gpu-operator 0.0.4 whose CSV replaces a bundle its channel does not
// have ends with `catalog-bot/upgrade-graph` failing on the emulated index, naming both
// bundles, its annotation at the CSV's spec.replaces line.
import nock from 'nock';
import { createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Probot, Server } from 'probot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PR_CHECK_NAMES } from '../src/handlers/check-runs.js';
import { InProcessQueue } from '../src/queue.js';
import { serverApp } from '../src/server.js';
import { makeIndexRepo, type IndexRepo } from './helpers/cop-repo.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { privateKey, prPayload, quietLog, TestOctokit } from './helpers/github.js';

const API = 'https://api.github.com';
const REPO = '/repos/Codertocat/Hello-World';
const secret = 'index-secret';

interface Update {
  status?: string;
  conclusion?: string;
  output: {
    title: string;
    summary: string;
    annotations?: { path: string; start_line: number; message: string }[];
  };
}

describe('catalog-bot app: a bundle pull request for a package on the bundle index', () => {
  let made: IndexRepo;
  const csv = 'operators/amd-gpu-operator/0.0.4/manifests/amd-gpu-operator.clusterserviceversion.yaml';
  let bare: string;
  let base: string;
  let head: string;
  let workDir: string;
  let server: Server;
  let queue: InProcessQueue;
  let url: string;

  beforeAll(async () => {
    made = makeIndexRepo('amd-gpu-operator', '0.0.4');
    base = made.git('rev-parse', 'main');
    head = made.branch('wrong-replaces', (repo) => {
      const p = join(repo, csv);
      writeFileSync(
        p,
        readFileSync(p, 'utf8').replace(
          'replaces: amd-gpu-operator.v0.0.3',
          'replaces: amd-gpu-operator.v0.0.9',
        ),
      );
    });
    bare = mkdtempSync(join(tmpdir(), 'index-pr-origin-'));
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    made.git('push', '-q', bare, 'main:refs/heads/main', `${head}:refs/pull/1/head`);
    workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    queue = new InProcessQueue({ backoffMs: 20 });
    // Probot's Server treats port 0 as "default 3000": take a free port first.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    server = new Server({
      Probot: Probot.defaults({
        appId: 123,
        privateKey: privateKey(),
        secret,
        Octokit: TestOctokit,
        logLevel: 'fatal',
      }),
      host: '127.0.0.1',
      port,
      log: await quietLog(),
    });
    // Runs shown in progress at once, then completed: the mocks below expect both.
    await server.load(serverApp({ queue, workDir, announceAfterMs: 0 }));
    await server.start();
    url = `http://127.0.0.1:${server.port}`;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    made?.cleanup();
    rmSync(bare, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('fails catalog-bot/upgrade-graph on the emulated index, naming both bundles at spec.replaces', async () => {
    const ids = new Map<string, number>();
    const updates = new Map<number, Update>();
    const scope = nock(API)
      .post('/app/installations/4242/access_tokens')
      .reply(201, { token: 'ghs_test', expires_at: new Date(Date.now() + 3600_000).toISOString() })
      .post(`${REPO}/check-runs`)
      .times(PR_CHECK_NAMES.length)
      .reply(201, (_uri, body) => {
        const { name } = body as { name: string };
        ids.set(name, 100 + ids.size);
        return { id: ids.get(name), name };
      })
      .get(`${REPO}/pulls/1`)
      .reply(200, { number: 1, head: { sha: head }, base: { sha: base, ref: 'main' }, labels: [] })
      .patch(/\/repos\/Codertocat\/Hello-World\/check-runs\/\d+$/)
      .times(PR_CHECK_NAMES.length)
      .reply(200, (uri, body) => {
        updates.set(Number(uri.split('/').pop()), body as Update);
        return {};
      });
    nock(API)
      .get('/app')
      .optionally()
      .reply(200, { id: 123, slug: 'catalog-bot' })
      .get(`${REPO}/issues/1/comments`)
      .query(true)
      .optionally()
      .reply(200, [])
      .post(`${REPO}/issues/1/labels`)
      .optionally()
      .reply(200, []);
    const body = JSON.stringify(
      prPayload({ bare, base, head, newer: head, cleanup: () => undefined }, { author: 'alice' }),
    );
    const res = await fetch(`${url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'index-1',
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(200);
    await queue.onIdle();
    expect(scope.isDone()).toBe(true);
    const graph = updates.get(ids.get('catalog-bot/upgrade-graph')!);
    expect(graph).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(graph?.output.title).toMatch(
      /^A new bundle replaces a bundle its channel does not have; On the bundle index: /,
    );
    expect(graph?.output.summary).toContain('amd-gpu-operator.v0.0.4 replaces amd-gpu-operator.v0.0.9');
    expect(graph?.output.summary).toContain('emulated from operators/amd-gpu-operator: v4.12, v4.13');
    const line =
      readFileSync(join(made.repo, csv), 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('replaces: amd-gpu-operator.v0.0.9')) + 1;
    const at = graph?.output.annotations?.find((a) => a.message.includes('replaces amd-gpu-operator.v0.0.9'));
    expect(at).toMatchObject({ path: csv, start_line: line });
    // No annotation points at a catalog file: the repository has none for this package.
    for (const u of updates.values())
      for (const a of u.output.annotations ?? []) expect(a.path).not.toMatch(/^catalogs\//);
  }, 60_000);
});
