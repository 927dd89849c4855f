// `/explain impact`: what the pull request means for clusters (docs/impact.md). When the
// status comment already shows the impact of the pull request's head, the answer is that
// section (nothing is loaded again); otherwise the catalogs of the merge base and the head
// are compared in a check worker (./work.ts), off the App's event loop.
import { commandInWorker, workModule } from '../../handlers/command-worker.js';
import type { StatusComment } from '../../handlers/pr-state.js';
import {
  openSession,
  type PullTarget,
  type SessionContext,
  type SessionOptions,
} from '../../handlers/session.js';
import type { ImpactWork } from './work.js';

interface PullShas {
  number: number;
  base: { sha: string };
  head: { sha: string };
}

export async function explainImpact(
  context: SessionContext,
  options: SessionOptions,
  target: PullTarget,
  pr: PullShas,
  status: StatusComment | undefined,
): Promise<{ ok: boolean; say?: string }> {
  const head = pr.head.sha;
  if (status?.state.impact?.sha === head && status.impact !== undefined)
    return { ok: true, say: `As the status comment shows for ${head.slice(0, 12)}:\n\n${status.impact}` };
  const base = pr.base.sha;
  const commits = { fetch: [base, `refs/pull/${pr.number}/head`], blobs: [base, head] };
  return openSession(context, options, target, 'explain', commits, async (session) => {
    const work: ImpactWork = { dir: session.dir, base: await session.mergeBase(base, head), head };
    return commandInWorker('`/explain impact`', workModule(import.meta.url, 'work'), 'impactInRepo', work);
  });
}
