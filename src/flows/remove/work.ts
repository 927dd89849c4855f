// The planning of `/remove` (./flow.ts): it reads the default branch's package and catalogs
// and re-renders templates, so it runs in a check worker, off the App's event loop and under
// its deadline and heap cap (docs/security.md, bounded work). The plan is the one
// `catalog-bot remove` applies (src/catalog/edits/remove.ts, docs/remove.md), on the
// mirror's git tree with its symbolic links; nothing is written here but git objects.
import { GitTreeSource } from '../../catalog/fbc/source.js';
import {
  packageDirOf,
  planRemoval,
  RemovalRefusal,
  type RemovalResult,
  type RemoveRequest,
} from '../../catalog/edits/remove.js';
import type { ReleaseTree } from '../../catalog/edits/release.js';
import { catalogRoots, readRepoConfig } from '../../checks/changes.js';
import { CONFIG_PATH } from '../../checks/config.js';

export interface RemovalWork {
  /** The mirror's git directory. */
  dir: string;
  /** The default branch's tip: the removal is planned on it. */
  parent: string;
  request: RemoveRequest;
}

/** What the removal changes, as files of a commit (`text: null`: deleted). */
export type RemovalPlan =
  | { refused: string }
  | { result: Omit<RemovalResult, 'edits' | 'deletedFiles'>; files: { path: string; text: string | null }[] };

/** The git tree of one commit as the removal reads it: files read up front, links listed apart. */
async function removalTree(
  dir: string,
  rev: string,
  wanted: (path: string) => boolean,
): Promise<{ tree: ReleaseTree; links: string[] }> {
  const source = new GitTreeSource(dir, rev, '');
  const entries = await source.list();
  const files = entries.filter((e) => e.kind === 'file').map((e) => e.path);
  // Symbolic links (and what git cannot name) are never read: the plan refuses to delete or
  // write through them (docs/security.md).
  const links = entries.filter((e) => e.kind !== 'file').map((e) => e.path);
  const contents = await source.read(files.filter(wanted));
  const bytes = new Map<string, Buffer>();
  for (const [path, data] of contents) if (Buffer.isBuffer(data)) bytes.set(path, data);
  return {
    tree: {
      list: () => files,
      read: (path) => bytes.get(path)?.toString('utf8'),
      readBytes: (path) => bytes.get(path),
    },
    links,
  };
}

/** The removal planned on `parent`; a RemovalRefusal is a refusal. */
export async function planRemovalWork(work: RemovalWork): Promise<RemovalPlan> {
  const { dir, parent, request } = work;
  const { config } = await readRepoConfig(dir, parent);
  const roots = await catalogRoots(dir, parent, config.catalogs);
  let packageDir: string;
  try {
    packageDir = packageDirOf(config.bundles.path, request.package);
  } catch (error) {
    if (error instanceof RemovalRefusal) return { refused: error.message };
    throw error;
  }
  // What the plan reads: the package's directory, the catalog roots (a catalog must stay
  // valid) and the repository config.
  const { tree, links } = await removalTree(
    dir,
    parent,
    (p) => p === CONFIG_PATH || p.startsWith(`${packageDir}/`) || roots.some((r) => p.startsWith(`${r}/`)),
  );
  let result: RemovalResult;
  try {
    result = await planRemoval(request, {
      tree,
      catalogRoots: roots,
      links,
      settings: {
        path: config.bundles.path,
        imageTemplate: config.bundles.imageTemplate,
        opmVersion: config.bundles.renderer.opmVersion,
        ...(config.bundles.renderer.csvMetadataFrom !== undefined
          ? { csvMetadataFrom: config.bundles.renderer.csvMetadataFrom }
          : {}),
      },
    });
  } catch (error) {
    if (error instanceof RemovalRefusal) return { refused: error.message };
    throw error;
  }
  const { edits, deletedFiles, ...rest } = result;
  return {
    result: rest,
    files: [
      ...deletedFiles.map((path) => ({ path, text: null })),
      ...edits.map((e) => ({ path: e.path, text: e.after })),
    ],
  };
}
