// `/hold`, `/hold cancel`, `/unhold`: the `do-not-merge/hold` label; a held pull request is never merged.
import { LABELS, setLabel } from '../pr-state.js';
import { authorWriterOrOwner, cancelable, defineCommand } from './command.js';

export const hold = defineCommand({
  name: 'hold',
  aliases: ['unhold'],
  help: {
    line: '`/hold` stops the automatic merge (`/hold cancel` or `/unhold` lifts it)',
    rows: [
      {
        usage: '`/hold`, `/hold cancel`, `/unhold`',
        who: 'the author, anyone with write access, or an owner',
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
  mayUse: async (run, command) =>
    (await authorWriterOrOwner(run))
      ? undefined
      : `\`${command.text}\`: only the author, someone with write access or an owner may hold or unhold.`,
  act: async (run, command) => {
    const { context, job, labels } = run;
    await setLabel(context.octokit, job.ref, job.number, labels, LABELS.hold, !command.cancel);
    if (command.cancel) run.recheck = true; // the hold may have been all that kept it from merging
    return { ok: true };
  },
});
