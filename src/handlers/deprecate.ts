// `/deprecate` and `/undeprecate <bundle|channel|package> <name>`: the olm.deprecations edit
// (src/promotion/deprecate.ts) planned on the branch it goes to and written like `/promote`
// (./promote.ts): checked as the commenter's own change, never onto the default branch.
import type { Context } from 'probot';
import type { DeprecationKind } from '../catalog/edits/deprecate.js';
import { PromoteError, templateMappingsFromTree } from '../catalog/edits/promote.js';
import { catalogRoots, readRepoConfig } from '../checks/changes.js';
import { deprecate } from '../promotion/deprecate.js';
import { editFromComment, gitFileTree, type EditOutcome, type EditTarget } from './promote.js';
import type { JobContext, PrHandlerOptions } from './pull-request.js';

type Pull = Awaited<ReturnType<Context['octokit']['rest']['pulls']['get']>>['data'];

export function deprecateFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  request: { kind: DeprecationKind; name: string; message?: string; undo: boolean },
): Promise<EditOutcome> {
  const command = request.undo ? '/undeprecate' : '/deprecate';
  return editFromComment(context, options, target, pr, command, async (dir, parent) => {
    const { config } = await readRepoConfig(dir, parent);
    const roots = await catalogRoots(dir, parent, config.catalogs);
    // The catalogs, and the ci.yaml files and templates that say how they are made.
    const tree = await gitFileTree(
      dir,
      parent,
      (p) =>
        roots.some((r) => p.startsWith(r + '/')) || p.startsWith('operators/') || p.startsWith('.github/'),
    );
    try {
      const result = await deprecate(request, { tree, roots, templates: templateMappingsFromTree(tree) });
      return {
        ...result,
        title: `${request.undo ? 'Undeprecate' : 'Deprecate'} ${request.kind} ${request.name}`,
      };
    } catch (error) {
      if (error instanceof PromoteError) return { refused: error.message };
      throw error;
    }
  });
}
