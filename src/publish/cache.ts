// opm's serve cache, pre-built into the catalog image the way `opm generate dockerfile`
// does it (`opm serve /configs --cache-dir=/tmp/cache --cache-only` at build time), so a
// catalog pod does not build it at every start (docs/publishing.md, "Pre-built cache").
//
// The opm that builds the cache is the one the image runs: `/bin/opm` from the base
// image's layers (the base comes from the base branch's config and is pinned by digest).
// It runs without a shell, with an empty environment, its pprof listener off, a time
// limit and bounded output, in a temporary directory removed afterwards.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import { CACHE_KEY_ANNOTATION, type BaseImage, type BasePlatform, type CacheLayer } from './image.js';
import { createTar, gzipFixed, tarItems, TarFormatError, type TarEntry } from './tar.js';
import { OCI_LAYER_GZIP, OCI_LAYER_TAR, ociMediaType, sha256, type Platform } from './oci.js';
import { referenceOf, type ImageRef, type RegistryClient } from './registry.js';

const gunzip = promisify(gunzipCallback);

/** Where opm's generated Dockerfile puts the cache, and where the command points. */
export const CACHE_DIR = 'tmp/cache';

/** The inputs that decide the cache: opm comes from the base, the content from the catalog layer. */
export function cacheKey(catalogLayerDigest: string, baseDigest: string): string {
  return `${catalogLayerDigest} ${baseDigest}`;
}

/** The OCI platform of this machine (the one opm can run on here). */
export function hostPlatform(): Platform {
  const arch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };
  return { os: process.platform, architecture: arch[process.arch] ?? process.arch };
}

/** A reason the cache could not be built: the image falls back to building it at start. */
export class NoCacheError extends Error {}

interface TarFile {
  type: 'file' | 'link' | 'symlink' | 'whiteout';
  data?: Buffer;
  mode?: number;
  target?: string;
}

const clean = (p: string): string => posix.normalize(`/${p}`).slice(1).replace(/\/$/, '');

/**
 * What one layer's tar says about the wanted paths: the file, a link to follow, or a
 * whiteout (deleted here, so lower layers do not count). Paths are clean, without '/'.
 */
export function scanTar(tar: Buffer, wanted: Set<string>): Map<string, TarFile> {
  const found = new Map<string, TarFile>();
  const opaque = new Set<string>();
  try {
    for (const item of tarItems(tar)) {
      const path = clean(item.path);
      const dir = posix.dirname(path);
      const base = posix.basename(path);
      if (base === '.wh..wh..opq') opaque.add(dir === '.' ? '' : dir);
      else if (base.startsWith('.wh.')) {
        const target = clean(posix.join(dir, base.slice(4)));
        if (wanted.has(target)) found.set(target, { type: 'whiteout' });
      } else if (wanted.has(path)) {
        if (item.type === 'file') found.set(path, { type: 'file', data: item.data, mode: item.mode });
        else if (item.type === 'hardlink') found.set(path, { type: 'link', target: clean(item.link) });
        else if (item.type === 'symlink') found.set(path, { type: 'symlink', target: item.link });
      }
    }
  } catch (error) {
    if (error instanceof TarFormatError) throw new NoCacheError('a base layer has a malformed tar header');
    throw error;
  }
  // An opaque directory hides everything below it in lower layers.
  for (const w of wanted)
    if (!found.has(w) && [...opaque].some((d) => d === '' || w.startsWith(`${d}/`)))
      found.set(w, { type: 'whiteout' });
  return found;
}

const MAX_LAYER_TAR_BYTES = 1024 * 2 ** 20;
const KEEP_TAR_BYTES = 256 * 2 ** 20;

async function layerTar(
  client: RegistryClient,
  ref: ImageRef,
  mediaType: string,
  digest: string,
): Promise<Buffer> {
  const type = ociMediaType(mediaType);
  if (type !== OCI_LAYER_TAR && type !== OCI_LAYER_GZIP)
    throw new NoCacheError(`a base layer has the media type ${mediaType}, which catalog-bot cannot read`);
  try {
    const data = await client.getBlob(ref, digest);
    return type === OCI_LAYER_TAR ? data : await gunzip(data, { maxOutputLength: MAX_LAYER_TAR_BYTES });
  } catch (error) {
    // A layer too large to read here is a reason for no cache, not a failed publish.
    if (error instanceof RangeError || /over the .*limit|too large/i.test(String(error)))
      throw new NoCacheError(`a base layer is too large to look for /bin/opm in (${String(error)})`);
    throw error;
  }
}

