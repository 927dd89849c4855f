// `opm render <bundle-image>` without opm: pull a bundle image through the distribution
// API, read `manifests/` and `metadata/` from its layers, and build the `olm.bundle` blob
// with the core's bundle parser (src/catalog/bundle.ts, the same one that reads bundle
// directories). Rendered bundles are cached by manifest digest.
import { gunzipSync } from 'node:zlib';
import { goStringCompare } from '../catalog/go/gostrings.js';
import { parseBundle, renderParsedBundle, type BundleFiles, type ParsedBundle } from '../catalog/bundle.js';
import { BundleRenderError, type BundleResolver, type ResolvedBundle } from '../catalog/templates/index.js';

// The core declares the error (the templates report it as a render failure); publishing throws it.
export { BundleRenderError };
import { isIndex, type Descriptor, type ImageIndex, type ImageManifest } from './oci.js';
import { parseRef, referenceOf, RegistryError, type ManifestResult, type RepoRef } from './registry.js';

export const BUNDLE_PACKAGE_LABEL = 'operators.operatorframework.io.bundle.package.v1';
// Kept here for the callers that know this module as the bundle renderer.
export { goMarshal } from '../catalog/bundle.js';

const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
const DB_LABEL = 'operators.operatorframework.io.index.database.v1';
/** A bundle is a few manifests; a layer unpacking to more is refused (gzip bombs). */
const MAX_LAYER_BYTES = 256 * 2 ** 20;

/** What bundle rendering needs of a registry (RegistryClient has it). */
export interface ImageSource {
  getManifest(ref: RepoRef, reference: string): Promise<ManifestResult>;
  /** At most `maxBytes` (the source's own cap when absent). */
  getBlob(ref: RepoRef, digest: string, maxBytes?: number): Promise<Buffer>;
}

/** An image config is a few KiB of JSON. */
const MAX_CONFIG_BYTES = 4 * 2 ** 20;

// ---- image layers -------------------------------------------------------------------

type Node = { type: 'file'; data: Buffer } | { type: 'dir' } | { type: 'symlink'; target: string };

/** The image's root file system: slash paths without a leading slash. */
export class ImageFs implements BundleFiles {
  readonly nodes = new Map<string, Node>();

  private remove(path: string, keepSelf = false): void {
    for (const p of [...this.nodes.keys()]) {
      if ((!keepSelf && p === path) || p.startsWith(path === '' ? '' : `${path}/`)) this.nodes.delete(p);
    }
  }

  /** Apply one layer (an uncompressed tar), honouring whiteouts. */
  applyLayer(tar: Buffer): void {
    for (const entry of readTar(tar)) {
      const path = normalise(entry.path);
      if (path === '') continue;
      const slash = path.lastIndexOf('/');
      const dir = slash < 0 ? '' : path.slice(0, slash);
      const base = path.slice(slash + 1);
      if (base === '.wh..wh..opq') {
        this.remove(dir, true);
        continue;
      }
      if (base.startsWith('.wh.')) {
        this.remove(dir === '' ? base.slice(4) : `${dir}/${base.slice(4)}`);
        continue;
      }
      if (entry.type === 'dir') {
        if (this.nodes.get(path)?.type !== 'dir') this.remove(path);
        this.nodes.set(path, { type: 'dir' });
      } else if (entry.type === 'file') {
        this.remove(path);
        this.nodes.set(path, { type: 'file', data: entry.data });
      } else if (entry.type === 'symlink') {
        this.remove(path);
        this.nodes.set(path, { type: 'symlink', target: entry.link });
      } else if (entry.type === 'hardlink') {
        const target = this.nodes.get(normalise(entry.link));
        this.remove(path);
        if (target) this.nodes.set(path, target);
      }
    }
  }

