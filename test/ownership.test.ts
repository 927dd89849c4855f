// Packages are identities, not paths (docs/security.md): `catalog-bot check --author` on real
// git repositories, each pull request judged against its own base.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { oneBundlePackageYaml } from './helpers/catalogs.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function git(repo: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

function write(repo: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
}

/** A repository whose `main` holds `files`. */
function repository(files: Record<string, string>): string {
  const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-ownership-'));
  dirs.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  write(repo, files);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  return repo;
}

/** A pull request branch `name` from `from`, made by `edit`; returns its head commit. */
function pullRequest(repo: string, from: string, name: string, edit: (dir: string) => void): string {
  git(repo, 'checkout', '-q', '-b', name, from);
  edit(repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', name);
  return git(repo, 'rev-parse', 'HEAD');
}

interface Permissions {
  conclusion: string;
  title: string;
  findings: { rule: string; message: string; file: string | null; package: string | null }[];
}

/** `catalog-bot check --format json --author <author> [--approver ...]`: the permissions check. */
async function permissions(
  repo: string,
  base: string,
  head: string,
  author: string,
  approvers: string[] = [],
): Promise<Permissions> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const args = ['check', '--repo', repo, '--base', base, '--head', head, '--format', 'json'];
  args.push('--author', author, ...approvers.flatMap((a) => ['--approver', a]));
  await main(args, out, new PassThrough());
  const { checks } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    checks: (Permissions & { name: string })[];
  };
  const check = checks.find((c) => c.name === 'catalog-bot/permissions');
  if (!check) throw new Error('no permissions check');
  return check;
}

/** One package, one channel, one bundle; `extra` lands in the bundle's properties. */
const pkg = (name: string, image: string, extra = ''): string => oneBundlePackageYaml(name, image, extra);

const config = (ownership: string) =>
  `catalogs: [catalogs/*]\nmaintainers: [mia]\nownership:\n  ownersFiles: true\n${ownership}`;

/** fiona owns foo, mallory owns bar. */
const base = {
  '.github/catalog-bot.yml': config('  newPackages: maintainers\n'),
  'catalogs/v4.21/foo/catalog.yaml': pkg('foo', 'quay.io/foo/foo-bundle:v1.0.0'),
  'catalogs/v4.21/foo/OWNERS': 'approvers: [fiona]\n',
  'catalogs/v4.21/bar/catalog.yaml': pkg('bar', 'quay.io/bar/bar-bundle:v1.0.0'),
  'catalogs/v4.21/bar/OWNERS': 'approvers: [mallory]\n',
};

const notApproved = (p: Permissions, what: string) =>
  p.findings.filter((f) => f.rule === 'PERM-NOT-APPROVED' && f.message.startsWith(what));

