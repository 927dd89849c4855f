// The catalog image: every platform of the base image plus one layer holding the catalog
// root at /configs, configured for `opm serve`. Built in memory, reproducibly: the same
// base and catalog content give the same digests.
import type { CatalogLayer } from './layer.js';
import {
  blob,
  isIndex,
  isManifest,
  OCI_CONFIG,
  OCI_INDEX,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
  ociMediaType,
  type Blob,
  type Descriptor,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from './oci.js';
import { formatRef, referenceOf, type ImageRef, type RegistryClient } from './registry.js';

/** The layer descriptor annotation naming what the cache was built from (see `cacheKey`). */
export const CACHE_KEY_ANNOTATION = 'io.catalog-bot.opm-cache.key';
export const CACHE_HISTORY = 'catalog-bot: RUN /bin/opm serve /configs --cache-dir=/tmp/cache --cache-only';

/** opm's serve cache as an image layer (src/publish/cache.ts builds it). */
export interface CacheLayer {
  key: string;
  digest: string;
  diffId: string;
  size: number;
  /** The gzipped tar, or how to fetch it (a layer reused from an image already pushed). */
  data: Buffer | (() => Promise<Buffer>);
}

export const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
export const ENTRYPOINT = ['/bin/opm'];
/** With the cache in the image: what `opm generate dockerfile` writes (integrity enforced by default). */
export const CACHED_CMD = ['serve', '/configs', '--cache-dir=/tmp/cache'];
/** Without one (the base has no runnable opm): opm builds the cache at every start. */
export const UNCACHED_CMD = [
  'serve',
  '/configs',
  '--cache-dir=/tmp/cache',
  '--cache-enforce-integrity=false',
];
/** Used for `created` unless the caller passes a time (e.g. the commit's): keeps digests stable. */
export const DEFAULT_CREATED = '1970-01-01T00:00:00Z';

export interface BasePlatform {
  /** From the base index (absent for a single-manifest base). */
  platform?: Platform;
  manifest: ImageManifest;
  /** The base config, byte for byte. */
  config: Buffer;
}

export interface BaseImage {
  ref: ImageRef;
  /** Digest of what the base reference resolves to (index or manifest). */
  digest: string;
  platforms: BasePlatform[];
  /** True when the base is an image index (multi-arch). */
  multiArch: boolean;
}

/** Entries of an index that are not runnable images (buildx attestations). */
function isAttestation(d: Descriptor): boolean {
  return (
    d.annotations?.['vnd.docker.reference.type'] !== undefined ||
    (d.platform?.os === 'unknown' && d.platform.architecture === 'unknown')
  );
}

/** Resolve the base reference to its manifests and configs (no layers are downloaded). */
export async function fetchBase(client: RegistryClient, ref: ImageRef): Promise<BaseImage> {
  const top = await client.getManifest(ref, referenceOf(ref));
  const readPlatform = async (data: Buffer, platform?: Platform): Promise<BasePlatform> => {
    const manifest = JSON.parse(data.toString('utf8')) as ImageManifest;
    if (!manifest.config || !Array.isArray(manifest.layers))
      throw new Error(`base image ${formatRef(ref)}: manifest has no config or layers`);
    const config = await client.getBlob(ref, manifest.config.digest);
    return { ...(platform ? { platform } : {}), manifest, config };
  };
  if (isIndex(top.mediaType)) {
    const index = JSON.parse(top.data.toString('utf8')) as ImageIndex;
    const wanted = index.manifests.filter((d) => isManifest(d.mediaType) && !isAttestation(d));
    if (wanted.length === 0)
      throw new Error(`base image ${formatRef(ref)}: its index lists no image manifest`);
    const platforms = await Promise.all(
      wanted.map(async (d) => readPlatform((await client.getManifest(ref, d.digest)).data, d.platform)),
    );
    return { ref, digest: top.digest, platforms, multiArch: true };
  }
  if (isManifest(top.mediaType)) {
    return { ref, digest: top.digest, platforms: [await readPlatform(top.data)], multiArch: false };
  }
  throw new Error(
    `base image ${formatRef(ref)}: unsupported manifest type ${top.mediaType || '(none)'}; ` +
      'an OCI or Docker v2 image (or index) is needed',
  );
}

export interface BuildOptions {
  /** Repository URL for `org.opencontainers.image.source`. */
  repoUrl?: string;
  /** Commit for `org.opencontainers.image.revision`. */
  commit?: string;
  /** The catalog root's path in the repository, for the history entry. */
  root?: string;
  /** RFC 3339 time for `created` and the history entries (default the epoch). */
  created?: string;
}

export interface CacheChoice {
  /** opm's pre-built cache, when the base's opm could build it. */
  cache?: CacheLayer;
  /** Why there is none (shown as a warning in the publish check). */
  warnings?: string[];
}

export interface BuiltPlatform {
  platform?: Platform;
  config: Blob;
  manifest: Blob;
  /** The base layers this platform's manifest references. */
  baseLayers: Descriptor[];
}

export interface BuiltImage {
  base: BaseImage;
  layer: CatalogLayer;
  platforms: BuiltPlatform[];
  /** What tags point at: the index for a multi-arch base, else the one manifest. */
  top: Blob;
  cache?: CacheLayer;
  warnings: string[];
}

function annotations(base: BaseImage, options: BuildOptions): Record<string, string> {
  const out: Record<string, string> = {};
  if (options.repoUrl) out['org.opencontainers.image.source'] = options.repoUrl;
  if (options.commit) out['org.opencontainers.image.revision'] = options.commit;
  out['org.opencontainers.image.base.name'] = formatRef({ ...base.ref, digest: undefined });
  out['org.opencontainers.image.base.digest'] = base.digest;
  return out;
}

/** The base config with the catalog layer, label, entrypoint and command added. */
export function catalogConfig(
  baseConfig: Buffer,
  layer: CatalogLayer,
  options: BuildOptions,
  cache?: CacheLayer,
): Buffer {
  const created = options.created ?? DEFAULT_CREATED;
  const cfg = JSON.parse(baseConfig.toString('utf8')) as {
    created?: string;
    config?: Record<string, unknown>;
    rootfs?: { type: string; diff_ids: string[] };
    history?: Record<string, unknown>[];
  };
  const runtime = (cfg.config ??= {});
  const labels: Record<string, string> = { ...((runtime.Labels as Record<string, string> | null) ?? {}) };
  labels[CONFIGS_LABEL] = '/configs';
  if (options.repoUrl) labels['org.opencontainers.image.source'] = options.repoUrl;
  if (options.commit) labels['org.opencontainers.image.revision'] = options.commit;
  runtime.Labels = labels;
  runtime.Entrypoint = [...ENTRYPOINT];
  runtime.Cmd = cache ? [...CACHED_CMD] : [...UNCACHED_CMD];
  cfg.created = created;
  cfg.rootfs = {
    type: 'layers',
    diff_ids: [...(cfg.rootfs?.diff_ids ?? []), layer.diffId, ...(cache ? [cache.diffId] : [])],
  };
  cfg.history = [
    ...(cfg.history ?? []),
    {
      created,
      created_by: `catalog-bot: COPY ${options.root ?? '.'} /configs`,
      comment: `catalog root ${options.root ?? '.'}${options.commit ? ` at ${options.commit}` : ''}`,
    },
    ...(cache ? [{ created, created_by: CACHE_HISTORY, comment: 'opm serve cache' }] : []),
  ];
  return Buffer.from(JSON.stringify(cfg));
}

/** Assemble configs, manifests and (for a multi-arch base) the index. Pure and deterministic. */
export function buildImage(
  base: BaseImage,
  layer: CatalogLayer,
  options: BuildOptions = {},
  choice: CacheChoice = {},
): BuiltImage {
  const { cache } = choice;
  const notes = annotations(base, options);
  const layerDescriptor: Descriptor = { mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size };
  const cacheDescriptors: Descriptor[] = cache
    ? [
        {
          mediaType: OCI_LAYER_GZIP,
          digest: cache.digest,
          size: cache.size,
          annotations: { [CACHE_KEY_ANNOTATION]: cache.key },
        },
      ]
    : [];
  const platforms = base.platforms.map((p): BuiltPlatform => {
    const config = blob(OCI_CONFIG, catalogConfig(p.config, layer, options, cache));
    const baseLayers = p.manifest.layers.map((l): Descriptor => ({
      mediaType: ociMediaType(l.mediaType),
      digest: l.digest,
      size: l.size,
      ...(l.annotations ? { annotations: l.annotations } : {}),
    }));
    const manifest: ImageManifest = {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: config.descriptor,
      layers: [...baseLayers, layerDescriptor, ...cacheDescriptors],
      annotations: notes,
    };
    return {
      ...(p.platform ? { platform: p.platform } : {}),
      config,
      manifest: blob(OCI_MANIFEST, Buffer.from(JSON.stringify(manifest))),
      baseLayers,
    };
  });
  let top: Blob;
  if (base.multiArch) {
    const index: ImageIndex = {
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: platforms.map((p) => ({
        ...p.manifest.descriptor,
        ...(p.platform ? { platform: p.platform } : {}),
      })),
      annotations: notes,
    };
    top = blob(OCI_INDEX, Buffer.from(JSON.stringify(index)));
  } else {
    top = platforms[0]!.manifest;
  }
  return { base, layer, platforms, top, ...(cache ? { cache } : {}), warnings: choice.warnings ?? [] };
}
