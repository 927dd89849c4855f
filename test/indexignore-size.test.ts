// A huge .indexignore or symlink target is refused unread: its bytes would be Buffer memory,
// which the check worker's heap cap does not bound (docs/security.md).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorySource, GitTreeSource, type CatalogSource } from '../src/catalog/index.js';
import { MAX_INDEX_IGNORE_SIZE } from '../src/catalog/fbc/indexignore.js';
import { MAX_SYMLINK_TARGET_BYTES } from '../src/catalog/fbc/source.js';
import { loadCatalog, type LoadResult } from '../src/catalog/fbc/load.js';
import { git } from './helpers/git.js';
import { tempTrees } from './helpers/oracle.js';

/** git in `repo` reading `input` on its stdin (hash-object, mktree); its stdout, trimmed. */
const gitWithInput = (repo: string, input: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, ...args], { input })
    .toString()
    .trim();

const MiB = 1024 * 1024;
const BIG = 50 * MiB;
const IGNORE_DIRS = ['', 'a', 'b', 'c'];

const catalog = {
  'foo/catalog.yaml': 'schema: olm.package\nname: foo\n',
  'docs/.indexignore': 'README.md\n',
  'docs/README.md': '# not FBC\n',
};

const trees = tempTrees();

/** A plausible .indexignore of `size` bytes: distinct per file (git would store one blob otherwise). */
function writeIgnore(path: string, size: number, tag: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const head = `# ${tag}\n`;
  writeFileSync(path, head);
  const line = 'some/generated/path/to/ignore.md\n';
  const chunk = line.repeat(Math.ceil(MiB / line.length));
  let left = size - head.length;
  while (left > 0) {
    const part = chunk.slice(0, Math.min(left, chunk.length));
    appendFileSync(path, part);
    left -= part.length;
  }
}

function bigIgnoreTree(): string {
  const dir = trees.write(catalog);
  for (const d of IGNORE_DIRS) writeIgnore(join(dir, d, '.indexignore'), BIG, d);
  return dir;
}

function commit(repo: string): void {
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'catalog');
}

