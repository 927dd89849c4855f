// Two catalogs compared as OLM sees them (src/catalog/compare.ts, `verify-published`): each
// kind of difference named in words, and none for catalogs that only differ in layout.
import { describe, expect, it } from 'vitest';
import { compareCatalogs } from '../src/catalog/compare.js';
import { loadCatalog } from '../src/catalog/index.js';
import { memoryCatalog } from '../src/checks/prune.js';
import {
  basic,
  bundle,
  channel,
  deprecations,
  jsonStream,
  pkg,
  yamlStream,
  type Obj,
} from './helpers/catalogs.js';

async function load(files: Record<string, string>) {
  const source = memoryCatalog(
    'test',
    Object.entries(files).map(([p, t]) => [p, Buffer.from(t)]),
  );
  const loaded = await loadCatalog(source);
  expect(loaded.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
  return loaded.config;
}

const sides = { left: 'the root', right: 'the image' };
const differences = async (left: Obj[], right: Obj[]) =>
  compareCatalogs(
    await load({ 'foo/catalog.yaml': yamlStream(...left) }),
    await load({ 'foo/c.json': jsonStream(...right) }),
    sides,
  );

describe('compareCatalogs', () => {
  it('finds nothing between the same catalog in other files and formats', async () => {
    expect(await differences(basic(), [...basic()].reverse())).toEqual([]);
  });

  it('names packages, default channels, channels, entries, edges and bundles that differ', async () => {
    const left = [
      ...basic(),
      pkg('bar'),
      channel(['bar.v1.0.0'], { package: 'bar' }),
      bundle('1.0.0', {}, 'bar'),
      channel(['foo.v1.1.0'], { name: 'fast' }),
    ];
    const right = [
      pkg('foo', { defaultChannel: 'fast' }),
      channel(['foo.v1.0.0', { name: 'foo.v1.1.0', skips: ['foo.v1.0.0'] }, 'foo.v1.2.0']),
      channel(['foo.v1.1.0'], { name: 'fast' }),
      bundle('1.0.0', { image: 'quay.io/example/foo-bundle:other' }),
      bundle('1.1.0'),
      bundle('1.2.0'),
    ];
    expect(await differences(left, right)).toEqual([
      'packages only in the root: bar',
      'package foo: default channel stable in the root, fast in the image',
      'package foo, channel stable: entries only in the image: foo.v1.2.0',
      'package foo, channel stable, entry foo.v1.1.0: replaces foo.v1.0.0 in the root, skips foo.v1.0.0 in the image',
      'package foo: bundles only in the image: foo.v1.2.0',
      'package foo, bundle foo.v1.0.0: image quay.io/example/foo-bundle:v1.0.0 in the root, quay.io/example/foo-bundle:other in the image',
    ]);
  });

  it('says so when only other content differs (a deprecation)', async () => {
    const deprecated = [
      ...basic(),
      deprecations([{ reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'old' }]),
    ];
    expect(await differences(basic(), deprecated)).toEqual([
      expect.stringContaining('the catalogs differ in other content'),
    ]);
  });
});
