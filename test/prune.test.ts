// The pruning guard's compare, as functions (src/checks/prune.ts): what a new catalog takes
// away from the published one, what an `/allow-prune` covers, which tag names the image.
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../src/catalog/index.js';
import {
  memoryCatalog,
  parsePruneTarget,
  pruneCheck,
  prunedItems,
  publishedTag,
  targetCovers,
  type PruneDecision,
} from '../src/checks/prune.js';

const pkg = (name: string) => `---\nschema: olm.package\nname: ${name}\ndefaultChannel: stable\n`;
const channel = (p: string, name: string, entries: string[]) =>
  `---\nschema: olm.channel\npackage: ${p}\nname: ${name}\nentries:\n${entries.map((e) => `  - name: ${e}\n`).join('')}`;
const bundle = (p: string, version: string) =>
  `---\nschema: olm.bundle\npackage: ${p}\nname: ${p}.v${version}\nimage: quay.io/example/${p}-bundle:v${version}\nproperties:\n  - type: olm.package\n    value:\n      packageName: ${p}\n      version: ${version}\n`;

async function catalog(files: Record<string, string>) {
  const source = memoryCatalog(
    'test',
    Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]),
  );
  const { config, diagnostics } = await loadCatalog(source);
  expect(diagnostics.filter((d) => d.level === 'error')).toEqual([]);
  return config;
}

const published = () =>
  catalog({
    'foo/catalog.yaml':
      pkg('foo') +
      channel('foo', 'stable', ['foo.v1.0.0', 'foo.v1.0.1']) +
      channel('foo', 'fast', ['foo.v1.0.1']) +
      bundle('foo', '1.0.0') +
      bundle('foo', '1.0.1'),
    'bar/catalog.yaml': pkg('bar') + channel('bar', 'stable', ['bar.v2.0.0']) + bundle('bar', '2.0.0'),
  });

describe('prunedItems', () => {
  it('names a removed bundle and a removed channel, with their package', async () => {
    const next = await catalog({
      'foo/catalog.yaml': pkg('foo') + channel('foo', 'stable', ['foo.v1.0.1']) + bundle('foo', '1.0.1'),
      'bar/catalog.yaml': pkg('bar') + channel('bar', 'stable', ['bar.v2.0.0']) + bundle('bar', '2.0.0'),
    });
    expect(prunedItems(await published(), next)).toEqual([
      { kind: 'bundle', package: 'foo', name: 'foo.v1.0.0' },
      { kind: 'channel', package: 'foo', name: 'fast' },
    ]);
  });

  it('finds nothing when the new catalog keeps everything and adds more', async () => {
    const next = await catalog({
      'foo/catalog.yaml':
        pkg('foo') +
        channel('foo', 'stable', ['foo.v1.0.0', 'foo.v1.0.1', 'foo.v1.1.0']) +
        channel('foo', 'fast', ['foo.v1.0.1']) +
        bundle('foo', '1.0.0') +
        bundle('foo', '1.0.1') +
        bundle('foo', '1.1.0'),
      'bar/catalog.yaml': pkg('bar') + channel('bar', 'stable', ['bar.v2.0.0']) + bundle('bar', '2.0.0'),
    });
    expect(prunedItems(await published(), next)).toEqual([]);
  });

  it('keeps to the packages given, and a bundle moved to another package is still pruned from its own', async () => {
    // bar loses its bundle; a bundle named bar.v2.0.0 turns up in foo: not the same bundle.
    const next = await catalog({
      'foo/catalog.yaml':
        pkg('foo') +
        channel('foo', 'stable', ['foo.v1.0.0', 'foo.v1.0.1']) +
        channel('foo', 'fast', ['foo.v1.0.1']) +
        bundle('foo', '1.0.0') +
        bundle('foo', '1.0.1') +
        bundle('foo', '2.0.0').replaceAll('foo.v2.0.0', 'bar.v2.0.0'),
      'bar/catalog.yaml': pkg('bar') + channel('bar', 'stable', []),
    });
    const all = prunedItems(await published(), next);
    expect(all).toEqual([{ kind: 'bundle', package: 'bar', name: 'bar.v2.0.0' }]);
    expect(prunedItems(await published(), next, new Set(['foo']))).toEqual([]);
  });

  it('a deleted catalog root prunes everything it served', async () => {
    expect(prunedItems(await published(), undefined, new Set(['bar']))).toEqual([
      { kind: 'bundle', package: 'bar', name: 'bar.v2.0.0' },
      { kind: 'channel', package: 'bar', name: 'stable' },
    ]);
  });
});

