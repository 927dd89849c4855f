// Bundle manifests for the crd-upgrade check, read again for just the files that hold the
// bundles it needs: pull-request reports are loaded without `olm.bundle.object` contents.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bundle } from '../catalog/fbc/declcfg.js';
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
  return async (root, side, files) =>
    files.length === 0
      ? []
      : bundlesOf(
          new OnlySource(new GitTreeSource(repo, side === 'base' ? base : head, root), new Set(files)),
        );
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
