// Bundle manifests for the crd-upgrade check, read again for just the files that hold the
// bundles it needs: pull-request reports are loaded without `olm.bundle.object` contents.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleError, bundleFilesFromMap, parseBundle } from '../catalog/bundle.js';
import type { Bundle } from '../catalog/fbc/declcfg.js';
import { bundleObjectTexts, packageVersion } from '../catalog/property.js';
import { MAX_BUNDLE_BYTES, MAX_BUNDLE_FILE_BYTES } from './bundle.js';
import type { DirectoryFiles } from './bundle-pr.js';
import { loadCatalog } from '../catalog/fbc/load.js';
import {
  DirectorySource,
  GitTreeSource,
  type CatalogSource,
  type SourceEntry,
} from '../catalog/fbc/source.js';

export type Side = 'base' | 'head';

/**
 * Reload `files` (paths relative to the catalog root `root`) of one side with bundle objects
 * kept, and return the bundles they hold. Only those files are read.
 */
export type LoadBundleObjects = (root: string, side: Side, files: string[]) => Promise<Bundle[]>;

/** A source that lists only some files of another source (the rest of the root is not read). */
class OnlySource implements CatalogSource {
  readonly label: string;
  constructor(
    private readonly inner: CatalogSource,
    private readonly files: Set<string>,
  ) {
    this.label = inner.label;
  }

  async list(): Promise<SourceEntry[]> {
    return (await this.inner.list()).filter((e) => this.files.has(e.path));
  }

  read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    return this.inner.read(paths);
  }
}

/** A directory source that stats the named files instead of walking the whole root. */
class DirectoryFilesSource implements CatalogSource {
  readonly label: string;
  private readonly inner: DirectorySource;
  constructor(
    private readonly root: string,
    private readonly files: string[],
  ) {
    this.label = root;
    this.inner = new DirectorySource(root);
  }

  async list(): Promise<SourceEntry[]> {
    const out: SourceEntry[] = [];
    for (const path of [...this.files].sort()) {
      try {
        const info = await stat(join(this.root, ...path.split('/')));
        out.push({ path, kind: 'file', size: info.size });
      } catch (err) {
        out.push({ path, kind: 'unreadable', size: 0, problem: (err as Error).message });
      }
    }
    return out;
  }

  read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    return this.inner.read(paths);
  }
}

async function bundlesOf(source: CatalogSource): Promise<Bundle[]> {
  const loaded = await loadCatalog(source, { keepBundleObjects: true });
  return loaded.config.bundles;
}

/** For a pull request: `root` is the catalog root's path in the repository, read from git objects. */
export function gitObjectLoader(repo: string, base: string, head: string): LoadBundleObjects {
  // One source a side and root: its tree is listed once, however many bundles are asked for.
  const sources = new Map<string, GitTreeSource>();
  const sourceOf = (root: string, side: Side): GitTreeSource => {
    const key = `${side}\0${root}`;
    let source = sources.get(key);
    if (!source) sources.set(key, (source = new GitTreeSource(repo, side === 'base' ? base : head, root)));
    return source;
  };
  return async (root, side, files) =>
    files.length === 0 ? [] : bundlesOf(new OnlySource(sourceOf(root, side), new Set(files)));
}

/**
 * For local directories: `dirOf` maps a root and side to its directory (default: the root
 * itself, for both sides).
 */
export function directoryObjectLoader(
  dirOf: (root: string, side: Side) => string = (root) => root,
): LoadBundleObjects {
  return async (root, side, files) =>
    files.length === 0 ? [] : bundlesOf(new DirectoryFilesSource(dirOf(root, side), files));
}

// ---- bundle directories (docs/validation-rules.md, "CRDs from bundle directories") ----

/** Where a bundle's manifests come from when the catalog carries none (`olm.csv.metadata` only). */
export type DirectoryManifests =
  | { dir: string; objects: string[] }
  /** No usable directory: why (`dir` when there was one, but it could not be used). */
  | { dir?: string; problem: string };

/** A bundle directory's files at the base or the head (bounded reads: bundle-pr.ts). */
export type ReadBundleDirectory = (side: Side, dir: string, maxBytes: number) => Promise<DirectoryFiles>;

/** Finds the directory of a catalog bundle and reads its manifests. */
export type BundleDirectoryManifests = (bundle: Bundle) => Promise<DirectoryManifests>;

