// `/retest`: run the checks again on the current head.
import { authorWriterOrOwner, defineCommentCommand, plain } from './command.js';

export const retest = defineCommentCommand({
  name: 'retest',
  help: {
    line: '`/retest` runs the checks again on the current head',
    rows: [
      {
        usage: '`/retest`',
        who: 'the author, anyone with write access, or an owner',
        what: 'runs the checks again on the current head',
      },
    ],
  },
  parse: (args, _typed, at) => plain('retest', args, at),
  mayUse: async (run) =>
    (await authorWriterOrOwner(run))
      ? undefined
      : '`/retest`: only the author, someone with write access or an owner may re-run the checks.',
  act: async (run) => {
    run.recheck = true;
    return { ok: true };
  },
});
