// The one tar module of publishing (docs/publishing.md): a reproducible writer (sorted
// entries, uid/gid 0, fixed mtime, ustar with PAX for long paths, gzip with a fixed header)
// for the layers catalog-bot builds, and a reader for the layers it pulls (bundle images,
// a base image's /bin/opm). Same entries in, same bytes out, on any machine.
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { goStringCompare } from '../catalog/go/gostrings.js';

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

/**
 * Sorted tar entries for files at the top of the archive (`manifests/a.yaml`, ...), with
 * every parent directory included: what `COPY <dir> /<dir>/` lays down.
 */
export function treeEntries(files: ReadonlyMap<string, Buffer>): TarEntry[] {
  const dirs = new Set<string>();
  for (const path of files.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const entries: TarEntry[] = [
    ...[...dirs].map((path): TarEntry => ({ path, type: 'dir' })),
    ...[...files].map(([path, data]): TarEntry => ({ path, type: 'file', data })),
  ];
  return entries.sort((a, b) => goStringCompare(a.path, b.path));
}

// ---- reading ------------------------------------------------------------------------

/** A tar that cannot be read on (a size that is negative or not a number). */
export class TarFormatError extends Error {}

export interface TarItem {
  /** As the archive names it, trailing slashes removed (callers normalise `.` and `..`). */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';
  /** Target of a symlink or hard link ('' otherwise). */
  link: string;
  mode: number;
  /** A view into the archive: copy it to keep it past the archive. */
  data: Buffer;
}

function fieldString(b: Buffer, start: number, length: number): string {
  const slice = b.subarray(start, start + length);
  const nul = slice.indexOf(0);
  return slice.subarray(0, nul < 0 ? slice.length : nul).toString('utf8');
}

function fieldNumber(b: Buffer, start: number, length: number): number {
  const slice = b.subarray(start, start + length);
  if ((slice[0]! & 0x80) !== 0) {
    // base-256 (GNU) for large sizes
    let n = slice[0]! & 0x7f;
    for (let i = 1; i < slice.length; i++) n = n * 256 + slice[i]!;
    return n;
  }
  const text = fieldString(b, start, length).trim();
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

/**
 * The entries of a tar archive, one at a time (ustar, PAX and GNU long names and links).
 * Throws TarFormatError on a header whose size would not move the reading on.
 */
export function* tarItems(tar: Buffer): Generator<TarItem> {
  let offset = 0;
  let pax = new Map<string, string>();
  const global = new Map<string, string>();
  let longName: string | undefined;
  let longLink: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const h = tar.subarray(offset, offset + BLOCK);
    if (h.every((b) => b === 0)) break;
    const size = fieldNumber(h, 124, 12);
    // A negative or unreadable size would read the same header forever.
    if (!Number.isSafeInteger(size) || size < 0)
      throw new TarFormatError(`malformed tar header at byte ${offset}: its size is not a number`);
    const type = String.fromCharCode(h[156]!);
    const data = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      pax = parsePax(data);
      continue;
    }
    if (type === 'g') {
      for (const [k, v] of parsePax(data)) global.set(k, v);
      continue;
    }
    if (type === 'L') {
      longName = fieldString(data, 0, data.length);
      continue;
    }
    if (type === 'K') {
      longLink = fieldString(data, 0, data.length);
      continue;
    }
    // The prefix field is POSIX ustar's; GNU's magic ("ustar  ") keeps other data there.
    const prefix = h.subarray(257, 263).toString('latin1') === 'ustar\0' ? fieldString(h, 345, 155) : '';
    const name = fieldString(h, 0, 100);
    const path = pax.get('path') ?? longName ?? global.get('path') ?? (prefix ? `${prefix}/${name}` : name);
    const link = pax.get('linkpath') ?? longLink ?? fieldString(h, 157, 100);
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
    yield { path: path.replace(/\/+$/, ''), type: kind, link, mode: fieldNumber(h, 100, 8), data };
    pax = new Map();
    longName = undefined;
    longLink = undefined;
  }
}

/** Every entry of a tar archive (see tarItems). */
export function readTar(tar: Buffer): TarItem[] {
  return [...tarItems(tar)];
}