  /** Follow symlinks (inside the image) to the node a path names. */
  resolve(path: string): { path: string; node: Node } | undefined {
    let parts = normalise(path).split('/').filter(Boolean);
    for (let hops = 0; hops < 40; hops++) {
      let done = true;
      for (let i = 1; i <= parts.length; i++) {
        const prefix = parts.slice(0, i).join('/');
        const node = this.nodes.get(prefix);
        if (node?.type !== 'symlink') continue;
        const base = node.target.startsWith('/') ? [] : parts.slice(0, i - 1);
        parts = resolveDots([...base, ...node.target.split('/'), ...parts.slice(i)]);
        done = false;
        break;
      }
      if (done) {
        const p = parts.join('/');
        const node = p === '' ? ({ type: 'dir' } as Node) : this.nodes.get(p);
        if (!node) {
          // A directory may exist only through its entries' paths.
          if ([...this.nodes.keys()].some((k) => k.startsWith(`${p}/`)))
            return { path: p, node: { type: 'dir' } };
          return undefined;
        }
        return { path: p, node };
      }
    }
    return undefined;
  }

  /** Names directly inside a directory, sorted as Go's fs.ReadDir sorts them. */
  readDir(path: string): { name: string; isDir: boolean }[] | undefined {
    const dir = this.resolve(path);
    if (!dir || dir.node.type !== 'dir') return undefined;
    const prefix = dir.path === '' ? '' : `${dir.path}/`;
    const names = new Map<string, boolean>();
    for (const [p, node] of this.nodes) {
      if (!p.startsWith(prefix) || p === dir.path) continue;
      const rest = p.slice(prefix.length);
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      names.set(name, (names.get(name) ?? false) || slash >= 0 || node.type === 'dir');
    }
    return [...names].sort(([a], [b]) => goStringCompare(a, b)).map(([name, isDir]) => ({ name, isDir }));
  }

  readFile(path: string): Buffer | undefined {
    const got = this.resolve(path);
    return got?.node.type === 'file' ? got.node.data : undefined;
  }
}

function normalise(path: string): string {
  return resolveDots(path.split('/')).join('/');
}

