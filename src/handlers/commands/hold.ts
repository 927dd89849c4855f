// `/hold`, `/hold cancel`, `/unhold`: the `do-not-merge/hold` label; a held pull request is never
// merged, and one in GitHub's merge queue is taken out of it.
// A hold is lifted only by whoever put it on or by someone with write access, so the author
// cannot lift a reviewer's hold and let the pull request merge (docs/security.md "Holds").
import { dequeueIfQueued } from '../../flows/merge-queue/queue.js';
import { LABELS, lastLabeledBy, setLabel } from '../pr-state.js';
import { authorWriterOrOwner, cancelable, defineCommentCommand, type CommandRun } from './command.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Undefined when the commenter may lift the hold; otherwise who holds it. */
async function holder(run: CommandRun): Promise<string | undefined> {
  if (!run.labels.includes(LABELS.hold) || (await run.hasWrite())) return undefined;
  let by = run.hold?.login;
  if (by === undefined) {
    // Not recorded: the author's own `/hold` (the App added the label), or a label someone
    // added by hand or another App added; the timeline says which.
    const slug = run.options.appSlug ? await run.options.appSlug() : undefined;
    const labeler = await lastLabeledBy(run.context.github, run.job.ref, run.job.number, LABELS.hold);
    by =
      labeler === undefined || (slug !== undefined && same(labeler, `${slug}[bot]`)) ? run.author : labeler;
  }
  return same(by, run.commenter) ? undefined : by;
}

export const hold = defineCommentCommand({
  name: 'hold',
  aliases: ['unhold'],
  help: {
    line: '`/hold` stops the automatic merge (`/hold cancel` or `/unhold` lifts it)',
    rows: [
      {
        usage: '`/hold`, `/hold cancel`, `/unhold`',
        who: 'the author, anyone with write access, or an owner; a hold is lifted by whoever put it on or anyone with write access',
        what: 'sets or removes `do-not-merge/hold`; a held PR is never merged',
      },
    ],
  },
  parse: (args, typed, at) => {
    if (typed !== 'unhold') return cancelable('hold', args, at);
    return args.length === 0
      ? { name: 'hold', cancel: true, ...at }
      : { problem: '`/unhold` takes no argument' };
  },
  mayUse: async (run, command) => {
    if (!(await authorWriterOrOwner(run)))
      return `\`${command.text}\`: only the author, someone with write access or an owner may hold or unhold.`;
    if (!command.cancel) return undefined;
    const by = await holder(run);
    return by === undefined
      ? undefined
      : `\`${command.text}\`: the hold was put on by \`${by}\`; only they or someone with write access may lift it.`;
  },
  act: async (run, command) => {
    const { context, job, labels } = run;
    await setLabel(context.github, job.ref, job.number, labels, LABELS.hold, !command.cancel);
    // A queued pull request leaves GitHub's merge queue (docs/merge-queue.md).
    if (!command.cancel) await dequeueIfQueued(context.github, job.ref, run.pr);
    if (command.cancel) {
      delete run.hold;
      run.recheck = true; // the hold may have been all that kept it from merging
    } else if (labels.includes(LABELS.hold)) {
      // Already held: the hold stays whoever's it is (a second `/hold` must not take it over
      // and then lift it).
    } else if (!same(run.commenter, run.author)) {
      run.hold = { login: run.commenter, comment: job.commentId };
    } else if (run.hold && !run.labels.includes(LABELS.hold)) {
      delete run.hold; // a record left from an earlier hold that was lifted by hand
    }
    return { ok: true };
  },
});
