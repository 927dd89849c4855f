// What a change between two commits touches: which catalog roots, and inside each root
// which packages, decided by content (docs/security.md "Change detection sees every key").
import { createHash } from 'node:crypto';
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import { blobDigest } from '../catalog/fbc/load.js';
import { goFilepathMatch } from '../catalog/fbc/indexignore.js';
import { readFileAt } from '../git/files.js';
import { changedPaths, directoriesAt } from '../git/read.js';
import { CONFIG_PATH, parseRepoConfig } from './config.js';

/** The repository config at `rev` (the base of a PR: a PR cannot change its own rules). */
export async function readRepoConfig(
  repo: string,
  rev: string,
  readFile: (rev: string, path: string) => Promise<string | undefined> = (r, path) =>
    readFileAt(repo, r, path),
): Promise<ReturnType<typeof parseRepoConfig>> {
  // No config: the documented defaults.
  return parseRepoConfig(await readFile(rev, CONFIG_PATH));
}

/** Does a slash path match a glob of `*`-segments (Go filepath.Match per segment)? */
export function matchesGlob(path: string, glob: string): boolean {
  const p = path.split('/');
  const g = glob.replace(/\/+$/, '').split('/');
  return p.length === g.length && g.every((seg, i) => goFilepathMatch(seg, p[i] as string));
}

/** Directories at `rev` that match one of the globs: the catalog roots. */
export async function catalogRoots(repo: string, rev: string, globs: string[]): Promise<string[]> {
  const dirs = await directoriesAt(repo, rev);
  return dirs.filter((d) => globs.some((g) => matchesGlob(d, g))).sort();
}

/** Files that differ between two commits. */
export async function changedFiles(repo: string, base: string, head: string): Promise<string[]> {
  return changedPaths(repo, base, head);
}

// What a blob says, and only that. Loaded with `blobDigests`, the blob as read (keys the
// typed view drops included). Otherwise the typed view without the loader's own bookkeeping:
// `pos` on each blob and `line` on its properties and entries; user data keeps every key,
// `line` and `pos` included (docs/security.md).
const unlined = <T extends { line?: number }>(items: T[]): Omit<T, 'line'>[] =>
  items.map(({ line: _line, ...rest }) => rest);

type Blob = DeclarativeConfig[keyof DeclarativeConfig][number];

function contentOf(blob: Blob): unknown {
  const digest = blobDigest(blob);
  if (digest !== undefined) return digest;
  if ('value' in blob) return blob.value; // another schema: kept as read, all user data
  const { pos: _pos, ...rest } = blob;
  return {
    ...rest,
    ...('properties' in rest ? { properties: unlined(rest.properties) } : {}),
    ...('entries' in rest ? { entries: unlined<{ line?: number }>(rest.entries) } : {}),
  };
}

/**
 * Every blob of a package, as comparable text, keyed by package name. The file a blob sits
 * in is part of it: moving a package's blobs to another file or directory is a change to
 * that package (its owners must agree; docs/security.md). Where in the file is not.
 */
function packageContents(config: DeclarativeConfig): Map<string, string[]> {
  const byPackage = new Map<string, string[]>();
  const add = (pkg: string, blob: Blob): void => {
    const list = byPackage.get(pkg) ?? [];
    list.push(JSON.stringify([blob.pos.file, contentOf(blob)]));
    byPackage.set(pkg, list);
  };
  for (const p of config.packages) add(p.name, p);
  for (const c of config.channels) add(c.package, c);
  for (const b of config.bundles) add(b.package, b);
  for (const d of config.deprecations) add(d.package, d);
  for (const o of config.others) if (o.package) add(o.package, o);
  for (const list of byPackage.values()) list.sort();
  return byPackage;
}

/** A digest of each package's content (its blobs and the files holding them, not their lines). */
export function packageDigests(config: DeclarativeConfig): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, blobs] of packageContents(config)) {
    out.set(name, createHash('sha256').update(blobs.join('\n')).digest('hex'));
  }
  return out;
}

/** Packages whose blobs differ between two catalogs (added, changed or removed). */
export function changedPackages(
  base: DeclarativeConfig | undefined,
  head: DeclarativeConfig | undefined,
): Set<string> {
  const before = base ? packageContents(base) : new Map<string, string[]>();
  const after = head ? packageContents(head) : new Map<string, string[]>();
  const changed = new Set<string>();
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name);
    const b = after.get(name);
    if (!a || !b || a.length !== b.length || a.some((x, i) => x !== b[i])) changed.add(name);
  }
  return changed;
}