function resolveDots(parts: string[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return out;
}

interface TarItem {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';
  link: string;
  data: Buffer;
}

function tarString(b: Buffer, start: number, length: number): string {
  const slice = b.subarray(start, start + length);
  const nul = slice.indexOf(0);
  return slice.subarray(0, nul < 0 ? slice.length : nul).toString('utf8');
}

function tarNumber(b: Buffer, start: number, length: number): number {
  const slice = b.subarray(start, start + length);
  if ((slice[0]! & 0x80) !== 0) {
    // base-256 (GNU) for large sizes
    let n = slice[0]! & 0x7f;
    for (let i = 1; i < slice.length; i++) n = n * 256 + slice[i]!;
    return n;
  }
  const text = tarString(b, start, length).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function parsePax(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space < 0) break;
    const length = parseInt(data.subarray(i, space).toString('ascii'), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = data.subarray(space + 1, i + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    i += length;
  }
  return out;
}

/** The entries of a tar archive (ustar, PAX and GNU long names). */
export function readTar(tar: Buffer): TarItem[] {
  const out: TarItem[] = [];
  let offset = 0;
  let pax = new Map<string, string>();
  const global = new Map<string, string>();
  let longName: string | undefined;
  let longLink: string | undefined;
  while (offset + 512 <= tar.length) {
    const h = tar.subarray(offset, offset + 512);
    if (h.every((b) => b === 0)) break;
    const size = tarNumber(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      pax = parsePax(data);
      continue;
    }
    if (type === 'g') {
      for (const [k, v] of parsePax(data)) global.set(k, v);
      continue;
    }
    if (type === 'L') {
      longName = tarString(data, 0, data.length);
      continue;
    }
    if (type === 'K') {
      longLink = tarString(data, 0, data.length);
      continue;
    }
    const magic = tarString(h, 257, 6);
    const prefix = magic.startsWith('ustar') ? tarString(h, 345, 155) : '';
    const name = tarString(h, 0, 100);
    const path = pax.get('path') ?? longName ?? global.get('path') ?? (prefix ? `${prefix}/${name}` : name);
    const link = pax.get('linkpath') ?? longLink ?? tarString(h, 157, 100);
    const kind: TarItem['type'] =
      type === '0' || type === '\0' || type === '7'
        ? path.endsWith('/')
          ? 'dir'
          : 'file'
        : type === '5'
          ? 'dir'
          : type === '2'
            ? 'symlink'
            : type === '1'
              ? 'hardlink'
              : 'other';
    out.push({ path: path.replace(/\/+$/, ''), type: kind, link, data: Buffer.from(data) });
    pax = new Map();
    longName = undefined;
    longLink = undefined;
  }
  return out;
}

function layerTar(mediaType: string, data: Buffer, digest: string): Buffer {
  if (/zstd/.test(mediaType))
    throw new BundleRenderError(`layer ${digest} is zstd-compressed, which catalog-bot cannot read yet`);
  // gzip by magic number (some registries label layers loosely)
  if (data[0] !== 0x1f || data[1] !== 0x8b) return data;
  try {
    return gunzipSync(data, { maxOutputLength: MAX_LAYER_BYTES });
  } catch (err) {
    throw new BundleRenderError(
      (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        ? `layer ${digest} unpacks to more than ${MAX_LAYER_BYTES / 2 ** 20} MiB, far more than a bundle holds`
        : `layer ${digest} is not a valid gzip stream: ${(err as Error).message}`,
    );
  }
}

// ---- pulling --------------------------------------------------------------------------

export interface PulledImage {
  /** Digest of the (platform) manifest whose layers were read. */
  digest: string;
  labels: Record<string, string>;
  fs: ImageFs;
}

/** Pick linux/amd64 from an index (what opm on a usual host pulls), else the first. */
function pickPlatform(index: ImageIndex): Descriptor | undefined {
  const list = index.manifests ?? [];
  return (
    list.find((d) => d.platform?.os === 'linux' && d.platform.architecture === 'amd64') ??
    list.find((d) => !d.platform || d.platform.architecture !== 'unknown') ??
    list[0]
  );
}

async function platformManifest(
  source: ImageSource,
  repo: RepoRef,
  reference: string,
): Promise<{ digest: string; manifest: ImageManifest; top: string }> {
  let got = await source.getManifest(repo, reference);
  const top = got.digest;
  if (isIndex(got.mediaType)) {
    const chosen = pickPlatform(JSON.parse(got.data.toString('utf8')) as ImageIndex);
    if (!chosen) throw new BundleRenderError(`image index ${top} lists no manifests`);
    got = await source.getManifest(repo, chosen.digest);
  }
  return { digest: got.digest, manifest: JSON.parse(got.data.toString('utf8')) as ImageManifest, top };
}

async function pullLayers(
  source: ImageSource,
  repo: RepoRef,
  digest: string,
  manifest: ImageManifest,
): Promise<PulledImage> {
  const configBytes = await source.getBlob(repo, manifest.config.digest, MAX_CONFIG_BYTES);
  let config: { config?: { Labels?: Record<string, string> } };
  try {
    config = JSON.parse(configBytes.toString('utf8')) as typeof config;
  } catch {
    // JSON.parse quotes the text it choked on: a fixed message keeps the blob out of check runs.
    throw new BundleRenderError(`image config ${manifest.config.digest} is not JSON`);
  }
  const labels = config.config?.Labels ?? {};
  const fs = new ImageFs();
  // Only bundle images are unpacked: a catalog image can be large and is refused anyway.
  if (!(BUNDLE_PACKAGE_LABEL in labels) || CONFIGS_LABEL in labels) return { digest, labels, fs };
  // A layer larger than what a bundle layer may unpack to is refused before it is held.
  const layers = await Promise.all(
    manifest.layers.map((l) => source.getBlob(repo, l.digest, MAX_LAYER_BYTES)),
  );
  manifest.layers.forEach((l, i) => fs.applyLayer(layerTar(l.mediaType, layers[i]!, l.digest)));
  return { digest, labels, fs };
}

// ---- rendering with a cache -----------------------------------------------------------

export interface BundleRenderOptions {
  /** opm --migrate-level. */
  migrateLevel?: 'bundle-object-to-csv-metadata';
  /**
   * Where to pull an image from, like a registries.conf mirror: the rendered bundle keeps
   * the reference as written. Return undefined to pull the image itself.
   */
  mirror?: (image: string) => string | undefined;
  /** How many parsed bundles the cache keeps (default 512). */
  cacheSize?: number;
}

/** Parsed bundles by manifest digest, least recently used evicted first. */
class BundleCache {
  private readonly map = new Map<string, Promise<ParsedBundle>>();
  constructor(private readonly size: number) {}
  get(key: string): Promise<ParsedBundle> | undefined {
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }
  set(key: string, value: Promise<ParsedBundle>): void {
    this.map.set(key, value);
    value.catch(() => this.map.delete(key));
    while (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
  }
  get count(): number {
    return this.map.size;
  }
}

export interface BundleRenderer {
  /** The `olm.bundle` blob (and CSV) `opm render <image>` gives; throws BundleRenderError. */
  render(image: string): Promise<ResolvedBundle>;
  /** The same as a template BundleResolver. */
  resolver: BundleResolver;
  /** Parsed bundles held. */
  readonly cached: number;
}

export function bundleRenderer(source: ImageSource, options: BundleRenderOptions = {}): BundleRenderer {
  const cache = new BundleCache(options.cacheSize ?? 512);
  // tag references resolve to a digest once per renderer
  const digests = new Map<string, string>();

  async function parsedOf(image: string): Promise<ParsedBundle> {
    const from = options.mirror?.(image) ?? image;
    let ref;
    try {
      ref = parseRef(from);
    } catch (err) {
      throw new BundleRenderError(`render reference "${image}": ${(err as Error).message}`);
    }
    const reference = referenceOf(ref);
    const known = ref.digest ?? digests.get(from);
    const cached = known ? cache.get(known) : undefined;
    if (cached) return cached;
    try {
      const { digest, manifest, top } = await platformManifest(source, ref, reference);
      digests.set(from, top);
      let pending = cache.get(top);
      if (!pending) {
        pending = pullLayers(source, ref, digest, manifest).then((pulled) => {
          const labels = pulled.labels;
          if (CONFIGS_LABEL in labels)
            throw new BundleRenderError('cannot render declarative config image: not allowed');
          if (!(BUNDLE_PACKAGE_LABEL in labels)) {
            if (DB_LABEL in labels)
              throw new BundleRenderError('sqlite-based index images are no longer supported');
            const keys = Object.keys(labels).sort(goStringCompare);
            throw new BundleRenderError(
              keys.length > 0
                ? `image type could not be determined, found labels\n${keys.map((k) => `  ${k}=${labels[k]}`).join('\n')}`
                : 'image type could not be determined: image has no labels',
            );
          }
          return parseBundle(pulled.fs);
        });
        cache.set(top, pending);
      }
      return await pending;
    } catch (err) {
      const message = (err as Error).message;
      throw new BundleRenderError(`render reference "${image}": ${message}`, {
        ...(err instanceof RegistryError ? { cause: err } : {}),
      });
    }
  }

  async function render(image: string): Promise<ResolvedBundle> {
    const parsed = await parsedOf(image);
    return renderParsedBundle(parsed, image, options.migrateLevel);
  }

  return {
    render,
    resolver: (image) => render(image),
    get cached() {
      return cache.count;
    },
  };
}

/** A template BundleResolver that pulls bundle images (opm alpha render-template's way). */
export function bundleResolverFromRegistry(
  source: ImageSource,
  options: BundleRenderOptions = {},
): BundleResolver {
  return bundleRenderer(source, options).resolver;
}

/**
 * The manifests (JSON texts) of a bundle image, for checks that need a bundle's objects
 * (the crd-upgrade check's `renderBundle`); undefined when the image cannot be rendered.
 */
export function bundleManifests(renderer: BundleRenderer): (image: string) => Promise<string[] | undefined> {
  return async (image) => {
    try {
      const { blob } = await renderer.render(image);
      return (blob.properties as { type: string; value: { data?: string } }[])
        .filter((p) => p.type === 'olm.bundle.object' && typeof p.value.data === 'string')
        .map((p) => Buffer.from(p.value.data!, 'base64').toString('utf8'));
    } catch (err) {
      if (err instanceof BundleRenderError) return undefined;
      throw err;
    }
  };
}
