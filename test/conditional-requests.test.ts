import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConditionalCache, useConditionalRequests } from '../src/github/conditional-requests.js';
import { TestOctokit } from './helpers/github.js';

describe('conditional requests', () => {
  beforeEach(() => nock.disableNetConnect());
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('sends the last ETag and takes a 304 from the cache; other methods and scopes are left alone', async () => {
    const cache = new ConditionalCache();
    const octokit = new TestOctokit({ auth: 'token' });
    useConditionalRequests(octokit as never, cache, 'installation-1');
    const pr = { number: 7, head: { sha: 'a'.repeat(40) } };
    const api = nock('https://api.github.com')
      .get('/repos/o/r/pulls/7')
      .reply(200, pr, { etag: '"v1"' })
      .get('/repos/o/r/pulls/7')
      .matchHeader('if-none-match', '"v1"')
      .reply(304)
      .post('/repos/o/r/issues/7/comments')
      .matchHeader('if-none-match', (v) => v === undefined)
      .reply(201, { id: 1 });
    const first = await octokit.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 });
    const second = await octokit.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 });
    await octokit.rest.issues.createComment({ owner: 'o', repo: 'r', issue_number: 7, body: 'hi' });
    expect(api.isDone()).toBe(true);
    expect(second.data).toEqual(first.data);
    expect(second.status).toBe(200);
    expect(cache.hits).toBe(1);
    // Another installation's client does not see this one's answers.
    const other = new TestOctokit({ auth: 'token' });
    useConditionalRequests(other as never, cache, 'installation-2');
    nock('https://api.github.com')
      .get('/repos/o/r/pulls/7')
      .matchHeader('if-none-match', (v) => v === undefined)
      .reply(200, { ...pr, number: 8 });
    expect((await other.rest.pulls.get({ owner: 'o', repo: 'r', pull_number: 7 })).data.number).toBe(8);
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
