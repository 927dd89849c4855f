// The catalog an image serves, read from its catalog layer: what the pruning guard compares
// a pull request with (checks/prune.ts declares ReadPublishedCatalog; docs/publishing.md,
// "Pruning guard") and what `verify-published` compares a root with (docs/publishing.md,
// "verify-published"). Only the layer that holds the configs directory is downloaded, never
// the base's layers.
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import type { PublishedCatalog, ReadPublishedCatalog } from '../checks/prune.js';
import type { RegistryPolicy } from '../checks/registry-policy.js';
import { readTar, TarFormatError } from './tar.js';
import { CONFIGS_LABEL } from './image.js';
import { isIndex, pickPlatform, type ImageIndex, type ImageManifest, type Platform } from './oci.js';
import { parseRef, referenceOf, RegistryError, type RegistryClient } from './registry.js';

/** An image config is a few KiB of JSON. */
const MAX_CONFIG_BYTES = 4 * 2 ** 20;
/** The largest catalog layer read, unpacked (real catalogs: about 120 MiB for the largest). */
const MAX_CATALOG_BYTES = 512 * 2 ** 20;
/** Layers looked at from the top for the configs directory (catalog-bot's: cache, then catalog). */
const MAX_LAYERS_SCANNED = 4;
/** All layers scanned for one image together, downloaded and unpacked: one catalog's worth. */
const MAX_SCANNED_BYTES = MAX_CATALOG_BYTES;

// Off the event loop (zlib's thread pool): a layer may unpack to hundreds of MiB.
const gunzip = promisify(gunzipCallback);
/** Catalogs kept by image manifest digest, so checking pull request after pull request re-reads none. */
const KEPT = 4;

/** A catalog's files, by path under its configs directory. */
export type CatalogFiles = [string, Uint8Array][];

/** The image is not one whose catalog catalog-bot reads; the message says why (fixed text, no registry body). */
export class UnreadableCatalog extends Error {}

/** The tag names no image (the registry answered 404 for it): nothing is published there. */
export class NotPublished extends Error {}

const parse = <T extends object>(data: Buffer, what: string): T => {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    value = undefined;
  }
  // A fixed message: registry text is not copied into output (docs/security.md).
  if (typeof value !== 'object' || value === null) throw new UnreadableCatalog(`${what} is not JSON`);
  return value as T;
};