/** Run `fn` and sample the process's ArrayBuffer (Buffer) memory meanwhile; the peak growth. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; growth: number }> {
  global.gc?.();
  const base = process.memoryUsage().arrayBuffers;
  let peak = base;
  const sample = (): void => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
  };
  const timer = setInterval(sample, 1);
  try {
    const value = await fn();
    sample();
    return { value, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

async function loadMeasured(source: CatalogSource): Promise<{ result: LoadResult; growth: number }> {
  const { value, growth } = await measured(() => loadCatalog(source));
  return { result: value, growth };
}

function expectRefused(result: LoadResult): void {
  const refused = result.diagnostics.filter((d) => d.rule === 'L-INDEXIGNORE');
  expect(refused.map((d) => d.file).sort()).toEqual(
    IGNORE_DIRS.map((d) => (d === '' ? '' : d + '/') + '.indexignore').sort(),
  );
  for (const d of refused) {
    expect(d.level).toBe('error');
    expect(d.message).toBe(
      `file is ${BIG} bytes, over the bot's ${MAX_INDEX_IGNORE_SIZE}-byte (1 MiB) limit for .indexignore; not read`,
    );
  }
  // The small .indexignore still applies: docs/README.md is not read as FBC.
  expect(result.diagnostics.filter((d) => d.file === 'docs/README.md')).toEqual([]);
  expect(result.config.packages.map((p) => p.name)).toEqual(['foo']);
}

describe('.indexignore size cap', () => {
  it('a git commit with several 50 MB .indexignore files fails L-INDEXIGNORE naming the limit, without reading them', async () => {
    const repo = bigIgnoreTree();
    commit(repo);
    const { result, growth } = await loadMeasured(new GitTreeSource(repo, 'HEAD', ''));
    // Reading them would take their total (200 MB) at least once.
    expect(growth).toBeLessThan((IGNORE_DIRS.length * BIG) / 10);
    expectRefused(result);
  }, 120_000);

  it('a directory with several 50 MB .indexignore files fails L-INDEXIGNORE naming the limit, without reading them', async () => {
    const dir = bigIgnoreTree();
    const { result, growth } = await loadMeasured(new DirectorySource(dir));
    expect(growth).toBeLessThan((IGNORE_DIRS.length * BIG) / 10);
    expectRefused(result);
  }, 120_000);

  it('an .indexignore of exactly the limit is read and applies; one byte more is refused', async () => {
    for (const [size, refused] of [
      [MAX_INDEX_IGNORE_SIZE, false],
      [MAX_INDEX_IGNORE_SIZE + 1, true],
    ] as const) {
      const repo = trees.write({ ...catalog, 'README.md': '# not FBC\n' });
      // README.md, then comment lines up to the size.
      const filler = size - 'README.md\n'.length;
      const text =
        'README.md\n' +
        ('#'.repeat(63) + '\n').repeat(Math.floor(filler / 64)) +
        '#'.repeat((filler % 64) - 1) +
        '\n';
      expect(text.length).toBe(size);
      writeFileSync(join(repo, '.indexignore'), text);
      commit(repo);
      for (const source of [new DirectorySource(repo), new GitTreeSource(repo, 'HEAD', '')]) {
        const { diagnostics } = await loadCatalog(source);
        const ignoreProblems = diagnostics.filter((d) => d.rule === 'L-INDEXIGNORE');
        const readmeProblems = diagnostics.filter((d) => d.file === 'README.md');
        if (refused) {
          expect(ignoreProblems.map((d) => d.message)).toEqual([
            `file is ${size} bytes, over the bot's ${MAX_INDEX_IGNORE_SIZE}-byte (1 MiB) limit for .indexignore; not read`,
          ]);
          // Unread, it ignores nothing: README.md is read and fails as opm would not.
          expect(readmeProblems.length).toBeGreaterThan(0);
        } else {
          expect(ignoreProblems).toEqual([]);
          expect(readmeProblems).toEqual([]);
        }
      }
    }
  }, 60_000);
});

describe('a directory file that grows after it was listed', () => {
  it('is read up to its listed size only: one that grew fails, never read whole', async () => {
    const dir = trees.write({ ...catalog, '.indexignore': 'README.md\n', 'README.md': '# not FBC\n' });
    const inner = new DirectorySource(dir);
    // Listed at 10 bytes, then grown to 50 MB before the loader reads it (a race a writer
    // to the directory could win).
    const racing: CatalogSource = {
      label: inner.label,
      list: async () => {
        const entries = await inner.list();
        writeIgnore(join(dir, '.indexignore'), BIG, 'grown');
        return entries;
      },
      read: (paths) => inner.read(paths),
    };
    const { result, growth } = await loadMeasured(racing);
    expect(growth).toBeLessThan(BIG / 10);
    expect(result.diagnostics.filter((d) => d.rule === 'L-INDEXIGNORE').map((d) => d.message)).toEqual([
      'read .indexignore: file grew while being read (was 10 bytes)',
    ]);
  }, 60_000);
});

describe('symlink target cap', () => {
  it('a git symlink whose target is over 4096 bytes fails L-FS unread, even a 50 MB one', async () => {
    const repo = trees.write(catalog);
    commit(repo);
    for (const [name, size] of [
      ['long.yaml', 4097],
      ['huge.yaml', BIG],
    ] as const) {
      const file = join(repo, `${name}.target`);
      writeIgnore(file, size, name);
      const blob = git(repo, 'hash-object', '-w', file);
      git(repo, 'update-index', '--add', '--cacheinfo', `120000,${blob},${name}`);
    }
    git(repo, 'commit', '-qm', 'links');
    const { result, growth } = await loadMeasured(new GitTreeSource(repo, 'HEAD', ''));
    expect(growth).toBeLessThan(BIG / 10);
    const fs = result.diagnostics.filter((d) => d.rule === 'L-FS');
    expect(fs.map((d) => [d.file, d.message])).toEqual([
      ['huge.yaml', `symlink target is ${BIG} bytes, over the 4096-byte limit (PATH_MAX); not followed`],
      ['long.yaml', 'symlink target is 4097 bytes, over the 4096-byte limit (PATH_MAX); not followed'],
    ]);
  }, 60_000);
});

describe('symlink targets of a listing', () => {
  it('reads at most 1 MiB of symlink targets per tree: links past it fail L-FS unread', async () => {
    const repo = trees.dir();
    git(repo, 'init', '-q', '-b', 'main');
    // 600 links with distinct 4000-byte targets (2.4 MB), written with one git process.
    const count = 600;
    const targets = Array.from({ length: count }, (_, i) => join(repo, `target-${i}`));
    targets.forEach((file, i) => writeFileSync(file, `${'A'.repeat(3990)}${String(i).padStart(10, '0')}`));
    const blobs = gitWithInput(repo, targets.join('\n') + '\n', 'hash-object', '-w', '--stdin-paths').split(
      '\n',
    );
    const lines = blobs
      .map((blob, i) => `120000 blob ${blob}\tlink-${String(i).padStart(4, '0')}.yaml\n`)
      .join('');
    const tree = gitWithInput(repo, lines, 'mktree');
    const head = git(repo, 'commit-tree', tree, '-m', 'links');
    const result = await loadCatalog(new GitTreeSource(repo, head, ''));
    const unread = result.diagnostics.filter(
      (d) => d.rule === 'L-FS' && d.message.includes(`over the ${MAX_SYMLINK_TARGET_BYTES}-byte limit`),
    );
    expect(unread).toHaveLength(count - Math.floor(MAX_SYMLINK_TARGET_BYTES / 4000));
    // The others were read (their targets point at nothing) and fail too.
    expect(result.diagnostics.filter((d) => d.rule === 'L-FS')).toHaveLength(count);
  }, 60_000);
});

describe('tree listing', () => {
  it('a commit with 100,000 files is listed as git prints it, never as one Buffer of the whole listing', async () => {
    const repo = trees.dir();
    git(repo, 'init', '-q', '-b', 'main');
    const empty = gitWithInput(repo, '', 'hash-object', '-w', '--stdin');
    const count = 100_000;
    const lines = Array.from(
      { length: count },
      (_, i) => `100644 blob ${empty}\tgenerated-file-${String(i).padStart(6, '0')}.yaml\n`,
    ).join('');
    const tree = gitWithInput(repo, lines, 'mktree');
    const head = git(repo, 'commit-tree', tree, '-m', 'many files');
    // The loader's first step: list the files (with their sizes, for the caps).
    const { value: entries, growth } = await measured(() => new GitTreeSource(repo, head, '').list());
    // `git ls-tree -r -l` prints about 100 bytes a file: 10 MB held at once (twice) before.
    // Streamed, what is held is the socket's chunks not yet collected: about 0.2 MiB on a
    // quiet machine, once 1.4 MiB in a loaded CI run.
    expect(growth).toBeLessThan(3 * MiB);
    expect(entries.length).toBe(count);
    expect(entries[count - 1]).toEqual({ path: 'generated-file-099999.yaml', kind: 'file', size: 0 });
  }, 120_000);
});