/** A placeholder value that names exactly one directory below the package's. */
const oneSegment = (s: string): boolean => s !== '' && s !== '.' && s !== '..' && !/[/\\\0]/.test(s);

/** The bundle's version as its `olm.package` property gives it (the directory name by `bundles.path`). */
function bundleVersion(bundle: Bundle): string | undefined {
  return packageVersion(bundle.properties);
}

/**
 * The manifests of one bundle directory, if it is the directory of `bundle`: the CSV's
 * metadata.name must be the bundle's name and the annotations must name its package (the
 * directory's name alone is not trusted). Read as opm reads a bundle (parseBundle), within
 * the bundle check's size caps; a file the YAML screen refuses makes the directory unusable.
 */
export function manifestsOfDirectory(
  dir: string,
  read: DirectoryFiles,
  bundle: { name: string; package: string },
): DirectoryManifests {
  if (read.bytes > MAX_BUNDLE_BYTES)
    return {
      dir,
      problem: `${dir} holds ${read.bytes} bytes, over the ${MAX_BUNDLE_BYTES / 2 ** 20} MiB a bundle directory may hold; not read`,
    };
  const large = [...read.files].find(([, data]) => data.length > MAX_BUNDLE_FILE_BYTES);
  if (large)
    return {
      dir,
      problem: `${dir}/${large[0]} is over the ${MAX_BUNDLE_FILE_BYTES / 2 ** 20} MiB one bundle file may hold; not read`,
    };
  let parsed;
  try {
    parsed = parseBundle(bundleFilesFromMap(read.files));
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    // parseBundle's refusals name the file relative to the directory.
    return { dir, problem: `${dir} cannot be read as a bundle: ${err.message}` };
  }
  if (parsed.name !== bundle.name)
    return {
      dir,
      problem: `${dir}/${parsed.csvPath} is the CSV of ${parsed.name || '(no name)'}, not of ${bundle.name}`,
    };
  if (parsed.package !== bundle.package)
    return {
      dir,
      problem: `${dir}/metadata/annotations.yaml names package ${parsed.package || '(none)'}, not ${bundle.package}`,
    };
  return { dir, objects: bundleObjectTexts(parsed.properties) };
}

/**
 * Bundle directories under `bundles.path` (`{package}` and `{version}` from the catalog
 * bundle) as the source of manifests the catalog lacks. A directory the base holds is a
 * released bundle, never edited (the bundle check fails any edit), so it is read at the base;
 * a new one at the head. Every directory is read at most once, and all of them together at
 * most `maxBytes` (docs/security.md, bounded work).
 */
export function bundleDirectoryManifests(
  pathTemplate: string,
  read: ReadBundleDirectory,
  maxBytes: number = MAX_BUNDLE_DIRECTORIES_BYTES,
): BundleDirectoryManifests {
  const found = new Map<string, Promise<DirectoryManifests>>();
  let budget = maxBytes;
  const lookup = async (bundle: Bundle): Promise<DirectoryManifests> => {
    const version = bundleVersion(bundle);
    if (version === undefined || !oneSegment(version) || !oneSegment(bundle.package))
      return { problem: `${bundle.name} has no version that names a bundle directory` };
    const dir = pathTemplate.replaceAll('{package}', bundle.package).replaceAll('{version}', version);
    let files: DirectoryFiles | undefined;
    for (const side of ['base', 'head'] as const) {
      const limit = Math.min(MAX_BUNDLE_BYTES, budget);
      const got = await read(side, dir, limit);
      if (got.bytes === 0 && got.files.size === 0 && got.unreadable.length === 0) continue;
      if (got.bytes > limit && limit < MAX_BUNDLE_BYTES)
        return {
          dir,
          problem: `${dir} was not read: the bundle directories of this check hold more than ${maxBytes / 2 ** 20} MiB together`,
        };
      budget -= got.files.size > 0 ? got.bytes : 0;
      files = got;
      break;
    }
    if (!files) return { problem: `no bundle directory ${dir}` };
    return manifestsOfDirectory(dir, files, bundle);
  };
  return (bundle) => {
    const key = `${bundle.package}\0${bundle.name}`;
    let got = found.get(key);
    if (!got) found.set(key, (got = lookup(bundle)));
    return got;
  };
}

/** All bundle directories one check reads, together (a package's worth: bundle-pr.ts MAX_PACKAGE_BYTES). */
export const MAX_BUNDLE_DIRECTORIES_BYTES = 64 * 2 ** 20;
