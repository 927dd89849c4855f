// The `catalog-bot/crd-upgrade` check end to end: small old and new catalogs whose bundles
// carry their CRDs as `olm.bundle.object`, loaded with the real loader (without objects, as
// pull-request reports are), with the objects read back through the loaders.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, GitTreeSource, validateCatalog, type CatalogSource } from '../src/catalog/index.js';
import type { CatalogReport } from '../src/catalog/index.js';
import {
  crdUpgradeCheck,
  directoryObjectLoader,
  gitObjectLoader,
  upgradeEdges,
  type LoadBundleObjects,
} from '../src/checks/crd-upgrade.js';
import type { CheckedRoot } from '../src/checks/checked-root.js';
import { bundle, channel, olmPackageProp, pkg, yamlStream, type Obj } from './helpers/catalogs.js';
import { removeTree, writeTree } from './helpers/oracle.js';
import { captureStream as capture, cliCommand } from './helpers/cli.js';
import { git } from './helpers/git.js';

const crdDiffCommand = cliCommand('crd-diff');

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const v = (version: string) => `foo.v${version}`;

/** The widgets CRD with these `spec` properties (one version, v1). */
function widgets(properties: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } },
          },
        },
      ],
      ...extra,
    },
  };
}

const csv = (version: string): Obj => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: v(version) },
  spec: { version },
});

const object = (o: Obj): Obj => ({
  type: 'olm.bundle.object',
  value: { data: Buffer.from(JSON.stringify(o)).toString('base64') },
});

/** Bundle foo at `version` shipping the CSV and these CRDs (none: only csv.metadata, like most real catalogs). */
function withCrds(version: string, crds: Obj[] | null): Obj {
  const properties: Obj[] = [olmPackageProp(version)];
  if (crds === null) properties.push({ type: 'olm.csv.metadata', value: { displayName: 'foo' } });
  else properties.push(object(csv(version)), ...crds.map(object));
  return bundle(version, { properties });
}

const OLD = { a: { type: 'string' }, b: { type: 'string' } };
const ADDED = { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'integer' } };
const REMOVED = { a: { type: 'string' } };

async function report(dir: string): Promise<CatalogReport> {
  // As pr.ts loads them: bundle objects dropped.
  return validateCatalog(new DirectorySource(dir));
}

/** Two catalog directories (foo/catalog.yaml, plus other files) and the CheckedRoot for package foo. */
async function twoCatalogs(
  before: Obj[] | null,
  after: Obj[],
  extraFiles: Record<string, string> = {},
): Promise<{ root: CheckedRoot; load: LoadBundleObjects; headDir: string; baseDir?: string }> {
  const headDir = writeTree({ 'foo/catalog.yaml': yamlStream(...after), ...extraFiles });
  dirs.push(headDir);
  const baseDir = before
    ? writeTree({ 'foo/catalog.yaml': yamlStream(...before), ...extraFiles })
    : undefined;
  if (baseDir) dirs.push(baseDir);
  const root: CheckedRoot = {
    path: 'catalogs/v4.99',
    head: await report(headDir),
    base: baseDir ? await report(baseDir) : undefined,
    packages: new Set(['foo']),
  };
  const load = directoryObjectLoader((_root, side) => (side === 'head' ? headDir : (baseDir as string)));
  return { root, load, headDir, baseDir };
}

/** 1-based line of the YAML document (blob) of the bundle `name` in foo/catalog.yaml. */
function blobLine(dir: string, name: string): number {
  const lines = readFileSync(join(dir, 'foo/catalog.yaml'), 'utf8').split('\n');
  let line = lines.findIndex((l) => l === `name: ${name}`) + 1;
  while (line > 1 && lines[line - 2] !== '---') line--;
  return line;
}

const chain = (...entries: (string | Obj)[]): Obj[] => [pkg(), channel(entries)];

/** foo 1.0.0 with `crds` in the base; the head adds 1.1.0, replacing it, with `newCrds` (see withCrds). */
const newBundleOver = (crds: Obj[] | null, newCrds: Obj[] | null, extraFiles: Record<string, string> = {}) =>
  twoCatalogs(
    [...chain(v('1.0.0')), withCrds('1.0.0', crds)],
    [
      ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
      withCrds('1.0.0', crds),
      withCrds('1.1.0', newCrds),
    ],
    extraFiles,
  );

