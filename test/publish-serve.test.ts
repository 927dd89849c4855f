// The built catalog image really serves: a base image holding the real opm as /bin/opm is
// pushed to a docker-registry on 127.0.0.1, catalog-bot builds and pushes the catalog image
// (with opm's pre-built cache), skopeo + umoci unpack it, its entrypoint and command start,
// and the gRPC answers must equal what the catalog files say. Also: the cache layer is
// reused so the same content gives the same digest, and a base without a runnable opm
// falls back to the cache-less image with a warning.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  symlinkSync,
  writeFileSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DirectorySource } from '../src/catalog/fbc/source.js';
import { clearCacheLayers, hostPlatform, NoCacheError, scanTar } from '../src/publish/cache.js';
import { CACHE_KEY_ANNOTATION } from '../src/publish/image.js';
import { createTar, gzipFixed, type TarEntry } from '../src/publish/tar.js';
import { blob, OCI_CONFIG, OCI_LAYER_GZIP, OCI_LAYER_TAR, OCI_MANIFEST, sha256 } from '../src/publish/oci.js';
import { CACHED_CMD, ENTRYPOINT, UNCACHED_CMD } from '../src/publish/image.js';
import { buildCatalogImage, commitTime, publishCatalog } from '../src/publish/publish.js';
import { RegistryClient, type RepoRef } from '../src/publish/registry.js';
import { publishCheck } from '../src/publish/report.js';
import { GrpcClient, messages, str, waitServing } from './helpers/grpc.js';
import { jsonStream, OPM, SHARED_DATA } from './helpers/oracle.js';
import {
  freePort,
  haveRegistryTools,
  pullAndUnpack,
  startRegistry,
  type RunningRegistry,
} from './helpers/registry.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/valid-catalog', import.meta.url));
const V421 = join(SHARED_DATA, 'real-catalogs/community-operators-prod/catalogs/v4.21');
// A few small real packages next to the fixture: several packages, channels and bundles.
const REAL_PACKAGES = ['libredb-studio-operator', 'nfs-provisioner-operator', 'ecr-secret-operator'];
const canRun =
  haveRegistryTools && existsSync(OPM) && existsSync(V421) && hostPlatform().architecture === 'amd64';

type Meta = Record<string, unknown> & { schema?: string; name?: string; package?: string };

/** Every catalog object under a directory, read independently of catalog-bot's loader. */
function catalogObjects(dir: string): Meta[] {
  const out: Meta[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    if (entry.name.endsWith('.json')) out.push(...(jsonStream(text) as Meta[]));
    else if (/\.ya?ml$/.test(entry.name))
      out.push(
        ...parseAllDocuments(text)
          .map((d) => d.toJSON() as Meta)
          .filter(Boolean),
      );
  }
  return out;
}

/** Channel head: the entry no other entry replaces or skips. */
function channelHead(channel: Meta): string {
  const entries = channel.entries as { name: string; replaces?: string; skips?: string[] }[];
  const replaced = new Set(entries.flatMap((e) => [...(e.replaces ? [e.replaces] : []), ...(e.skips ?? [])]));
  const heads = entries.filter((e) => !replaced.has(e.name));
  expect(heads, `${channel.package}/${channel.name} has one head`).toHaveLength(1);
  return heads[0]!.name;
}

/** A single-platform base image for this machine whose only layer holds `files`. */
async function pushBase(
  client: RegistryClient,
  ref: RepoRef & { tag: string },
  files: { path: string; data: Buffer; mode?: number }[],
  compress: boolean,
): Promise<void> {
  const dirs = new Set(
    files.flatMap((f) =>
      f.path
        .split('/')
        .slice(0, -1)
        .map((_, i, a) => a.slice(0, i + 1).join('/')),
    ),
  );
  const entries: TarEntry[] = [
    ...[...dirs].sort().map((path): TarEntry => ({ path, type: 'dir' })),
    ...files.map((f): TarEntry => ({ path: f.path, type: 'file', data: f.data, mode: f.mode ?? 0o755 })),
  ];
  const tar = createTar(entries);
  // The real opm is ~100 MB: an uncompressed layer keeps the test from spending seconds in gzip.
  const layer = compress ? blob(OCI_LAYER_GZIP, await gzipFixed(tar)) : blob(OCI_LAYER_TAR, tar);
  const config = blob(
    OCI_CONFIG,
    Buffer.from(
      JSON.stringify({
        ...hostPlatform(),
        config: { Env: ['PATH=/bin'], User: '1001' },
        rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
        history: [{ created: '2020-01-01T00:00:00Z', created_by: 'test base' }],
      }),
    ),
  );
  for (const b of [layer, config]) await client.ensureBlob(ref, b.descriptor.digest, b.data);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: config.descriptor,
      layers: [layer.descriptor],
    }),
  );
  await client.putManifest(ref, ref.tag, OCI_MANIFEST, manifest);
}

