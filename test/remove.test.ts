// `catalog-bot remove` on community-operators-prod's real FBC packages
// (test/helpers/cop-repo.ts), a git repository in a temp dir, run through the CLI's
// dispatcher: what is removed, what stays byte for byte, what the report says clusters lose
// (derived here from the files, not from the command), the refusals and the attacks. The
// re-rendered catalogs against the real opm, and semver templates: remove-render.test.ts;
// packages on the bundle index: remove-index.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageDirOf, parseRemovalTarget, planRemoval } from '../src/catalog/edits/remove.js';
import { catalogRootsOf, workingTree } from '../src/commands/working-tree.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { removeTree, writeTree } from './helpers/oracle.js';
import { blobsOf, currentFiles, expectValidCatalogs, remove, trackedFiles } from './helpers/removal.js';

describe.skipIf(!haveRealRepo)('remove on file-based catalogs', () => {
  let cop: CopRepo;
  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
  });
  afterAll(() => cop?.cleanup());

  it('removes a package: its catalog directories and operators/<pkg>/ go, every other file stays byte for byte, every catalog root stays valid', async () => {
    cop.reset();
    const pkg = 'jumpstarter-operator';
    const before = trackedFiles(cop.git);
    const catalogRoots = readdirSync(join(cop.repo, 'catalogs')).map((v) => `catalogs/${v}`);
    const holding = catalogRoots.filter((r) => existsSync(join(cop.repo, r, pkg)));
    expect(holding.length).toBeGreaterThan(0);
    const r = await remove([pkg, '--repo', cop.repo, '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    const after = currentFiles(cop.git);
    const gone = (p: string) =>
      p.startsWith(`operators/${pkg}/`) || holding.some((h) => p.startsWith(`${h}/${pkg}/`));
    for (const [path, blob] of before) {
      if (gone(path)) expect(after.has(path), path).toBe(false);
      else expect(after.get(path), path).toBe(blob);
    }
    expect([...after.keys()].filter((p) => !before.has(p))).toEqual([]);
    const report = JSON.parse(r.out);
    expect(report.package).toBe(pkg);
    expect(report.bundle).toBeNull();
    expect(report.mode).toBe('fbc');
    expect([...report.removed].sort()).toEqual(
      [...holding.map((h) => `${h}/${pkg}`), `operators/${pkg}`].sort(),
    );
    // What each catalog loses, read from the committed catalog.
    for (const root of holding) {
      const blobs = blobsOf(cop.git('show', `main:${root}/${pkg}/catalog.yaml`));
      const loss = report.catalogs[root.split('/')[1]!];
      expect(loss.bundlesRemoved).toEqual(
        blobs
          .filter((b) => b.schema === 'olm.bundle')
          .map((b) => b.name)
          .sort(),
      );
      expect(loss.channelsRemoved).toEqual(
        blobs
          .filter((b) => b.schema === 'olm.channel')
          .map((b) => b.name)
          .sort(),
      );
      expect(loss.defaultChannelRemoved).toBe(blobs.find((b) => b.schema === 'olm.package')!.defaultChannel);
    }
    expect(report.allowPrune).toContain(`/allow-prune ${pkg}.v0.9.0`);
    await expectValidCatalogs(catalogRoots.map((r) => join(cop.repo, r)));
  });

  it('removes one bundle: the templates lose exactly its entries (comments kept), the catalogs are re-rendered and the report names the dangling edges', async () => {
    cop.reset();
    const pkg = 'visionone-containersecurity';
    const templatePath = join(cop.repo, `operators/${pkg}/catalog-templates/basic.yaml`);
    // A maintainer's comments, above and inside the entries that change.
    const original = readFileSync(templatePath, 'utf8')
      .replace(
        '- schema: olm.channel\n  name: alpha',
        '# the alpha channel keeps every release\n- schema: olm.channel\n  name: alpha',
      )
      .replace(
        `  - name: ${pkg}.v0.0.2\n    replaces: ${pkg}.v0.0.1`,
        `  # first GA build\n  - name: ${pkg}.v0.0.2\n    replaces: ${pkg}.v0.0.1`,
      );
    expect(original).toContain('# first GA build');
    writeFileSync(templatePath, original);
    cop.git('commit', '-qam', 'comments');
    const name = `${pkg}.v0.0.1`;
    const r = await remove([`${pkg}/0.0.1`, '--repo', cop.repo, '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(cop.repo, `operators/${pkg}/0.0.1`))).toBe(false);
    // The template: only the lines of the removed entries go, in order; the rest is the same text.
    const edited = readFileSync(templatePath, 'utf8');
    const gone = original.split('\n').filter((l) => !edited.split('\n').includes(l) || false);
    const diff = spawnSync('git', ['-C', cop.repo, 'diff', '-U0', '--', templatePath], {
      encoding: 'utf8',
    }).stdout;
    const minus = diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---'));
    const plus = diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    expect(plus).toEqual([]);
    // Entries that named the bundle: its channel entry and its image entry (two lines: key and wrapped value).
    const template = parseYaml(original) as {
      entries: { schema: string; name?: string; image?: string; entries?: { name: string }[] }[];
    };
    const channelEntries = template.entries.filter(
      (e) => e.schema === 'olm.channel' && e.entries!.some((x) => x.name === name),
    ).length;
    expect(minus).toEqual([
      `-  - name: ${name}`.repeat(1),
      ...Array(channelEntries - 1).fill(`-  - name: ${name}`),
      '-- schema: olm.bundle',
      '-  image: ',
      `-    quay.io/community-operator-pipeline-prod/${pkg}:0.0.1`,
    ]);
    expect(gone.length).toBeGreaterThan(0);
    expect(edited).toContain('# the alpha channel keeps every release');
    expect(edited).toContain('# first GA build');
    const editedValue = parseYaml(edited) as typeof template;
    const expected = {
      ...template,
      entries: template.entries
        .filter((e) => !(e.schema === 'olm.bundle' && e.image?.endsWith(':0.0.1')))
        .map((e) => (e.entries ? { ...e, entries: e.entries.filter((x) => x.name !== name) } : e)),
    };
    expect(editedValue).toEqual(expected);
    // Dangling edges: the entries of the template that replace or skip the bundle.
    const report = JSON.parse(r.out);
    const ci = parseYaml(readFileSync(join(cop.repo, `operators/${pkg}/ci.yaml`), 'utf8'));
    const mapped: string[] = ci.fbc.catalog_mapping[0].catalog_names;
    expect(Object.keys(report.catalogs).sort()).toEqual([...mapped].sort());
    const danglingWanted = template.entries
      .filter((e) => e.schema === 'olm.channel')
      .flatMap((c) =>
        (c.entries as { name: string; replaces?: string }[])
          .filter((x) => x.replaces === name)
          .map((x) => ({ channel: c.name, entry: x.name, replaces: name })),
      );
    for (const v of mapped) {
      expect(report.catalogs[v].bundlesRemoved).toEqual([name]);
      expect(report.catalogs[v].dangling).toEqual(danglingWanted);
      // A cluster running the removed bundle still upgrades along those dangling edges: nobody
      // is stranded (the impact engine walks the re-rendered channel from every installed version).
      expect(danglingWanted.length).toBeGreaterThan(0);
      expect(report.catalogs[v].stranded).toEqual([]);
      const catalog = blobsOf(readFileSync(join(cop.repo, `catalogs/${v}/${pkg}/catalog.yaml`), 'utf8'));
      expect(catalog.some((b) => b.name === name)).toBe(false);
    }
    expect(report.edited).toContain(`operators/${pkg}/catalog-templates/basic.yaml`);
    await expectValidCatalogs(mapped.map((v) => join(cop.repo, 'catalogs', v)));
  });

  // The real opm renders the edited template from images rebuilt from the committed bundles.

  it("refuses to empty the package's default channel in a template, naming the way forward", async () => {
    cop.reset();
    const pkg = 'visionone-containersecurity';
    const templatePath = join(cop.repo, `operators/${pkg}/catalog-templates/basic.yaml`);
    // A channel of one bundle, made the default.
    const text = readFileSync(templatePath, 'utf8')
      .replace('  defaultChannel: stable', '  defaultChannel: preview')
      .replace(
        '- schema: olm.channel\n  name: stable',
        `- schema: olm.channel\n  name: preview\n  package: ${pkg}\n  entries:\n  - name: ${pkg}.v0.0.5\n- schema: olm.channel\n  name: stable`,
      );
    expect(text).toContain('name: preview');
    writeFileSync(templatePath, text);
    cop.git('commit', '-qam', 'preview channel');
    const before = currentFiles(cop.git);
    const r = await remove([`${pkg}/0.0.5`, '--repo', cop.repo]);
    expect(r.code, r.err).toBe(1);
    expect(r.err).toMatch(/only bundle of channel "preview" .*default channel.*catalog-bot default-channel/);
    expect(currentFiles(cop.git)).toEqual(before);
  });

  it('removes a bundle kept one level down (<dir>/bundle/manifests), named by its CSV', async () => {
    cop.reset();
    const pkg = 'rabbitmq-messaging-topology-operator';
    const nested = readdirSync(join(cop.repo, 'operators', pkg)).find((d) =>
      existsSync(join(cop.repo, 'operators', pkg, d, 'bundle', 'manifests')),
    )!;
    expect(nested).toBeDefined();
    const manifests = join(cop.repo, 'operators', pkg, nested, 'bundle', 'manifests');
    const csvFile = readdirSync(manifests).find((f) => f.includes('clusterserviceversion'))!;
    const csvName = parseYaml(readFileSync(join(manifests, csvFile), 'utf8')).metadata.name;
    const r = await remove([`${pkg}/${nested}`, '--repo', cop.repo, '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).bundle).toBe(csvName);
    expect(existsSync(join(cop.repo, 'operators', pkg, nested))).toBe(false);
  });

  it('--dry-run writes nothing and prints the same report', async () => {
    cop.reset();
    const before = currentFiles(cop.git);
    // The bundle removal: the one that edits and re-renders; a package's dry run is in the index tests.
    for (const target of ['visionone-containersecurity/0.0.1']) {
      const dry = await remove([target, '--repo', cop.repo, '--format', 'json', '--dry-run']);
      expect(dry.code, dry.err).toBe(0);
      expect(currentFiles(cop.git)).toEqual(before);
      const text = await remove([target, '--repo', cop.repo, '--dry-run']);
      expect(text.out).toContain('(dry run: nothing written)');
      expect(currentFiles(cop.git)).toEqual(before);
      const real = await remove([target, '--repo', cop.repo, '--format', 'json']);
      expect(real.code, real.err).toBe(0);
      const strip = (o: Record<string, unknown>) => ({ ...o, done: undefined, dryRun: undefined });
      expect(strip(JSON.parse(dry.out))).toEqual(strip(JSON.parse(real.out)));
      cop.reset();
    }
  });

  it('refuses, writing nothing: unknown package or bundle, no bundle directory, a removal that would break a catalog', async () => {
    cop.reset();
    const before = currentFiles(cop.git);
    const cases: [string, RegExp][] = [
      ['no-such-package', /there is no package no-such-package/],
      [
        'visionone-containersecurity/9.9.9',
        /has no bundle directory operators\/visionone-containersecurity\/9\.9\.9 \(it has: 0\.0\.1, /,
      ],
      ['visionone-containersecurity/catalog-templates', /is not a bundle directory/],
      // Taking a bundle out of the middle of a replaces chain leaves two heads: opm refuses the catalog.
      [
        'jumpstarter-operator/0.8.1-rc.1',
        /catalogs\/v4\.18 would not be valid after removing jumpstarter-operator\.v0\.8\.1-rc\.1: .*multiple channel heads/,
      ],
    ];
    for (const [target, why] of cases) {
      const r = await remove([target, '--repo', cop.repo]);
      expect(r.code, `${target}: ${r.err}`).toBe(1);
      expect(r.err).toMatch(why);
      expect(currentFiles(cop.git)).toEqual(before);
    }
    // The package's objects also in a file outside catalogs/<v>/<pkg>/: not a half removal.
    const stray = join(cop.repo, 'catalogs/v4.20/extra.yaml');
    const pkgBlob = blobsOf(
      readFileSync(join(cop.repo, 'catalogs/v4.20/jumpstarter-operator/catalog.yaml'), 'utf8'),
    )[0]!;
    writeFileSync(stray, JSON.stringify(pkgBlob));
    cop.git('add', '-A');
    cop.git('commit', '-qm', 'stray');
    const withStray = currentFiles(cop.git);
    for (const target of ['jumpstarter-operator', 'jumpstarter-operator/0.9.0']) {
      const r = await remove([target, '--repo', cop.repo]);
      expect(r.code, `${target}: ${r.err}`).toBe(1);
      expect(r.err).toMatch(/catalogs\/v4\.20\/extra\.yaml holds objects of jumpstarter-operator outside/);
      expect(currentFiles(cop.git)).toEqual(withStray);
    }
    cop.reset();
    const usage = await remove(['--repo', cop.repo]);
    expect(usage.code).toBe(2);
    const format = await remove(['jumpstarter-operator', '--repo', cop.repo, '--format', 'xml']);
    expect(format.code).toBe(2);
    expect(currentFiles(cop.git)).toEqual(before);
  });

  it('attacks: a path for a name, a link for a bundle or package directory, a link inside a package: refused, nothing outside touched', async () => {
    cop.reset();
    // A bundle-shaped directory outside the repository, for links to point at.
    const outside = writeTree({
      'manifests/keep.yaml': 'precious: true\n',
      'metadata/annotations.yaml': 'annotations: {}\n',
    });
    try {
      const before = currentFiles(cop.git);
      for (const target of [
        '../../etc',
        '..',
        'visionone-containersecurity/..',
        'a/b/c',
        '/etc',
        'visionone-containersecurity/../../x',
      ]) {
        const r = await remove([target, '--repo', cop.repo]);
        expect(r.code, `${target}: ${r.err}`).toBe(1);
        expect(r.err).toMatch(/is not <package> or <package>\/<bundle>/);
      }
      symlinkSync(outside, join(cop.repo, 'operators/visionone-containersecurity/9.9.9'));
      symlinkSync(outside, join(cop.repo, 'operators/evil'));
      for (const target of ['visionone-containersecurity/9.9.9', 'evil']) {
        const r = await remove([target, '--repo', cop.repo]);
        expect(r.code, `${target}: ${r.err}`).toBe(1);
        expect(r.err).toMatch(/is a symbolic link/);
      }
      rmSync(join(cop.repo, 'operators/visionone-containersecurity/9.9.9'));
      // A link inside the package: deleting the package must not be the way to reach it.
      rmSync(join(cop.repo, 'operators/evil'));
      symlinkSync(outside, join(cop.repo, 'operators/jumpstarter-operator/0.9.0/manifests/linked'));
      const inside = await remove(['jumpstarter-operator', '--repo', cop.repo]);
      expect(inside.code, inside.err).toBe(1);
      expect(inside.err).toMatch(
        /operators\/jumpstarter-operator\/0\.9\.0\/manifests\/linked is a symbolic link/,
      );
      rmSync(join(cop.repo, 'operators/jumpstarter-operator/0.9.0/manifests/linked'));
      expect(currentFiles(cop.git)).toEqual(before);
      expect(readFileSync(join(outside, 'manifests', 'keep.yaml'), 'utf8')).toBe('precious: true\n');
      // The core, as the App will call it with a git tree's links: the same refusals.
      const tree = workingTree(cop.repo);
      const input = { tree, catalogRoots: catalogRootsOf(tree) };
      const linked = 'operators/jumpstarter-operator/0.9.0/manifests/linked';
      await expect(
        planRemoval({ package: 'jumpstarter-operator' }, { ...input, links: [linked] }),
      ).rejects.toThrow(`${linked} is a symbolic link`);
      await expect(
        planRemoval(
          { package: 'visionone-containersecurity', bundle: '0.0.1' },
          { ...input, links: ['operators/visionone-containersecurity'] },
        ),
      ).rejects.toThrow('operators/visionone-containersecurity is a symbolic link');
      // A link elsewhere changes nothing.
      const plan = await planRemoval(
        { package: 'jumpstarter-operator' },
        { ...input, links: ['operators/other/x'] },
      );
      expect(plan.removed).toContain('operators/jumpstarter-operator');
    } finally {
      removeTree(outside);
    }
  });
});

describe('names and places are never paths out of the repository', () => {
  it('a target is one or two names; the package directory comes from bundles.path and stays inside', () => {
    expect(parseRemovalTarget('etcd/0.9.2')).toEqual({ package: 'etcd', bundle: '0.9.2' });
    for (const bad of ['../etc', '.hidden', 'a/b/c', 'a//b', 'a/', '', 'a\\..'])
      expect(() => parseRemovalTarget(bad), bad).toThrow(/is not <package> or <package>\/<bundle>/);
    expect(packageDirOf('operators/{package}/{version}', 'etcd')).toBe('operators/etcd');
    expect(packageDirOf('bundles/{package}/v{version}', 'etcd')).toBe('bundles/etcd');
    // The App reads the configuration from git; the core refuses on its own.
    for (const bad of [
      '../{package}/{version}',
      'a/./{package}/{version}',
      '/{package}/{version}',
      '{package}/{version}/x',
    ])
      expect(() => packageDirOf(bad, 'etcd'), bad).toThrow(/bundles\.path/);
  });
});