describe('crd-upgrade check on built catalogs', () => {
  it('fails a new bundle that removes a CRD field, naming both bundles, the CRD, version and path', async () => {
    const { root, load, headDir } = await newBundleOver([widgets(OLD)], [widgets(REMOVED)]);
    const result = await crdUpgradeCheck([root], load);
    expect(result.name).toBe('catalog-bot/crd-upgrade');
    expect(result.conclusion).toBe('failure');
    expect(result.findings).toHaveLength(1);
    const [f] = result.findings;
    expect(f).toMatchObject({
      rule: 'CRD-FIELD-REMOVED',
      level: 'error',
      package: 'foo',
      file: 'catalogs/v4.99/foo/catalog.yaml',
      line: blobLine(headDir, v('1.1.0')),
    });
    expect(f!.message).toBe(
      `upgrading ${v('1.0.0')} -> ${v('1.1.0')} (classic OLM (channel stable) and OLM v1): CRD widgets.example.com, version v1, field ^.spec.b: field removed`,
    );
    expect(f!.hint).toContain('Keep `^.spec.b` in version v1');
    expect(result.annotations[0]).toMatchObject({
      path: 'catalogs/v4.99/foo/catalog.yaml',
      level: 'failure',
    });
    expect(result.summary).toContain('#### `catalogs/v4.99` foo');
    expect(result.summary).toContain('1 upgrade edge, 1 checked (1 CRD comparison): 1 error');
  });

  it('passes a new bundle that only adds a field', async () => {
    const { root, load } = await newBundleOver([widgets(OLD)], [widgets(ADDED)]);
    const result = await crdUpgradeCheck([root], load);
    expect(result.findings).toEqual([]);
    expect(result.conclusion).toBe('success');
    expect(result.title).toBe('Every CRD upgrade is safe (1 upgrade edge checked)');
  });

  it('reports a problem the base already had as a warning, and fails only the new edge', async () => {
    const old = [
      ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
      withCrds('1.0.0', [widgets(OLD)]),
      withCrds('1.1.0', [widgets(REMOVED)]),
    ];
    // 1.2.0 skips 1.0.0 too: a new edge with the same removal, and a safe one from 1.1.0.
    const { root, load } = await twoCatalogs(old, [
      ...chain(
        v('1.0.0'),
        { name: v('1.1.0'), replaces: v('1.0.0') },
        { name: v('1.2.0'), replaces: v('1.1.0'), skipRange: '>=1.0.0 <1.2.0' },
      ),
      withCrds('1.0.0', [widgets(OLD)]),
      withCrds('1.1.0', [widgets(REMOVED)]),
      withCrds('1.2.0', [widgets(REMOVED)]),
    ]);
    const result = await crdUpgradeCheck([root], load);
    expect(result.findings.map((d) => [d.level, d.message.split(' (')[0]])).toEqual([
      ['warning', `upgrading ${v('1.0.0')} -> ${v('1.1.0')}`],
      ['error', `upgrading ${v('1.0.0')} -> ${v('1.2.0')}`],
    ]);
    expect(result.findings[0]!.message).toMatch(/\(already so before this change\)$/);
    expect(result.conclusion).toBe('failure');
  });

  it('an edge that existed before counts as new when a bundle on it changed its CRD', async () => {
    const { root, load } = await twoCatalogs(
      [
        ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets(OLD)]),
      ],
      [
        ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets(REMOVED)]),
      ],
    );
    const result = await crdUpgradeCheck([root], load);
    expect(result.findings.map((d) => [d.rule, d.level])).toEqual([['CRD-FIELD-REMOVED', 'error']]);
  });

  it('a bundle the change removes is still an upgrade source, read from the base', async () => {
    // Users on 1.0.0 get 1.1.0 (replaces names the removed bundle): its CRD comes from the base.
    const { root, load } = await twoCatalogs(
      [
        ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets(OLD)]),
      ],
      [...chain({ name: v('1.1.0'), replaces: v('1.0.0') }), withCrds('1.1.0', [widgets(REMOVED)])],
    );
    const result = await crdUpgradeCheck([root], load);
    expect(result.findings.map((d) => [d.rule, d.level, d.message.split(':')[0]])).toEqual([
      [
        'CRD-FIELD-REMOVED',
        'error',
        `upgrading ${v('1.0.0')} -> ${v('1.1.0')} (classic OLM (channel stable) and OLM v1)`,
      ],
    ]);
  });

  it('a skipRange-only head: only OLM v1 takes the edge (classic cannot order the channel)', async () => {
    const { root, load } = await twoCatalogs(
      [
        ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets(OLD)]),
      ],
      [
        ...chain(
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), skipRange: '>=1.0.0 <1.2.0' },
        ),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets(OLD)]),
        withCrds('1.2.0', [widgets(OLD, { scope: 'Cluster' })]),
      ],
    );
    const edges = upgradeEdges(root.head!.model, 'foo');
    expect(edges.map((e) => [e.from, e.to, e.classic, e.v1])).toEqual([
      [v('1.0.0'), v('1.1.0'), [], true],
      [v('1.0.0'), v('1.2.0'), [], true],
      [v('1.1.0'), v('1.2.0'), [], true],
    ]);
    const result = await crdUpgradeCheck([root], load);
    // One finding for both old bundles, by OLM v1 only.
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]!.rule).toBe('CRD-SCOPE-CHANGED');
    expect(result.findings[0]!.message).toContain(
      `upgrading ${v('1.0.0')} (and 1 more: ${v('1.1.0')}) -> ${v('1.2.0')} (OLM v1)`,
    );
  });

  it('a skipped entry: OLM v1 still takes the edge to it, classic only the edge past it', async () => {
    const { root } = await twoCatalogs(null, [
      ...chain(
        v('1.0.0'),
        { name: v('1.1.0'), replaces: v('1.0.0') },
        { name: v('1.2.0'), replaces: v('1.1.0'), skips: [v('1.1.0')], skipRange: '>=1.0.0 <1.2.0' },
      ),
      withCrds('1.0.0', []),
      withCrds('1.1.0', []),
      withCrds('1.2.0', []),
    ]);
    const edges = upgradeEdges(root.head!.model, 'foo');
    expect(edges.map((e) => [e.from, e.to, e.classic, e.v1])).toEqual([
      [v('1.0.0'), v('1.1.0'), [], true],
      [v('1.0.0'), v('1.2.0'), ['stable'], true],
      [v('1.1.0'), v('1.2.0'), ['stable'], true],
    ]);
  });

  it('bundles without manifests get a CRD-NEEDS-IMAGE note and a neutral check', async () => {
    const { root, load, headDir } = await newBundleOver(null, null);
    const result = await crdUpgradeCheck([root], load);
    expect(result.conclusion).toBe('neutral');
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({
      rule: 'CRD-NEEDS-IMAGE',
      level: 'notice',
      line: blobLine(headDir, v('1.1.0')),
    });
    expect(result.findings[0]!.message).toContain(
      `the catalog has no manifests for ${v('1.0.0')}, ${v('1.1.0')}`,
    );
  });

  it('a renderBundle hook supplies the manifests of such bundles', async () => {
    const { root, load } = await newBundleOver(null, null);
    const images: string[] = [];
    const renderBundle = async (image: string) => {
      images.push(image);
      return [JSON.stringify(widgets(image.endsWith('v1.0.0') ? OLD : REMOVED))];
    };
    const result = await crdUpgradeCheck([root], load, { renderBundle });
    expect(result.findings.map((d) => [d.rule, d.level])).toEqual([['CRD-FIELD-REMOVED', 'error']]);
    expect(images.sort()).toEqual(['quay.io/example/foo-bundle:v1.0.0', 'quay.io/example/foo-bundle:v1.1.0']);
  });

  it('a registry that cannot be reached is asked a few images at once, then no more; the note says why and to re-run', async () => {
    // 20 bundles of a new package on quay.io, and the last one's image on another registry.
    const versions = Array.from({ length: 20 }, (_, i) => `1.0.${i}`);
    const blobs = versions.map((ver, i) => {
      const blob = withCrds(ver, null);
      return i === versions.length - 1 ? { ...blob, image: `registry.example.com/foo-bundle:v${ver}` } : blob;
    });
    const entries = versions.map((ver, i) =>
      i === 0 ? v(ver) : { name: v(ver), replaces: v(versions[i - 1]!) },
    );
    const { root, load } = await twoCatalogs(null, [...chain(...entries), ...blobs]);
    const asked: string[] = [];
    const renderBundle = async (image: string) => {
      asked.push(image);
      await new Promise((r) => setTimeout(r, 5));
      if (image.startsWith('quay.io/'))
        throw new Error('cannot reach registry quay.io (https://quay.io): ENETUNREACH');
      return [JSON.stringify(widgets(OLD))];
    };
    const result = await crdUpgradeCheck([root], load, { renderBundle });
    // The ones asked at once before the first answer; none after it.
    const quay = asked.filter((i) => i.startsWith('quay.io/'));
    expect(quay.length).toBeGreaterThan(0);
    expect(quay.length).toBeLessThanOrEqual(8);
    // Another registry is still asked.
    expect(asked).toContain('registry.example.com/foo-bundle:v1.0.19');
    expect(result.conclusion).toBe('neutral');
    const notes = result.findings.filter((d) => d.rule === 'CRD-NEEDS-IMAGE');
    expect(notes.length).toBeGreaterThan(0);
    for (const note of notes) {
      expect(note.message).toContain(
        'could not be read: cannot reach registry quay.io (https://quay.io): ENETUNREACH',
      );
      expect(note.hint).toContain('/retest');
    }
  });

  it('reads only the files of the bundles it needs', async () => {
    // Only foo's file, only for the head: the one edge is new, so the base copy is not needed.
    const { root, headDir } = await newBundleOver([widgets(OLD)], [widgets(OLD)], {
      'bar/catalog.yaml': yamlStream(pkg('bar')),
    });
    const asked: string[][] = [];
    const inner = directoryObjectLoader(() => headDir);
    const load: LoadBundleObjects = async (r, side, files) => {
      asked.push([side, ...files]);
      return inner(r, side, files);
    };
    const result = await crdUpgradeCheck([root], load);
    expect(result.conclusion).toBe('success');
    expect(asked).toEqual([['head', 'foo/catalog.yaml']]);
  });

  it('no changed package: success, nothing to check', async () => {
    const { root, load } = await twoCatalogs(
      [...chain(v('1.0.0')), withCrds('1.0.0', [widgets(OLD)])],
      [...chain(v('1.0.0')), withCrds('1.0.0', [widgets(OLD)])],
    );
    const result = await crdUpgradeCheck([{ ...root, packages: new Set() }], load);
    expect(result).toMatchObject({ conclusion: 'success', title: 'No package changed', findings: [] });
  });
});

