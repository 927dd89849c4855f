// The catalog work of `/promote`, `/default-channel`, `/deprecate` and `/undeprecate`
// (./flow.ts): planning the edit loads the branch's catalogs, so it runs in a check
// worker, off the App's event loop and under its deadline and heap cap (docs/security.md,
// bounded work). Reads the mirror's git objects only; the main thread commits and checks.
import { GitTreeSource } from '../../catalog/fbc/source.js';
import { PromoteError, templateMappingsFromTree, type FileTree } from '../../catalog/edits/promote.js';
import type { DeprecationKind } from '../../catalog/edits/deprecate.js';
import { catalogRoots, readRepoConfig } from '../../checks/changes.js';
import { setDefaultChannel } from '../default-channel/plan.js';
import { deprecate } from '../deprecate/plan.js';
import { promote } from '../promote/plan.js';

/** A planned edit, or why there is none. */
export type Plan =
  | { refused: string }
  | { edits: { path: string; before: string; after: string }[]; notes: string[]; title: string };

/** Which catalog edit, and its arguments (plain data: it travels to the worker). */
export type CatalogEdit =
  | { edit: 'promote'; request: { bundle: string; channel: string; root?: string } }
  | { edit: 'default-channel'; request: { package: string; channel: string } }
  | {
      edit: 'deprecate';
      request: { kind: DeprecationKind; name: string; message?: string; undo: boolean };
    };

export interface CatalogEditWork {
  dir: string;
  /** The commit the edit is planned on (the tip of the branch it goes to). */
  parent: string;
  change: CatalogEdit;
  title: string;
}

/** A file tree of one commit of the mirror, read once (promote reads synchronously). */
export async function gitFileTree(
  dir: string,
  rev: string,
  wanted: (path: string) => boolean,
): Promise<FileTree> {
  const source = new GitTreeSource(dir, rev, '');
  const paths = (await source.list()).filter((e) => e.kind === 'file').map((e) => e.path);
  const contents = await source.read(paths.filter(wanted));
  const texts = new Map<string, string>();
  for (const [path, data] of contents) if (Buffer.isBuffer(data)) texts.set(path, data.toString('utf8'));
  return { list: () => paths, read: (path) => texts.get(path) };
}

/**
 * The plan of a catalog edit (a flow's plan.ts) on the branch's catalogs, the owners files
 * and the templates that say how they are made; a PromoteError is a refusal.
 */
export async function planCatalogEdit(work: CatalogEditWork): Promise<Plan> {
  const { dir, parent, change, title } = work;
  const { config } = await readRepoConfig(dir, parent);
  const roots = await catalogRoots(dir, parent, config.catalogs);
  const tree = await gitFileTree(
    dir,
    parent,
    (p) => roots.some((r) => p.startsWith(r + '/')) || p.startsWith('operators/') || p.startsWith('.github/'),
  );
  const input = { tree, roots, templates: templateMappingsFromTree(tree) };
  try {
    const result =
      change.edit === 'promote'
        ? await promote(change.request, input)
        : change.edit === 'default-channel'
          ? await setDefaultChannel(change.request, input)
          : await deprecate(change.request, input);
    return { ...result, title };
  } catch (error) {
    if (error instanceof PromoteError) return { refused: error.message };
    throw error;
  }
}