async function unpack(mediaType: string, data: Buffer, digest: string): Promise<Buffer> {
  if (/zstd/.test(mediaType))
    throw new UnreadableCatalog(`layer ${digest} is zstd-compressed, which catalog-bot cannot read`);
  if (data[0] !== 0x1f || data[1] !== 0x8b) return data;
  try {
    return await gunzip(data, { maxOutputLength: MAX_CATALOG_BYTES });
  } catch (err) {
    throw new UnreadableCatalog(
      (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        ? `layer ${digest} unpacks to more than ${MAX_CATALOG_BYTES / 2 ** 20} MiB`
        : `layer ${digest} is not a valid gzip stream`,
    );
  }
}

/** A whiteout that removes `dir`, or a directory above it, from the layers below. */
function removesDirectory(path: string, dir: string): boolean {
  const parts = dir.split('/');
  return parts.some((name, i) => {
    const parent = parts.slice(0, i).join('/');
    const at = parent === '' ? '' : `${parent}/`;
    return path === `${at}.wh.${name}` || path === `${at}.wh..wh..opq`;
  });
}

/** The files under `dir` in one layer (relative to it), or undefined when the layer has none there. */
function filesUnder(tar: Buffer, dir: string): CatalogFiles | undefined {
  const prefix = `${dir}/`;
  let found = false;
  let removed = false;
  const files: CatalogFiles = [];
  for (const entry of readTar(tar)) {
    const path = entry.path.replace(/^(\.\/|\/)+/, '');
    if (removesDirectory(path, dir)) removed = true;
    if (path !== dir && !path.startsWith(prefix)) continue;
    found = true;
    const rel = path.slice(prefix.length);
    if (rel.split('/').some((part) => part.startsWith('.wh.')))
      throw new UnreadableCatalog(
        `the layer holding ${dir} removes files of a lower layer, which catalog-bot does not read`,
      );
    if (entry.type === 'file' && rel !== '') files.push([rel, new Uint8Array(entry.data)]);
  }
  // A layer above the catalog's that removes the directory: the image serves none of it.
  if (!found && removed)
    throw new UnreadableCatalog(`a layer above the catalog removes /${dir}, so the image does not serve it`);
  return found ? files : undefined;
}

/**
 * Whether an image's entrypoint and command run `opm serve <dir>`: the label only says where
 * the catalog is; what a cluster gets is what the image runs (docs/publishing.md).
 */
function servesDirectory(runtime: { Entrypoint?: unknown; Cmd?: unknown } | undefined, dir: string): boolean {
  const list = (v: unknown): string[] =>
    Array.isArray(v) && v.every((a) => typeof a === 'string') ? (v as string[]) : [];
  const argv = [...list(runtime?.Entrypoint), ...list(runtime?.Cmd)];
  const [program, verb, served] = argv;
  return (
    program !== undefined &&
    program.split('/').pop() === 'opm' &&
    verb === 'serve' &&
    served !== undefined &&
    served.startsWith('/') &&
    served.replace(/^\/+|\/+$/g, '') === dir &&
    // `--cache-only` builds the cache and exits: the image serves nothing.
    !argv.slice(3).some((a) => /^--cache-only(=true)?$/.test(a))
  );
}

export interface CatalogRead {
  /** The digest the reference resolved to (an index or a manifest). */
  digest: string;
  /** The digest of the (platform) manifest whose layers were read. */
  manifestDigest: string;
  files: CatalogFiles;
}

export interface CatalogReadOptions {
  /** Which manifest of an index to read (every platform of a catalog image carries the same catalog). */
  platform?: Platform;
  /** The configs directory of an image whose config has no label; without it, such an image is not a catalog image. */
  defaultConfigsDir?: string;
  /** Catalogs read before, by the client's credential scope and manifest digest. */
  kept?: Map<string, CatalogFiles>;
  /**
   * Only an image that runs `opm serve` on the labelled directory (verify-published: what it
   * says is served must be what the image runs); otherwise UnreadableCatalog.
   */
  serving?: boolean;
}

/**
 * Read the catalog of `image` through `client`: the manifest (of `options.platform` in an
 * index), its config's `operators.operatorframework.io.index.configs.v1` label, then at most
 * the top four layers, unpacked off the event loop, until one holds that directory (at most
 * 512 MiB downloaded and unpacked in all). Throws NotPublished when the tag is missing,
 * UnreadableCatalog when the image is not one catalog-bot reads (the message says why), and
 * the client's RegistryError for any other registry failure.
 */
export async function readCatalogLayer(
  client: RegistryClient,
  image: string,
  options: CatalogReadOptions = {},
): Promise<CatalogRead> {
  let ref;
  try {
    ref = parseRef(image);
  } catch (err) {
    throw new UnreadableCatalog(`not an image reference: ${(err as Error).message}`);
  }
  let got;
  try {
    got = await client.getManifest(ref, referenceOf(ref));
  } catch (err) {
    // Only the tag itself missing means "never published"; a missing blob is an error.
    if (err instanceof RegistryError && err.status === 404) throw new NotPublished(err.message);
    throw err;
  }
  const digest = got.digest;
  if (isIndex(got.mediaType)) {
    const chosen = pickPlatform(parse<ImageIndex>(got.data, `image index ${digest}`), options.platform);
    if (!chosen) throw new UnreadableCatalog(`image index ${digest} lists no manifests`);
    got = await client.getManifest(ref, chosen.digest);
  }
  const manifestDigest = got.digest;
  // Per credential scope: a catalog read with one repository's credentials is not handed
  // to another whose client could not read it.
  const key = `${client.credentialScope}\n${manifestDigest}`;
  const cached = options.kept?.get(key);
  if (cached) return { digest, manifestDigest, files: cached };
  const manifest = parse<ImageManifest>(got.data, `manifest ${manifestDigest}`);
  if (!manifest.config || !Array.isArray(manifest.layers))
    throw new UnreadableCatalog(`${image} is not an image manifest`);
  const config = parse<{ config?: { Labels?: Record<string, string>; Entrypoint?: unknown; Cmd?: unknown } }>(
    await client.getBlob(ref, manifest.config.digest, MAX_CONFIG_BYTES),
    `image config ${manifest.config.digest}`,
  );
  const label = config.config?.Labels?.[CONFIGS_LABEL] ?? options.defaultConfigsDir;
  if (label === undefined)
    throw new UnreadableCatalog(`${image} is not a catalog image: its config has no ${CONFIGS_LABEL} label`);
  const dir = label.replace(/^\/+|\/+$/g, '');
  if (dir === '') throw new UnreadableCatalog(`the image's ${CONFIGS_LABEL} label names no directory`);
  const layers = [...manifest.layers].reverse().slice(0, MAX_LAYERS_SCANNED);
  let scanned = 0;
  for (const layer of layers) {
    const data = await client.getBlob(ref, layer.digest);
    const tar = await unpack(layer.mediaType, data, layer.digest);
    scanned += data.length + tar.length;
    if (scanned > MAX_SCANNED_BYTES)
      throw new UnreadableCatalog(
        `the image's top layers hold more than ${MAX_SCANNED_BYTES / 2 ** 20} MiB before /${dir}`,
      );
    let files;
    try {
      files = filesUnder(tar, dir);
    } catch (err) {
      if (err instanceof TarFormatError) throw new UnreadableCatalog(`layer ${layer.digest}: ${err.message}`);
      throw err;
    }
    if (!files) continue;
    // Said without the image's own text (docs/security.md, "No registry text in check runs").
    if (options.serving && !servesDirectory(config.config, dir))
      throw new UnreadableCatalog(
        `${image} does not run \`opm serve /${dir}\` (its entrypoint and command), so what it serves is not the /${dir} its label names`,
      );
    if (options.kept) {
      options.kept.set(key, files);
      if (options.kept.size > KEPT) options.kept.delete(options.kept.keys().next().value!);
    }
    return { digest, manifestDigest, files };
  }
  throw new UnreadableCatalog(`none of the image's top ${MAX_LAYERS_SCANNED} layers holds /${dir}`);
}

/**
 * A reader of published catalogs through a registry client chosen by the repository's policy
 * (its credential hosts: docs/security.md, "Credentials stay home"): linux/amd64 from an
 * index, `/configs` when the config has no label. Registry errors become `unreachable` with
 * the client's own message (status and error code, never a body); a manifest the registry
 * does not have means nothing is published at that tag.
 */
export function publishedCatalogReader(
  clientFor: (policy: RegistryPolicy) => RegistryClient,
): ReadPublishedCatalog {
  const kept = new Map<string, CatalogFiles>();
  return async (image, policy) => {
    try {
      const read = await readCatalogLayer(clientFor(policy), image, { defaultConfigsDir: '/configs', kept });
      return {
        status: 'published',
        image,
        digest: read.manifestDigest,
        files: read.files,
      } satisfies PublishedCatalog;
    } catch (err) {
      if (err instanceof NotPublished) return { status: 'none', image };
      if (err instanceof RegistryError || err instanceof UnreadableCatalog)
        return { status: 'unreachable', image, reason: err.message };
      throw err;
    }
  };
}
