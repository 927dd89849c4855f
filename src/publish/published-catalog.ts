// The catalog an image serves, read from its catalog layer: what the pruning guard compares
// a pull request with (checks/prune.ts declares ReadPublishedCatalog; docs/publishing.md,
// "Pruning guard"). Only the layer that holds the configs directory is downloaded, never the
// base's layers.
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import type { PublishedCatalog, ReadPublishedCatalog } from '../checks/prune.js';
import type { RegistryPolicy } from '../checks/registry-policy.js';
import { readTar } from './tar.js';
import { CONFIGS_LABEL } from './image.js';
import { isIndex, type Descriptor, type ImageIndex, type ImageManifest } from './oci.js';
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

type Files = [string, Uint8Array][];

function pickPlatform(index: ImageIndex): Descriptor | undefined {
  const list = index.manifests ?? [];
  return (
    list.find((d) => d.platform?.os === 'linux' && d.platform.architecture === 'amd64') ??
    list.find((d) => !d.platform || d.platform.architecture !== 'unknown') ??
    list[0]
  );
}

class Unreadable extends Error {}

async function unpack(mediaType: string, data: Buffer, digest: string): Promise<Buffer> {
  if (/zstd/.test(mediaType))
    throw new Unreadable(`layer ${digest} is zstd-compressed, which catalog-bot cannot read`);
  if (data[0] !== 0x1f || data[1] !== 0x8b) return data;
  try {
    return await gunzip(data, { maxOutputLength: MAX_CATALOG_BYTES });
  } catch (err) {
    throw new Unreadable(
      (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        ? `layer ${digest} unpacks to more than ${MAX_CATALOG_BYTES / 2 ** 20} MiB`
        : `layer ${digest} is not a valid gzip stream`,
    );
  }
}

/** The files under `dir` in one layer (relative to it), or undefined when the layer has none there. */
function filesUnder(tar: Buffer, dir: string): Files | undefined {
  const prefix = `${dir}/`;
  let found = false;
  const files: Files = [];
  for (const entry of readTar(tar)) {
    const path = entry.path.replace(/^(\.\/|\/)+/, '');
    if (path !== dir && !path.startsWith(prefix)) continue;
    found = true;
    const rel = path.slice(prefix.length);
    if (rel.split('/').some((part) => part.startsWith('.wh.')))
      throw new Unreadable(
        `the layer holding ${dir} removes files of a lower layer, which catalog-bot does not read`,
      );
    if (entry.type === 'file' && rel !== '') files.push([rel, new Uint8Array(entry.data)]);
  }
  return found ? files : undefined;
}

/**
 * A reader of published catalogs through a registry client chosen by the repository's policy
 * (its credential hosts: docs/security.md, "Credentials stay home"). Registry errors become
 * `unreachable` with the client's own message (status and error code, never a body); a
 * manifest the registry does not have means nothing is published at that tag.
 */
export function publishedCatalogReader(
  clientFor: (policy: RegistryPolicy) => RegistryClient,
): ReadPublishedCatalog {
  const kept = new Map<string, Files>();
  return async (image, policy) => {
    let ref;
    try {
      ref = parseRef(image);
    } catch (err) {
      return { status: 'unreachable', image, reason: `not an image reference: ${(err as Error).message}` };
    }
    const client = clientFor(policy);
    try {
      let got;
      try {
        got = await client.getManifest(ref, referenceOf(ref));
      } catch (err) {
        // Only the tag itself missing means "never published"; a missing blob is an error.
        if (err instanceof RegistryError && err.status === 404) return { status: 'none', image };
        throw err;
      }
      if (isIndex(got.mediaType)) {
        const chosen = pickPlatform(JSON.parse(got.data.toString('utf8')) as ImageIndex);
        if (!chosen) throw new Unreadable(`image index ${got.digest} lists no manifests`);
        got = await client.getManifest(ref, chosen.digest);
      }
      const digest = got.digest;
      // Per credential scope: a catalog read with one repository's credentials is not handed
      // to another whose client could not read it.
      const key = `${client.credentialScope}\n${digest}`;
      const cached = kept.get(key);
      if (cached) return { status: 'published', image, digest, files: cached };
      const manifest = JSON.parse(got.data.toString('utf8')) as ImageManifest;
      let labels: Record<string, string> = {};
      try {
        const config = JSON.parse(
          (await client.getBlob(ref, manifest.config.digest, MAX_CONFIG_BYTES)).toString('utf8'),
        ) as { config?: { Labels?: Record<string, string> } };
        labels = config.config?.Labels ?? {};
      } catch (err) {
        if (err instanceof RegistryError) throw err;
        throw new Unreadable(`image config ${manifest.config.digest} is not JSON`);
      }
      const dir = (labels[CONFIGS_LABEL] ?? '/configs').replace(/^\/+|\/+$/g, '');
      if (dir === '') throw new Unreadable(`the image's ${CONFIGS_LABEL} label names no directory`);
      const layers = [...(manifest.layers ?? [])].reverse().slice(0, MAX_LAYERS_SCANNED);
      let scanned = 0;
      for (const layer of layers) {
        const data = await client.getBlob(ref, layer.digest);
        const tar = await unpack(layer.mediaType, data, layer.digest);
        scanned += data.length + tar.length;
        if (scanned > MAX_SCANNED_BYTES)
          throw new Unreadable(
            `the image's top layers hold more than ${MAX_SCANNED_BYTES / 2 ** 20} MiB before /${dir}`,
          );
        const files = filesUnder(tar, dir);
        if (!files) continue;
        kept.set(key, files);
        if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
        return { status: 'published', image, digest, files } satisfies PublishedCatalog;
      }
      throw new Unreadable(`none of the image's top ${MAX_LAYERS_SCANNED} layers holds /${dir}`);
    } catch (err) {
      if (err instanceof RegistryError || err instanceof Unreadable)
        return { status: 'unreachable', image, reason: err.message };
      if (err instanceof SyntaxError)
        return { status: 'unreachable', image, reason: 'a manifest is not JSON' };
      throw err;
    }
  };
}