describe('gitObjectLoader', () => {
  it('checks a pull request read from git objects, reading only the named files of each commit', async () => {
    const repo = writeTree({});
    dirs.push(repo);
    const write = (objs: Obj[]) => {
      mkdirSync(join(repo, 'catalogs/v4.99/foo'), { recursive: true });
      mkdirSync(join(repo, 'catalogs/v4.99/bar'), { recursive: true });
      writeFileSync(join(repo, 'catalogs/v4.99/foo/catalog.yaml'), yamlStream(...objs));
      writeFileSync(
        join(repo, 'catalogs/v4.99/bar/catalog.yaml'),
        yamlStream(pkg('bar'), channel(['bar.v1.0.0'], { package: 'bar' }), bundle('1.0.0', {}, 'bar')),
      );
    };
    git(repo, 'init', '-q', '-b', 'main');
    write([...chain(v('1.0.0')), withCrds('1.0.0', [widgets(OLD)])]);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    write([
      ...chain(v('1.0.0'), { name: v('1.1.0'), replaces: v('1.0.0') }),
      withCrds('1.0.0', [widgets(OLD)]),
      withCrds('1.1.0', [widgets(REMOVED, { scope: 'Cluster' })]),
    ]);
    git(repo, 'commit', '-qam', 'head');

    const source = (rev: string): CatalogSource => new GitTreeSource(repo, rev, 'catalogs/v4.99');
    const root: CheckedRoot = {
      path: 'catalogs/v4.99',
      base: await validateCatalog(source('main')),
      head: await validateCatalog(source('pr')),
      packages: new Set(['foo']),
    };
    const load = gitObjectLoader(repo, 'main', 'pr');
    const onlyFoo = await load('catalogs/v4.99', 'head', ['foo/catalog.yaml']);
    expect(onlyFoo.map((b) => b.name)).toEqual([v('1.0.0'), v('1.1.0')]);
    expect(onlyFoo[1]!.objects).toHaveLength(2);
    expect(
      await load('catalogs/v4.99', 'base', ['foo/catalog.yaml']).then((l) => l.map((b) => b.name)),
    ).toEqual([v('1.0.0')]);

    const result = await crdUpgradeCheck([root], load);
    expect(result.findings.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['CRD-SCOPE-CHANGED', 'error', 'catalogs/v4.99/foo/catalog.yaml'],
      ['CRD-FIELD-REMOVED', 'error', 'catalogs/v4.99/foo/catalog.yaml'],
    ]);
  });
});

