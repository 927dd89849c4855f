// Building and publishing catalog images, checked with independent tools: skopeo pulls
// what we pushed, umoci unpacks it, and the /configs tree must equal the catalog root.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectorySource, GitTreeSource } from '../src/catalog/fbc/source.js';
import { CONFIGS_LABEL, ENTRYPOINT, UNCACHED_CMD } from '../src/publish/image.js';
import { catalogLayer } from '../src/publish/layer.js';
import { createTar, entriesUnder, gzipFixed } from '../src/publish/tar.js';
import { OCI_INDEX, OCI_MANIFEST } from '../src/publish/oci.js';
import { buildCatalogImage, expandTags, publishCatalog } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { SHARED_DATA } from './helpers/oracle.js';
import { fileTree } from './helpers/file-tree.js';
import {
  blobUploads,
  haveRegistryTools,
  pullAndUnpack,
  pushTestBase,
  run,
  skopeoInspect,
  startProxy,
  startRegistry,
  startTokenRegistry,
  type RunningProxy,
  type RunningRegistry,
  type TestBase,
  writeSkopeoAuth,
} from './helpers/registry.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/valid-catalog', import.meta.url));
const V416 = join(SHARED_DATA, 'real-catalogs/community-operators-prod/catalogs/v4.16');

function expectSameTree(actual: string, expected: string): void {
  const a = fileTree(actual);
  const e = fileTree(expected);
  expect([...a.keys()].sort()).toEqual([...e.keys()].sort());
  for (const [path, bytes] of e) expect(a.get(path)?.equals(bytes), path).toBe(true);
}

describe('catalog layer', () => {
  it('is a sorted tar with parent directories, uid/gid 0, fixed mtime and modes', async () => {
    const layer = await catalogLayer(new DirectorySource(FIXTURE));
    const listing = spawnSync('tar', ['-tvz', '--numeric-owner', '--full-time'], {
      input: layer.data,
      encoding: 'utf8',
    });
    expect(listing.status).toBe(0);
    const lines = listing.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/).pop())).toEqual([
      'configs/',
      'configs/example-operator/',
      'configs/example-operator/catalog.yaml',
    ]);
    for (const l of lines) {
      expect(l).toMatch(/ 0\/0 /);
      expect(l).toContain('1970-01-01 00:00:00');
    }
    expect(lines[0]).toMatch(/^drwxr-xr-x/);
    expect(lines[2]).toMatch(/^-rw-r--r--/);
    // gzip header: magic, deflate, no flags (no name), mtime 0, XFL 0, OS unix
    expect([...layer.data.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
  });

  it('gives the same digest for the same content, from a directory or from a git commit', async () => {
    const a = await catalogLayer(new DirectorySource(FIXTURE));
    const b = await catalogLayer(new DirectorySource(FIXTURE));
    expect(b.digest).toBe(a.digest);
    const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-git-'));
    cpSync(FIXTURE, join(repo, 'catalogs', 'v1'), { recursive: true });
    const git = (...args: string[]): Promise<string> =>
      run('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args]);
    await git('init', '-q');
    await git('add', '.');
    await git('commit', '-qm', 'catalog');
    const fromGit = await catalogLayer(new GitTreeSource(repo, 'HEAD', 'catalogs/v1'));
    expect(fromGit.digest).toBe(a.digest);
    expect(fromGit.diffId).toBe(a.diffId);
    rmSync(repo, { recursive: true, force: true });
  });

  it('holds paths longer than 100 bytes (ustar prefix or PAX)', async () => {
    const long = `${'d'.repeat(120)}/${'f'.repeat(90)}.json`;
    const longer = `${'e'.repeat(200)}.json`;
    const files = new Map([
      [long, Buffer.from('{}')],
      [longer, Buffer.from('[]')],
    ]);
    const tgz = await gzipFixed(createTar(entriesUnder('configs', files)));
    const listing = spawnSync('tar', ['-tz'], { input: tgz, encoding: 'utf8' });
    expect(listing.status).toBe(0);
    expect(listing.stdout.trim().split('\n')).toEqual(
      [`configs/`, `configs/${'d'.repeat(120)}/`, `configs/${long}`, `configs/${longer}`].sort(),
    );
  });

  it('expands {root} and {sha} in tags', () => {
    expect(
      expandTags(
        ['r.example/org/catalog:{root}', 'r.example/org/catalog:{root}-{sha}'],
        'catalogs/v4.16',
        'abcdef0123456789abcd',
      ),
    ).toEqual(['r.example/org/catalog:v4.16', 'r.example/org/catalog:v4.16-abcdef012345']);
    expect(() => expandTags(['r.example/c:{sha}'], 'catalogs/v1', '')).toThrow(/uses \{sha\}, but no commit/);
  });
});

