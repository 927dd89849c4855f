// The fakes speak GitHub's contract (test/helpers/github-contract.ts): what GitHub's REST
// description does not allow is refused with 422 and recorded for the running test to fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeGitHub, openNetwork } from './helpers/fake-github.js';
import { checkRequest, checkResponse, recorded } from './helpers/github-contract.js';
import { GitHubServer } from './helpers/github-server.js';
import { TestOctokit } from './helpers/github.js';

const annotation = { path: 'a.yaml', start_line: 1, end_line: 1, annotation_level: 'failure', message: 'm' };
const run = (extra: object) => ({ name: 'catalog-bot/validate', head_sha: 'a'.repeat(40), ...extra });

/** What GitHub refuses, and the violation each is recorded as. */
const refused: [object, string][] = [
  [
    run({ output: { title: 't', summary: 's', annotations: Array(51).fill(annotation) } }),
    'request POST /repos/{owner}/{repo}/check-runs: body/output/annotations: must NOT have more than 50 items',
  ],
  [
    run({ conclusion: 'passed' }),
    'request POST /repos/{owner}/{repo}/check-runs: body/conclusion: must be equal to one of the allowed values: action_required, cancelled, failure, neutral, success, skipped, stale, timed_out',
  ],
  [
    run({ output: { title: 't', summary: 'x'.repeat(65_536) } }),
    'request POST /repos/{owner}/{repo}/check-runs: body/output/summary: must NOT have more than 65535 characters',
  ],
];

/** The violations the fake recorded, taken so the hook does not fail this test for them. */
function taken(): string[] {
  return recorded.splice(0).map((v) => `${v.side} ${v.route}: ${v.pointer}: ${v.problem}`);
}

describe('a check run GitHub would refuse is refused', () => {
  let gh: GitHubServer;
  let root: string;
  beforeAll(async () => {
    gh = await GitHubServer.start();
    root = mkdtempSync(join(tmpdir(), 'contract-'));
    execFileSync('git', ['init', '-q', '--bare', join(root, 'r.git')]);
    gh.addRepo({ owner: 'o', name: 'r', id: 7, bare: join(root, 'r.git') });
  });
  afterAll(async () => {
    await gh.close();
    rmSync(root, { recursive: true, force: true });
  });
  const post = (body: object) =>
    fetch(`${gh.baseUrl}/repos/o/r/check-runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('51 annotations, an unknown conclusion, a summary over 65,535 characters', async () => {
    for (const [body, violation] of refused) {
      const res = await post(body);
      expect(res.status).toBe(422);
      expect(taken()).toEqual([violation]);
    }
    expect(gh.checkRuns).toEqual([]);
  });

  it('at the limits (50 annotations, 65,535 characters, a documented conclusion) the run is made', async () => {
    const res = await post(
      run({
        conclusion: 'success',
        output: { title: 't', summary: 'x'.repeat(65_535), annotations: Array(50).fill(annotation) },
      }),
    );
    expect(res.status).toBe(201);
    expect(taken()).toEqual([]);
    expect(gh.checkRuns).toHaveLength(1);
  });
});

describe('the nock fake refuses the same through the App client', () => {
  it('51 annotations, an unknown conclusion, a summary over 65,535 characters: each fails with 422 and is recorded', async () => {
    const root = mkdtempSync(join(tmpdir(), 'contract-'));
    try {
      execFileSync('git', ['init', '-q', '--bare', join(root, 'r.git')]);
      const fake = new FakeGitHub('o', 'r', join(root, 'r.git'));
      const octokit = new TestOctokit({ auth: 'ghs_test' });
      for (const [body, violation] of refused) {
        const sent = octokit.rest.checks.create({ owner: 'o', repo: 'r', ...body } as Parameters<
          typeof octokit.rest.checks.create
        >[0]);
        await expect(sent).rejects.toMatchObject({ status: 422 });
        expect(taken()).toEqual([violation]);
      }
      expect(fake.checkRuns).toEqual([]);
    } finally {
      openNetwork();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('parameters and answers', () => {
  it('names the unknown query parameter, the mistyped path parameter, the unknown route', () => {
    const said = (v: ReturnType<typeof checkRequest>) => v.map((x) => `${x.pointer}: ${x.problem}`);
    expect(said(checkRequest('GET', '/repos/o/r/pulls?stat=open', undefined))).toEqual([
      'query: unknown parameter `stat`',
    ]);
    expect(said(checkRequest('GET', '/repos/o/r/pulls/abc', undefined))).toEqual([
      'path/pull_number: must be integer',
    ]);
    expect(said(checkRequest('GET', '/repos/o/r/pull/1', undefined))).toEqual([
      'path: no such route in GitHub REST API',
    ]);
    // GitHub Enterprise Server's prefix is not part of the route
    expect(checkRequest('GET', '/api/v3/repos/o/r/pulls?state=open&per_page=100', undefined)).toEqual([]);
    // a branch name may hold slashes (`x-multi-segment`)
    expect(checkRequest('GET', '/repos/o/r/branches/release/1.0', undefined)).toEqual([]);
  });

  it('an answer without what GitHub always sends is the fake’s fault, named by pointer', () => {
    const v = checkResponse('GET', '/repos/o/r/collaborators/x/permission', 200, { permission: 'write' });
    expect(v.map((x) => `${x.side} ${x.pointer}: ${x.problem}`)).toEqual([
      'response body: missing `role_name`',
      'response body: missing `user`',
    ]);
    expect(checkResponse('PUT', '/repos/o/r/pulls/1/merge', 201, {})).toMatchObject([
      { pointer: 'status', problem: '201 is not documented (200, 403, 404, 405, 409, 422)' },
    ]);
  });
});
