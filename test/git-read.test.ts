// The named git questions of src/git/read.ts that replaced raw git arguments in the checks
// and flows (docs/architecture.md, "src/git/"), on a real repository laid out like
// community-operators-prod.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  changedPaths,
  commitId,
  directoriesAt,
  fileEntriesAt,
  firstParent,
  firstParentCommits,
  isAncestor,
  namesInDirectory,
  newestCommitChangingText,
} from '../src/git/read.js';
import { makeCopRepo } from './helpers/cop-repo.js';
import { KeptAnswers } from '../src/git/kept.js';
import { isObjectId } from '../src/git/object-id.js';

const cop = makeCopRepo('clusterpulse/1.0.2');
afterAll(() => cop.cleanup());
const main = cop.git('rev-parse', 'main');
const pr = cop.branch('pr');

describe('src/git/read.ts on a community-operators-prod checkout', () => {
  it('names commits, parents and ancestry; a rev that is an option names none', async () => {
    expect(await commitId(cop.repo, 'pr')).toBe(pr);
    await expect(commitId(cop.repo, '--all')).rejects.toThrow();
    expect(await firstParent(cop.repo, pr)).toBe(main);
    expect(await firstParent(cop.repo, main)).toBeUndefined(); // the root commit
    expect(await isAncestor(cop.repo, main, pr)).toBe(true);
    expect(await isAncestor(cop.repo, pr, main)).toBe(false);
  });

  it('lists what changed, directories, file entries and the names in one directory', async () => {
    const changed = await changedPaths(cop.repo, main, pr);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.every((p) => p.startsWith(`${cop.bundleDir}/`))).toBe(true);
    expect(await directoriesAt(cop.repo, pr)).toContain(cop.bundleDir);
    expect(await directoriesAt(cop.repo, main)).not.toContain(cop.bundleDir);
    const entries = await fileEntriesAt(cop.repo, pr);
    for (const path of changed) expect(entries.get(path)?.id).toBe(cop.git('rev-parse', `pr:${path}`));
    expect(entries.get('config.yaml')?.mode).toBe('100644');
    expect(await namesInDirectory(cop.repo, pr, `operators/${cop.pkg}`)).toContain(cop.version);
    expect(await namesInDirectory(cop.repo, main, cop.bundleDir)).toBeUndefined();
  });

  it('finds who last changed a literal text of a file', async () => {
    cop.branch(
      'waiver',
      () => appendFileSync(join(cop.repo, 'config.yaml'), '# waived: "a literal [pattern] *"\n'),
      false,
    );
    cop.git('commit', '-q', '--allow-empty', '-m', 'unrelated, later');
    const origin = await newestCommitChangingText(cop.repo, 'waiver', '[pattern] *', 'config.yaml');
    expect(origin).toEqual({
      author: 't',
      hash: cop.git('rev-parse', '--short', 'waiver~1'),
      subject: 'waiver',
    });
    expect(await newestCommitChangingText(cop.repo, 'waiver', 'never there', 'config.yaml')).toBeUndefined();
  });

  it('reads a first-parent line with parents and subjects, an empty subject included', async () => {
    cop.git('checkout', '-q', '-b', 'line', 'main');
    cop.git('commit', '-q', '--allow-empty', '-m', 'Merge pull request #1 from a/b');
    cop.git('commit', '-q', '--allow-empty', '--allow-empty-message', '-m', '');
    cop.git('merge', '-q', '--no-ff', '-m', 'Merge pull request #2 from c/d', 'pr');
    const line = await firstParentCommits(cop.repo, main, 'line', 10);
    expect(line.map((c) => c.subject)).toEqual([
      'Merge pull request #1 from a/b',
      '',
      'Merge pull request #2 from c/d',
    ]);
    expect(line.map((c) => c.commit)).toEqual(
      cop.git('rev-list', '--first-parent', '--reverse', `${main}..line`).split('\n'),
    );
    expect(line[0]!.parents).toEqual([main]);
    expect(line[2]!.parents).toEqual([line[1]!.commit, pr]);
    expect(await firstParentCommits(cop.repo, main, 'line', 2)).toHaveLength(2);
  });
});

describe('answers kept by object id (src/git/kept.ts)', () => {
  it('shares a pending answer, drops the least recently used past the weight, never keeps a failure or a ref', async () => {
    const kept = new KeptAnswers<string[]>(4, (a) => a.length);
    const asked: string[] = [];
    const answer = (key: string, value: string[]) => () => {
      asked.push(key);
      return Promise.resolve(value);
    };
    const id = (c: string) => c.repeat(40);
    const [a1, a2] = [
      kept.ask('repo', [id('a')], answer('a', ['1', '2'])),
      kept.ask('repo', [id('a')], answer('a', ['x'])),
    ];
    expect(await a1).toBe(await a2);
    await kept.ask('repo', [id('b')], answer('b', ['3']));
    await kept.ask('repo', [id('a')], answer('a', ['x'])); // a used last: b is the oldest now
    await kept.ask('repo', [id('c')], answer('c', ['4', '5'])); // weight 5 > 4: b goes
    await kept.ask('repo', [id('a')], answer('a', ['x']));
    await kept.ask('repo', [id('b')], answer('b', ['3']));
    // A ref moves: asked each time, even beside an id.
    await kept.ask('repo', ['main'], answer('main', []));
    await kept.ask('repo', [id('a'), 'main'], answer('a..main', []));
    await kept.ask('repo', [id('a'), 'main'], answer('a..main', []));
    expect(asked).toEqual(['a', 'b', 'c', 'b', 'main', 'a..main', 'a..main']);
    let failures = 0;
    const failing = () => {
      failures++;
      return Promise.reject(new Error('no such tree'));
    };
    await expect(kept.ask('repo', [id('d')], failing)).rejects.toThrow('no such tree');
    await expect(kept.ask('repo', [id('d')], failing)).rejects.toThrow('no such tree');
    expect(failures).toBe(2);
    expect([
      isObjectId('a'.repeat(40)),
      isObjectId('a'.repeat(64)),
      isObjectId('main'),
      isObjectId('A'.repeat(40)),
    ]).toEqual([true, true, false, false]);
  });
});
