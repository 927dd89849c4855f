// `catalog-bot remove` on real repositories: community-operators-prod's six FBC packages
// (test/helpers/cop-repo.ts) and onboarding cases still on the bundle index, each a git
// repository in a temp dir, run through the CLI's dispatcher. What is removed, what stays
// byte for byte, what the report says clusters lose (derived here from the files, not from
// the command), the catalogs against the real opm, and the refusals and attacks.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import type { JsonObject } from '../src/catalog/templates/write.js';
import { RegistryClient } from '../src/publish/registry.js';
import { bundleFilesFromBlob, pushBundle } from './helpers/bundle-images.js';
import { runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { haveOpm, OPM, SHARED_DATA } from './helpers/oracle.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';

const remove = (args: string[]) => runCommand('remove', args);

const blobsOf = (text: string): JsonObject[] =>
  decodeFile(Buffer.from(text))
    .values.map((v) => v.value as JsonObject)
    .filter((v) => v && typeof v === 'object');

/** Every tracked file with its blob id, so "byte-identical" is git's own word for it. */
function trackedFiles(git: CopRepo['git']): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git('ls-files', '-s').split('\n')) {
    const m = /^\d+ ([0-9a-f]+) \d\t(.*)$/.exec(line);
    if (m) out.set(m[2]!, m[1]!);
  }
  return out;
}

/** The working tree's files now, with blob ids (deleted files absent). */
function currentFiles(git: CopRepo['git']): Map<string, string> {
  git('add', '-A');
  const files = trackedFiles(git);
  git('reset', '-q');
  return files;
}

