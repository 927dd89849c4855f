// The Probot app: webhook events to queued jobs. Handlers stay thin (parse, decide,
// enqueue); the checks themselves live in src/checks.
import type { ApplicationFunction, Probot } from 'probot';
import { PR_EVENTS, pullRequestHandler } from './handlers/pull-request.js';
import { RERUN_EVENTS, rerunHandler } from './handlers/rerun.js';
import { InProcessQueue, type JobQueue } from './queue.js';

export interface AppOptions {
  /** The job queue (default: a new in-process queue). */
  queue?: JobQueue;
  /** Where the git mirrors live (default: CATALOG_BOT_WORKDIR or the temp dir). */
  workDir?: string;
}

export function createApp(options: AppOptions = {}): ApplicationFunction {
  return (app: Probot) => {
    const queue =
      options.queue ??
      new InProcessQueue({
        onError: (error, job) => app.log.error({ err: error, job: job.key }, 'job failed'),
      });
    app.on([...PR_EVENTS], pullRequestHandler({ queue, workDir: options.workDir }));
    app.on([...RERUN_EVENTS], rerunHandler({ queue, workDir: options.workDir }));
  };
}

export default createApp();