/** The base platform this machine can run, or why there is none. */
export function runnablePlatform(base: BaseImage): BasePlatform {
  const host = hostPlatform();
  const match = base.platforms.find((p) => {
    const platform =
      p.platform ??
      (JSON.parse(p.config.toString('utf8')) as {
        os?: string;
        architecture?: string;
      } satisfies Partial<Platform>);
    return platform.os === host.os && platform.architecture === host.architecture;
  });
  if (!match)
    throw new NoCacheError(`the base image has no ${host.os}/${host.architecture} platform to run opm on`);
  return match;
}

/** `/bin/opm` of a base platform: top layer first, following links and stopping at whiteouts. */
export async function extractOpm(
  client: RegistryClient,
  base: BaseImage,
  platform: BasePlatform,
): Promise<Buffer> {
  let path = 'bin/opm';
  const tars = new Map<number, Buffer>();
  for (let hops = 0; hops < 8; hops++) {
    let next: string | undefined;
    const layers = platform.manifest.layers;
    for (let i = layers.length - 1; i >= 0 && next === undefined; i--) {
      const layer = layers[i]!;
      let tar = tars.get(i);
      if (!tar) {
        tar = await layerTar(client, base.ref, layer.mediaType, layer.digest);
        // Kept for the next hop of a link, while that holds little memory.
        if ([...tars.values()].reduce((n, t) => n + t.length, tar.length) <= KEEP_TAR_BYTES) tars.set(i, tar);
      }
      // A link in a lower directory (`/bin` -> `usr/bin`) is followed too.
      const parts = path.split('/');
      const wanted = new Set(parts.map((_, n) => parts.slice(0, n + 1).join('/')));
      const found = scanTar(tar, wanted);
      const hit = found.get(path);
      if (hit?.type === 'file') return hit.data ?? Buffer.alloc(0);
      // The file or a directory above it deleted in this layer: lower layers do not count.
      if (
        hit?.type === 'whiteout' ||
        parts.some((_, n) => found.get(parts.slice(0, n + 1).join('/'))?.type === 'whiteout')
      )
        throw new NoCacheError('the base image has no /bin/opm');
      for (let n = parts.length; n >= 1; n--) {
        const prefix = parts.slice(0, n).join('/');
        const entry = n === parts.length ? hit : found.get(prefix);
        if (entry?.type === 'link') {
          next = [entry.target, ...parts.slice(n)].join('/');
          break;
        }
        if (entry?.type === 'symlink') {
          const target = entry.target ?? '';
          const from = target.startsWith('/') ? target : posix.join(posix.dirname(prefix), target);
          next = clean([from, ...parts.slice(n)].join('/'));
          break;
        }
      }
    }
    if (next === undefined) throw new NoCacheError('the base image has no /bin/opm');
    path = next;
  }
  throw new NoCacheError('/bin/opm in the base image is a chain of too many links');
}

export interface CacheBuildOptions {
  /** Kill opm after this long (default 5 minutes). */
  timeoutMs?: number;
  /** Where the temporary directory is made (default the system's). */
  scratchDir?: string;
}

const OUTPUT_TAIL_BYTES = 2048;

