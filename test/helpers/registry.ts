// Real registries for tests: Debian's CNCF distribution (`docker-registry`) on 127.0.0.1,
// optionally behind a Node proxy that demands token (or basic) auth, counts requests and
// injects faults. Plus a tiny multi-arch base image to build on.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTar, gzipFixed } from '../../src/publish/tar.js';
import {
  blob,
  DOCKER_CONFIG,
  DOCKER_LAYER_GZIP,
  DOCKER_MANIFEST,
  OCI_CONFIG,
  OCI_INDEX,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
  sha256,
  type Blob,
  type Descriptor,
} from '../../src/publish/oci.js';
import { afterAll, beforeAll } from 'vitest';
import { RegistryClient, type RegistryClientOptions, type RepoRef } from '../../src/publish/registry.js';

export const haveRegistryTools = ['docker-registry', 'skopeo', 'umoci'].every(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0,
);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch (err) {
      if (Date.now() > until)
        throw new Error(`${url} did not come up: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export interface RunningRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  port: number;
  storage: string;
  stop(): Promise<void>;
  /** Stop the registry process, keeping its storage: the registry is down until `resume`. */
  pause(): Promise<void>;
  /** Start it again on the same port with the same storage. */
  resume(): Promise<void>;
}

/** `docker-registry serve` with filesystem storage in a fresh temp dir, plain HTTP on 127.0.0.1. */
export async function startRegistry(): Promise<RunningRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-registry-'));
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const serve = async (): Promise<void> => {
    const started: ChildProcess = spawn('docker-registry', ['serve', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    started.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await waitFor(`http://127.0.0.1:${port}/v2/`);
    } catch (err) {
      started.kill('SIGKILL');
      throw new Error(`${(err as Error).message}\n${stderr}`, { cause: err });
    }
    child = started;
  };
  const halt = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return resolve();
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  await serve();
  return {
    host: `127.0.0.1:${port}`,
    port,
    storage: dir,
    stop: async () => {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
    pause: halt,
    resume: serve,
  };
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

export interface ProxyOptions {
  /** `bearer`: token flow with a /token endpoint; `basic`: Basic on every request; none: open. */
  auth?: 'bearer' | 'basic';
  username?: string;
  password?: string;
  /** Return a status to answer instead of forwarding, or 'reset' to drop the connection. */
  fault?: (req: IncomingMessage) => number | 'reset' | undefined;
}

export interface RunningProxy {
  host: string;
  port: number;
  log: LoggedRequest[];
  tokenRequests: { scopes: string[]; authorized: boolean }[];
  faults: number;
  stop(): Promise<void>;
}

/** The login the tests' token proxies accept, and their RegistryClients and skopeo give. */
export const BOT_LOGIN = { username: 'bot', password: 'secret' };

export interface TokenRegistry {
  registry: RunningRegistry;
  /** In front of `registry`: bearer tokens, for BOT_LOGIN only. Clients talk to its `host`. */
  proxy: RunningProxy;
  stop(): Promise<void>;
}

/** A registry that, as a real one does, demands bearer tokens: `docker-registry` behind a token proxy. */
export async function startTokenRegistry(): Promise<TokenRegistry> {
  const registry = await startRegistry();
  const proxy = await startProxy(registry.port, { auth: 'bearer', ...BOT_LOGIN });
  return {
    registry,
    proxy,
    async stop() {
      await proxy.stop();
      await registry.stop();
    },
  };
}

/** skopeo's auth file for BOT_LOGIN at `host`, written as `<dir>/auth.json`; returns its path. */
export function writeSkopeoAuth(dir: string, host: string): string {
  const file = join(dir, 'auth.json');
  const auth = Buffer.from(`${BOT_LOGIN.username}:${BOT_LOGIN.password}`).toString('base64');
  // skopeo reads only the base64 `auth` form
  writeFileSync(file, JSON.stringify({ auths: { [host]: { auth } } }));
  return file;
}

/** Which repository a /v2 path names and what it needs (for checking token scopes). */
function needs(method: string, url: URL): { repo: string; action: string; from?: string } | undefined {
  const m = /^\/v2\/(.+)\/(?:blobs\/uploads\/[^/]*|blobs\/[^/]+|manifests\/[^/]+|tags\/list)$/.exec(
    url.pathname,
  );
  if (!m) return undefined;
  const action = method === 'GET' || method === 'HEAD' ? 'pull' : 'push';
  const from = url.searchParams.get('from');
  return { repo: m[1] as string, action, ...(from ? { from } : {}) };
}

export async function startProxy(upstreamPort: number, options: ProxyOptions = {}): Promise<RunningProxy> {
  const port = await freePort();
  const tokens = new Map<string, string[]>();
  const state: RunningProxy = {
    host: `127.0.0.1:${port}`,
    port,
    log: [],
    tokenRequests: [],
    faults: 0,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const basicOk = (header: string | undefined): boolean =>
    header === `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;

  const server: Server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const reply = (status: number, headers: Record<string, string> = {}, body = ''): void => {
      state.log.push({ method: req.method ?? '', path: url.pathname + url.search, status });
      req.resume();
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(body);
    };
    if (options.auth === 'bearer' && url.pathname === '/token') {
      const scopes = url.searchParams.getAll('scope');
      const authorized = basicOk(req.headers.authorization);
      state.tokenRequests.push({ scopes, authorized });
      if (!authorized) return reply(401, {}, JSON.stringify({ errors: [{ code: 'UNAUTHORIZED' }] }));
      const token = randomBytes(12).toString('hex');
      tokens.set(token, scopes);
      return reply(200, {}, JSON.stringify({ token, expires_in: 300 }));
    }
    const need = needs(req.method ?? 'GET', url);
    if (options.auth === 'bearer') {
      const granted = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      const allows = (repo: string, action: string): boolean =>
        (granted ?? []).some((s) => {
          const [, r, actions] = s.split(':');
          return r === repo && (actions ?? '').split(',').includes(action);
        });
      const ok =
        granted !== undefined &&
        (!need || (allows(need.repo, need.action) && (!need.from || allows(need.from, 'pull'))));
      if (!ok) {
        const scope = need
          ? `,scope="repository:${need.repo}:${need.action === 'pull' ? 'pull' : 'pull,push'}"`
          : '';
        return reply(
          401,
          { 'WWW-Authenticate': `Bearer realm="http://127.0.0.1:${port}/token",service="test"${scope}` },
          JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }),
        );
      }
    } else if (options.auth === 'basic' && !basicOk(req.headers.authorization)) {
      return reply(
        401,
        { 'WWW-Authenticate': 'Basic realm="test"' },
        JSON.stringify({ errors: [{ code: 'UNAUTHORIZED' }] }),
      );
    }
    const fault = options.fault?.(req);
    if (fault === 'reset') {
      state.faults++;
      state.log.push({ method: req.method ?? '', path: url.pathname + url.search, status: 0 });
      req.socket.destroy();
      return;
    }
    if (fault !== undefined) {
      state.faults++;
      return reply(fault, {}, JSON.stringify({ errors: [{ code: 'UNKNOWN', message: 'injected fault' }] }));
    }
    const headers = { ...req.headers };
    delete headers.authorization;
    const upstream = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers },
      (up) => {
        state.log.push({
          method: req.method ?? '',
          path: url.pathname + url.search,
          status: up.statusCode ?? 0,
        });
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => reply(502));
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const stop = state.stop;
  state.stop = () => {
    server.closeAllConnections();
    return stop();
  };
  return state;
}

/** Requests that move blob bytes (upload sessions, chunks, final PUTs), as the proxy saw them. */
export function blobUploads(log: LoggedRequest[]): LoggedRequest[] {
  return log.filter((r) => /\/blobs\/uploads\//.test(r.path) && r.status !== 401);
}

export interface TestBase {
  ref: RepoRef & { tag: string };
  digest: string;
  /** Per platform: architecture and the base layer's files. */
  platforms: { architecture: string; files: Record<string, string> }[];
}

/** A blob of `mediaType` holding `value` as JSON (configs, manifests, indexes). */
export function jsonBlob(mediaType: string, value: unknown): Blob {
  return blob(mediaType, Buffer.from(JSON.stringify(value)));
}

/** An image manifest (OCI unless `mediaType` says Docker v2) naming `config` and `layers`. */
export function manifestBlob(
  config: Descriptor,
  layers: Descriptor[],
  annotations: Record<string, string> = {},
  mediaType: string = OCI_MANIFEST,
): Blob {
  const extra = Object.keys(annotations).length ? { annotations } : {};
  return jsonBlob(mediaType, { schemaVersion: 2, mediaType, config, layers, ...extra });
}

/** An OCI index of linux images, one manifest per architecture. */
export function indexBlob(images: { manifest: Blob; architecture: string }[]): Blob {
  return jsonBlob(OCI_INDEX, {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: images.map(({ manifest, architecture }) => ({
      ...manifest.descriptor,
      platform: { architecture, os: 'linux' },
    })),
  });
}

async function platformImage(
  architecture: string,
  docker: boolean,
): Promise<{ blobs: Blob[]; manifest: Blob; files: Record<string, string> }> {
  const files = {
    'bin/opm': `#!/bin/sh\necho fake opm for ${architecture}\n`,
    'etc/base-release': `base ${architecture}\n`,
  };
  const tar = createTar([
    { path: 'bin', type: 'dir' },
    { path: 'bin/opm', type: 'file', data: Buffer.from(files['bin/opm']), mode: 0o755 },
    { path: 'etc', type: 'dir' },
    { path: 'etc/base-release', type: 'file', data: Buffer.from(files['etc/base-release']) },
  ]);
  const layer = blob(docker ? DOCKER_LAYER_GZIP : OCI_LAYER_GZIP, await gzipFixed(tar));
  const config = jsonBlob(docker ? DOCKER_CONFIG : OCI_CONFIG, {
    architecture,
    os: 'linux',
    config: { Env: ['PATH=/bin'], Labels: { 'base.label': 'kept' }, User: '1001' },
    rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    history: [{ created: '2020-01-01T00:00:00Z', created_by: 'test base' }],
  });
  const manifest = manifestBlob(
    config.descriptor,
    [layer.descriptor],
    {},
    docker ? DOCKER_MANIFEST : OCI_MANIFEST,
  );
  return { blobs: [layer, config], manifest, files };
}

/**
 * Push a small base image: an OCI index of linux/amd64 and linux/arm64 (each one tiny
 * layer and config), or with `docker: true` a single Docker v2 manifest (amd64).
 */
export async function pushTestBase(
  client: RegistryClient,
  ref: RepoRef & { tag: string },
  options: { docker?: boolean } = {},
): Promise<TestBase> {
  const arches = options.docker ? ['amd64'] : ['amd64', 'arm64'];
  const images = await Promise.all(arches.map((a) => platformImage(a, options.docker ?? false)));
  for (const img of images) {
    for (const b of img.blobs) await client.ensureBlob(ref, b.descriptor.digest, b.data);
    if (!options.docker)
      await client.putManifest(
        ref,
        img.manifest.descriptor.digest,
        img.manifest.descriptor.mediaType,
        img.manifest.data,
      );
  }
  let top: Blob;
  if (options.docker) {
    top = images[0]!.manifest;
  } else {
    top = indexBlob(images.map((img, i) => ({ manifest: img.manifest, architecture: arches[i]! })));
  }
  const digest = await client.putManifest(ref, ref.tag, top.descriptor.mediaType, top.data);
  return {
    ref,
    digest,
    platforms: images.map((img, i) => ({ architecture: arches[i] as string, files: img.files })),
  };
}

/** Run a tool (asynchronously: the proxies live in this process); throw with its stderr when it fails. */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', env, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** `skopeo inspect` (with `flags`, say `--raw` or `--config`) of a plain-HTTP registry image, as `authFile` allows. */
export function skopeoInspect(image: string, authFile: string, ...flags: string[]): Promise<string> {
  return run('skopeo', [
    'inspect',
    ...flags,
    '--tls-verify=false',
    '--authfile',
    authFile,
    `docker://${image}`,
  ]);
}

/** `skopeo copy` one platform of a plain-HTTP registry image into an OCI layout, then `umoci unpack` it. */
export async function pullAndUnpack(
  image: string,
  architecture: string,
  work: string,
  authFile?: string,
): Promise<string> {
  mkdirSync(work, { recursive: true });
  const layout = join(work, `layout-${architecture}`);
  const bundle = join(work, `bundle-${architecture}`);
  await run('skopeo', [
    'copy',
    '--src-tls-verify=false',
    ...(authFile ? ['--src-authfile', authFile] : []),
    '--override-arch',
    architecture,
    '--override-os',
    'linux',
    `docker://${image}`,
    `oci:${layout}:img`,
  ]);
  await run('umoci', ['unpack', '--rootless', '--image', `${layout}:img`, bundle]);
  if (!existsSync(join(bundle, 'rootfs'))) throw new Error(`umoci left no rootfs in ${bundle}`);
  return join(bundle, 'rootfs');
}

/** A local registry and a client of it, as registryForSuite gives them. */
export interface LocalRegistry {
  registry: RunningRegistry;
  client: RegistryClient;
}

/**
 * For the tests of the calling describe: a docker-registry on 127.0.0.1 (startRegistry) and a
 * client that speaks plain HTTP to it (`options` more), started before them; the client
 * closed and the registry stopped after them.
 */
export function registryForSuite(options: RegistryClientOptions = {}): LocalRegistry {
  const local = {} as LocalRegistry;
  beforeAll(async () => {
    local.registry = await startRegistry();
    local.client = new RegistryClient({ insecureHosts: [local.registry.host], ...options });
  }, 60_000);
  afterAll(async () => {
    local.client?.close();
    await local.registry?.stop();
  });
  return local;
}