interface Served {
  child: ChildProcess;
  port: number;
  log: () => string;
  stop: () => Promise<void>;
}

/**
 * Start an unpacked image's entrypoint + command (umoci's runtime config.json) as a process.
 * Absolute paths in the arguments are taken inside the unpacked root filesystem: the test
 * needs no container runtime (the real opm is a host binary).
 */
async function startUnpacked(bundle: string): Promise<Served> {
  const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as {
    process: { args: string[]; env?: string[] };
  };
  const rootfs = join(bundle, 'rootfs');
  const inRoot = (arg: string): string =>
    arg.startsWith('/')
      ? join(rootfs, arg)
      : arg.replace(/^(--[^=]+=)(\/.*)$/, (_, flag: string, p: string) => flag + join(rootfs, p));
  const [command, ...args] = spec.process.args.map(inRoot);
  const port = await freePort();
  // -p: a free port; --pprof-addr=: no startup profiler on localhost:6060 (shared by parallel runs).
  const child = spawn(command!, [...args, '-p', String(port), '--pprof-addr='], {
    cwd: rootfs,
    env: Object.fromEntries(
      (spec.process.env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    ),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  return {
    child,
    port,
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

describe('reading base layers', () => {
  it('refuses a tar header with a negative size instead of reading the same header forever', () => {
    const header = Buffer.alloc(1024);
    header.write('bin/opm', 0, 'ascii');
    header.write('-1750\0', 124, 'ascii'); // parseInt(..., 8) reads -1000
    header.write('0', 156, 'ascii');
    expect(() => scanTar(header, new Set(['bin/opm']))).toThrow(NoCacheError);
  });
});

describe('image created time', () => {
  it('is the commit time, in UTC, whatever the committer time zone', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-created-'));
    try {
      const git = (...args: string[]) =>
        spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], {
          encoding: 'utf8',
          env: { ...process.env, GIT_COMMITTER_DATE: '2024-05-06T09:08:09+02:00' },
        });
      git('init', '-q');
      git('commit', '-q', '--allow-empty', '-m', 'c');
      expect(await commitTime(repo, 'HEAD')).toBe('2024-05-06T07:08:09Z');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canRun)('the catalog image serves (real opm, real registry)', () => {
  let registry: RunningRegistry;
  let work: string;
  let catalog: string;
  const client = new RegistryClient({ insecureHosts: ['127.0.0.1'], backoffMs: 10 });
  const served: Served[] = [];
  const options = {
    root: 'catalogs/v1',
    repoUrl: 'https://github.com/example/catalogs',
    commit: '0123456789abcdef0123456789abcdef01234567',
    created: '2024-05-06T07:08:09Z',
  };

  beforeAll(async () => {
    // These tests name their bases by tag: trust the tags (one test below pins by digest).
    process.env.CATALOG_BOT_OPM_CACHE = 'on';
    registry = await startRegistry();
    work = mkdtempSync(join(tmpdir(), 'catalog-bot-serve-'));
    catalog = join(work, 'catalog');
    cpSync(FIXTURE, catalog, { recursive: true });
    for (const p of REAL_PACKAGES) cpSync(join(V421, p), join(catalog, p), { recursive: true });
    await pushBase(
      client,
      { registry: registry.host, repository: 'base/opm', tag: 'real' },
      [{ path: 'bin/opm', data: readFileSync(OPM) }],
      false,
    );
  }, 60_000);

  afterAll(async () => {
    delete process.env.CATALOG_BOT_OPM_CACHE;
    await Promise.all(served.map((s) => s.stop()));
    client.close();
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('starts with its pre-built cache and answers ListPackages, GetPackage and GetBundleForChannel as the catalog says', async () => {
    const tag = `${registry.host}/catalogs/served:v1`;
    const [result] = await publishCatalog({
      source: new DirectorySource(catalog),
      tags: [tag],
      baseImage: `${registry.host}/base/opm:real`,
      client,
      ...options,
    });
    expect(result?.warnings).toBeUndefined();

    const rootfs = await pullAndUnpack(tag, 'amd64', join(work, 'served'));
    const bundle = dirname(rootfs);
    const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as {
      process: { args: string[] };
    };
    expect(spec.process.args).toEqual([...ENTRYPOINT, ...CACHED_CMD]);
    expect(existsSync(join(rootfs, 'tmp/cache/pogreb.v1/digest'))).toBe(true);

    const server = await startUnpacked(bundle);
    served.push(server);
    const address = `127.0.0.1:${server.port}`;
    await waitServing(address, 20_000, () =>
      server.child.exitCode !== null
        ? `exit ${server.child.exitCode}: ${server.log().slice(-500)}`
        : undefined,
    );
    // With integrity enforced, opm refuses a missing or stale cache; this says it used ours.
    expect(server.log()).toMatch(/found existing cache contents/);
    expect(server.log()).not.toMatch(/building cache/);

    const objects = catalogObjects(catalog);
    const packages = objects.filter((o) => o.schema === 'olm.package');
    const channels = objects.filter((o) => o.schema === 'olm.channel');
    const bundles = new Map(objects.filter((o) => o.schema === 'olm.bundle').map((o) => [o.name, o]));
    expect(packages.length).toBe(REAL_PACKAGES.length + 1);

    const grpc = new GrpcClient(address);
    try {
      expect((await grpc.listPackages()).sort()).toEqual(packages.map((p) => p.name).sort());
      for (const pkg of packages) {
        const own = channels.filter((c) => c.package === pkg.name);
        const answer = await grpc.getPackage(pkg.name!);
        expect(str(answer, 1)).toBe(pkg.name);
        expect(str(answer, 3)).toBe(pkg.defaultChannel);
        const answeredChannels = messages(answer, 2).map((c) => [str(c, 1), str(c, 2)]);
        expect(answeredChannels.sort()).toEqual(own.map((c) => [c.name, channelHead(c)]).sort());
        for (const channel of own) {
          const head = channelHead(channel);
          const b = await grpc.getBundleForChannel(pkg.name!, channel.name!);
          const expected = bundles.get(head)!;
          const entry = (
            channel.entries as { name: string; replaces?: string; skips?: string[]; skipRange?: string }[]
          ).find((e) => e.name === head)!;
          const version = (expected.properties as { type: string; value: { version?: string } }[]).find(
            (p) => p.type === 'olm.package',
          )?.value.version;
          expect({
            csvName: str(b, 1),
            packageName: str(b, 2),
            channelName: str(b, 3),
            bundlePath: str(b, 6),
            version: str(b, 9),
            skipRange: str(b, 10),
          }).toEqual({
            csvName: head,
            packageName: pkg.name,
            channelName: channel.name,
            bundlePath: expected.image,
            version,
            skipRange: entry.skipRange ?? '',
          });
          // opm leaves replaces/skips unset in this answer (as the sqlite-era API did); the
          // bundle's properties carry its package and version.
          const properties = messages(b, 12).map((p) => [str(p, 1), str(p, 2)]);
          expect(properties).toContainEqual([
            'olm.package',
            JSON.stringify({ packageName: pkg.name, version }),
          ]);
        }
      }
      // A package the catalog does not have is an error, not an empty answer.
      await expect(grpc.getBundleForChannel('no-such-package', 'stable')).rejects.toThrow(/grpc-status/);
    } finally {
      grpc.close();
    }
  }, 60_000);

  it('gives the same digest for the same content: the cache layer is reused in-process and from the pushed image', async () => {
    const tag = `${registry.host}/catalogs/repro:v1`;
    const publish = () =>
      publishCatalog({
        source: new DirectorySource(catalog),
        tags: [tag],
        baseImage: `${registry.host}/base/opm:real`,
        client,
        ...options,
      });
    // The catalog of the test above: its cache layer was built there, in this process.
    const [first] = await publish();
    const [again] = await publish();
    expect(again?.digest).toBe(first?.digest);
    // A restarted bot (nothing in memory) finds the layer by its key in the image it pushed.
    clearCacheLayers();
    const [restarted] = await publish();
    expect(restarted?.digest).toBe(first?.digest);

    const image = await buildCatalogImage({
      source: new DirectorySource(catalog),
      baseImage: `${registry.host}/base/opm:real`,
      client,
      ...options,
    });
    expect(image.top.descriptor.digest).toBe(first?.digest);
    const manifest = JSON.parse(image.top.data.toString('utf8')) as {
      layers: { annotations?: Record<string, string> }[];
    };
    expect(manifest.layers.at(-1)?.annotations?.[CACHE_KEY_ANNOTATION]).toBe(
      `${image.layer.digest} ${image.base.digest}`,
    );
    const configText = image.platforms[0]!.config.data.toString('utf8');
    const config = JSON.parse(configText) as {
      created: string;
      config: { Cmd: string[] };
      history: { created: string; created_by: string }[];
    };
    expect(config.created).toBe(options.created);
    expect(config.config.Cmd).toEqual(CACHED_CMD);
    expect(config.history.slice(-2).map((h) => h.created)).toEqual([options.created, options.created]);
    // No path of the building machine in the image.
    expect(configText).not.toContain(work);
    expect(configText).not.toContain('catalog-bot-opm-cache-');
    expect(configText).not.toContain(catalog);
  }, 60_000);

  it('finds /bin/opm through a symlinked /bin in a lower layer, and not under a whiteout', async () => {
    // Layers made by the system tar: /bin -> usr/bin (as on merged-/usr bases), and a stand-in
    // opm that writes a cache file where it is told; a second base deletes it in a top layer.
    const dir = join(work, 'linked');
    const scratch = join(work, 'scratch');
    mkdirSync(scratch);
    mkdirSync(join(dir, 'usr/bin'), { recursive: true });
    writeFileSync(
      join(dir, 'usr/bin/opm'),
      '#!/bin/sh\nfor a; do case "$a" in --cache-dir=*) d="${a#--cache-dir=}";; esac; done\nmkdir -p "$d/db" && echo ok > "$d/db/index"\n',
      { mode: 0o755 },
    );
    symlinkSync('usr/bin', join(dir, 'bin'));
    mkdirSync(join(dir, 'top/usr/bin'), { recursive: true });
    writeFileSync(join(dir, 'top/usr/bin/.wh.opm'), '');
    const tarOf = (cwd: string, paths: string[]): Buffer =>
      spawnSync('tar', ['-C', cwd, '-c', '--owner=0', '--group=0', ...paths], { maxBuffer: 2 ** 24 }).stdout;
    const lower = blob(OCI_LAYER_TAR, tarOf(dir, ['bin', 'usr']));
    const upper = blob(OCI_LAYER_TAR, tarOf(join(dir, 'top'), ['usr']));
    const push = async (repository: string, layers: (typeof lower)[]): Promise<string> => {
      const ref = { registry: registry.host, repository, tag: 'v1' };
      const config = blob(
        OCI_CONFIG,
        Buffer.from(
          JSON.stringify({
            ...hostPlatform(),
            rootfs: { type: 'layers', diff_ids: layers.map((l) => sha256(l.data)) },
          }),
        ),
      );
      for (const b of [...layers, config]) await client.ensureBlob(ref, b.descriptor.digest, b.data);
      const manifest = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: config.descriptor,
        layers: layers.map((l) => l.descriptor),
      };
      await client.putManifest(ref, 'v1', OCI_MANIFEST, Buffer.from(JSON.stringify(manifest)));
      return `${registry.host}/${repository}:v1`;
    };
    const linked = await buildCatalogImage({
      source: new DirectorySource(FIXTURE),
      baseImage: await push('base/linked', [lower]),
      client,
      ...options,
      opmCache: { scratchDir: scratch },
    });
    expect(linked.warnings).toEqual([]);
    expect(linked.cache).toBeDefined();
    const listing = spawnSync('tar', ['-tvz'], {
      input: linked.cache?.data as Buffer,
      encoding: 'utf8',
    }).stdout;
    expect(listing).toMatch(/drwxrwxrwt .* tmp\/\n/);
    expect(listing).toMatch(/-rw-rw-rw- .* tmp\/cache\/db\/index/);
    const deleted = await buildCatalogImage({
      source: new DirectorySource(FIXTURE),
      baseImage: await push('base/deleted', [lower, upper]),
      client,
      ...options,
      opmCache: { scratchDir: scratch },
    });
    expect(deleted.cache).toBeUndefined();
    expect(deleted.warnings[0]).toMatch(/has no \/bin\/opm/);
    // Nothing of the cache build is left behind.
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('CATALOG_BOT_OPM_CACHE=off never runs the base opm: the cache-less image, no warning', async () => {
    process.env.CATALOG_BOT_OPM_CACHE = 'off';
    try {
      const image = await buildCatalogImage({
        source: new DirectorySource(FIXTURE),
        baseImage: `${registry.host}/base/opm:real`,
        client,
        ...options,
      });
      expect(image.cache).toBeUndefined();
      expect(image.warnings).toEqual([]);
      expect(JSON.parse(image.platforms[0]!.config.data.toString('utf8')).config.Cmd).toEqual(UNCACHED_CMD);
    } finally {
      process.env.CATALOG_BOT_OPM_CACHE = 'on';
    }
  });

  it("runs the base's opm only from a base pinned by digest (a tag's owner could swap the binary)", async () => {
    delete process.env.CATALOG_BOT_OPM_CACHE;
    try {
      const build = (baseImage: string) =>
        buildCatalogImage({ source: new DirectorySource(FIXTURE), baseImage, client, ...options });
      const byTag = await build(`${registry.host}/base/opm:real`);
      expect(byTag.cache).toBeUndefined();
      expect(byTag.warnings[0]).toMatch(/not pinned by digest/);
      expect(JSON.parse(byTag.platforms[0]!.config.data.toString('utf8')).config.Cmd).toEqual(UNCACHED_CMD);
      const pinned = await build(`${registry.host}/base/opm@${byTag.base.digest}`);
      expect(pinned.warnings).toEqual([]);
      expect(pinned.cache).toBeDefined();
      expect(JSON.parse(pinned.platforms[0]!.config.data.toString('utf8')).config.Cmd).toEqual(CACHED_CMD);
    } finally {
      process.env.CATALOG_BOT_OPM_CACHE = 'on';
    }
  });

  it('falls back to the cache-less image with a warning when the base has no runnable opm', async () => {
    const cases: {
      repository: string;
      files: { path: string; data: Buffer; mode?: number }[];
      reason: RegExp;
    }[] = [
      {
        repository: 'base/none',
        files: [{ path: 'etc/os-release', data: Buffer.from('x\n'), mode: 0o644 }],
        reason: /has no \/bin\/opm/,
      },
      {
        repository: 'base/broken',
        files: [{ path: 'bin/opm', data: Buffer.from('#!/bin/sh\necho broken >&2\nexit 3\n') }],
        reason: /failed \(exit 3\): broken/,
      },
    ];
    for (const c of cases) {
      await pushBase(client, { registry: registry.host, repository: c.repository, tag: 'v1' }, c.files, true);
      const scratch = mkdtempSync(join(work, 'scratch-'));
      const results = await publishCatalog({
        source: new DirectorySource(FIXTURE),
        tags: [`${registry.host}/catalogs/fallback:${c.repository.split('/')[1]}`],
        baseImage: `${registry.host}/${c.repository}:v1`,
        client,
        ...options,
        opmCache: { scratchDir: scratch },
      });
      expect(results[0]?.warnings?.[0]).toMatch(c.reason);
      expect(readdirSync(scratch)).toEqual([]); // opm failed: its directory is gone all the same
      const image = await buildCatalogImage({
        source: new DirectorySource(FIXTURE),
        baseImage: `${registry.host}/${c.repository}:v1`,
        client,
        ...options,
      });
      expect(image.cache).toBeUndefined();
      expect(JSON.parse(image.platforms[0]!.config.data.toString('utf8')).config.Cmd).toEqual(UNCACHED_CMD);
      const check = publishCheck([{ root: 'catalogs/v1', results }]);
      expect(check.conclusion).toBe('success');
      expect(check.summary).toMatch(/Warning: no pre-built opm cache: /);
      expect(check.findings.map((f) => f.level)).toEqual(['warning']);
    }
  }, 60_000);
});
