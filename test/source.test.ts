import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, GitTreeSource, validateCatalog } from '../src/catalog/index.js';
import type { DecodedFile } from '../src/catalog/fbc/decode.js';
import { GitFiles, PathTooLongError } from '../src/git/files.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { fooChannel } from './helpers/foo-repo.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
    encoding: 'utf8',
  });

const catalog = {
  'catalogs/v1/foo/catalog.yaml': fooChannel(['1.0.0', '1.1.0']),
  'catalogs/v1/foo/bundles.json': ['1.0.0', '1.1.0']
    .map((v) =>
      JSON.stringify({
        schema: 'olm.bundle',
        package: 'foo',
        name: `foo.v${v}`,
        image: `quay.io/x/foo:v${v}`,
        properties: [{ type: 'olm.package', value: { packageName: 'foo', version: v } }],
      }),
    )
    .join('\n'),
  'catalogs/v1/.indexignore': 'README.md\n',
  'catalogs/v1/README.md': '# not FBC\n',
  'outside.yaml': 'schema: olm.package\nname: bar\n',
};

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

function makeRepo(): string {
  const repo = writeTree(catalog);
  dirs.push(repo);
  symlinkSync('../../outside.yaml', join(repo, 'catalogs/v1/escape.yaml'));
  symlinkSync('foo/catalog.yaml', join(repo, 'catalogs/v1/alias.yaml'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'catalog');
  return repo;
}

/**
 * Commit a file at `path` on a new branch off main, through a private index: a path longer
 * than PATH_MAX cannot be written to disk, and a pull request can still commit one.
 */
function commitAt(repo: string, branch: string, path: string, content: string): void {
  const env = { ...process.env, GIT_INDEX_FILE: join(repo, '.git', `index-${branch}`) };
  const run = (...args: string[]): string =>
    execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', env }).trim();
  run('read-tree', 'main');
  const blob = execFileSync('git', ['-C', repo, 'hash-object', '-w', '--stdin'], {
    encoding: 'utf8',
    input: content,
  }).trim();
  run('update-index', '--add', '--cacheinfo', `100644,${blob},${path}`);
  branchWithTree(repo, branch, run('write-tree'));
}

/** A new branch `branch`: one commit on top of main holding `tree`. */
function branchWithTree(repo: string, branch: string, tree: string): void {
  const commit = git(repo, 'commit-tree', tree, '-p', 'main', '-m', branch).trim();
  git(repo, 'branch', branch, commit);
}

/** Runs `use` with a GitFiles reader of `repo`, closed afterwards whatever happens. */
async function withReader(repo: string, use: (files: GitFiles) => Promise<void>): Promise<void> {
  const files = new GitFiles(repo);
  try {
    await use(files);
  } finally {
    files.close();
  }
}

/** A path of exactly `bytes` bytes, in directories of 200-byte names. */
function pathOf(bytes: number): string {
  const dirs: string[] = [];
  let length = 'x.yaml'.length;
  while (length + 201 <= bytes) {
    dirs.push('d'.repeat(200));
    length += 201;
  }
  return [...dirs, 'x'.repeat(bytes - length) + 'x.yaml'].join('/');
}

/**
 * Commit a directory of `entries` empty subdirectories with 200-byte names at `path`, on a new
 * branch off main: a tree object of about 235 bytes an entry (80,000 entries: 18.8 MB). Built
 * with `git mktree`, since an index holds no empty directory.
 */
function commitTreeAt(
  repo: string,
  branch: string,
  path: string,
  entries: number,
  /** A file to add beside it, so that the change touches its directory. */
  beside?: { name: string; text: string },
): void {
  const run = (args: string[], input?: string): string =>
    execFileSync('git', ['-C', repo, ...args], {
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
      ...(input !== undefined ? { input } : {}),
    }).trim();
  const empty = run(['hash-object', '-t', 'tree', '-w', '--stdin'], '');
  const listing = Array.from(
    { length: entries },
    (_, i) => `040000 tree ${empty}\t${String(i).padStart(8, '0')}${'x'.repeat(192)}`,
  );
  // `path` placed in main's tree, one directory level at a time.
  const place = (base: string | undefined, parts: string[], leaf: string): string => {
    const [name, ...rest] = parts as [string, ...string[]];
    const lines = base === undefined ? [] : run(['ls-tree', base]).split('\n').filter(Boolean);
    const old = lines.find((l) => l.endsWith(`\t${name}`));
    const kept = lines.filter((l) => l !== old);
    const sub = rest.length === 0 ? leaf : place(old?.split(/\s/)[2], rest, leaf);
    if (rest.length === 0 && beside) {
      const blob = run(['hash-object', '-w', '--stdin'], beside.text);
      kept.push(`100644 blob ${blob}\t${beside.name}`);
    }
    return run(['mktree'], [...kept, `040000 tree ${sub}\t${name}`].join('\n') + '\n');
  };
  const big = run(['mktree'], listing.join('\n') + '\n');
  branchWithTree(repo, branch, place(run(['rev-parse', 'main^{tree}']), path.split('/'), big));
}

describe('GitTreeSource', () => {
  it('reads a commit exactly like the same files on disk, without a worktree', async () => {
    const repo = makeRepo();
    const fromGit = await validateCatalog(new GitTreeSource(repo, 'HEAD', 'catalogs/v1'));
    const fromDir = await validateCatalog(new DirectorySource(join(repo, 'catalogs/v1')));
    const strip = (r: typeof fromGit) => ({ valid: r.valid, diagnostics: r.diagnostics, config: r.config });
    expect(strip(fromGit)).toEqual(strip(fromDir));
    // The symlink out of the root is reported, not followed; the in-root one is read (so foo is duplicated).
    expect(fromGit.diagnostics.map((d) => [d.rule, d.file])).toEqual(
      expect.arrayContaining([
        ['L-FS', 'escape.yaml'],
        ['P-DUPLICATE', 'foo/catalog.yaml'],
      ]),
    );
    expect(fromGit.config.bundles.map((b) => [b.name, b.pos.file, b.pos.line])).toEqual([
      ['foo.v1.0.0', 'foo/bundles.json', 1],
      ['foo.v1.1.0', 'foo/bundles.json', 2],
    ]);
  });

  it('reads an older commit, not the working tree', async () => {
    const repo = makeRepo();
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'rm', '-q', 'catalogs/v1/escape.yaml', 'catalogs/v1/alias.yaml');
    git(repo, 'commit', '-qm', 'drop links');
    const head = await validateCatalog(new GitTreeSource(repo, 'HEAD', 'catalogs/v1'));
    const old = await validateCatalog(new GitTreeSource(repo, first, 'catalogs/v1'));
    expect(head.valid).toBe(true);
    expect(old.valid).toBe(false);
  });

  it('lists a tree named by its id once per thread; a ref is listed again each time', async () => {
    const repo = writeTree(catalog);
    dirs.push(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'catalog');
    const id = git(repo, 'rev-parse', 'HEAD').trim();
    const first = await new GitTreeSource(repo, id, 'catalogs/v1').list();
    expect(first.map((e) => e.path)).toEqual([
      '.indexignore',
      'README.md',
      'foo/bundles.json',
      'foo/catalog.yaml',
    ]);
    // With the repository's objects gone, only what was listed by id can still be listed.
    rmSync(join(repo, '.git', 'objects'), { recursive: true });
    expect(await new GitTreeSource(repo, id, 'catalogs/v1').list()).toEqual(first);
    await expect(new GitTreeSource(repo, 'main', 'catalogs/v1').list()).rejects.toThrow(/git ls-tree failed/);
    await expect(new GitTreeSource(repo, id, 'catalogs').list()).rejects.toThrow(/git ls-tree failed/);
  });

  it('does not keep a listing over the allowance (a hostile tree of many long names)', async () => {
    const repo = writeTree({});
    dirs.push(repo);
    git(repo, 'init', '-q', '-b', 'main');
    const run = (args: string[], input: string): string =>
      execFileSync('git', ['-C', repo, ...args], { input, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).trim();
    const blob = run(['hash-object', '-w', '--stdin'], '');
    // 20,000 names of 400 characters: about 10 MB by the estimate, over the 8 MiB kept.
    const names = Array.from({ length: 20_000 }, (_, i) => `${String(i).padStart(6, '0')}${'n'.repeat(394)}`);
    const tree = run(['mktree'], names.map((n) => `100644 blob ${blob}\t${n}`).join('\n') + '\n');
    const id = git(repo, 'commit-tree', tree, '-m', 'many long names').trim();
    expect(await new GitTreeSource(repo, id, '').list()).toHaveLength(20_000);
    rmSync(join(repo, '.git', 'objects'), { recursive: true });
    await expect(new GitTreeSource(repo, id, '').list()).rejects.toThrow(/git ls-tree failed/);
  });

  it('refuses roots outside the repository and unknown revisions', async () => {
    const repo = makeRepo();
    expect(() => new GitTreeSource(repo, 'HEAD', '../x')).toThrow(/outside the repository/);
    await expect(validateCatalog(new GitTreeSource(repo, 'no-such-rev', 'catalogs/v1'))).rejects.toThrow(
      /git ls-tree failed/,
    );
  });
});

describe('decoded files shared between loads', () => {
  it('a head loaded with the base decoded files reports exactly what it reports alone', async () => {
    const repo = makeRepo();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    // Head: one file changed (a broken channel), one added, one unchanged.
    writeFileSync(
      join(repo, 'catalogs/v1/foo/catalog.yaml'),
      catalog['catalogs/v1/foo/catalog.yaml'].replace('replaces: foo.v1.0.0', 'replaces: foo.v0.9.0'),
    );
    writeFileSync(
      join(repo, 'catalogs/v1/extra.yaml'),
      'schema: olm.package\nname: extra\ndefaultChannel: x\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'head');
    const decodedFiles = new Map<string, DecodedFile>();
    await validateCatalog(new GitTreeSource(repo, base, 'catalogs/v1'), { decodedFiles });
    const before = decodedFiles.size;
    const shared = await validateCatalog(new GitTreeSource(repo, 'HEAD', 'catalogs/v1'), { decodedFiles });
    const alone = await validateCatalog(new GitTreeSource(repo, 'HEAD', 'catalogs/v1'));
    // Only the changed and the added file were decoded again.
    expect(decodedFiles.size - before).toBe(2);
    expect(shared.diagnostics).toEqual(alone.diagnostics);
    expect(shared.config).toEqual(alone.config);
    expect(shared.stats).toEqual(alone.stats);
    expect(shared.diagnostics.some((d) => d.file === 'foo/catalog.yaml')).toBe(true);
  });
});

describe('GitFiles', () => {
  it('reads many files of several commits through one process, in the order asked', async () => {
    const repo = makeRepo();
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(repo, 'outside.yaml'), 'changed\n');
    git(repo, 'commit', '-qam', 'second');
    await withReader(repo, async (files) => {
      const reads = await Promise.all([
        files.read(first, 'outside.yaml'),
        files.read('HEAD', 'outside.yaml'),
        files.read('HEAD', 'no/such/file'),
        files.read('HEAD', 'catalogs/v1'), // a directory is not a file
        files.read('HEAD', 'catalogs/v1/.indexignore'),
        files.read('0000000000000000000000000000000000000000', 'outside.yaml'),
        files.read('HEAD', 'a file with spaces missing'),
      ]);
      expect(reads).toEqual([
        'schema: olm.package\nname: bar\n',
        'changed\n',
        undefined,
        undefined,
        'README.md\n',
        undefined,
        undefined,
      ]);
    });
  });

  it('refuses a path with a line break, which would ask git for another file', async () => {
    const repo = makeRepo();
    await withReader(repo, async (files) => {
      await expect(files.read('HEAD', 'x\nHEAD:outside.yaml')).rejects.toThrow(/line break/);
      // The reader still works after a refused request.
      expect(await files.read('HEAD', 'outside.yaml')).toBe('schema: olm.package\nname: bar\n');
    });
  });

  it('refuses ./, ../ and over-long paths, which would end or jam the reader for the run', async () => {
    const repo = makeRepo();
    await withReader(repo, async (files) => {
      // git takes ./x and ../x as work-tree paths and exits; a missing 5000-byte name is echoed
      // back on one line longer than the reader takes. Either failed every later read.
      await expect(files.read('HEAD', './outside.yaml')).rejects.toThrow(/no \.\/ or \.\.\//);
      await expect(files.read('HEAD', '../outside.yaml')).rejects.toThrow(/no \.\/ or \.\.\//);
      await expect(files.read('HEAD', `${'d/'.repeat(2500)}x`)).rejects.toThrow(PathTooLongError);
      expect(await files.read('HEAD', 'a/../outside.yaml')).toBeUndefined();
      expect(await files.read('HEAD', 'outside.yaml')).toBe('schema: olm.package\nname: bar\n');
    });
  });

  it('reads a path of up to 4096 bytes (PATH_MAX), and refuses only a longer one', async () => {
    const repo = makeRepo();
    const near = pathOf(4090);
    commitAt(repo, 'long', near, 'deep\n');
    await withReader(repo, async (files) => {
      expect(await files.read('long', near)).toBe('deep\n');
      expect(await files.read('long', pathOf(4096))).toBeUndefined();
      await expect(files.read('long', pathOf(4097))).rejects.toThrow(
        /its path is 4097 bytes, over the 4096-byte limit/,
      );
      expect(await files.read('long', 'outside.yaml')).toBe('schema: olm.package\nname: bar\n');
    });
  });

  it('answers a directory over the file limit as no file, not as an error', async () => {
    const repo = makeRepo();
    const files = new GitFiles(repo, 10);
    try {
      // The tree object of catalogs/v1 is larger than 10 bytes: still "not a file".
      expect(await files.read('HEAD', 'catalogs/v1')).toBeUndefined();
    } finally {
      files.close();
    }
  });

  it('answers a directory of 18 MB where a file is expected as no file, at the default limit', async () => {
    const repo = makeRepo();
    commitTreeAt(repo, 'big', 'OWNERS', 80_000);
    expect(Number(git(repo, 'cat-file', '-s', 'big:OWNERS'))).toBeGreaterThan(16 * 2 ** 20);
    await withReader(repo, async (files) => {
      expect(await files.read('big', 'OWNERS')).toBeUndefined();
      expect(await files.read('big', 'outside.yaml')).toBe('schema: olm.package\nname: bar\n');
    });
  });

  it('fails a file over its limit without holding it, and goes on with the next', async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, 'big.txt'), 'x'.repeat(300_000));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'big');
    const files = new GitFiles(repo, 100_000);
    try {
      const [big, small] = await Promise.allSettled([
        files.read('HEAD', 'big.txt'),
        files.read('HEAD', 'outside.yaml'),
      ]);
      expect(big.status === 'rejected' && String(big.reason)).toMatch(
        /300000 bytes, over the 100000-byte limit/,
      );
      expect(small).toEqual({ status: 'fulfilled', value: 'schema: olm.package\nname: bar\n' });
    } finally {
      files.close();
    }
  });

  it('fails reads with git error text when the repository is not one', async () => {
    const files = new GitFiles(join(makeRepo(), 'no-such-dir'));
    try {
      await expect(files.read('HEAD', 'x')).rejects.toThrow(/git cat-file ended/);
    } finally {
      files.close();
    }
  });
});

