import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, loadCatalog } from '../src/catalog/index.js';
import { changedPackages, packageDigests } from '../src/checks/changes.js';
import { removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

/** A one-bundle package whose bundle carries one manifest (a CRD with the given description). */
async function catalog(description: string, split = false, pad = '') {
  const image = 'quay.io/example/foo-bundle:v1.0.0';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'foos.example.com' },
    spec: { description },
  };
  const blobs = [
    { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [{ name: 'foo.v1.0.0' }] },
    {
      schema: 'olm.bundle',
      package: 'foo',
      name: 'foo.v1.0.0',
      image,
      properties: [
        { type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } },
        { type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(crd)).toString('base64') } },
      ],
    },
  ];
  const text = (list: object[]) => list.map((b) => JSON.stringify(b)).join('\n');
  const dir = writeTree(
    split
      ? { 'foo/package.json': text(blobs.slice(0, 2)), 'foo/bundles/v1.json': text(blobs.slice(2)) }
      : { 'foo/catalog.json': pad + text(blobs) },
  );
  dirs.push(dir);
  return (await loadCatalog(new DirectorySource(dir))).config;
}

describe('changed packages, by content', () => {
  it('sees a change made only inside a bundle manifest, though manifests are not kept', async () => {
    const before = await catalog('one');
    const same = await catalog('one');
    const after = await catalog('two');
    expect(changedPackages(before, same)).toEqual(new Set());
    expect(changedPackages(before, after)).toEqual(new Set(['foo']));
    expect(packageDigests(before).get('foo')).toBe(packageDigests(same).get('foo'));
    expect(packageDigests(before).get('foo')).not.toBe(packageDigests(after).get('foo'));
  });

  it('sees added and removed packages, and blobs moved to other files, but not their lines', async () => {
    const foo = await catalog('one');
    expect(changedPackages(undefined, foo)).toEqual(new Set(['foo']));
    expect(changedPackages(foo, undefined)).toEqual(new Set(['foo']));
    // Moving blobs to another file is a change to the package (docs/security.md).
    const moved = await catalog('one', true);
    expect(changedPackages(foo, moved)).toEqual(new Set(['foo']));
    expect(packageDigests(foo).get('foo')).not.toBe(packageDigests(moved).get('foo'));
    const lower = await catalog('one', false, '\n\n\n');
    expect(lower.packages[0]?.pos.line).toBe(4);
    expect(changedPackages(foo, lower)).toEqual(new Set());
  });

  it('sees edits inside user keys named line and pos, with and without blob digests', async () => {
    const load = async (line: number, pos: string, blobDigests: boolean) => {
      const blobs = [
        { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
        {
          schema: 'olm.channel',
          package: 'foo',
          name: 'stable',
          entries: [{ name: 'foo.v1.0.0' }],
          properties: [{ type: 'example.com/note', value: { line, pos: { file: pos } } }],
        },
        { schema: 'example.com/notes', package: 'foo', pos, line },
      ];
      const dir = writeTree({ 'foo/catalog.json': blobs.map((b) => JSON.stringify(b)).join('\n') });
      dirs.push(dir);
      return (await loadCatalog(new DirectorySource(dir), { blobDigests })).config;
    };
    for (const digests of [false, true]) {
      const before = await load(1, 'a', digests);
      expect(changedPackages(before, await load(1, 'a', digests))).toEqual(new Set());
      expect(changedPackages(before, await load(2, 'a', digests))).toEqual(new Set(['foo']));
      expect(changedPackages(before, await load(1, 'b', digests))).toEqual(new Set(['foo']));
    }
  });
});
