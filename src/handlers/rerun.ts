// "Re-run" on a catalog-bot check run, or "Re-run all checks" on its suite: check the
// pull requests of that commit again, through the same job as a pull_request event.
import type { Context } from 'probot';
import { BUNDLE_IMAGE_CHECK, PUBLISH_CHECK } from '../publish/report.js';
import { enqueueChecks, type PrHandlerOptions, type PrJob } from './pull-request.js';
import type { PublishJob } from './push.js';
import { pullTarget, repoTarget } from './session.js';

export const RERUN_EVENTS = ['check_suite.rerequested', 'check_run.rerequested'] as const;

type RerunContext = Context<'check_suite.rerequested'> | Context<'check_run.rerequested'>;

export function rerunHandler(options: PrHandlerOptions): (context: RerunContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const pulls =
      ('check_suite' in payload ? payload.check_suite.pull_requests : payload.check_run.pull_requests) ?? [];
    const headSha = 'check_suite' in payload ? payload.check_suite.head_sha : payload.check_run.head_sha;
    if ('check_run' in payload && !payload.check_run.name.startsWith('catalog-bot/')) return; // not ours
    const repository = payload.repository;
    const name = 'check_run' in payload ? payload.check_run.name : '';
    if (name === PUBLISH_CHECK || name === BUNDLE_IMAGE_CHECK) {
      // Publish that commit again (its changes: against its first parent), only that check's part.
      const job: PublishJob = {
        ...repoTarget(payload),
        repoUrl: repository.html_url,
        branch: repository.default_branch,
        before: '',
        after: headSha,
        only: name === BUNDLE_IMAGE_CHECK ? 'bundles' : 'catalogs',
      };
      await options.queue.enqueue({
        key: `delivery:${context.id}`,
        group: `publish:${repository.id}`,
        kind: 'publish',
        data: job,
      });
      return;
    }
    for (const pr of pulls) {
      // Only pull requests into this repository (a fork's suite may list others).
      if (pr.base.repo.id !== repository.id) continue;
      const job: PrJob = { ...pullTarget(payload, pr.number), headSha };
      await enqueueChecks(context, options, job, `delivery:${context.id}:${pr.number}`);
    }
  };
}
