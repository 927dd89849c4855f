// Comment commands that load catalogs do that work in a check worker, like the checks: with
// their turns, wall-clock deadline and heap cap, never on the event loop that answers
// webhooks and runs other repositories' jobs (docs/security.md, bounded work).
import { CheckLimitError, runTaskIsolated } from '../checks/isolate.js';
import { bounded, inlineCode } from './quote.js';

/** A command's answer (./commands/command.ts CommandOutcome, not imported: it imports the commands). */
interface CommandOutcome {
  ok: boolean;
  say?: string;
}

/** The most a command's answer says (GitHub takes 65,536 characters per comment). */
export const MAX_COMMAND_REPLY = 20_000;

/**
 * The module `name` next to `here` (an import.meta.url), as the worker imports it: the
 * TypeScript source when the App runs from its sources (the tests), the built file otherwise.
 */
export function workModule(here: string, name: string): URL {
  return new URL(`./${name}${here.endsWith('.ts') ? '.ts' : '.js'}`, here);
}

/**
 * `fn` of `module` on `input`, in a check worker. A command stopped at a limit answers
 * naming it, one that failed says so (never silence); the answer is bounded.
 */
export async function commandInWorker(
  command: string,
  module: URL,
  fn: string,
  input: unknown,
): Promise<CommandOutcome> {
  try {
    const outcome = await runTaskIsolated<CommandOutcome>({ module, fn, input, what: command });
    return outcome.say === undefined ? outcome : { ...outcome, say: bounded(outcome.say, MAX_COMMAND_REPLY) };
  } catch (error) {
    if (error instanceof CheckLimitError) return { ok: false, say: `${error.message}.` };
    // The message may quote the pull request's files: in a code span (./quote.ts).
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, say: `${command} failed: ${inlineCode(message, 1000)}` };
  }
}
