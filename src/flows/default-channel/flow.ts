// `/default-channel <package> <channel>` in the App: the edit (./plan.ts) planned in a check
// worker on the branch it goes to, checked as the commenter's own change and written like
// every catalog edit of a comment (../catalog-edit/flow.ts).
import type { PullRequest } from '../../github/types.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { catalogEdit, editFromComment, type EditOutcome, type EditTarget } from '../catalog-edit/flow.js';

type Pull = PullRequest;

/** `/default-channel`: set a package's default channel where it is written (docs/default-channel.md). */
export function defaultChannelFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  request: { package: string; channel: string },
): Promise<EditOutcome> {
  return editFromComment(
    context,
    options,
    target,
    pr,
    '/default-channel',
    catalogEdit(
      { edit: 'default-channel', request },
      `Set the default channel of ${request.package} to ${request.channel}`,
    ),
  );
}
