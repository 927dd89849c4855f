// The catalog work of `/promote`, `/default-channel`, `/deprecate` and `/undeprecate`
// (./promote.ts): planning the edit loads the branch's catalogs, so it runs in a check
// worker, off the App's event loop and under its deadline and heap cap (docs/security.md,
// bounded work). Reads the mirror's git objects only; the main thread commits and checks.
import { GitFiles, GitTreeSource } from '../catalog/fbc/source.js';
import { PromoteError, templateMappingsFromTree, type FileTree } from '../catalog/edits/promote.js';
import type { DeprecationKind } from '../catalog/edits/deprecate.js';
import { catalogRoots, changedFiles, readRepoConfig } from '../checks/changes.js';
import { templatesFor } from '../checks/pr-checks.js';
import { renderTemplateOutputs } from '../checks/templates.js';
import { mergeBase } from '../git-mirror.js';
import { bundlesWithPolicy, registryPolicy, type PolicyBundles } from '../publish/exists.js';
import { setDefaultChannel } from '../promotion/default-channel.js';
import { deprecate } from '../promotion/deprecate.js';
import { promote } from '../promotion/promote.js';

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
 * The plan of a catalog edit of src/promotion/ on the branch's catalogs, the owners files
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

export interface RenderWork {
  dir: string;
  /** The commit the render is planned on (the tip of the branch it goes to). */
  parent: string;
  /** The pull request's base: its configuration, and where the changed templates are seen from. */
  base: string;
  /** Pulls a bundle image (a main-thread callback: registry access stays there). */
  resolveBundle?: PolicyBundles['resolveBundle'];
}

/** The plan of `/render`: the templates the pull request changed, rendered into their outputs. */
export async function planRender(work: RenderWork): Promise<Plan> {
  const { dir, parent, base, resolveBundle } = work;
  const gitFiles = new GitFiles(dir);
  try {
    const readFile = (rev: string, path: string) => gitFiles.read(rev, path);
    const { config } = await readRepoConfig(dir, base, readFile);
    const files = await changedFiles(dir, await mergeBase(dir, base, parent), parent);
    const mappings = await templatesFor(parent, config.templates, files, readFile);
    if (mappings.length === 0)
      return { refused: 'this pull request changes no template and no rendered output' };
    const read = (path: string) => readFile(parent, path);
    // Pulls only from allowed registries, with the repository's credential hosts.
    const pull = bundlesWithPolicy(resolveBundle ? { resolveBundle } : {}, registryPolicy(config));
    const { edits, findings } = await renderTemplateOutputs({
      mappings,
      read,
      ...(pull.resolveBundle ? { resolveBundle: pull.resolveBundle } : {}),
    });
    if (findings.length > 0)
      return {
        refused: findings.map((f) => `${f.file ?? ''}${f.line ? `:${f.line}` : ''} ${f.message}`).join('; '),
      };
    if (edits.length === 0) return { refused: 'every output is already the render of its template' };
    return {
      edits: edits.map((e) => ({ path: e.path, before: e.before ?? '', after: e.after })),
      notes: [`Rendered ${mappings.map((m) => `\`${m.template}\``).join(', ')}.`],
      title: 'Render the catalog templates',
    };
    // What the templates say is the pull request's to decide; its checks judge the result.
  } finally {
    gitFiles.close();
  }
}
