// `/promote <bundle> <channel> [<root>]` in the App: the promotion (./plan.ts) planned in a
// check worker on the branch it goes to, checked as the commenter's own change and written
// like every catalog edit of a comment (../catalog-edit/flow.ts).
import type { PullRequest } from '../../github/types.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { catalogEdit, editFromComment, type EditOutcome, type EditTarget } from '../catalog-edit/flow.js';

type Pull = PullRequest;

/** `/promote`: add an existing bundle to a channel (src/flows/promote/plan.ts). */
export function promoteFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  request: { bundle: string; channel: string; root?: string },
): Promise<EditOutcome> {
  return editFromComment(
    context,
    options,
    target,
    pr,
    '/promote',
    catalogEdit({ edit: 'promote', request }, `Promote ${request.bundle} to ${request.channel}`),
  );
}
