// The impact of a pull request in the App's status comment (docs/impact.md): the checks
// compute it from the catalogs they loaded (src/checks/pr.ts), the checks job queues this
// job in the repository's queue (where approvals and heads are saved too, so no save
// overwrites another), and it writes the section into the one status comment, in place.
import { loadState, replyText, saveState } from '../../handlers/pr-state.js';
import type { PullTarget, SessionContext } from '../../handlers/session.js';

export { impactSection } from './section.js';

/** A pull request head's impact section, to be written into the status comment. */
export interface ImpactCommentJob extends PullTarget {
  headSha: string;
  section: string;
  /** Nothing clusters would see changes: no write when the comment shows no impact yet. */
  empty?: boolean;
}

/**
 * Write the section, unless the pull request moved on (that head's own job writes its
 * impact) or the comment already shows it. A failure costs only the section.
 */
export async function impactCommentJob(
  context: SessionContext,
  options: { appSlug?: () => Promise<string> },
  job: ImpactCommentJob,
): Promise<void> {
  const { github, log } = context;
  try {
    const slug = options.appSlug ? await options.appSlug() : undefined;
    if (!slug) return;
    const pull = await github.pulls.get(job.ref, job.number);
    if (pull.head.sha !== job.headSha) return;
    const status = await loadState(github, job.ref, job.number, `${slug}[bot]`);
    if (status.state.impact?.sha === job.headSha && status.impact === replyText(job.section)) return;
    // A change without a catalog in it: nothing to say, and no write (docs/github-limits.md).
    if (job.empty && status.impact === undefined) return;
    await saveState(github, job.ref, job.number, status, {}, { sha: job.headSha, section: job.section });
  } catch (error) {
    log.warn({ err: error, pr: job.number }, 'could not write the impact into the status comment');
  }
}
