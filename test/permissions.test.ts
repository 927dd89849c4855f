import { describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../src/catalog/fbc/declcfg.js';
import {
  ancestorDirs,
  OwnersIndex,
  parseOwners,
  parseOwnersAliases,
  parsePackageOwners,
} from '../src/checks/owners.js';
import {
  decidePermissions,
  permissionsCheck,
  type FileReader,
  type OwnershipConfig,
  type PackageChanges,
  type PermissionInput,
  type TeamMembers,
} from '../src/checks/permissions.js';

/** The base commit's files. */
function reader(files: Record<string, string>): FileReader & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    read: (path: string) => {
      reads.push(path);
      return Promise.resolve(files[path]);
    },
  };
}

const teams: TeamMembers = (team) => {
  const all: Record<string, string[]> = { 'acme/catalog-admins': ['Tessa'], 'acme/foo-team': ['fred'] };
  const members = all[team];
  return members ? Promise.resolve(members) : Promise.reject(new Error(`no team ${team}`));
};

/** A catalog holding, for each package, one olm.package blob per listed file (root-relative). */
function catalog(layout: Record<string, string[]>): DeclarativeConfig {
  const config: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (const [name, files] of Object.entries(layout))
    for (const file of files)
      config.packages.push({
        schema: 'olm.package',
        name,
        defaultChannel: 'stable',
        description: '',
        properties: [],
        pos: { file, line: 1, column: 1 },
      });
  return config;
}

const ROOT = 'catalogs/v4.21';
const baseLayout = { foo: ['foo/catalog.yaml'], bar: ['bar/catalog.yaml'] };

function rootChange(
  packages: string[],
  headLayout: Record<string, string[]> = baseLayout,
  layout: Record<string, string[]> = baseLayout,
): PackageChanges {
  return {
    root: ROOT,
    packages: new Set(packages),
    basePackages: new Set(Object.keys(layout)),
    baseConfig: catalog(layout),
    headConfig: catalog(headLayout),
  };
}

const config = (ownership: Partial<OwnershipConfig['ownership']> = {}): OwnershipConfig => ({
  maintainers: ['Mia', 'acme/catalog-admins'],
  ownership: { ownersFiles: true, newPackages: 'maintainers', ...ownership },
});

const repo = {
  OWNERS_ALIASES: 'aliases:\n  foo-owners: [Alice, bob]\n',
  [`${ROOT}/foo/OWNERS`]: 'approvers: [foo-owners]\nreviewers: [rita]\n',
  [`${ROOT}/bar/OWNERS`]: 'approvers: [carol]\n',
};

function input(over: Partial<PermissionInput>): PermissionInput {
  return { author: 'alice', approvers: [], changes: [], otherFiles: [], config: config(), ...over };
}

describe('owners files', () => {
  it('parses approvers, reviewers, options and filters, with normalised logins', () => {
    const { owners, problems } = parseOwners(
      'approvers: [Alice, "@Bob", 1234]\nreviewers: [rita]\noptions:\n  no_parent_owners: yes\n',
      'OWNERS',
    );
    expect(problems).toEqual([]);
    expect(owners).toEqual({
      approvers: ['alice', 'bob', '1234'],
      reviewers: ['rita'],
      noParentOwners: true,
      filters: [],
    });
    const filtered = parseOwners('filters:\n  "\\\\.md$":\n    approvers: [docs]\n', 'OWNERS');
    expect(filtered.owners.filters.map((f) => [f.source, f.approvers])).toEqual([['\\.md$', ['docs']]]);
  });

  it('reports bad YAML with its line and lists nobody', () => {
    const { owners, problems } = parseOwners('approvers:\n  - alice\n bad: [\n', 'x/OWNERS');
    expect(owners.approvers).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ file: 'x/OWNERS', line: expect.any(Number) })]);
    expect(problems[0]?.message).toMatch(/not valid YAML/);
    expect(parseOwners('[a, b]', 'OWNERS').problems[0]?.message).toMatch(/not a YAML mapping/);
    expect(parseOwners('approvers: alice', 'OWNERS').problems[0]?.message).toMatch(/must be a list/);
    expect(parseOwnersAliases('aliases: [x]').problems).toHaveLength(1);
  });

  it('walks directories from the file up to the root', () => {
    expect(ancestorDirs('a/b/c.yaml')).toEqual(['a/b', 'a', '']);
    expect(ancestorDirs('README.md')).toEqual(['']);
  });

  it('stops inheriting after no_parent_owners and applies filters relative to their directory', async () => {
    const index = new OwnersIndex(
      reader({
        OWNERS: 'approvers: [root-admin]\n',
        'a/OWNERS': 'approvers: [a-owner]\n',
        'a/b/OWNERS': 'approvers: [b-owner]\noptions: {no_parent_owners: true}\n',
        'docs/OWNERS':
          'filters:\n  "^guide/.*\\\\.md$":\n    approvers: [writer]\n  ".*":\n    approvers: [docs-lead]\n',
      }),
    );
    expect(await index.approversOf('a/x.yaml')).toEqual({
      approvers: ['a-owner', 'root-admin'],
      files: ['a/OWNERS', 'OWNERS'],
    });
    expect((await index.approversOf('a/b/c/x.yaml')).approvers).toEqual(['b-owner']);
    expect((await index.approversOf('docs/guide/x.md')).approvers.sort()).toEqual([
      'docs-lead',
      'root-admin',
      'writer',
    ]);
    expect((await index.approversOf('docs/x.md')).approvers.sort()).toEqual(['docs-lead', 'root-admin']);
  });

  it('reads a per-package file as OWNERS or as ci.yaml reviewers', () => {
    expect(
      parsePackageOwners('updateGraph: replaces-mode\nreviewers:\n  - Dora\n  - eve\n', 'ci.yaml'),
    ).toEqual({ approvers: ['dora', 'eve'], problems: [] });
    const aliases = new Map([['team', ['x', 'y']]]);
    expect(
      parsePackageOwners('approvers: [team]\nreviewers: [rita]\n', 'op/OWNERS', aliases).approvers,
    ).toEqual(['x', 'y']);
    expect(parsePackageOwners('reviewers: [rita]\n', 'op/OWNERS').approvers).toEqual([]);
  });
});