describe('moving a package does not move its ownership', () => {
  /** PR 1: mallory, who owns only bar, moves foo's catalog file into her directory. */
  const moveFoo = (repo: string): string =>
    pullRequest(repo, 'main', 'move', (dir) => {
      git(dir, 'mv', 'catalogs/v4.21/foo/catalog.yaml', 'catalogs/v4.21/bar/foo.yaml');
    });

  it("needs foo's owners to move foo's file into bar/", async () => {
    const repo = repository(base);
    const moved = moveFoo(repo);
    const move = await permissions(repo, 'main', moved, 'mallory');
    expect(move.conclusion).toBe('failure');
    const [row] = notApproved(move, 'package foo (catalogs/v4.21) is changed');
    expect(row?.message).toMatch(/who may: fiona, mia$/);
    expect(row?.file).toBe('catalogs/v4.21/foo/catalog.yaml');
    expect(await permissions(repo, 'main', moved, 'mallory', ['fiona'])).toMatchObject({
      conclusion: 'success',
    });
  });

  it("needs foo's owners to change foo after its file was moved into bar/", async () => {
    const repo = repository(base);
    // Say the move was merged. PR 2, on top of it: mallory changes foo's image in bar/foo.yaml.
    const moved = moveFoo(repo);
    const imaged = pullRequest(repo, moved, 'image', (dir) => {
      const file = join(dir, 'catalogs/v4.21/bar/foo.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('quay.io/foo/', 'quay.io/mallory/'));
    });
    const image = await permissions(repo, moved, imaged, 'mallory');
    expect(image.conclusion).toBe('failure');
    expect(notApproved(image, 'package foo (catalogs/v4.21) is changed')).toHaveLength(1);
    expect(await permissions(repo, moved, imaged, 'mallory', ['mia'])).toMatchObject({
      conclusion: 'success',
    });
    // The two steps in one pull request are judged the same way.
    expect((await permissions(repo, 'main', imaged, 'mallory')).conclusion).toBe('failure');
  });

  it('takes owners from the packageOwners file by name wherever the head or base puts the package', async () => {
    const repo = repository({
      ...base,
      '.github/catalog-bot.yml': config(
        '  packageOwners: operators/{package}/ci.yaml\n  newPackages: maintainers\n',
      ),
      'catalogs/v4.21/foo/OWNERS': 'approvers: [mallory]\n', // a stale OWNERS: ci.yaml decides
      'operators/foo/ci.yaml': 'reviewers: [fiona]\n',
    });
    const moved = pullRequest(repo, 'main', 'move', (dir) => {
      git(dir, 'mv', 'catalogs/v4.21/foo', 'catalogs/v4.21/bar/foo');
    });
    const move = await permissions(repo, 'main', moved, 'mallory');
    expect(move.conclusion).toBe('failure');
    expect(notApproved(move, 'package foo (catalogs/v4.21) is changed')[0]?.message).toMatch(
      /who may: fiona, mia$/,
    );
    const imaged = pullRequest(repo, moved, 'image', (dir) => {
      const file = join(dir, 'catalogs/v4.21/bar/foo/catalog.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('quay.io/foo/', 'quay.io/mallory/'));
    });
    const image = await permissions(repo, moved, imaged, 'mallory');
    expect(image.conclusion).toBe('failure');
    expect(notApproved(image, 'package foo (catalogs/v4.21) is changed')[0]?.message).toMatch(
      /who may: fiona, mia$/,
    );
    expect(await permissions(repo, moved, imaged, 'mallory', ['fiona'])).toMatchObject({
      conclusion: 'success',
    });
  });

  it('lets the owner split her own file, and counts reformatting within a file as no change', async () => {
    const repo = repository(base);
    const text = base['catalogs/v4.21/foo/catalog.yaml'];
    const split = text.indexOf('---\nschema: olm.bundle');
    const head = pullRequest(repo, 'main', 'split', (dir) => {
      write(dir, {
        'catalogs/v4.21/foo/catalog.yaml': text.slice(0, split),
        'catalogs/v4.21/foo/bundles.yaml': text.slice(split),
      });
    });
    expect(notApproved(await permissions(repo, 'main', head, 'mallory'), 'package foo')).toHaveLength(1);
    expect((await permissions(repo, 'main', head, 'fiona')).conclusion).toBe('success');
    const padded = pullRequest(repo, 'main', 'padded', (dir) => {
      write(dir, { 'catalogs/v4.21/foo/catalog.yaml': `# comment\n\n${text.replace('\n', '\n\n')}` });
    });
    // foo's blobs moved down some lines: nothing to approve for the package.
    expect((await permissions(repo, 'main', padded, 'mallory')).title).toBe('Nothing that needs approval');
  });
});

describe('when a package has several owner sets, each agrees through its own member', () => {
  /** Say the move into bar/ was merged: foo's file sits in mallory's directory, fiona owns foo by name. */
  const moved = {
    '.github/catalog-bot.yml': config('  newPackages: maintainers\n'),
    'catalogs/v4.21/foo/OWNERS': 'approvers: [fiona]\n',
    'catalogs/v4.21/bar/catalog.yaml': pkg('bar', 'quay.io/bar/bar-bundle:v1.0.0'),
    'catalogs/v4.21/bar/foo.yaml': pkg('foo', 'quay.io/foo/foo-bundle:v1.0.0'),
    'catalogs/v4.21/bar/OWNERS': 'approvers: [mallory]\n',
  };
  const newImage = (dir: string) => {
    const file = join(dir, 'catalogs/v4.21/bar/foo.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('quay.io/foo/', 'quay.io/foo2/'));
  };

  it("passes foo's change in bar/ when the owners of both sets agree: author in one, approver in the other", async () => {
    const repo = repository(moved);
    const head = pullRequest(repo, 'main', 'image', newImage);
    expect((await permissions(repo, 'main', head, 'mallory', ['fiona'])).conclusion).toBe('success');
    expect((await permissions(repo, 'main', head, 'fiona', ['mallory'])).conclusion).toBe('success');
    // Two approvers, one in each set.
    expect((await permissions(repo, 'main', head, 'eve', ['fiona', 'mallory'])).conclusion).toBe('success');
    // The author alone is one set: the message says which set still needs whom.
    const alone = await permissions(repo, 'main', head, 'mallory');
    expect(alone.conclusion).toBe('failure');
    expect(notApproved(alone, 'package foo (catalogs/v4.21) is changed')[0]?.message).toMatch(
      /catalogs\/v4\.21\/bar\/OWNERS: agreed by mallory; catalogs\/v4\.21\/foo\/OWNERS: needs one of fiona$/,
    );
    // One set is not enough, and someone in neither approves nothing.
    const half = await permissions(repo, 'main', head, 'eve', ['fiona', 'zed']);
    expect(half.conclusion).toBe('failure');
    expect(notApproved(half, 'package foo (catalogs/v4.21) is changed')[0]?.message).toMatch(
      /bar\/OWNERS: needs one of mallory; catalogs\/v4\.21\/foo\/OWNERS: agreed by fiona$/,
    );
  });

  it('still blocks on a set that names nobody, and takes the sets from the base', async () => {
    const { 'catalogs/v4.21/bar/OWNERS': _bar, ...unowned } = moved;
    const repo = repository(unowned);
    const head = pullRequest(repo, 'main', 'image', newImage);
    const fiona = await permissions(repo, 'main', head, 'fiona', ['zed']);
    expect(fiona.conclusion).toBe('failure');
    expect(notApproved(fiona, 'package foo (catalogs/v4.21) is changed')[0]?.message).toMatch(
      /catalogs\/v4\.21\/bar\/foo\.yaml \(no OWNERS file\): names no owner; catalogs\/v4\.21\/foo\/OWNERS: agreed by fiona$/,
    );
    expect((await permissions(repo, 'main', head, 'fiona', ['mia'])).conclusion).toBe('success');
    // Eve's pull request names her the owner of bar/: the base's owners still decide.
    const claimed = pullRequest(repo, 'main', 'claim', (dir) => {
      newImage(dir);
      write(dir, { 'catalogs/v4.21/bar/OWNERS': 'approvers: [eve]\n' });
    });
    const eve = await permissions(repo, 'main', claimed, 'eve', ['fiona']);
    expect(eve.conclusion).toBe('failure');
    expect(notApproved(eve, 'package foo (catalogs/v4.21) is changed')).toHaveLength(1);
  });
});

describe('a new package is one the base has nowhere and that has no owners', () => {
  const open = config('  packageOwners: operators/{package}/ci.yaml\n  newPackages: anyone\n');

  it("needs foo's owners to plant foo in another catalog root", async () => {
    const repo = repository({
      ...base,
      '.github/catalog-bot.yml': open,
      'catalogs/v4.22/bar/catalog.yaml': pkg('bar', 'quay.io/bar/bar-bundle:v1.0.0'),
    });
    const planted = pullRequest(repo, 'main', 'plant', (dir) => {
      write(dir, { 'catalogs/v4.22/foo/catalog.yaml': pkg('foo', 'quay.io/eve/foo-bundle:v1.0.0') });
    });
    const eve = await permissions(repo, 'main', planted, 'eve');
    expect(eve.conclusion).toBe('failure');
    expect(notApproved(eve, 'package foo (catalogs/v4.22) is added')[0]?.message).toMatch(
      /who may: fiona, mia$/,
    );
    expect((await permissions(repo, 'main', planted, 'fiona')).conclusion).toBe('success');
    // A root the base does not have yet is no different.
    const newRoot = pullRequest(repo, 'main', 'root', (dir) => {
      write(dir, { 'catalogs/v4.23/foo/catalog.yaml': pkg('foo', 'quay.io/eve/foo-bundle:v1.0.0') });
    });
    expect((await permissions(repo, 'main', newRoot, 'eve')).conclusion).toBe('failure');
    // A package nobody has is still anyone's to add.
    const fresh = pullRequest(repo, 'main', 'fresh', (dir) => {
      write(dir, { 'catalogs/v4.22/baz/catalog.yaml': pkg('baz', 'quay.io/eve/baz-bundle:v1.0.0') });
    });
    expect(await permissions(repo, 'main', fresh, 'eve')).toMatchObject({
      conclusion: 'success',
      title: 'Approved: 1 change',
    });
  });

  it('needs the owners named by its packageOwners file or OWNERS directory though no root has it', async () => {
    const repo = repository({
      ...base,
      '.github/catalog-bot.yml': open,
      'operators/qux/ci.yaml': 'reviewers: [quinn]\n',
      'catalogs/v4.21/zed/OWNERS': 'approvers: [zoe]\n',
    });
    const head = pullRequest(repo, 'main', 'plant', (dir) => {
      write(dir, {
        'catalogs/v4.21/eve/qux.yaml': pkg('qux', 'quay.io/eve/qux-bundle:v1.0.0'),
        'catalogs/v4.21/eve/zed.yaml': pkg('zed', 'quay.io/eve/zed-bundle:v1.0.0'),
      });
    });
    const eve = await permissions(repo, 'main', head, 'eve');
    expect(eve.conclusion).toBe('failure');
    expect(notApproved(eve, 'package qux (catalogs/v4.21) is added')[0]?.message).toMatch(
      /who may: quinn, mia$/,
    );
    expect(notApproved(eve, 'package zed (catalogs/v4.21) is added')[0]?.message).toMatch(
      /who may: zoe, mia$/,
    );
    expect((await permissions(repo, 'main', head, 'eve', ['quinn', 'zoe'])).conclusion).toBe('success');
  });
});

describe('change detection ignores only the loader bookkeeping', () => {
  const note = (line: string, pos: string) =>
    `  - type: example.com/note\n    value:\n      line: ${line}\n      pos: {file: ${pos}}\n`;
  const other = (pos: string) =>
    `---\nschema: example.com/notes\npackage: foo\nname: notes\npos: ${pos}\nline: 7\n`;
  const manifest = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}').toString(
    'base64',
  );
  const object = (line: string) =>
    `  - type: olm.bundle.object\n    value:\n      data: ${manifest}\n      line: ${line}\n`;
  const foo = (extra: string, tail = '') => pkg('foo', 'quay.io/foo/foo-bundle:v1.0.0', extra) + tail;

  it.each([
    ['a property value', foo(note('a', 'x')), foo(note('b', 'x'))],
    ['a value nested under pos', foo(note('a', 'x')), foo(note('a', 'y'))],
    ['a blob of another schema', foo('', other('1')), foo('', other('2'))],
    ['an olm.bundle.object value', foo(object('1')), foo(object('2'))],
    ['a bundle key opm does not read', foo('line: 1\n'), foo('line: 2\n')],
  ])('sees an edit to a user key named line or pos in %s', async (_where, before, after) => {
    const repo = repository({ ...base, 'catalogs/v4.21/foo/catalog.yaml': before });
    const head = pullRequest(repo, 'main', 'edit', (dir) => {
      write(dir, { 'catalogs/v4.21/foo/catalog.yaml': after });
    });
    const mallory = await permissions(repo, 'main', head, 'mallory');
    expect(mallory.conclusion).toBe('failure');
    expect(notApproved(mallory, 'package foo (catalogs/v4.21) is changed')).toHaveLength(1);
    expect((await permissions(repo, 'main', head, 'fiona')).conclusion).toBe('success');
  });
});

describe('an approval is recorded against what it approved, by kind', () => {
  it('does not carry an approval of a file named like a package row over to that package', async () => {
    const { runPrChecks } = await import('../src/checks/pr.js');
    const repo = repository(base);
    // mallory adds a file whose path reads like foo's permission row, and mia approves that.
    const h1 = pullRequest(repo, 'main', 'odd-file', (dir) =>
      write(dir, { 'package foo (catalogs/v4.21)': 'notes\n' }),
    );
    const first = await runPrChecks({ repo, base: 'main', head: h1, author: 'mallory' });
    const approvals = [{ login: 'mia', subjects: Object.fromEntries(first.subjects ?? []) }];
    const approved = await runPrChecks({ repo, base: 'main', head: h1, author: 'mallory', approvals });
    expect(approved.checks.find((c) => c.name === 'catalog-bot/permissions')?.conclusion).toBe('success');
    // Then she changes foo's image and leaves the file alone: foo is not approved.
    const h2 = pullRequest(repo, h1, 'odd-file-2', (dir) =>
      write(dir, { 'catalogs/v4.21/foo/catalog.yaml': pkg('foo', 'quay.io/mallory/evil:v1.0.0') }),
    );
    const second = await runPrChecks({ repo, base: 'main', head: h2, author: 'mallory', approvals });
    const check = second.checks.find((c) => c.name === 'catalog-bot/permissions');
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.some((f) => f.rule === 'PERM-NOT-APPROVED' && f.package === 'foo')).toBe(true);
  });
});