async function runOpm(opm: string, args: string[], cwd: string, timeoutMs: number): Promise<void> {
  await new Promise<void>((done, fail) => {
    // No shell, an empty environment (no proxies, no credentials), output kept to a tail.
    // Its own process group, so a timeout ends whatever it started too.
    const child = spawn(opm, args, { cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let tail = Buffer.alloc(0);
    const keep = (chunk: Buffer): void => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > OUTPUT_TAIL_BYTES) tail = tail.subarray(tail.length - OUTPUT_TAIL_BYTES);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      // Not waiting for 'close': a child that kept the pipes open would hold the job forever.
      child.stdout.destroy();
      child.stderr.destroy();
      fail(
        new NoCacheError(`opm serve --cache-only did not finish within ${Math.round(timeoutMs / 1000)} s`),
      );
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(new NoCacheError(`the base image's /bin/opm cannot run here: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return done();
      const last = tail.toString('utf8').trim().split('\n').pop()?.slice(0, 300) ?? '';
      fail(
        new NoCacheError(
          signal === 'SIGKILL'
            ? `opm serve --cache-only did not finish within ${Math.round(timeoutMs / 1000)} s`
            : `opm serve --cache-only failed (${signal ?? `exit ${code}`})${last ? `: ${last}` : ''}`,
        ),
      );
    });
  });
}

async function readTree(dir: string, under: string, out: TarEntry[]): Promise<void> {
  const names = (await readdir(dir)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    const abs = join(dir, name);
    const path = `${under}/${name}`;
    // lstat: a link opm (or anything) left in the cache is not followed into this machine's files.
    const info = await lstat(abs);
    if (info.isDirectory()) {
      out.push({ path, type: 'dir', mode: 0o777 });
      await readTree(abs, path, out);
    } else if (info.isFile()) {
      out.push({ path, type: 'file', data: await readFile(abs), mode: 0o666 });
    }
  }
}

/**
 * Run the base's opm on the catalog files laid out as `/configs` is, and return the cache as
 * a layer at `/tmp/cache`. The entries are world-writable like `/tmp` itself: opm takes a
 * lock file in the cache at start, and the user a cluster runs the image as is not known
 * here (OpenShift picks a random one).
 */
export async function buildCacheLayer(
  opm: Buffer,
  files: Map<string, Buffer>,
  key: string,
  options: CacheBuildOptions = {},
): Promise<CacheLayer> {
  const work = await mkdtemp(join(options.scratchDir ?? tmpdir(), 'catalog-bot-opm-cache-'));
  try {
    const configs = join(work, 'configs');
    for (const [path, data] of files) {
      const target = resolve(configs, path);
      if (!target.startsWith(configs + sep))
        throw new NoCacheError(`catalog path ${path} leaves the catalog`);
      await mkdir(join(target, '..'), { recursive: true });
      await writeFile(target, data);
    }
    await mkdir(configs, { recursive: true });
    const opmPath = join(work, 'opm');
    await writeFile(opmPath, opm);
    await chmod(opmPath, 0o755);
    await runOpm(
      opmPath,
      ['serve', 'configs', '--cache-dir=cache', '--cache-only', '--pprof-addr='],
      work,
      options.timeoutMs ?? 300_000,
    );
    const entries: TarEntry[] = [
      { path: 'tmp', type: 'dir', mode: 0o1777 },
      { path: CACHE_DIR, type: 'dir', mode: 0o777 },
    ];
    await readTree(join(work, 'cache'), CACHE_DIR, entries).catch(() => undefined);
    if (!entries.some((e) => e.type === 'file'))
      throw new NoCacheError('opm serve --cache-only wrote no cache (is /bin/opm in the base image opm?)');
    const tar = createTar(entries);
    const data = await gzipFixed(tar);
    return { key, digest: sha256(data), diffId: sha256(tar), size: data.length, data };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Cache layers built in this process, by key: the same content gives the same image. */
const built = new Map<string, CacheLayer>();
const BUILT_ENTRIES = 8;

export function rememberCache(layer: CacheLayer): void {
  built.delete(layer.key);
  built.set(layer.key, layer);
  while (built.size > BUILT_ENTRIES) built.delete(built.keys().next().value as string);
}

export function rememberedCache(key: string): CacheLayer | undefined {
  return built.get(key);
}

/** Forget cache layers built in this process (tests and benchmarks measure cold builds). */
export function clearCacheLayers(): void {
  built.clear();
}

/**
 * The cache layer of an image already pushed (a tag about to be written), when it was
 * built from the same key: reusing it keeps "same content, same digest" across restarts.
 * Anything unexpected (no such tag, another layout, an unreachable registry) is no reuse.
 */
export async function findPushedCache(
  client: RegistryClient,
  refs: ImageRef[],
  key: string,
): Promise<CacheLayer | undefined> {
  for (const ref of refs) {
    try {
      let top = await client.getManifest(ref, referenceOf(ref));
      const json = (data: Buffer): Record<string, unknown> =>
        JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      let doc = json(top.data);
      if (Array.isArray(doc.manifests)) {
        const first = (doc.manifests as { digest: string }[])[0];
        if (!first) continue;
        top = await client.getManifest(ref, first.digest);
        doc = json(top.data);
      }
      const layers = (doc.layers ?? []) as {
        digest: string;
        size: number;
        annotations?: Record<string, string>;
      }[];
      const at = layers.findIndex((l) => l.annotations?.[CACHE_KEY_ANNOTATION] === key);
      if (at === -1) continue;
      const config = json(await client.getBlob(ref, (doc.config as { digest: string }).digest));
      const diffId = (config.rootfs as { diff_ids?: string[] } | undefined)?.diff_ids?.[at];
      const layer = layers[at]!;
      if (typeof diffId !== 'string') continue;
      return {
        key,
        digest: layer.digest,
        diffId,
        size: layer.size,
        data: () => client.getBlob(ref, layer.digest),
      };
    } catch {
      continue;
    }
  }
  return undefined;
}