describe('decidePermissions', () => {
  it('lets an owner change their own package', async () => {
    const result = await decidePermissions(input({ changes: [rootChange(['foo'])] }), reader(repo), teams);
    expect(result).toMatchObject({ satisfied: true, problems: [] });
    expect(result.rows).toEqual([
      {
        what: 'package foo (catalogs/v4.21)',
        change: 'changed',
        mayApprove: ['alice', 'bob', 'mia', 'acme/catalog-admins'],
        satisfiedBy: 'alice',
        package: 'foo',
        root: ROOT,
        file: `${ROOT}/foo/catalog.yaml`,
      },
    ]);
  });

  it("needs B's owners to edit package B inside package A's file", async () => {
    // alice adds a bar blob to foo/catalog.yaml: content says bar changed.
    const head = { foo: ['foo/catalog.yaml'], bar: ['bar/catalog.yaml', 'foo/catalog.yaml'] };
    const result = await decidePermissions(
      input({ changes: [rootChange(['bar'], head)], otherFiles: [`${ROOT}/foo/catalog.yaml`] }),
      reader(repo),
      teams,
    );
    expect(result.satisfied).toBe(false);
    expect(result.rows).toEqual([
      expect.objectContaining({
        what: 'package bar (catalogs/v4.21)',
        mayApprove: ['carol', 'mia', 'acme/catalog-admins'],
        satisfiedBy: null,
      }),
    ]); // foo/catalog.yaml holds blobs: judged by content, not as a file
    const approved = await decidePermissions(
      input({ changes: [rootChange(['bar'], head)], approvers: ['Carol'] }),
      reader(repo),
      teams,
    );
    expect(approved.rows[0]?.satisfiedBy).toBe('Carol');
  });

  it('requires an owner of every base file holding the package', async () => {
    const layout = { foo: ['foo/catalog.yaml'], bar: ['bar/catalog.yaml', 'foo/extra.yaml'] };
    const result = await decidePermissions(
      input({ author: 'carol', changes: [rootChange(['bar'], layout, layout)] }),
      reader(repo),
      teams,
    );
    expect(result.rows[0]).toMatchObject({ mayApprove: ['mia', 'acme/catalog-admins'], satisfiedBy: null });
  });

  it('lets each owner set agree through its own member: the author for hers, an approver for theirs', async () => {
    // bar's blobs sit in bar/ (carol) and in foo/extra.yaml (alice, bob): two owner sets.
    const layout = { foo: ['foo/catalog.yaml'], bar: ['bar/catalog.yaml', 'foo/extra.yaml'] };
    const changes = [rootChange(['bar'], layout, layout)];
    const decide = (author: string, approvers: string[] = [], more: Partial<PermissionInput> = {}) =>
      decidePermissions(input({ author, approvers, changes, ...more }), reader(repo), teams);

    // Author in one set, approver in the other; two approvers, one in each.
    expect(await decide('carol', ['bob'])).toMatchObject({
      satisfied: true,
      rows: [{ satisfiedBy: 'carol' }],
    });
    expect((await decide('zed', ['Carol', 'alice'])).satisfied).toBe(true);
    const carolAlone = await decide('carol');
    expect(carolAlone.satisfied).toBe(false);
    expect(carolAlone.rows[0]?.ownerSets).toEqual([
      { from: `${ROOT}/bar/OWNERS`, owners: ['carol'], agreedBy: 'carol' },
      { from: `${ROOT}/foo/OWNERS`, owners: ['alice', 'bob'], agreedBy: null },
    ]);
    // Someone in no set approves nothing; a reviewer is not an owner.
    expect((await decide('zed', ['carol', 'rita', 'zoe'])).satisfied).toBe(false);
    // An /approve counts for the rows it was given for only.
    const approval = (subject: string) => ({ approvals: [{ login: 'bob', subjects: new Set([subject]) }] });
    expect((await decide('carol', [], approval(`package bar (${ROOT})`))).satisfied).toBe(true);
    expect((await decide('carol', [], approval(`package foo (${ROOT})`))).satisfied).toBe(false);

    // A set that lists nobody never agrees: only a maintainer can approve the row.
    const unowned = { foo: ['foo/catalog.yaml'], bar: ['bar/catalog.yaml', 'misc/bar.yaml'] };
    const nobody = await decidePermissions(
      input({ author: 'carol', approvers: ['alice'], changes: [rootChange(['bar'], unowned, unowned)] }),
      reader(repo),
      teams,
    );
    expect(nobody.satisfied).toBe(false);
    expect(nobody.rows[0]?.ownerSets?.[1]).toEqual({
      from: `${ROOT}/misc/bar.yaml (no OWNERS file)`,
      owners: [],
      agreedBy: null,
    });

    // The check says which set still needs whom.
    const check = permissionsCheck(carolAlone);
    const finding = check.findings.find((f) => f.rule === 'PERM-NOT-APPROVED');
    expect(finding?.message).toBe(
      `package bar (${ROOT}) is changed, and 2 owner sets must each agree (the author or an approver in the set), or a maintainer (mia, acme/catalog-admins); ${ROOT}/bar/OWNERS: agreed by carol; ${ROOT}/foo/OWNERS: needs one of alice, bob`,
    );
    expect(finding?.hint).toBe(`Ask one of alice, bob (${ROOT}/foo/OWNERS) to comment \`/approve\`.`);
    expect(check.summary).toContain(
      `| package bar (${ROOT}) | changed | \`carol\` (${ROOT}/bar/OWNERS) and \`alice\`, \`bob\` (${ROOT}/foo/OWNERS); or \`mia\`, \`acme/catalog-admins\` | **no** |`,
    );
    expect(permissionsCheck(await decide('zed', ['carol', 'bob'])).summary).toContain(
      '| yes, by `carol`, `bob` |',
    );
    expect(permissionsCheck(nobody).findings[0]?.hint).toMatch(
      /^Nobody is listed in catalogs\/v4\.21\/misc\/bar\.yaml \(no OWNERS file\): only a maintainer/,
    );
  });

  it('lets maintainers change anything, as users or through a team', async () => {
    const changes = [rootChange(['foo', 'bar'])];
    const byUser = await decidePermissions(
      input({ author: 'MIA', changes, otherFiles: ['README.md'] }),
      reader(repo),
      teams,
    );
    expect(byUser.satisfied).toBe(true);
    expect(byUser.rows.map((r) => r.satisfiedBy)).toEqual(['MIA', 'MIA', 'MIA']);
    const byTeam = await decidePermissions(input({ author: 'tessa', changes }), reader(repo), teams);
    expect(byTeam.satisfied).toBe(true);
    const teamApproves = await decidePermissions(
      input({ author: 'zed', approvers: ['TESSA'], changes }),
      reader(repo),
      teams,
    );
    expect(teamApproves.rows.map((r) => r.satisfiedBy)).toEqual(['TESSA', 'TESSA']);
  });

  it("accepts another person's /approve from an owner, not from a reviewer", async () => {
    const changes = [rootChange(['foo'])];
    const owner = await decidePermissions(
      input({ author: 'zed', approvers: ['rita', 'bob'], changes }),
      reader(repo),
      teams,
    );
    expect(owner.rows[0]?.satisfiedBy).toBe('bob');
    const reviewer = await decidePermissions(
      input({ author: 'rita', approvers: ['rita'], changes }),
      reader(repo),
      teams,
    );
    expect(reviewer.satisfied).toBe(false);
  });

  it('resolves aliases and inherits OWNERS up to no_parent_owners', async () => {
    const files = {
      ...repo,
      OWNERS: 'approvers: [root-admin]\n',
      [`${ROOT}/bar/OWNERS`]: 'approvers: [carol]\noptions:\n  no_parent_owners: true\n',
    };
    const changes = [rootChange(['foo', 'bar'])];
    const result = await decidePermissions(input({ author: 'root-admin', changes }), reader(files), teams);
    expect(result.rows.map((r) => [r.package, r.satisfiedBy])).toEqual([
      ['bar', null],
      ['foo', 'root-admin'],
    ]);
  });

  it('takes package owners from a ci.yaml reviewers list when present', async () => {
    const files = {
      ...repo,
      'operators/foo/ci.yaml': 'updateGraph: replaces-mode\nreviewers:\n  - Dora\n',
    };
    const ownership = { packageOwners: 'operators/{package}/ci.yaml' };
    const changes = [rootChange(['foo', 'bar'])];
    const result = await decidePermissions(
      input({ author: 'dora', changes, config: config(ownership) }),
      reader(files),
      teams,
    );
    expect(result.rows.map((r) => [r.package, r.mayApprove, r.satisfiedBy])).toEqual([
      ['bar', ['carol', 'mia', 'acme/catalog-admins'], null], // no ci.yaml: OWNERS decide
      ['foo', ['dora', 'mia', 'acme/catalog-admins'], 'dora'], // ci.yaml replaces OWNERS
    ]);
    const alice = await decidePermissions(
      input({ author: 'alice', changes: [rootChange(['foo'])], config: config(ownership) }),
      reader(files),
      teams,
    );
    expect(alice.satisfied).toBe(false);
  });

  it('lets only maintainers add a package unless newPackages is anyone', async () => {
    const head = { ...baseLayout, baz: ['baz/catalog.yaml'] };
    const changes = [rootChange(['baz'], head)];
    const strict = await decidePermissions(input({ author: 'alice', changes }), reader(repo), teams);
    expect(strict.rows).toEqual([
      expect.objectContaining({
        change: 'added',
        mayApprove: ['mia', 'acme/catalog-admins'],
        satisfiedBy: null,
      }),
    ]);
    const open = await decidePermissions(
      input({ author: 'newcomer', changes, config: config({ newPackages: 'anyone' }) }),
      reader(repo),
      teams,
    );
    expect(open.rows).toEqual([
      expect.objectContaining({ change: 'added', mayApprove: ['*'], satisfiedBy: 'newcomer' }),
    ]);
  });

  it("needs the owners to remove a package, judged by the base's files", async () => {
    const changes = [rootChange(['bar'], { foo: ['foo/catalog.yaml'] })];
    const carol = await decidePermissions(input({ author: 'carol', changes }), reader(repo), teams);
    expect(carol.rows).toEqual([expect.objectContaining({ change: 'removed', satisfiedBy: 'carol' })]);
    const alice = await decidePermissions(input({ author: 'alice', changes }), reader(repo), teams);
    expect(alice.satisfied).toBe(false);
  });

  it('judges other files by OWNERS along their path, else by maintainers', async () => {
    const files = { ...repo, 'docs/OWNERS': 'approvers: [writer]\n' };
    const result = await decidePermissions(
      input({
        author: 'writer',
        otherFiles: ['docs/guide.md', { path: 'Makefile', change: 'added' }, `${ROOT}/foo/README.md`],
      }),
      reader(files),
      teams,
    );
    expect(result.rows.map((r) => [r.what, r.change, r.mayApprove, r.satisfiedBy])).toEqual([
      [`${ROOT}/foo/README.md`, 'changed', ['alice', 'bob', 'mia', 'acme/catalog-admins'], null],
      ['docs/guide.md', 'changed', ['writer', 'mia', 'acme/catalog-admins'], 'writer'],
      ['Makefile', 'added', ['mia', 'acme/catalog-admins'], null],
    ]);
    const noOwnersFiles = await decidePermissions(
      input({ author: 'writer', otherFiles: ['docs/guide.md'], config: config({ ownersFiles: false }) }),
      reader(files),
      teams,
    );
    expect(noOwnersFiles.rows[0]).toMatchObject({
      mayApprove: ['mia', 'acme/catalog-admins'],
      satisfiedBy: null,
    });
  });

  it('reports bad YAML in OWNERS as a problem, and the file lists nobody', async () => {
    const files = { ...repo, [`${ROOT}/bar/OWNERS`]: 'approvers: [carol\n' };
    const result = await decidePermissions(
      input({ author: 'carol', changes: [rootChange(['bar'])] }),
      reader(files),
      teams,
    );
    expect(result.satisfied).toBe(false);
    expect(result.problems).toEqual([
      expect.stringMatching(/^catalogs\/v4\.21\/bar\/OWNERS:\d+: not valid YAML/),
    ]);
    expect(result.problemDetails[0]).toMatchObject({ file: `${ROOT}/bar/OWNERS`, line: expect.any(Number) });
  });

  it('reports a team that cannot be listed and counts nobody in it', async () => {
    const cfg = { ...config(), maintainers: ['ghost/team'] };
    const result = await decidePermissions(
      input({ author: 'zed', otherFiles: ['x'], config: cfg }),
      reader({}),
      teams,
    );
    expect(result.satisfied).toBe(false);
    expect(result.problems).toEqual([
      expect.stringContaining('could not list the members of team ghost/team'),
    ]);
  });

  it('compares logins case-insensitively everywhere', async () => {
    const files = { ...repo, [`${ROOT}/bar/OWNERS`]: 'approvers: [CaRoL]\n' };
    const result = await decidePermissions(
      input({ author: 'someone', approvers: ['@CAROL'], changes: [rootChange(['bar'])] }),
      reader(files),
      teams,
    );
    expect(result.rows[0]?.satisfiedBy).toBe('@CAROL');
    const foo = await decidePermissions(
      input({ author: 'ALICE', changes: [rootChange(['foo'])] }),
      reader(repo),
      teams,
    );
    expect(foo.satisfied).toBe(true);
  });

  it('reads owners files only from the reader (the base) and at most once each', async () => {
    const r = reader(repo);
    await decidePermissions(
      input({ changes: [rootChange(['foo'])], otherFiles: [`${ROOT}/foo/README.md`] }),
      r,
      teams,
    );
    expect(new Set(r.reads).size).toBe(r.reads.length);
  });
});

