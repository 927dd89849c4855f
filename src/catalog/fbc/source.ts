// Where a catalog's files come from: a directory, or a commit of a git repository read
// straight from its objects (no worktree, so nothing from a PR is ever checked out).
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { posix } from 'node:path';
import { goStringCompare } from '../go/gostrings.js';
import { listTreeRecords, readBlobs } from '../../git/read.js';
import { KEPT_LISTING_BYTES, KeptAnswers } from '../../git/kept.js';

export type EntryKind = 'file' | 'symlink' | 'unreadable';

export interface SourceEntry {
  /** Slash path relative to the catalog root, in lexical (Go fs.WalkDir) order. */
  path: string;
  kind: EntryKind;
  size: number;
  /** For symlinks: what it points at, and whether that is usable. */
  problem?: string;
}

export interface CatalogSource {
  /** A name for messages: the directory, or `<rev>:<path>`. */
  readonly label: string;
  list(): Promise<SourceEntry[]>;
  /** Read the files (followed through in-root symlinks); a file that cannot be read maps to its error. */
  read(paths: string[]): Promise<Map<string, Buffer | Error>>;
  /**
   * An id that only files with the same bytes share (a git blob id), for a listed file;
   * undefined when the source has none.
   */
  contentId?(path: string): string | undefined;
}

/**
 * The most bytes one read of the loader holds at once: files are read in batches of at most
 * this much (a single larger file, within the loader's per-file cap, is read alone), so the
 * Buffer memory of a check, which the worker's heap cap does not limit, stays bounded
 * (docs/security.md).
 */
export const READ_BATCH_BYTES = 16 * 1024 * 1024;

/** Files larger than this are not read by default (LoadOptions.maxFileSize). */
export const DEFAULT_MAX_FILE_SIZE = 64 * 1024 * 1024;

/** PATH_MAX: a symlink whose target is longer is not one the bot follows (docs/security.md). */
export const MAX_SYMLINK_TARGET = 4096;

/**
 * The most bytes of symlink targets one listing reads: real catalogs have a few links, and
 * the targets are Buffer memory the worker's heap cap does not bound (docs/security.md).
 * Links past it are not followed.
 */
export const MAX_SYMLINK_TARGET_BYTES = 1024 * 1024;

/** Go sorts directory entries by byte order, not by locale. */

/**
 * The problem of a path that is not UTF-8. Decoded lossily, two such names could become one
 * path and one file would go unread (docs/security.md); opm cannot open them either.
 */
export const NAME_NOT_UTF8 = 'file name is not valid UTF-8 (opm cannot open it)';

