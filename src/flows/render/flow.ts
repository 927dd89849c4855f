// `/render` in the App: the templates the pull request changed, rendered into their committed
// outputs in a check worker (./work.ts), and written like every catalog edit of a comment
// (../catalog-edit/flow.ts); only who asks is checked, the pull request's checks judge the result.
import type { PullRequest } from '../../github/types.js';
import type { PolicyBundles } from '../../publish/exists.js';
import { workModule } from '../../handlers/command-worker.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { editFromComment, type EditOutcome, type EditTarget } from '../catalog-edit/flow.js';
import type { RenderWork } from './work.js';

type Pull = PullRequest;

/** `/render`: render the templates the pull request changed into their committed outputs. */
export function renderFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  resolveBundle: PolicyBundles['resolveBundle'] | undefined,
): Promise<EditOutcome> {
  return editFromComment(
    context,
    options,
    target,
    pr,
    '/render',
    (dir, parent) => {
      const input: RenderWork = { dir, parent, base: pr.base.sha };
      // Bundle images are pulled on this thread, for the worker (registry access stays here).
      return {
        module: workModule(import.meta.url, 'work').href,
        fn: 'planRender',
        input,
        ...(resolveBundle ? { callbacks: { resolveBundle } } : {}),
      };
    },
    'permissions',
  );
}
