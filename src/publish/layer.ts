// The catalog layer: a reproducible tar of a catalog root under `configs/`, gzipped with
// a fixed header. Same files in, same bytes (and digests) out, on any machine.
// The tar writing itself is src/publish/tar.ts.
import type { CatalogSource } from '../catalog/fbc/source.js';
import { sha256 } from './oci.js';
import { createTar, entriesUnder, gzipFixed, type TarOptions } from './tar.js';

/** Read every file of a catalog root; a file that cannot be read stops the build. */
export async function readCatalogFiles(source: CatalogSource): Promise<Map<string, Buffer>> {
  const entries = await source.list();
  const problems = entries.filter((e) => e.problem);
  if (problems.length > 0) {
    const p = problems[0]!;
    throw new Error(
      `cannot build the catalog image from ${source.label}: ${p.path}: ${p.problem}` +
        (problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''),
    );
  }
  const read = await source.read(entries.map((e) => e.path));
  const files = new Map<string, Buffer>();
  for (const e of entries) {
    const data = read.get(e.path);
    if (data instanceof Error) throw new Error(`cannot build the catalog image: ${data.message}`);
    files.set(e.path, data ?? Buffer.alloc(0));
  }
  return files;
}

export interface CatalogLayer {
  /** The gzipped tar. */
  data: Buffer;
  /** sha256 of `data`. */
  digest: string;
  /** sha256 of the uncompressed tar (the config's rootfs.diff_ids entry). */
  diffId: string;
  size: number;
  files: number;
}

/** Gzip is the slow part; a long-running process rebuilding the same content skips it. */
const compressed = new Map<string, Buffer>();
const CACHE_ENTRIES = 4;

/** Forget compressed layers (benchmarks measure cold builds). */
export function clearLayerCache(): void {
  compressed.clear();
}

export interface LayerOptions extends TarOptions {
  /** Directory the root lands in inside the image (default `configs`). */
  dir?: string;
  level?: number;
}

export async function catalogLayer(source: CatalogSource, options: LayerOptions = {}): Promise<CatalogLayer> {
  const files = await readCatalogFiles(source);
  return layerFromFiles(files, options);
}

export async function layerFromFiles(
  files: Map<string, Buffer>,
  options: LayerOptions = {},
): Promise<CatalogLayer> {
  const tar = createTar(entriesUnder(options.dir ?? 'configs', files), options);
  const diffId = sha256(tar);
  const key = `${diffId}/${options.level ?? 6}`;
  let data = compressed.get(key);
  if (data) {
    compressed.delete(key); // refresh its place in the LRU order
  } else {
    data = await gzipFixed(tar, options.level);
  }
  compressed.set(key, data);
  while (compressed.size > CACHE_ENTRIES) compressed.delete(compressed.keys().next().value as string);
  return { data, digest: sha256(data), diffId, size: data.length, files: files.size };
}
