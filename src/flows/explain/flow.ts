// `/explain <bundle> [from <version>] [in <catalog>]`: the answer of `catalog-bot explain`
// (src/catalog/olm/explain.ts) on the pull request's head catalogs, or its base's when the
// head no longer has the bundle. Read-only. Everything the answer quotes comes from files
// the pull request controls, so it goes out in code blocks, cut to a bounded length
// (src/handlers/quote.ts, docs/explain.md). The catalogs are loaded in a check worker, never on the
// App's event loop (./work.ts, docs/security.md, bounded work).
import { tryParseVersion } from '../../catalog/versions/semver.js';
import type { CommandOutcome } from '../../handlers/commands/command.js';
import { commandInWorker, workModule } from '../../handlers/command-worker.js';
import type { ExplainRequest, ExplainWork } from './work.js';
import type { JobContext, PrHandlerOptions } from '../../handlers/pull-request.js';
import { inlineCode } from '../../handlers/quote.js';
import { openSession, type PullTarget } from '../../handlers/session.js';

export type { ExplainRequest } from './work.js';

interface PullShas {
  number: number;
  base: { sha: string };
  head: { sha: string };
}

/** Explain a bundle on the pull request's catalogs; never writes anything. */
export async function explainFromComment(
  context: JobContext,
  options: PrHandlerOptions,
  target: PullTarget,
  pr: PullShas,
  request: ExplainRequest,
): Promise<CommandOutcome> {
  const command = '`/explain`';
  if (request.from !== undefined) {
    const parsed = tryParseVersion(request.from.replace(/^v(?=\d)/, ''));
    if (!parsed.ok)
      return {
        ok: false,
        say: `${command}: ${inlineCode(request.from, 100)} is not a version (${inlineCode(parsed.error, 300)}); write it like \`from 1.2.3\`.`,
      };
  }
  const base = pr.base.sha;
  const head = pr.head.sha;
  const commits = { fetch: [base, `refs/pull/${pr.number}/head`], blobs: [base, head] };
  return openSession(context, options, target, 'explain', commits, (session) => {
    const work: ExplainWork = { dir: session.dir, base, head, request };
    return commandInWorker(command, workModule(import.meta.url, 'work'), 'explainInRepo', work);
  });
}
