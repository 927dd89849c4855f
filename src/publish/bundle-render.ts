// `opm render <bundle-image>` without opm: pull a bundle image through the distribution
// API, read `manifests/` and `metadata/` from its layers, and build the `olm.bundle` blob
// with the core's bundle parser (src/catalog/bundle.ts, the same one that reads bundle
// directories). Rendered bundles are cached by manifest digest.
import { gunzipSync } from 'node:zlib';
import { goStringCompare } from '../catalog/go/gostrings.js';
import { parseBundle, renderParsedBundle, type ParsedBundle } from '../catalog/bundle.js';
import { bundleObjectTexts, type PropertyLike } from '../catalog/property.js';
import { BundleRenderError, type BundleResolver, type ResolvedBundle } from '../catalog/templates/index.js';

// The core declares the error (the templates report it as a render failure); publishing throws it.
export { BundleRenderError };
import { isIndex, pickPlatform, type ImageIndex, type ImageManifest } from './oci.js';
import { parseRef, referenceOf, RegistryError, type ManifestResult, type RepoRef } from './registry.js';
import { ImageFs } from './image-fs.js';
import { TarFormatError } from './tar.js';

// The image file system moved to src/publish/image-fs.ts; callers that know it from here find it too.
export { ImageFs };

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
  manifest.layers.forEach((l, i) => {
    try {
      fs.applyLayer(layerTar(l.mediaType, layers[i]!, l.digest));
    } catch (err) {
      if (err instanceof TarFormatError) throw new BundleRenderError(`layer ${l.digest}: ${err.message}`);
      throw err;
    }
  });
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
 * A registry that could not be asked (unreachable, over a limit, internal) rejects: the
 * check then asks it about no other image (docs/validation-rules.md, crd-upgrade).
 */
export function bundleManifests(renderer: BundleRenderer): (image: string) => Promise<string[] | undefined> {
  return async (image) => {
    try {
      const { blob } = await renderer.render(image);
      return bundleObjectTexts(blob.properties as PropertyLike[]);
    } catch (err) {
      if (!(err instanceof BundleRenderError)) throw err;
      const cause = err.cause;
      if (cause instanceof RegistryError && cause.registryDown)
        throw new Error(cause.message, { cause: err });
      return undefined;
    }
  };
}
