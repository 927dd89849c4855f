// The catalog work of `/render` (./flow.ts): it reads the pull request's templates and renders
// them, so it runs in a check worker, off the App's event loop and under its deadline and heap
// cap (docs/security.md, bounded work). Reads the mirror's git objects only.
import { GitFiles } from '../../git/files.js';
import { changedFiles, readRepoConfig } from '../../checks/changes.js';
import { templatesFor } from '../../checks/pr-checks.js';
import { renderTemplateOutputs } from '../../checks/templates.js';
import { mergeBase } from '../../git/mirror.js';
import { bundlesWithPolicy, registryPolicy, type PolicyBundles } from '../../publish/exists.js';
import type { Plan } from '../catalog-edit/work.js';

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