describe('catalog-bot/permissions check', () => {
  it('renders a table of packages and files with who may approve and whether it is satisfied', async () => {
    const files = { ...repo, 'bad/OWNERS': 'approvers: [\n' };
    const result = await decidePermissions(
      input({
        author: 'alice',
        changes: [rootChange(['foo', 'bar'])],
        otherFiles: ['bad/x.txt'],
      }),
      reader(files),
      teams,
    );
    const check = permissionsCheck(result);
    expect(check.name).toBe('catalog-bot/permissions');
    expect(check.conclusion).toBe('failure');
    expect(check.title).toBe('2 of 3 changes need /approve');
    expect(check.summary).toContain('| package or file | change | who may approve | approved |');
    expect(check.summary).toContain(
      '| package bar (catalogs/v4.21) | changed | `carol`, `mia`, `acme/catalog-admins` | **no** |',
    );
    expect(check.summary).toContain(
      '| package foo (catalogs/v4.21) | changed | `alice`, `bob`, `mia`, `acme/catalog-admins` | yes, by `alice` |',
    );
    expect(check.summary).toContain('| bad/x.txt | changed | `mia`, `acme/catalog-admins` | **no** |');
    expect(check.summary).toContain('- bad/OWNERS:');
    expect(check.annotations).toContainEqual(
      expect.objectContaining({
        path: `${ROOT}/bar/catalog.yaml`,
        level: 'failure',
        title: 'PERM-NOT-APPROVED',
      }),
    );
    expect(check.annotations).toContainEqual(
      expect.objectContaining({ path: 'bad/OWNERS', level: 'warning', title: 'PERM-OWNERS-FILE' }),
    );

    const ok = permissionsCheck(
      await decidePermissions(
        input({ author: 'alice', changes: [rootChange([])], config: config({ newPackages: 'anyone' }) }),
        reader(repo),
        teams,
      ),
    );
    expect(ok).toMatchObject({
      conclusion: 'success',
      title: 'Nothing that needs approval',
      annotations: [],
    });
    const added = permissionsCheck(
      await decidePermissions(
        input({
          author: 'newcomer',
          changes: [rootChange(['baz'], { ...baseLayout, baz: ['baz/catalog.yaml'] })],
          config: config({ newPackages: 'anyone' }),
        }),
        reader(repo),
        teams,
      ),
    );
    expect(added.title).toBe('Approved: 1 change');
    expect(added.summary).toContain('| package baz (catalogs/v4.21) | added | anyone | yes, by `newcomer` |');
  });
});
