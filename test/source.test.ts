import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, GitTreeSource, validateCatalog } from '../src/catalog/index.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
    encoding: 'utf8',
  });

const catalog = {
  'catalogs/v1/foo/catalog.yaml': `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
`,
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

  it('refuses roots outside the repository and unknown revisions', async () => {
    const repo = makeRepo();
    expect(() => new GitTreeSource(repo, 'HEAD', '../x')).toThrow(/outside the repository/);
    await expect(validateCatalog(new GitTreeSource(repo, 'no-such-rev', 'catalogs/v1'))).rejects.toThrow(
      /git ls-tree failed/,
    );
  });
});