describe('/allow-prune targets', () => {
  const a = { kind: 'bundle' as const, package: 'foo', name: 'foo.v1.0.0' };
  it('a bundle allow covers that bundle only, never another bundle or a channel', () => {
    const target = parsePruneTarget('foo.v1.0.0');
    expect(target).toEqual({ kind: 'bundle', name: 'foo.v1.0.0' });
    if ('problem' in target) throw new Error('parsed');
    expect(targetCovers(target, a)).toBe(true);
    expect(targetCovers(target, { ...a, name: 'foo.v1.0.1' })).toBe(false);
    expect(targetCovers(target, { kind: 'channel', package: 'foo', name: 'foo.v1.0.0' })).toBe(false);
  });

  it('a channel allow names its package: the same channel name of another package is not covered', () => {
    const target = parsePruneTarget('foo/fast');
    if ('problem' in target) throw new Error('parsed');
    expect(targetCovers(target, { kind: 'channel', package: 'foo', name: 'fast' })).toBe(true);
    expect(targetCovers(target, { kind: 'channel', package: 'bar', name: 'fast' })).toBe(false);
    expect(targetCovers(target, { kind: 'bundle', package: 'foo', name: 'fast' })).toBe(false);
  });

  it('refuses what is not one name', () => {
    for (const bad of ['', 'a/b/c', '/fast', 'foo/', 'x'.repeat(300), 'a`b', '<!--'])
      expect(parsePruneTarget(bad)).toHaveProperty('problem');
  });
});

describe('publishedTag', () => {
  it('takes the first tag without {sha}, with {root} as publishing expands it', () => {
    expect(
      publishedTag(['r.io/o/c:{root}-{sha}', 'r.io/o/c:{root}', 'r.io/o/d:latest'], 'catalogs/v4.21'),
    ).toBe('r.io/o/c:v4.21');
    expect(publishedTag(['r.io/o/c:{root}-{sha}'], 'catalogs/v4.21')).toBeUndefined();
    expect(publishedTag([], 'catalogs/v4.21')).toBeUndefined();
  });
});

describe('pruneCheck', () => {
  const item = (allowedBy?: string): PruneDecision => ({
    kind: 'bundle',
    package: 'foo',
    name: 'foo.v1.0.0',
    mayAllow: ['bob'],
    ownerAllows: allowedBy ? [allowedBy] : [],
    digest: 'd',
    ...(allowedBy ? { allowedBy } : {}),
  });
  const root = { root: 'catalogs/v4.21', image: 'r.io/o/c:v4.21', digest: 'sha256:1' };

  it('fails on a removal no owner allowed, naming package, bundle and catalog', () => {
    const check = pruneCheck([{ ...root, state: 'compared', items: [item()] }]);
    expect(check.conclusion).toBe('failure');
    expect(check.findings.map((f) => f.message)).toEqual([
      'catalogs/v4.21: this change removes bundle foo.v1.0.0 of package foo, which the published image serves: clusters subscribed to it lose it',
    ]);
    expect(check.findings[0]!.hint).toContain('/allow-prune foo.v1.0.0');
  });

  it('passes when each removal is allowed; neutral when a catalog could not be compared; failure wins', () => {
    expect(pruneCheck([{ ...root, state: 'compared', items: [item('bob')] }]).conclusion).toBe('success');
    const down = {
      root: 'catalogs/v4.22',
      image: 'r.io/o/c:v4.22',
      state: 'unreachable' as const,
      reason: 'refused',
      items: [],
    };
    expect(pruneCheck([{ ...root, state: 'compared', items: [item('bob')] }, down]).conclusion).toBe(
      'neutral',
    );
    expect(pruneCheck([{ ...root, state: 'compared', items: [item()] }, down]).conclusion).toBe('failure');
    expect(pruneCheck([{ root: 'catalogs/v4.21', state: 'unpublished', items: [] }]).conclusion).toBe(
      'success',
    );
  });
});
