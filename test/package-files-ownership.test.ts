// A package's own files are its owners' (README "Who may change what", docs/security.md): on a
// repository laid out like community-operators-prod, a package's ci.yaml reviewer changes its
// bundle directories, templates and ci.yaml, and nothing of another package's.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidePermissions, fileSubject, PERMISSIONS_CHECK } from '../src/checks/permissions.js';
import { metadataNamesOnly, packageDirTemplates, packagePlace } from '../src/checks/package-files.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { COP_CONFIG, haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';

const cliJs = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const MAINTAINER = 'allda';
/** jumpstarter-operator's ci.yaml reviewer: an owner of another package. */
const OTHER_OWNER = 'mangelajo';
const OTHER = 'jumpstarter-operator';
const BUNDLE_PR = 'bundle-pr';

let cop: CopRepo;
beforeAll(() => {
  if (!haveRealRepo) return;
  cop = makeCopRepo('clusterpulse/1.0.2');
  // The contributor's pull request: the bundle directory, nothing else.
  cop.branch(BUNDLE_PR);
});
afterAll(() => cop?.cleanup());

interface Permissions {
  conclusion: string;
  title: string;
  findings: { rule: string; message: string; file?: string | null; package?: string | null }[];
}

/** The permissions check of `head` against `base` with `author` (and recorded approvals), in process. */
async function permissions(
  head: string,
  author: string,
  options: { base?: string; approvals?: { login: string; subjects: Record<string, string> }[] } = {},
): Promise<Permissions & { subjects: Map<string, string>; agreed: string[] }> {
  const result = await runPrChecksInProcess({
    repo: cop.repo,
    base: options.base ?? 'main',
    head,
    author,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    only: [PERMISSIONS_CHECK],
  });
  const check = result.checks.find((c) => c.name === PERMISSIONS_CHECK);
  if (!check) throw new Error('no permissions check');
  return { ...check, subjects: result.subjects ?? new Map(), agreed: result.agreed ?? [] };
}

/** Who may approve, as each refused row names them. */
const whoMay = (p: Permissions): string[] => [
  ...new Set(
    p.findings
      .filter((f) => f.rule === 'PERM-NOT-APPROVED')
      .map((f) => f.message.split('who may: ')[1] ?? ''),
  ),
];
const refusedFiles = (p: Permissions): string[] =>
  p.findings.filter((f) => f.rule === 'PERM-NOT-APPROVED').map((f) => f.file ?? '');

const at = (...parts: string[]): string => join(cop.repo, ...parts);

/** Replace `from` by `to` in a file of the work tree (the test's edit of a contributor). */
function edit(path: string, from: string, to: string): void {
  const text = readFileSync(at(path), 'utf8');
  if (!text.includes(from)) throw new Error(`${path} has no ${from}`);
  writeFileSync(at(path), text.replace(from, to));
}

