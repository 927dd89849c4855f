// `/deprecate` and `/undeprecate <bundle|channel|package> <name>`: the olm.deprecations edit
// (src/flows/deprecate/plan.ts) planned on the branch it goes to and written like `/promote`
// (../catalog-edit/flow.ts): checked as the commenter's own change, never onto the default branch.
import type { PullRequest } from '../../github/types.js';
import type { DeprecationKind } from '../../catalog/edits/deprecate.js';
import { catalogEdit, editFromComment, type EditOutcome, type EditTarget } from '../catalog-edit/flow.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';

type Pull = PullRequest;

export function deprecateFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: EditTarget,
  pr: Pull,
  request: { kind: DeprecationKind; name: string; message?: string; undo: boolean },
): Promise<EditOutcome> {
  const command = request.undo ? '/undeprecate' : '/deprecate';
  return editFromComment(
    context,
    options,
    target,
    pr,
    command,
    catalogEdit(
      { edit: 'deprecate', request },
      `${request.undo ? 'Undeprecate' : 'Deprecate'} ${request.kind} ${request.name}`,
    ),
  );
}