describe('catalog-bot crd-diff', () => {
  async function catalogDir(): Promise<string> {
    const dir = writeTree({
      'foo/catalog.yaml': yamlStream(
        ...chain(
          v('1.0.0'),
          { name: v('1.1.0'), replaces: v('1.0.0') },
          { name: v('1.2.0'), replaces: v('1.1.0') },
        ),
        withCrds('1.0.0', [widgets(OLD)]),
        withCrds('1.1.0', [widgets({ ...ADDED, a: { type: 'string', description: 'the a' } })]),
        withCrds('1.2.0', [widgets(REMOVED)]),
      ),
      'bar/catalog.yaml': yamlStream(
        pkg('bar'),
        channel(['bar.v1.0.0'], { package: 'bar' }),
        bundle('1.0.0', { properties: [olmPackageProp('1.0.0', 'bar')] }, 'bar'),
      ),
    });
    dirs.push(dir);
    return dir;
  }

  it('exit 0 and the safe changes for a safe edge', async () => {
    const dir = await catalogDir();
    const out = capture();
    expect(await crdDiffCommand([v('1.0.0'), v('1.1.0'), '--root', dir], out.stream)).toBe(0);
    expect(out.text()).toBe(
      `safe: ${v('1.0.0')} -> ${v('1.1.0')}: 0 changes OLM refuses, 2 safe; 1 CRD compared\n` +
        'upgrade edge taken by classic OLM (stable) and OLM v1\n' +
        'CRDs compared: widgets.example.com\n' +
        '✓ CRD-FIELD-ADDED widgets.example.com v1 ^.spec.c: field added\n' +
        '✓ CRD-DESCRIPTION-CHANGED 1 field description changed\n',
    );
  });

  it('exit 1 and JSON with every unsafe change for an unsafe pair, noting a missing edge', async () => {
    const dir = await catalogDir();
    const out = capture();
    expect(
      await crdDiffCommand([v('1.0.0'), v('1.2.0'), '--root', dir, '--format', 'json'], out.stream),
    ).toBe(1);
    const json = JSON.parse(out.text());
    expect(json).toMatchObject({
      safe: false,
      old: v('1.0.0'),
      new: v('1.2.0'),
      edge: { classic: [], v1: false },
    });
    expect(json.compared).toEqual(['widgets.example.com']);
    expect(json.unsafe).toEqual([
      expect.objectContaining({
        rule: 'CRD-FIELD-REMOVED',
        crd: 'widgets.example.com',
        version: 'v1',
        path: '^.spec.b',
      }),
    ]);
    expect(json.unsafe[0].key).toBeUndefined();
  });

  it('exit 2 for usage errors, unknown bundles and bundles without manifests', async () => {
    const dir = await catalogDir();
    const cases: [string[], RegExp][] = [
      // No catalog, and no bundle directory in the repository.
      [
        [v('1.0.0'), v('1.1.0'), '--repo', dir],
        /no bundle directory under operators\/\{package\}\/\{version\} is foo\.v1\.0\.0's/,
      ],
      [[v('1.0.0'), '--root', dir], /needs an old and a new bundle/],
      [[v('1.0.0'), v('1.1.0'), '--root', dir, '--format', 'yaml'], /unknown format "yaml"/],
      [[v('1.0.0'), 'foo.v9.9.9', '--root', dir], /bundle "foo.v9.9.9" is not in/],
      [[v('1.0.0'), 'bar.v1.0.0', '--root', dir], /bar.v1.0.0 carries no manifests/],
      [[v('1.0.0'), v('1.1.0'), '--root', join(dir, 'nope')], /not a directory/],
    ];
    for (const [args, message] of cases) {
      const out = capture();
      const err = capture();
      expect(await crdDiffCommand(args, out.stream, err.stream)).toBe(2);
      expect(err.text()).toMatch(message);
      expect(out.text()).toBe('');
    }
  });
});