describe.skipIf(!haveRealRepo)('remove on file-based catalogs', () => {
  let cop: CopRepo;
  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
  });
  afterAll(() => cop?.cleanup());
  const reset = () => {
    cop.git('checkout', '-q', '-f', 'main');
    cop.git('clean', '-qfdx');
  };

  it('removes a package: its catalog directories and operators/<pkg>/ go, every other file stays byte for byte, every catalog root stays valid', async () => {
    reset();
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
    const valid = await runCommand(
      'validate',
      catalogRoots.map((r) => join(cop.repo, r)),
    );
    expect(valid.code, valid.out + valid.err).toBe(0);
  });

  it('removes one bundle: the templates lose exactly its entries (comments kept), the catalogs are re-rendered and the report names the dangling edges', async () => {
    reset();
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
      const catalog = blobsOf(readFileSync(join(cop.repo, `catalogs/${v}/${pkg}/catalog.yaml`), 'utf8'));
      expect(catalog.some((b) => b.name === name)).toBe(false);
    }
    expect(report.edited).toContain(`operators/${pkg}/catalog-templates/basic.yaml`);
    const valid = await runCommand(
      'validate',
      mapped.map((v) => join(cop.repo, 'catalogs', v)),
    );
    expect(valid.code, valid.out + valid.err).toBe(0);
  });

  // The real opm renders the edited template from images rebuilt from the committed bundles.
  describe.skipIf(!haveOpm || !haveRegistryTools)(
    'the re-rendered catalogs against opm alpha render-template',
    () => {
      let registry: RunningRegistry;
      let client: RegistryClient;
      beforeAll(async () => {
        registry = await startRegistry();
        client = new RegistryClient({ insecureHosts: [registry.host] });
      }, 60_000);
      afterAll(async () => {
        client?.close();
        await registry?.stop();
      });

      it('equal what opm renders from the edited template, with and without the csv-metadata migration', async () => {
        reset();
        const pkg = 'visionone-containersecurity';
        const r = await remove([`${pkg}/0.0.1`, '--repo', cop.repo]);
        expect(r.code, r.err).toBe(0);
        // Images rebuilt from the committed bundle-object catalog (v4.16), pushed under local names.
        const committed = blobsOf(cop.git('show', `main:catalogs/v4.16/${pkg}/catalog.yaml`));
        const icon = committed.find((b) => b.schema === 'olm.package')?.icon as JsonObject | undefined;
        const local = new Map<string, string>();
        let n = 0;
        for (const b of committed.filter((x) => x.schema === 'olm.bundle')) {
          const repository = `remove/b${n++}`;
          await pushBundle(
            client,
            { registry: registry.host, repository, tag: 'v1' },
            pkg,
            bundleFilesFromBlob(b, icon),
          );
          local.set(String(b.image), `${registry.host}/${repository}:v1`);
        }
        let template = readFileSync(join(cop.repo, `operators/${pkg}/catalog-templates/basic.yaml`), 'utf8');
        for (const [image, ref] of local) template = template.split(image).join(ref);
        for (const [v, migrate] of [
          ['v4.16', false],
          ['v4.17', true],
        ] as const) {
          const opm = spawnSync(
            OPM,
            [
              'alpha',
              'render-template',
              'basic',
              '-',
              '-o',
              'json',
              '--use-http',
              ...(migrate ? ['--migrate-level', 'bundle-object-to-csv-metadata'] : []),
            ],
            { input: template, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
          );
          expect(opm.status, opm.stderr).toBe(0);
          let opmText = opm.stdout;
          for (const [image, ref] of local) opmText = opmText.split(ref).join(image);
          const ours = blobsOf(readFileSync(join(cop.repo, `catalogs/${v}/${pkg}/catalog.yaml`), 'utf8'));
          // opm sorts relatedImages by reference, and it saw the local ones: compare them sorted.
          const sorted = (blobs: JsonObject[]) =>
            blobs.map((b) =>
              Array.isArray(b.relatedImages)
                ? {
                    ...b,
                    relatedImages: [...(b.relatedImages as { image: string }[])].sort((x, y) =>
                      x.image < y.image ? -1 : 1,
                    ),
                  }
                : b,
            );
          expect(sorted(ours)).toEqual(sorted(blobsOf(opmText)));
        }
      }, 120_000);
    },
  );

  it('--dry-run writes nothing and prints the same report', async () => {
    reset();
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
      reset();
    }
  });

  it('refuses, writing nothing: unknown package or bundle, no bundle directory, a removal that would break a catalog', async () => {
    reset();
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
    const usage = await remove(['--repo', cop.repo]);
    expect(usage.code).toBe(2);
    const format = await remove(['jumpstarter-operator', '--repo', cop.repo, '--format', 'xml']);
    expect(format.code).toBe(2);
    expect(currentFiles(cop.git)).toEqual(before);
  });

  it('attacks: a path for a name, a link for a bundle or package directory, a link inside a package: refused, nothing outside touched', async () => {
    reset();
    const outside = mkdtempSync(join(tmpdir(), 'remove-outside-'));
    try {
      mkdirSync(join(outside, 'manifests'));
      writeFileSync(join(outside, 'manifests', 'keep.yaml'), 'precious: true\n');
      mkdirSync(join(outside, 'metadata'));
      writeFileSync(join(outside, 'metadata', 'annotations.yaml'), 'annotations: {}\n');
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
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

// ---- packages still on the bundle index

const ONBOARDING = join(SHARED_DATA, 'onboarding');

/** An onboarding case's `before/` as a git repository (the data set is read-only). */
function indexRepo(name: string): { repo: string; git: CopRepo['git']; cleanup: () => void } {
  const repo = mkdtempSync(join(tmpdir(), 'remove-index-'));
  cpSync(join(ONBOARDING, name, 'before'), repo, { recursive: true });
  mkdirSync(join(repo, '.github'));
  writeFileSync(join(repo, '.github', 'catalog-bot.yml'), 'catalogs: [catalogs/*]\nmaintainers: [Allda]\n');
  const git: CopRepo['git'] = (...args) => {
    const r = spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'before');
  return { repo, git, cleanup: () => rmSync(repo, { recursive: true, force: true }) };
}

interface DirBundle {
  dir: string;
  name: string;
  replaces?: string;
  channels: string[];
  ocp?: string;
}

function dirBundles(repo: string, pkg: string): DirBundle[] {
  const base = join(repo, 'operators', pkg);
  return readdirSync(base)
    .filter((d) => existsSync(join(base, d, 'metadata')))
    .map((dir) => {
      const csvFile = readdirSync(join(base, dir, 'manifests')).find((f) =>
        f.includes('clusterserviceversion'),
      )!;
      const csv = parseYaml(readFileSync(join(base, dir, 'manifests', csvFile), 'utf8'));
      const annotations = parseYaml(
        readFileSync(join(base, dir, 'metadata', 'annotations.yaml'), 'utf8'),
      ).annotations;
      return {
        dir,
        name: csv.metadata.name,
        ...(csv.spec.replaces ? { replaces: csv.spec.replaces } : {}),
        channels: String(annotations['operators.operatorframework.io.bundle.channels.v1']).split(','),
        ...(annotations['com.redhat.openshift.versions']
          ? { ocp: String(annotations['com.redhat.openshift.versions']) }
          : {}),
      };
    });
}

const haveOnboarding = existsSync(ONBOARDING);

describe.skipIf(!haveOnboarding)('remove on packages still on the bundle index', () => {
  it('removes a package: operators/<pkg>/ goes, nothing else; every OpenShift catalog loses all its bundles and channels', async () => {
    const { repo, git, cleanup } = indexRepo('amd-gpu-operator');
    try {
      const pkg = 'amd-gpu-operator';
      const bundles = dirBundles(repo, pkg);
      const before = trackedFiles(git);
      const text = await remove([pkg, '--repo', repo, '--dry-run']);
      expect(text.out).toMatch(/catalog-bot\/prune check does not see this removal/);
      expect(currentFiles(git)).toEqual(before);
      const r = await remove([pkg, '--repo', repo, '--format', 'json']);
      expect(r.code, r.err).toBe(0);
      const after = currentFiles(git);
      for (const [path, blob] of before)
        if (path.startsWith(`operators/${pkg}/`)) expect(after.has(path), path).toBe(false);
        else expect(after.get(path), path).toBe(blob);
      const report = JSON.parse(r.out);
      expect(report.mode).toBe(parseYaml(git('show', `main:operators/${pkg}/ci.yaml`)).updateGraph);
      expect(report.removed).toEqual([`operators/${pkg}`]);
      expect(report.edited).toEqual([]);
      // No bundle is annotated with OpenShift versions here: every catalog directory served them all.
      expect(bundles.every((b) => b.ocp === undefined)).toBe(true);
      expect(Object.keys(report.catalogs).sort()).toEqual(readdirSync(join(repo, 'catalogs')).sort());
      for (const loss of Object.values(report.catalogs) as {
        bundlesRemoved: string[];
        channelsRemoved: string[];
      }[]) {
        expect(loss.bundlesRemoved).toEqual(bundles.map((b) => b.name).sort());
        expect(loss.channelsRemoved).toEqual([...new Set(bundles.flatMap((b) => b.channels))].sort());
      }
      // The index is the pipeline's: no /allow-prune is asked for.
      expect(report.allowPrune).toEqual([]);
    } finally {
      cleanup();
    }
  });

  it('removes a bundle: only its directory goes; the catalogs its com.redhat.openshift.versions admits lose it, and the channel it headed gets its new head', async () => {
    const { repo, git, cleanup } = indexRepo('multi-nic-cni-operator');
    try {
      const pkg = 'multi-nic-cni-operator';
      const bundles = dirBundles(repo, pkg);
      const target = bundles.find(
        (b) => b.ocp && /^v4\.\d+-v4\.\d+$/.test(b.ocp) && !bundles.some((o) => o.replaces === b.name),
      )!;
      expect(target).toBeDefined();
      const [from, to] = target.ocp!.split('-').map((v) => Number(v.split('.')[1]));
      const admitted = readdirSync(join(repo, 'catalogs')).filter((v) => {
        const minor = Number(v.split('.')[1]);
        return minor >= from! && minor <= to!;
      });
      const before = trackedFiles(git);
      const r = await remove([`${pkg}/${target.dir}`, '--repo', repo, '--format', 'json']);
      expect(r.code, r.err).toBe(0);
      const after = currentFiles(git);
      for (const [path, blob] of before)
        if (path.startsWith(`operators/${pkg}/${target.dir}/`)) expect(after.has(path), path).toBe(false);
        else expect(after.get(path), path).toBe(blob);
      const report = JSON.parse(r.out);
      expect(report.bundle).toBe(target.name);
      expect(report.removed).toEqual([`operators/${pkg}/${target.dir}`]);
      expect(Object.keys(report.catalogs).sort()).toEqual(admitted.sort());
      // Its channel: the bundle it replaces (also served there) is the head now.
      const channel = target.channels[0]!;
      for (const v of admitted) {
        const loss = report.catalogs[v];
        expect(loss.bundlesRemoved).toEqual([target.name]);
        expect(loss.dangling).toEqual([]);
        expect(loss.headsRemoved).toEqual([{ channel, head: target.name, newHeads: [target.replaces] }]);
      }
    } finally {
      cleanup();
    }
  });
});