// ignoreBOM: keep a leading U+FEFF, which is part of the name (the decoder drops it by default).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The name as text, or undefined when its bytes are not UTF-8. */
function utf8Name(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Like Go's fs errors: "read <path>: <reason>". */
function readError(p: string, err: unknown): Error {
  const reason =
    (err as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (err as Error).message;
  return new Error(`read ${p}: ${reason}`);
}

/** DirectorySource.readState(): plain data, to hand to a worker thread. */
export interface DirectoryReadState {
  root: string;
  label: string;
  targets: [string, string][];
  sizes: [string, number][];
}

let reused = Buffer.alloc(0);

export class DirectorySource implements CatalogSource {
  readonly label: string;
  private readonly root: string;
  private readonly targets = new Map<string, string>();
  private readonly sizes = new Map<string, number>();

  constructor(root: string) {
    this.root = resolve(root);
    this.label = root;
  }

  // The listing uses blocking calls: each takes microseconds, where awaiting one at a time
  // left `validate` idle for tens of milliseconds (README, "Benchmarks"). It runs on the
  // command line or in the check worker, never on the App's event loop.
  async list(): Promise<SourceEntry[]> {
    const rootReal = realpathSync(this.root);
    const out: SourceEntry[] = [];
    const walk = (dir: string, rel: string): void => {
      const raw = readdirSync(dir, { encoding: 'buffer' }).sort(Buffer.compare);
      for (const bytes of raw) {
        const name = utf8Name(bytes);
        if (name === undefined) {
          const path = `${rel === '' ? '' : rel + '/'}${bytes.toString('utf8')}`;
          out.push({ path, kind: 'unreadable', size: 0, problem: NAME_NOT_UTF8 });
          continue;
        }
        const abs = join(dir, name);
        const path = rel === '' ? name : `${rel}/${name}`;
        const info = lstatSync(abs);
        if (info.isDirectory()) {
          walk(abs, path);
        } else if (info.isSymbolicLink()) {
          const entry = this.describeSymlink(abs, path, rootReal);
          this.sizes.set(path, entry.size);
          out.push(entry);
        } else if (info.isFile()) {
          this.sizes.set(path, info.size);
          out.push({ path, kind: 'file', size: info.size });
        } else {
          out.push({ path, kind: 'unreadable', size: 0, problem: 'not a regular file' });
        }
      }
    };
    walk(this.root, '');
    return out;
  }

  private describeSymlink(abs: string, path: string, rootReal: string): SourceEntry {
    let target: string;
    try {
      target = realpathSync(abs);
    } catch {
      return { path, kind: 'symlink', size: 0, problem: 'symlink points at nothing' };
    }
    const inside = relative(rootReal, target);
    if (inside === '' || inside.startsWith('..') || inside.startsWith(sep + sep)) {
      return {
        path,
        kind: 'symlink',
        size: 0,
        problem: 'symlink points outside the catalog root; not followed',
      };
    }
    const info = statSync(target);
    if (info.isDirectory()) {
      return { path, kind: 'symlink', size: 0, problem: `read ${path}: is a directory` };
    }
    this.targets.set(path, target);
    return { path, kind: 'symlink', size: info.size };
  }

  async read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    const out = new Map<string, Buffer | Error>();
    await Promise.all(
      paths.map(async (p) => {
        try {
          out.set(p, await this.readBounded(p));
        } catch (err) {
          out.set(p, readError(p, err));
        }
      }),
    );
    return out;
  }

  /** What another thread needs to read the listed files exactly as this source does. */
  readState(): DirectoryReadState {
    return { root: this.root, label: this.label, targets: [...this.targets], sizes: [...this.sizes] };
  }

  static fromReadState(state: DirectoryReadState): DirectorySource {
    const source = new DirectorySource(state.root);
    (source as { label: string }).label = state.label;
    for (const [path, target] of state.targets) source.targets.set(path, target);
    for (const [path, size] of state.sizes) source.sizes.set(path, size);
    return source;
  }

  /**
   * read() of one listed file, synchronously, into a buffer reused from call to call (fresh
   * memory is slow to touch): the bytes are valid until the next call.
   */
  readReused(p: string): Buffer | Error {
    let fd: number | undefined;
    try {
      fd = openSync(this.targets.get(p) ?? join(this.root, ...p.split('/')), 'r');
      const limit = this.sizes.get(p) ?? fstatSync(fd).size;
      if (reused.length < limit + 1) reused = Buffer.allocUnsafe(Math.max(limit + 1, reused.length * 2));
      let length = 0;
      while (length < limit + 1) {
        const bytesRead = readSync(fd, reused, length, limit + 1 - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      if (length > limit) throw new Error(`file grew while being read (was ${limit} bytes)`);
      return reused.subarray(0, length);
    } catch (err) {
      return readError(p, err);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Read at most the size the listing saw (which the loader checked against its caps): a file
   * that grew since is an error, never a read of whatever it has become (docs/security.md).
   */
  private async readBounded(p: string): Promise<Buffer> {
    const handle = await open(this.targets.get(p) ?? join(this.root, ...p.split('/')), 'r');
    try {
      const limit = this.sizes.get(p) ?? (await handle.stat()).size;
      // One byte more than the limit tells a file that grew. Not zero-filled: only the bytes
      // read are returned.
      const buffer = Buffer.allocUnsafe(limit + 1);
      let length = 0;
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      if (length > limit) throw new Error(`file grew while being read (was ${limit} bytes)`);
      return buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  }
}

interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  size: number;
  path: string;
  notUtf8: boolean;
}

/**
 * Listings of trees named by a full object id (src/git/kept.ts): one job's checks list the
 * same catalog roots and bundle directories several times, each check its own source.
 */
const listings = new KeptAnswers<readonly TreeEntry[]>(KEPT_LISTING_BYTES, (entries) =>
  entries.reduce((n, e) => n + e.path.length + 100, 0),
);

/** A catalog root inside one commit of a git repository. */
export class GitTreeSource implements CatalogSource {
  readonly label: string;
  private readonly prefix: string;
  // The listing, asked once: several loads of this source may wait for it at the same time.
  private entries: Promise<readonly TreeEntry[]> | undefined;
  private readonly blobOf = new Map<string, { object: string; size: number }>();

  /** `root` is the catalog root's path inside the repository ('' or '.' for the top). */
  constructor(
    private readonly repo: string,
    private readonly rev: string,
    root: string,
  ) {
    const clean = posix
      .normalize(root.replaceAll('\\', '/'))
      .replace(/^\.\/?$/, '')
      .replace(/\/$/, '');
    if (clean.startsWith('..') || clean.startsWith('/'))
      throw new Error(`catalog root ${root} is outside the repository`);
    this.prefix = clean;
    this.label = `${rev}:${clean === '' ? '.' : clean}`;
  }

  private tree(): Promise<readonly TreeEntry[]> {
    this.entries ??= listings
      .ask(`${this.repo}\0${this.prefix}`, [this.rev], () => this.listTree())
      .catch((error: unknown) => {
        this.entries = undefined; // a failed listing is asked again next time
        throw error;
      });
    return this.entries;
  }

  private async listTree(): Promise<TreeEntry[]> {
    const entries: TreeEntry[] = [];
    // Parsed as it streams: the listing of a tree with many files is never one Buffer.
    await listTreeRecords(this.repo, this.rev, this.prefix, (record) => {
      const tab = record.indexOf(0x09);
      if (tab === -1) return;
      const [mode = '', type = '', object = '', size = ''] = record
        .subarray(0, tab)
        .toString('utf8')
        .split(/ +/);
      const pathBytes = record.subarray(tab + 1);
      const path = utf8Name(pathBytes);
      entries.push({
        mode,
        type,
        object,
        size: Number(size) || 0,
        path: path ?? pathBytes.toString('utf8'),
        notUtf8: path === undefined,
      });
    });
    return entries;
  }

  private relativePath(full: string): string {
    return this.prefix === '' ? full : full.slice(this.prefix.length + 1);
  }

  async list(): Promise<SourceEntry[]> {
    const entries = await this.tree();
    const byPath = new Map(entries.map((e) => [e.path, e]));
    const out: SourceEntry[] = [];
    // A target longer than PATH_MAX is not read at all (its blob could be any size).
    const links: TreeEntry[] = [];
    const unread = new Set<TreeEntry>();
    let linkBytes = 0;
    for (const e of entries) {
      if (e.mode !== '120000' || e.size > MAX_SYMLINK_TARGET) continue;
      if (linkBytes + e.size > MAX_SYMLINK_TARGET_BYTES) unread.add(e);
      else {
        links.push(e);
        linkBytes += e.size;
      }
    }
    const linkTargets = await readBlobs(this.repo, links, READ_BATCH_BYTES);
    let directories: Set<string> | undefined;
    for (const e of entries) {
      const path = this.relativePath(e.path);
      if (e.notUtf8) {
        out.push({ path, kind: 'unreadable', size: 0, problem: NAME_NOT_UTF8 });
      } else if (e.type === 'commit') {
        out.push({
          path,
          kind: 'unreadable',
          size: 0,
          problem: 'a git submodule; its files are not part of this tree',
        });
      } else if (unread.has(e)) {
        out.push({
          path,
          kind: 'symlink',
          size: 0,
          problem: `symlink not followed: the symlink targets of this tree are over the ${MAX_SYMLINK_TARGET_BYTES}-byte limit`,
        });
      } else if (e.mode === '120000' && e.size > MAX_SYMLINK_TARGET) {
        out.push({
          path,
          kind: 'symlink',
          size: 0,
          problem: `symlink target is ${e.size} bytes, over the ${MAX_SYMLINK_TARGET}-byte limit (PATH_MAX); not followed`,
        });
      } else if (e.mode === '120000') {
        const target = (linkTargets.get(e.object) ?? Buffer.alloc(0)).toString('utf8');
        const resolved = posix.normalize(posix.join(posix.dirname(e.path), target));
        const insideRoot =
          !target.startsWith('/') &&
          (this.prefix === '' ? !resolved.startsWith('..') : resolved.startsWith(this.prefix + '/'));
        const hit = byPath.get(resolved);
        if (!insideRoot) {
          out.push({
            path,
            kind: 'symlink',
            size: 0,
            problem: 'symlink points outside the catalog root; not followed',
          });
        } else if (!hit) {
          // One set of directories per listing: thousands of dangling links must not scan the tree each.
          directories ??= directoriesOf(entries);
          const isDir = directories.has(resolved);
          out.push({
            path,
            kind: 'symlink',
            size: 0,
            problem: isDir ? `read ${path}: is a directory` : 'symlink points at nothing',
          });
        } else {
          this.blobOf.set(path, hit);
          out.push({ path, kind: 'symlink', size: hit.size });
        }
      } else {
        this.blobOf.set(path, e);
        out.push({ path, kind: 'file', size: e.size });
      }
    }
    return out.sort((a, b) => goStringCompare(a.path, b.path));
  }

  contentId(path: string): string | undefined {
    return this.blobOf.get(path)?.object;
  }

  async read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    if (this.blobOf.size === 0) await this.list();
    const objects = paths.map((p) => {
      const o = this.blobOf.get(p);
      if (!o) throw new Error(`${p} is not a file in ${this.label}`);
      return o;
    });
    const blobs = await readBlobs(this.repo, objects, READ_BATCH_BYTES);
    return new Map(paths.map((p, i) => [p, blobs.get(objects[i]?.object as string) ?? Buffer.alloc(0)]));
  }
}

/** Every directory that holds an entry of a tree listing. */
function directoriesOf(entries: readonly TreeEntry[]): Set<string> {
  const dirs = new Set<string>();
  for (const e of entries) {
    for (let cut = e.path.lastIndexOf('/'); cut > 0; cut = e.path.lastIndexOf('/', cut - 1)) {
      const dir = e.path.slice(0, cut);
      if (dirs.has(dir)) break;
      dirs.add(dir);
    }
  }
  return dirs;
}
