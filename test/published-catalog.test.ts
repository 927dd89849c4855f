// Reading the catalog an image serves (src/publish/published-catalog.ts) from a real
// docker-registry on 127.0.0.1: the layer under the configs label, found below a cache layer
// as opm's own Dockerfile lays it out; a tag never pushed; an image with no catalog; what
// verify-published, reading through the same reader, refuses.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTar, gzipFixed, type TarEntry } from '../src/publish/tar.js';
import { blob, OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST, sha256 } from '../src/publish/oci.js';
import { publishedCatalogReader } from '../src/publish/published-catalog.js';
import { RegistryClient } from '../src/publish/registry.js';
import { cliCommand } from './helpers/cli.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';

const policy = { allowedRegistries: [], unverifiableRegistries: [], credentialHosts: [] };

describe.skipIf(!haveRegistryTools)('publishedCatalogReader', () => {
  let registry: RunningRegistry;
  let client: RegistryClient;

  beforeAll(async () => {
    registry = await startRegistry();
    client = new RegistryClient({ insecureHosts: [registry.host], privateHosts: ['127.0.0.1'] });
  });
  afterAll(async () => {
    client.close();
    await registry.stop();
  });

  /** Push an image of these layers (bottom first) and labels; returns its manifest digest. */
  async function push(
    repository: string,
    layers: TarEntry[][],
    labels: Record<string, string>,
    runs: { Entrypoint?: string[]; Cmd?: string[] } = {},
  ) {
    const ref = { registry: registry.host, repository };
    const tars = layers.map((entries) => createTar(entries));
    const blobs = await Promise.all(tars.map(async (t) => blob(OCI_LAYER_GZIP, await gzipFixed(t))));
    const config = blob(
      OCI_CONFIG,
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          config: { Labels: labels, ...runs },
          rootfs: { type: 'layers', diff_ids: tars.map((t) => sha256(t)) },
        }),
      ),
    );
    for (const b of [...blobs, config]) await client.ensureBlob(ref, b.descriptor.digest, b.data);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: config.descriptor,
        layers: blobs.map((b) => b.descriptor),
      }),
    );
    return client.putManifest(ref, 'v1', OCI_MANIFEST, manifest);
  }
  const file = (path: string, text: string): TarEntry => ({ path, type: 'file', data: Buffer.from(text) });

  it('reads the catalog layer below a cache layer, at the directory the label names', async () => {
    const digest = await push(
      'opm-style',
      [
        [file('bin/opm', 'not run'), file('configs/decoy.yaml', 'the base has no catalog')],
        [
          { path: 'catalog', type: 'dir' },
          file('catalog/foo/catalog.yaml', 'schema: olm.package\nname: foo\n'),
        ],
        [file('tmp/cache/pogreb.db', 'cache')],
      ],
      { 'operators.operatorframework.io.index.configs.v1': '/catalog' },
    );
    const read = publishedCatalogReader(() => client);
    const got = await read(`${registry.host}/opm-style:v1`, policy);
    expect(got.status).toBe('published');
    if (got.status !== 'published') return;
    expect(got.digest).toBe(digest);
    expect(got.files.map(([path, data]) => [path, Buffer.from(data).toString()])).toEqual([
      ['foo/catalog.yaml', 'schema: olm.package\nname: foo\n'],
    ]);
  });

  it('a tag never pushed is "none"; an image without a catalog layer is unreadable, with the reason', async () => {
    const read = publishedCatalogReader(() => client);
    expect(await read(`${registry.host}/never:v1`, policy)).toEqual({
      status: 'none',
      image: `${registry.host}/never:v1`,
    });
    await push('plain', [[file('bin/app', 'x')]], {});
    const plain = await read(`${registry.host}/plain:v1`, policy);
    expect(plain).toMatchObject({ status: 'unreachable' });
    expect(plain.status === 'unreachable' && plain.reason).toContain('holds /configs');
  });

  it('verify-published reads through the same reader and names what it refuses (exit 2)', async () => {
    const verifyPublished = cliCommand('verify-published');
    const root = mkdtempSync(join(tmpdir(), 'verify-refused-'));
    const env = { REGISTRY_INSECURE_HOSTS: registry.host, REGISTRY_PRIVATE_HOSTS: registry.host };
    const run = async (image: string) => {
      const out = new PassThrough();
      const err = new PassThrough();
      const code = await verifyPublished([root, '--image', image], out, err, env);
      return { code, err: String(err.read() ?? '') };
    };
    try {
      const configs = { 'operators.operatorframework.io.index.configs.v1': '/configs' };
      // The catalog below four other layers: beyond what is scanned.
      await push(
        'deep',
        [
          [file('configs/foo/catalog.yaml', 'schema: olm.package\nname: foo\n')],
          ...[1, 2, 3, 4].map((n) => [file(`tmp/${n}`, 'x')]),
        ],
        configs,
      );
      expect(await run(`${registry.host}/deep:v1`)).toEqual({
        code: 2,
        err: expect.stringContaining(
          `cannot read ${registry.host}/deep:v1: none of the image's top 4 layers holds /configs`,
        ),
      });
      // The catalog layer removes a file of a lower layer.
      await push(
        'whiteout',
        [
          [file('configs/foo/catalog.yaml', 'schema: olm.package\nname: foo\n')],
          [file('configs/foo/.wh.catalog.yaml', '')],
        ],
        configs,
      );
      expect((await run(`${registry.host}/whiteout:v1`)).err).toContain('removes files of a lower layer');
      // No configs label: not a catalog image (the pruning guard would look at /configs).
      await push('plain', [[file('bin/app', 'x')]], {});
      expect((await run(`${registry.host}/plain:v1`)).err).toContain('is not a catalog image');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('verify-published: an image that serves another directory than its label, or removes the labelled one, is not the same', async () => {
    const verifyPublished = cliCommand('verify-published');
    const root = mkdtempSync(join(tmpdir(), 'verify-serves-'));
    const env = { REGISTRY_INSECURE_HOSTS: registry.host, REGISTRY_PRIVATE_HOSTS: registry.host };
    const catalog = 'schema: olm.package\nname: foo\n';
    mkdirSync(join(root, 'foo'));
    writeFileSync(join(root, 'foo/catalog.yaml'), catalog);
    const run = async (image: string) => {
      const out = new PassThrough();
      const err = new PassThrough();
      const code = await verifyPublished([root, '--image', image], out, err, env);
      return { code, out: String(out.read() ?? ''), err: String(err.read() ?? '') };
    };
    try {
      const configs = { 'operators.operatorframework.io.index.configs.v1': '/configs' };
      const opm = { Entrypoint: ['/bin/opm'] };
      // The image as opm's own Dockerfile writes it: the same catalog (the control).
      await push('serves-configs', [[file('configs/foo/catalog.yaml', catalog)]], configs, {
        ...opm,
        Cmd: ['serve', '/configs', '--cache-dir=/tmp/cache'],
      });
      expect((await run(`${registry.host}/serves-configs:v1`)).code).toBe(0);
      // The label names /configs (the catalog of the root), but the image runs opm on /other,
      // another catalog: clusters get that one. Before, verify-published said "the same" (0).
      await push(
        'serves-other',
        [
          [
            file('configs/foo/catalog.yaml', catalog),
            file('other/bar/catalog.yaml', 'schema: olm.package\nname: bar\n'),
          ],
        ],
        configs,
        { ...opm, Cmd: ['serve', '/other'] },
      );
      const other = await run(`${registry.host}/serves-other:v1`);
      expect(other.code).toBe(2);
      expect(other.err).toContain('does not run `opm serve /configs`');
      // opm that builds its cache and exits: it serves nothing.
      await push('cache-only', [[file('configs/foo/catalog.yaml', catalog)]], configs, {
        ...opm,
        Cmd: ['serve', '/configs', '--cache-dir=/tmp/cache', '--cache-only'],
      });
      expect((await run(`${registry.host}/cache-only:v1`)).code).toBe(2);
      // Not opm at all.
      await push('serves-shell', [[file('configs/foo/catalog.yaml', catalog)]], configs, {
        Entrypoint: ['/bin/sh', '-c'],
        Cmd: ['exec /bin/opm serve /other'],
      });
      expect((await run(`${registry.host}/serves-shell:v1`)).code).toBe(2);
      // A layer above removes /configs: the image serves nothing, whatever lies below.
      await push(
        'configs-removed',
        [[file('configs/foo/catalog.yaml', catalog)], [file('.wh.configs', '')]],
        configs,
        { ...opm, Cmd: ['serve', '/configs'] },
      );
      const removed = await run(`${registry.host}/configs-removed:v1`);
      expect(removed.code).toBe(2);
      expect(removed.err).toContain('removes /configs');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
