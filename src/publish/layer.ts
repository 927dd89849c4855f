// The catalog layer: a reproducible tar of a catalog root under `configs/`, gzipped with
// a fixed header. Same files in, same bytes (and digests) out, on any machine.
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { CatalogSource } from '../catalog/fbc/source.js';
import { goStringCompare } from '../catalog/go/gostrings.js';
import { sha256 } from './oci.js';

const gzip = promisify(gzipCallback);

export interface TarEntry {
  /** Slash path without a leading slash; directories end without a slash too. */
  path: string;
  type: 'file' | 'dir';
  data?: Buffer;
  /** Default 0o644 for files, 0o755 for directories. */
  mode?: number;
}

export interface TarOptions {
  /** Seconds since the epoch for every entry (default 0). */
  mtime?: number;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width includes the trailing NUL.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(
  name: string,
  prefix: string,
  size: number,
  mode: number,
  mtime: number,
  type: string,
): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii'); // checksum placeholder
  h.write(type, 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** ustar can hold `prefix/name` when it splits at a slash into <=155 and <=100 bytes. */
function splitUstar(path: string): { name: string; prefix: string } | null {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '')
      return { name, prefix };
  }
  return null;
}

function pad(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** A PAX extended header carrying a long path. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(body);
  // The length counts its own digits.
  let length = base + String(base).length;
  if (String(length).length !== String(base).length) length = base + String(length).length;
  return Buffer.from(`${length}${body}`);
}

/** A tar archive of the entries in the order given (callers sort), uid/gid 0, fixed mtime. */
export function createTar(entries: TarEntry[], options: TarOptions = {}): Buffer {
  const mtime = options.mtime ?? 0;
  const parts: Buffer[] = [];
  for (const e of entries) {
    const isDir = e.type === 'dir';
    const path = isDir ? `${e.path}/` : e.path;
    const data = isDir ? Buffer.alloc(0) : (e.data ?? Buffer.alloc(0));
    const mode = e.mode ?? (isDir ? 0o755 : 0o644);
    let split = splitUstar(path);
    if (!split) {
      const pax = paxRecord('path', path);
      parts.push(header('PaxHeaders/entry', '', pax.length, 0o644, mtime, 'x'), pax, pad(pax.length));
      split = { name: path.slice(-100).replace(/^[^/]*\//, ''), prefix: '' };
    }
    parts.push(header(split.name, split.prefix, data.length, mode, mtime, isDir ? '5' : '0'));
    if (data.length > 0) parts.push(data, pad(data.length));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/** gzip with a fixed header: no name, mtime 0, XFL 0, OS 3 (unix), whatever zlib wrote. */
export async function gzipFixed(data: Buffer, level = 6): Promise<Buffer> {
  const out = await gzip(data, { level });
  out.fill(0, 4, 9);
  out[9] = 3;
  return out;
}

/** Sorted tar entries for files under `dir/`, with every parent directory included. */
export function entriesUnder(dir: string, files: Map<string, Buffer>): TarEntry[] {
  const dirs = new Set<string>([dir]);
  for (const path of files.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(`${dir}/${parts.slice(0, i).join('/')}`);
  }
  const entries: TarEntry[] = [
    ...[...dirs].map((path): TarEntry => ({ path, type: 'dir' })),
    ...[...files].map(([path, data]): TarEntry => ({ path: `${dir}/${path}`, type: 'file', data })),
  ];
  // Sorting by path with '/' as the separator puts a directory right before its contents.
  return entries.sort((a, b) => goStringCompare(a.path, b.path));
}

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
