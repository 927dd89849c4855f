import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCache, useConditionalRequests } from '../src/github/conditional-requests.js';
import { closeNetwork, FakeGitHub, openNetwork } from './helpers/fake-github.js';
import { TestOctokit } from './helpers/github.js';

describe('conditional requests', () => {
  let root: string;
  let gh: FakeGitHub;
  beforeEach(() => {
    closeNetwork();
    root = mkdtempSync(join(tmpdir(), 'conditional-'));
    const bare = join(root, 'r.git');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', bare, ...args], { encoding: 'utf8' }).trim();
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    const tree = git('hash-object', '-t', 'tree', '-w', '/dev/null');
    const main = git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit-tree', tree, '-m', 'm');
    git('update-ref', 'refs/heads/main', main);
    // GitHub sends ETags and answers 304 to a request that names the one it has (the one fake).
    gh = new FakeGitHub('o', 'r', bare);
    gh.model.etags = true;
    gh.addPull({ number: 7, head: main, author: 'alice' });
  });
  afterEach(() => {
    openNetwork();
    rmSync(root, { recursive: true, force: true });
  });

  it('sends the last ETag and takes a 304 from the cache; other methods and scopes are left alone', async () => {
    const cache = new ConditionalCache();
    const octokit = new TestOctokit({ auth: 'token' });
    useConditionalRequests(octokit as never, cache, 'installation-1');
    const first = await octokit.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 });
    const second = await octokit.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 });
    await octokit.rest.issues.createComment({ owner: 'o', repo: 'r', issue_number: 7, body: 'hi' });
    const asked = gh.requests.map(
      (r) => `${r.method} ${r.path} ${r.status}${r.conditional ? ' conditional' : ''}`,
    );
    expect(asked).toEqual([
      'GET /repos/o/r/pulls/7 200',
      'GET /repos/o/r/pulls/7 304 conditional',
      'POST /repos/o/r/issues/7/comments 201',
    ]);
    expect(second.data).toEqual(first.data);
    expect(second.status).toBe(200);
    expect(cache.hits).toBe(1);
    // Another installation's client does not see this one's answers: it asks without an ETag
    // and reads what GitHub has now.
    gh.pulls.get(7)!.labels.push('changed');
    const other = new TestOctokit({ auth: 'token' });
    useConditionalRequests(other as never, cache, 'installation-2');
    const fresh = await other.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 });
    expect(gh.requests.at(-1)).toMatchObject({ status: 200 });
    expect(gh.requests.at(-1)?.conditional).toBeUndefined();
    expect(fresh.data.labels.map((l) => l.name)).toEqual(['changed']);
    expect(cache.hits).toBe(1);
  });

  it('keeps at most its limit of answers, dropping the least recently used', () => {
    const cache = new ConditionalCache(2);
    const entry = (etag: string) => ({ etag, response: { status: 200, url: '', headers: {}, data: etag } });
    cache.set('a', entry('1'));
    cache.set('b', entry('2'));
    cache.get('a');
    cache.set('c', entry('3'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.etag).toBe('1');
  });
});