describe.skipIf(!haveRealRepo)("clusterpulse 1.0.2: the package's reviewer owns its files", () => {
  it('passes the bundle pull request checked by the CLI with the reviewer as author', () => {
    const args = ['check', '--repo', cop.repo, '--base', 'main', '--head', BUNDLE_PR, '--format', 'json'];
    const r = spawnSync(process.execPath, [cliJs, ...args, '--author', cop.reviewer], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const { checks } = JSON.parse(r.stdout) as { checks: (Permissions & { name: string })[] };
    const permissions = checks.find((c) => c.name === PERMISSIONS_CHECK);
    expect(permissions?.findings).toEqual([]);
    expect(permissions?.conclusion).toBe('success');
    expect(permissions?.title).toBe('Approved: 14 changes');
  }, 30_000);

  it("names the package's reviewer and the maintainers to anyone else, for each of the bundle's files", async () => {
    const byStranger = await permissions(BUNDLE_PR, 'mallory');
    expect(byStranger.conclusion).toBe('failure');
    expect(byStranger.findings).toHaveLength(14);
    expect(whoMay(byStranger)).toEqual([`${cop.reviewer}, ${MAINTAINER}`]);
    expect(byStranger.findings.every((f) => f.package === 'clusterpulse')).toBe(true);
    expect(byStranger.findings[0]?.message).toMatch(
      /^operators\/clusterpulse\/1\.0\.2\/\S+ is added, a file of package clusterpulse,/,
    );
    // The login's case does not matter (GitHub's logins do not have one).
    expect((await permissions(BUNDLE_PR, 'AsaMooreRH')).conclusion).toBe('success');
  }, 30_000);

  it("decides the bundle's files by the base ci.yaml and the bundle's own metadata (the decision alone)", async () => {
    const files = cop.git('diff', '--name-only', 'main', BUNDLE_PR).split('\n');
    const show = (rev: string, path: string): string | undefined => {
      const r = spawnSync('git', ['-C', cop.repo, 'show', `${rev}:${path}`], { encoding: 'utf8' });
      return r.status === 0 ? r.stdout : undefined;
    };
    const metadata = (rev: string) => ({
      files: new Map([
        ['annotations.yaml', Buffer.from(show(rev, `${cop.bundleDir}/metadata/annotations.yaml`) ?? '')],
      ]),
      bytes: 1,
      unreadable: [],
    });
    const decide = (author: string, base = 'main') =>
      decidePermissions(
        {
          author,
          approvers: [],
          changes: [],
          otherFiles: files,
          config: {
            maintainers: [MAINTAINER],
            ownership: {
              ownersFiles: true,
              packageOwners: 'operators/{package}/ci.yaml',
              newPackages: 'maintainers',
            },
          },
          packageFiles: {
            bundlesPath: 'operators/{package}/{version}',
            bundleNames: (dir, pkg) => Promise.resolve(metadataNamesOnly(metadata(BUNDLE_PR), pkg)),
            notRegular: new Set(),
            baseHas: (dir) => Promise.resolve(show(base, dir) !== undefined),
          },
        },
        { read: (path) => Promise.resolve(show(base, path)) },
        () => Promise.resolve([]),
      );
    const byReviewer = await decide('AsaMooreRH');
    expect(byReviewer.satisfied).toBe(true);
    expect(byReviewer.rows.map((r) => [r.what, r.filesOf, r.satisfiedBy])).toEqual(
      files.map((f) => [f, 'clusterpulse', 'AsaMooreRH']),
    );
    // A base ci.yaml that lists no reviewer: only the maintainers may approve.
    cop.branch(
      'no-reviewers',
      () => edit('operators/clusterpulse/ci.yaml', `reviewers:\n  - ${cop.reviewer}\n`, ''),
      false,
    );
    const unlisted = await decide(cop.reviewer, 'no-reviewers');
    expect(unlisted.satisfied).toBe(false);
    expect(new Set(unlisted.rows.map((r) => r.mayApprove.join()))).toEqual(new Set([MAINTAINER]));
  });

  it('passes the release pull request (bundle, template, five catalogs) for the reviewer only', async () => {
    const head = cop.branch('release-pr', () => cop.applyRelease());
    const changed = cop.git('diff', '--name-only', 'main', head).split('\n');
    expect(changed.filter((f) => f.startsWith('catalogs/'))).toHaveLength(5);
    expect(changed).toContain('operators/clusterpulse/catalog-templates/semver.yaml');
    const byReviewer = await permissions(head, cop.reviewer);
    expect(byReviewer.findings).toEqual([]);
    expect(byReviewer.conclusion).toBe('success');
    const byOther = await permissions(head, OTHER_OWNER);
    expect(byOther.conclusion).toBe('failure');
    // The five catalogs by content, the template and the bundle by place: all clusterpulse's.
    expect(byOther.findings.filter((f) => f.rule === 'PERM-NOT-APPROVED')).toHaveLength(5 + 1 + 14);
    expect(whoMay(byOther)).toEqual([`${cop.reviewer}, ${MAINTAINER}`]);
  });
});

describe.skipIf(!haveRealRepo)("attacks: nobody gets another package's files through their own", () => {
  it("refuses a bundle in clusterpulse/ whose metadata names another package, to both packages' owners", async () => {
    const named = cop.branch('names-other', () =>
      edit(`${cop.bundleDir}/metadata/annotations.yaml`, 'package.v1: clusterpulse', `package.v1: ${OTHER}`),
    );
    // annotations.yaml is right, but another metadata file (opm reads the first) names the other package.
    const hidden = cop.branch('hidden-metadata', () =>
      writeFileSync(
        at(cop.bundleDir, 'metadata', '0-annotations.yaml'),
        `annotations:\n  operators.operatorframework.io.bundle.package.v1: ${OTHER}\n`,
      ),
    );
    for (const head of [named, hidden])
      for (const author of [cop.reviewer, OTHER_OWNER]) {
        const p = await permissions(head, author);
        expect(p.conclusion, `${head} by ${author}`).toBe('failure');
        expect(whoMay(p)).toEqual([MAINTAINER]);
      }
    expect((await permissions(named, MAINTAINER)).conclusion).toBe('success');
    // The same bundle naming its own package is the reviewer's.
    expect((await permissions(BUNDLE_PR, cop.reviewer)).conclusion).toBe('success');
  });

  it("refuses the reviewer's edit of another package's files, its ci.yaml reviewers above all", async () => {
    const makefile = cop.branch(
      'other-makefile',
      () => appendFileSync(at('operators', OTHER, 'Makefile'), '\n# touched\n'),
      false,
    );
    const selfAdded = cop.branch(
      'other-ci',
      () => edit(`operators/${OTHER}/ci.yaml`, 'reviewers:\n', `reviewers:\n  - ${cop.reviewer}\n`),
      false,
    );
    for (const head of [makefile, selfAdded]) {
      const p = await permissions(head, cop.reviewer);
      expect(p.conclusion).toBe('failure');
      expect(whoMay(p)).toEqual([`${OTHER_OWNER}, bkhizgiy, kirkbrauer, bennyz, ${MAINTAINER}`]);
      expect((await permissions(head, OTHER_OWNER)).conclusion).toBe('success');
    }
  });

  it("lets a reviewer listed in the base change the package's reviewers, and nobody add themselves", async () => {
    const byOwner = cop.branch(
      'own-ci',
      () => edit('operators/clusterpulse/ci.yaml', 'reviewers:\n', 'reviewers:\n  - colleague\n'),
      false,
    );
    expect((await permissions(byOwner, cop.reviewer)).conclusion).toBe('success');
    // The newly listed reviewer is not an owner yet: the base decides.
    expect((await permissions(byOwner, 'colleague')).conclusion).toBe('failure');
    const selfAdded = cop.branch('mallory-ci', () =>
      edit('operators/clusterpulse/ci.yaml', 'reviewers:\n', 'reviewers:\n  - mallory\n'),
    );
    const p = await permissions(selfAdded, 'mallory');
    expect(p.conclusion).toBe('failure');
    expect(refusedFiles(p)).toContain('operators/clusterpulse/ci.yaml');
    expect(whoMay(p)).toEqual([`${cop.reviewer}, ${MAINTAINER}`]);
  });

  it('lets a new package directory follow newPackages, but not one the base has under another case or in its catalogs', async () => {
    const newPackage = (): void => {
      cpSync(at('operators', 'clusterpulse', '1.0.1'), at('operators', 'newpkg', '0.1.0'), {
        recursive: true,
      });
      edit(
        'operators/newpkg/0.1.0/metadata/annotations.yaml',
        'package.v1: clusterpulse',
        'package.v1: newpkg',
      );
      writeFileSync(at('operators', 'newpkg', 'ci.yaml'), 'reviewers:\n  - mallory\n');
    };
    const strict = cop.branch('new-package', newPackage, false);
    const p = await permissions(strict, 'mallory');
    expect(p.conclusion).toBe('failure');
    expect(whoMay(p)).toEqual([MAINTAINER]);

    const anyone = cop.branch(
      'base-anyone',
      () =>
        writeFileSync(
          at('.github', 'catalog-bot.yml'),
          COP_CONFIG.replace('newPackages: maintainers', 'newPackages: anyone'),
        ),
      false,
    );
    const open = cop.branch('new-package-anyone', newPackage, false, anyone);
    expect((await permissions(open, 'mallory', { base: anyone })).conclusion).toBe('success');

    // The same directory spelled with another case is the existing package's on a checkout
    // that folds case: it is nobody's new package.
    const folded = cop.branch(
      'folded-case',
      () => cpSync(at('operators', 'newpkg'), at('operators', 'ClusterPulse'), { recursive: true }),
      false,
      open,
    );
    const byCase = await permissions(folded, 'mallory', { base: open });
    expect(byCase.conclusion).toBe('failure');
    expect(refusedFiles(byCase).every((f) => f.startsWith('operators/ClusterPulse/'))).toBe(true);

    // A package the base's catalogs hold but whose directory is gone: not new, its owners'.
    const gone = cop.branch(
      'base-anyone-gone',
      () => rmSync(at('operators', OTHER), { recursive: true }),
      false,
      anyone,
    );
    const claim = cop.branch(
      'claim-gone',
      () => {
        cpSync(at('operators', 'clusterpulse', '1.0.1'), at('operators', OTHER, '9.9.9'), {
          recursive: true,
        });
        edit(
          `operators/${OTHER}/9.9.9/metadata/annotations.yaml`,
          'package.v1: clusterpulse',
          `package.v1: ${OTHER}`,
        );
        writeFileSync(at('operators', OTHER, 'ci.yaml'), 'reviewers:\n  - mallory\n');
      },
      false,
      gone,
    );
    const claimed = await permissions(claim, 'mallory', { base: gone });
    expect(claimed.conclusion).toBe('failure');
    expect(whoMay(claimed)).toEqual([MAINTAINER]);
  });

  it('refuses a symlink in the package directory and a path that climbs out of it', async () => {
    const link = cop.branch(
      'symlink',
      () =>
        symlinkSync(
          `../../${OTHER}/ci.yaml`,
          at('operators', 'clusterpulse', 'catalog-templates', 'link.yaml'),
        ),
      false,
    );
    const p = await permissions(link, cop.reviewer);
    expect(p.conclusion).toBe('failure');
    expect(refusedFiles(p)).toEqual(['operators/clusterpulse/catalog-templates/link.yaml']);
    expect(whoMay(p)).toEqual([MAINTAINER]);
    // A regular file in its place is the reviewer's.
    const plain = cop.branch(
      'plain-file',
      () =>
        writeFileSync(
          at('operators', 'clusterpulse', 'catalog-templates', 'link.yaml'),
          'schema: olm.semver\n',
        ),
      false,
    );
    expect((await permissions(plain, cop.reviewer)).conclusion).toBe('success');

    const layout = {
      bundlesPath: 'operators/{package}/{version}',
      packageOwners: 'operators/{package}/ci.yaml',
    };
    expect(packagePlace(`operators/clusterpulse/../${OTHER}/ci.yaml`, layout)).toBeUndefined();
    expect(packagePlace('operators/clusterpulse/./ci.yaml', layout)).toBeUndefined();
    expect(packagePlace('operators/.github/x', layout)).toBeUndefined();
    expect(packagePlace('operators/clusterpulse/ci.yaml', layout)).toEqual({
      package: 'clusterpulse',
      dir: 'operators/clusterpulse',
    });
  });

  it("keeps per-part approvals: another package's owner approves their file, and a later push voids it", async () => {
    const both = cop.branch('both', () => appendFileSync(at('operators', OTHER, 'Makefile'), '\n# both\n'));
    const refused = await permissions(both, cop.reviewer);
    expect(refusedFiles(refused)).toEqual([`operators/${OTHER}/Makefile`]);
    // What the App records for the other owner's /approve: the rows they agree to, with digests.
    const asOther = await permissions(both, OTHER_OWNER);
    const makefile = fileSubject(`operators/${OTHER}/Makefile`);
    expect(asOther.agreed).toEqual([makefile]);
    const approvals = [{ login: OTHER_OWNER, subjects: { [makefile]: asOther.subjects.get(makefile)! } }];
    expect((await permissions(both, cop.reviewer, { approvals })).conclusion).toBe('success');
    const pushed = cop.branch(
      'both-pushed',
      () => appendFileSync(at('operators', OTHER, 'Makefile'), '# more\n'),
      false,
      both,
    );
    expect((await permissions(pushed, cop.reviewer, { approvals })).conclusion).toBe('failure');
  });
});

describe("where a package's files are comes from the base's config, not from a fixed directory", () => {
  it('takes the package directory from bundles.path and packageOwners', () => {
    const layout = {
      bundlesPath: 'packages/{package}/bundles/{version}',
      packageOwners: 'packages/{package}/OWNERS',
    };
    expect(packageDirTemplates(layout)).toEqual(['packages/{package}']);
    expect(packagePlace('packages/foo/templates/basic.yaml', layout)).toEqual({
      package: 'foo',
      dir: 'packages/foo',
    });
    expect(packagePlace('packages/foo/bundles/1.0.0/manifests/csv.yaml', layout)).toEqual({
      package: 'foo',
      dir: 'packages/foo',
      bundleDir: 'packages/foo/bundles/1.0.0',
    });
    // The community-operators-prod directory means nothing in this repository.
    expect(packagePlace('operators/foo/ci.yaml', layout)).toBeUndefined();
    // An owners file outside any directory of the package is still the package's.
    const flat = { bundlesPath: 'bundles/{package}-{version}', packageOwners: 'owners/{package}.yaml' };
    expect(packageDirTemplates(flat)).toEqual([]);
    expect(packagePlace('owners/foo.yaml', flat)).toEqual({ package: 'foo' });
    expect(packagePlace('owners/.foo.yaml', flat)).toBeUndefined();
  });

  it('reads the package a bundle names as opm does: any metadata file, JSON too, and refuses what it cannot read', () => {
    const meta = (files: Record<string, string>, unreadable: string[] = []) => ({
      files: new Map(Object.entries(files).map(([k, v]) => [k, Buffer.from(v)])),
      bytes: 1,
      unreadable: unreadable.map((path) => ({ path, problem: 'symlink out of the directory' })),
    });
    const names = (pkg: string) =>
      `annotations:\n  operators.operatorframework.io.bundle.package.v1: ${pkg}\n`;
    expect(metadataNamesOnly(meta({ 'annotations.yaml': names('foo') }), 'foo')).toBe(true);
    expect(metadataNamesOnly(meta({ 'annotations.yaml': names('bar') }), 'foo')).toBe(false);
    expect(
      metadataNamesOnly(
        meta({
          'annotations.yaml': names('foo'),
          'a.json': '{"annotations": {"operators.operatorframework.io.bundle.package.v1": "bar"}}',
        }),
        'foo',
      ),
    ).toBe(false);
    expect(metadataNamesOnly(meta({ 'other.yaml': names('foo') }), 'foo')).toBe(false);
    expect(metadataNamesOnly(meta({ 'annotations.yaml': names('foo') }, ['link.yaml']), 'foo')).toBe(false);
  });
});
