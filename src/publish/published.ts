// What a published catalog image holds (docs/publishing.md, "verify-published"): its
// catalog files, read from the image's layers through the registry client (the same trust
// rules as every pull: docs/security.md), as a catalog source the loader reads like a root.
import { gunzip as gunzipCallback } from 'node:zlib';
import { promisify } from 'node:util';
import { goStringCompare } from '../catalog/go/gostrings.js';
import type { CatalogSource, SourceEntry } from '../catalog/fbc/source.js';
import { ImageFs } from './bundle-render.js';
import { hostPlatform } from './cache.js';
import { CONFIGS_LABEL } from './image.js';
import { isIndex, type ImageIndex, type ImageManifest } from './oci.js';
import { parseRef, referenceOf, type RegistryClient } from './registry.js';

const gunzip = promisify(gunzipCallback);

/** An image config is a few KiB of JSON. */
const MAX_CONFIG_BYTES = 4 * 2 ** 20;
/** The most a layer may unpack to here (a catalog of hundreds of MiB still fits). */
const MAX_LAYER_TAR_BYTES = 1024 * 2 ** 20;
/** How catalog-bot's own catalog layer is named in the image history (src/publish/image.ts). */
const CATALOG_HISTORY = 'catalog-bot: COPY ';

export interface PublishedCatalog {
  /** The digest the reference resolved to (an index or a manifest). */
  digest: string;
  /** Where the image's label says the catalog is (`/configs`). */
  configsDir: string;
  /** The catalog's files, by path under that directory. */
  files: Map<string, Buffer>;
  /** How many layers were read (catalog-bot's images: only the catalog layer and above). */
  layersRead: number;
}

/** A catalog held in memory: the loader reads it as it reads a directory. */
export class FilesSource implements CatalogSource {
  constructor(
    readonly label: string,
    private readonly files: Map<string, Buffer>,
  ) {}

  list(): Promise<SourceEntry[]> {
    return Promise.resolve(
      [...this.files]
        .sort(([a], [b]) => goStringCompare(a, b))
        .map(([path, data]) => ({ path, kind: 'file' as const, size: data.length })),
    );
  }

  read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    return Promise.resolve(
      new Map(paths.map((p) => [p, this.files.get(p) ?? new Error(`${p}: not in ${this.label}`)])),
    );
  }
}

const parse = <T>(data: Buffer, what: string): T => {
  try {
    return JSON.parse(data.toString('utf8')) as T;
  } catch {
    // A fixed message: registry text is not copied into output (docs/security.md).
    throw new Error(`${what} is not JSON`);
  }
};

/**
 * Pull the catalog of a published image: the manifest for this machine's platform (every
 * platform of a catalog-bot image carries the same catalog layer), the config's
 * `operators.operatorframework.io.index.configs.v1` label, then the layers, top-down from
 * catalog-bot's catalog layer when the history names it (the base's layers are not
 * fetched), else every layer, whiteouts honoured.
 */
export async function readPublishedCatalog(client: RegistryClient, image: string): Promise<PublishedCatalog> {
  const ref = parseRef(image);
  let got = await client.getManifest(ref, referenceOf(ref));
  const digest = got.digest;
  if (isIndex(got.mediaType)) {
    const index = parse<ImageIndex>(got.data, `image index ${digest}`);
    const host = hostPlatform();
    const list = (index.manifests ?? []).filter((d) => d.platform?.architecture !== 'unknown');
    const chosen =
      list.find((d) => d.platform?.os === host.os && d.platform.architecture === host.architecture) ??
      list[0];
    if (!chosen) throw new Error(`image index ${digest} lists no images`);
    got = await client.getManifest(ref, chosen.digest);
  }
  const manifest = parse<ImageManifest>(got.data, `manifest ${got.digest}`);
  if (!manifest.config || !Array.isArray(manifest.layers))
    throw new Error(`${image} is not an image manifest`);
  const config = parse<{
    config?: { Labels?: Record<string, string> };
    history?: { created_by?: string; empty_layer?: boolean }[];
  }>(
    await client.getBlob(ref, manifest.config.digest, MAX_CONFIG_BYTES),
    `image config ${manifest.config.digest}`,
  );
  const configsDir = config.config?.Labels?.[CONFIGS_LABEL];
  if (!configsDir)
    throw new Error(`${image} is not a catalog image: its config has no ${CONFIGS_LABEL} label`);

  // History entries that made a layer, paired with the layers from the top (a base's own
  // history may be shorter than its layers; catalog-bot's entries are always at the end).
  const layerHistory = (config.history ?? []).filter((h) => !h.empty_layer);
  let from = 0;
  for (let h = layerHistory.length - 1, l = manifest.layers.length - 1; h >= 0 && l >= 0; h--, l--)
    if ((layerHistory[h]?.created_by ?? '').startsWith(CATALOG_HISTORY)) {
      from = l;
      break;
    }
  const fs = new ImageFs();
  for (const layer of manifest.layers.slice(from)) {
    const data = await client.getBlob(ref, layer.digest);
    let tar: Buffer;
    if (/zstd/.test(layer.mediaType))
      throw new Error(`layer ${layer.digest} is zstd-compressed, which catalog-bot cannot read`);
    if (data[0] === 0x1f && data[1] === 0x8b) {
      try {
        tar = await gunzip(data, { maxOutputLength: MAX_LAYER_TAR_BYTES });
      } catch (error) {
        throw new Error(`layer ${layer.digest} cannot be unpacked (${(error as Error).message})`, {
          cause: error,
        });
      }
    } else tar = data;
    fs.applyLayer(tar);
  }
  const dir = fs.resolve(configsDir);
  if (!dir || dir.node.type !== 'dir') throw new Error(`${image} has no directory ${configsDir}`);
  const prefix = dir.path === '' ? '' : `${dir.path}/`;
  const files = new Map<string, Buffer>();
  for (const path of fs.nodes.keys()) {
    if (!path.startsWith(prefix)) continue;
    const data = fs.readFile(path); // links inside the image followed
    if (data) files.set(path.slice(prefix.length), data);
  }
  return { digest, configsDir, files, layersRead: manifest.layers.length - from };
}