describe.skipIf(!haveRegistryTools)('publishing to docker-registry', () => {
  let registry: RunningRegistry;
  let other: RunningRegistry;
  let token: RunningProxy;
  let faulty: RunningProxy;
  let failNext: { method: string; match: RegExp; times: number } | undefined;
  let base: TestBase;
  let work: string;
  let authFile: string;
  const clients: RegistryClient[] = [];
  const client = (over: Partial<ConstructorParameters<typeof RegistryClient>[0]> = {}): RegistryClient => {
    const c = new RegistryClient({
      credentials: () => ({ username: 'bot', password: 'secret', from: 'test' }),
      insecureHosts: ['127.0.0.1'],
      backoffMs: 10,
      ...over,
    });
    clients.push(c);
    return c;
  };
  const options = {
    repoUrl: 'https://github.com/example/catalogs',
    commit: '0123456789abcdef0123456789abcdef01234567',
  };
  // The fixture catalog's root on the test base; each test names its tags and what else differs.
  const publishFixture = (over: Partial<Parameters<typeof publishCatalog>[0]> & { tags: string[] }) =>
    publishCatalog({
      source: new DirectorySource(FIXTURE),
      root: 'catalogs/v1',
      baseImage: `${token.host}/base/opm:v1`,
      ...over,
      client: over.client ?? client(),
    });

  beforeAll(async () => {
    [{ registry, proxy: token }, other] = await Promise.all([startTokenRegistry(), startRegistry()]);
    faulty = await startProxy(other.port, {
      fault: (req) => {
        if (
          failNext &&
          failNext.times > 0 &&
          req.method === failNext.method &&
          failNext.match.test(req.url ?? '')
        ) {
          failNext.times--;
          return 500;
        }
        return undefined;
      },
    });
    base = await pushTestBase(client(), { registry: token.host, repository: 'base/opm', tag: 'v1' });
    work = mkdtempSync(join(tmpdir(), 'catalog-bot-publish-'));
    authFile = writeSkopeoAuth(work, token.host);
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all([token?.stop(), faulty?.stop()]);
    await Promise.all([registry?.stop(), other?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('builds on a multi-arch base and pushes: skopeo and umoci see every platform, /configs and the opm config', async () => {
    const tag = `${token.host}/catalogs/example:v1`;
    const c = client();
    const [result] = await publishFixture({ tags: [tag], client: c, ...options });
    expect(result?.tag).toBe(tag);
    expect(c.stats.mounts).toBe(2); // one base layer per platform, mounted from the base repository
    // tokens are cached per scope set: one served both mounts
    const mountScopes = 'repository:base/opm:pull repository:catalogs/example:pull,push';
    expect(token.tokenRequests.filter((t) => [...t.scopes].sort().join(' ') === mountScopes)).toHaveLength(1);

    const raw = JSON.parse(await skopeoInspect(tag, authFile, '--raw'));
    expect(raw.mediaType).toBe(OCI_INDEX);
    expect(raw.manifests.map((m: { platform: { architecture: string } }) => m.platform.architecture)).toEqual(
      ['amd64', 'arm64'],
    );
    expect(raw.annotations['org.opencontainers.image.source']).toBe(options.repoUrl);
    expect(raw.annotations['org.opencontainers.image.revision']).toBe(options.commit);
    const digest = await skopeoInspect(tag, authFile, '--format', '{{.Digest}}');
    expect(digest.trim()).toBe(result?.digest);

    for (const p of base.platforms) {
      const config = JSON.parse(
        await skopeoInspect(
          tag,
          authFile,
          '--config',
          '--override-arch',
          p.architecture,
          '--override-os',
          'linux',
        ),
      );
      expect(config.architecture).toBe(p.architecture);
      expect(config.config.Labels[CONFIGS_LABEL]).toBe('/configs');
      expect(config.config.Labels['base.label']).toBe('kept');
      expect(config.config.Entrypoint).toEqual(ENTRYPOINT);
      expect(config.config.Cmd).toEqual(UNCACHED_CMD); // the test base's opm is a script that builds no cache
      expect(config.config.Env).toEqual(['PATH=/bin']);
      expect(config.rootfs.diff_ids).toHaveLength(2);
      expect(config.history.at(-1)).toMatchObject({ created: '1970-01-01T00:00:00Z' });

      const rootfs = await pullAndUnpack(tag, p.architecture, work, authFile);
      expectSameTree(join(rootfs, 'configs'), FIXTURE);
      // the base layer is there too, the right one for the platform
      for (const [path, text] of Object.entries(p.files))
        expect(readFileSync(join(rootfs, path), 'utf8')).toBe(text);
    }
  });

  it('is reproducible: two builds give the same digests, and a second push uploads no blob', async () => {
    const build = () =>
      buildCatalogImage({
        source: new DirectorySource(FIXTURE),
        baseImage: `${token.host}/base/opm:v1`,
        client: client(),
        root: 'catalogs/v1',
        ...options,
      });
    const [a, b] = [await build(), await build()];
    expect(b.top.descriptor.digest).toBe(a.top.descriptor.digest);
    expect(b.layer.digest).toBe(a.layer.digest);
    expect(b.platforms.map((p) => p.manifest.descriptor.digest)).toEqual(
      a.platforms.map((p) => p.manifest.descriptor.digest),
    );
    // A different commit changes the annotations, so the manifests, never the layer.
    const c = await buildCatalogImage({
      source: new DirectorySource(FIXTURE),
      baseImage: `${token.host}/base/opm:v1`,
      client: client(),
      root: 'catalogs/v1',
      ...options,
      commit: 'f'.repeat(40),
    });
    expect(c.layer.digest).toBe(a.layer.digest);
    expect(c.top.descriptor.digest).not.toBe(a.top.descriptor.digest);

    const publish = (tags: string[]) => publishFixture({ tags, ...options });
    const first = await publish([`${token.host}/catalogs/repro:{root}`]);
    expect(first[0]?.digest).toBe(a.top.descriptor.digest);
    const before = token.log.length;
    const again = await publish([`${token.host}/catalogs/repro:v1`, `${token.host}/catalogs/repro:v1-{sha}`]);
    expect(again.map((r) => r.tag)).toEqual([
      `${token.host}/catalogs/repro:v1`,
      `${token.host}/catalogs/repro:v1-0123456789ab`,
    ]);
    expect(again.every((r) => r.digest === a.top.descriptor.digest)).toBe(true);
    const later = token.log.slice(before);
    expect(blobUploads(later)).toEqual([]);
    // the new tag got its manifest; the existing one was left alone
    expect(later.filter((r) => r.method === 'PUT' && r.status === 201).map((r) => r.path)).toEqual([
      '/v2/catalogs/repro/manifests/v1-0123456789ab',
    ]);

    // A new commit with the same catalog: new configs and manifests (the revision label),
    // but the catalog layer and the base layers are found by HEAD and never sent again.
    const third = token.log.length;
    const c3 = client();
    const [next] = await publishFixture({
      tags: [`${token.host}/catalogs/repro:next`],
      client: c3,
      ...options,
      commit: 'e'.repeat(40),
    });
    expect(next?.digest).not.toBe(a.top.descriptor.digest);
    expect(c3.stats.uploads).toBe(2); // the two configs
    expect(c3.stats.mounts).toBe(0);
    const sent = blobUploads(token.log.slice(third)).filter((r) => r.method === 'PUT');
    expect(sent.some((r) => r.path.includes(encodeURIComponent(a.layer.digest)))).toBe(false);
    expect(
      token.log
        .slice(third)
        .some((r) => r.method === 'HEAD' && r.path.endsWith(`/blobs/${a.layer.digest}`) && r.status === 200),
    ).toBe(true);
  });

  it('copies base layers from another registry, and survives a 500 mid-upload', async () => {
    const tag = `${faulty.host}/catalogs/copied:v1`;
    failNext = { method: 'PUT', match: /\/blobs\/uploads\//, times: 1 };
    const c = client();
    const [result] = await publishFixture({ tags: [tag], client: c, ...options });
    expect(failNext.times).toBe(0); // the fault was hit, and retried
    expect(c.stats.mounts).toBe(0);
    expect(c.stats.uploads).toBe(5); // 2 base layers + 2 configs + the catalog layer
    const rootfs = await pullAndUnpack(tag, 'arm64', join(work, 'copied'));
    expectSameTree(join(rootfs, 'configs'), FIXTURE);
    expect(readFileSync(join(rootfs, 'etc/base-release'), 'utf8')).toBe('base arm64\n');
    expect(result?.digest).toMatch(/^sha256:/);
  });

  it('builds on a Docker v2 single-manifest base, producing an OCI manifest', async () => {
    await pushTestBase(
      client(),
      { registry: token.host, repository: 'base/docker', tag: 'v1' },
      { docker: true },
    );
    const tag = `${token.host}/catalogs/single:v1`;
    const [result] = await publishFixture({ tags: [tag], baseImage: `${token.host}/base/docker:v1` });
    const raw = JSON.parse(await skopeoInspect(tag, authFile, '--raw'));
    expect(raw.mediaType).toBe(OCI_MANIFEST);
    expect(raw.layers.map((l: { mediaType: string }) => l.mediaType)).toEqual([
      'application/vnd.oci.image.layer.v1.tar+gzip',
      'application/vnd.oci.image.layer.v1.tar+gzip',
    ]);
    expect(result?.digest).toMatch(/^sha256:/);
    const rootfs = await pullAndUnpack(tag, 'amd64', join(work, 'single'), authFile);
    expectSameTree(join(rootfs, 'configs'), FIXTURE);
  });

  it('fails clearly with wrong credentials and with the registry down, before pushing anything', async () => {
    const wrong = new RegistryClient({
      credentials: () => ({ username: 'bot', password: 'nope', from: 'REGISTRY_USERNAME/REGISTRY_PASSWORD' }),
      insecureHosts: ['127.0.0.1'],
    });
    clients.push(wrong);
    await expect(
      publishCatalog({
        source: new DirectorySource(FIXTURE),
        root: 'r',
        tags: [`${token.host}/x/y:z`],
        baseImage: `${faulty.host}/none/here:1`,
        client: wrong,
      }),
    ).rejects.toThrow(/manifest none\/here:1 failed: HTTP 404 MANIFEST_UNKNOWN/);
    await expect(
      publishCatalog({
        source: new DirectorySource(FIXTURE),
        root: 'r',
        tags: [`${token.host}/x/y:z`],
        baseImage: `${token.host}/base/opm:v1`,
        client: wrong,
      }),
    ).rejects.toThrow(new RegExp(`wrong credentials: registry ${token.host.replace(/\./g, '\\.')}.*"bot"`));
    await expect(
      publishCatalog({
        source: new DirectorySource(FIXTURE),
        root: 'r',
        tags: [`127.0.0.1:1/x/y:z`],
        baseImage: `${token.host}/base/opm:v1`,
        client: client(),
      }),
    ).rejects.toThrow(/cannot reach registry 127\.0\.0\.1:1 /);
    await expect(
      publishCatalog({
        source: new DirectorySource(FIXTURE),
        root: 'r',
        tags: [`${token.host}/x/y@sha256:${'a'.repeat(64)}`],
        baseImage: 'b',
        client: client(),
      }),
    ).rejects.toThrow(/a digest cannot be a push target/);
  });

  it.skipIf(!existsSync(V416))(
    'publishes the real v4.16 catalog; its /configs equals the root byte for byte',
    async () => {
      const tag = `${token.host}/catalogs/community:v4.16`;
      const [result] = await publishCatalog({
        source: new DirectorySource(V416),
        root: 'catalogs/v4.16',
        tags: [tag],
        baseImage: `${token.host}/base/opm:v1`,
        client: client(),
        ...options,
      });
      expect(result?.digest).toMatch(/^sha256:/);
      const rootfs = await pullAndUnpack(tag, 'amd64', join(work, 'v416'), authFile);
      expectSameTree(join(rootfs, 'configs'), V416);
    },
  );
});