describe('a path too long to read', () => {
  it('fails only the check that needs it, naming the path; every other check runs', async () => {
    const repo = makeRepo();
    // Its OWNERS files cannot be looked up: the directory's path is over PATH_MAX.
    const long = pathOf(5000);
    commitAt(repo, 'pr', long, 'hello\n');
    const result = await runPrChecksInProcess({ repo, base: 'main', head: 'pr', author: 'someone' });
    const permissions = result.checks.find((c) => c.name === 'catalog-bot/permissions');
    expect(permissions?.conclusion).toBe('failure');
    expect(permissions?.findings.map((d) => d.rule)).toEqual(['PATH-TOO-LONG']);
    expect(permissions?.findings[0]?.message).toMatch(/over the 4096-byte limit/);
    expect(permissions?.findings[0]?.message).toContain(long.slice(0, 60));
    expect(result.ran?.checks).toEqual(
      expect.arrayContaining(['catalog-bot/validate', 'catalog-bot/upgrade-graph']),
    );
  });
});

describe('a directory where a file is expected', () => {
  it('reads as no file in every check, however large: a package ci.yaml of 18 MB', async () => {
    const repo = makeRepo();
    // operators/foo/ci.yaml is what the templates check reads for a change under operators/foo/.
    commitTreeAt(repo, 'pr', 'operators/foo/ci.yaml', 80_000, { name: 'README.md', text: '# foo\n' });
    expect(git(repo, 'diff', '--name-only', 'main', 'pr').trim()).toBe('operators/foo/README.md');
    const result = await runPrChecksInProcess({ repo, base: 'main', head: 'pr', author: 'someone' });
    expect(result.ran?.checks).toEqual(
      expect.arrayContaining(['catalog-bot/permissions', 'catalog-bot/validate']),
    );
    expect(result.checks.flatMap((c) => c.findings).filter((d) => /limit/.test(d.message))).toEqual([]);
  });
});
