// `/lgtm`, `/lgtm cancel`: the `lgtm` label, said by someone other than the author.
import { LABELS, setLabel } from '../pr-state.js';
import { cancelable, defineCommentCommand } from './command.js';

export const lgtm = defineCommentCommand({
  name: 'lgtm',
  help: {
    line: '`/lgtm` says the change looks good to you (`/lgtm cancel` takes it back)',
    rows: [
      {
        usage: '`/lgtm`, `/lgtm cancel`',
        who: 'anyone with write access or an owner, not the author',
        what: 'sets or removes the `lgtm` label',
      },
    ],
  },
  parse: (args, _typed, at) => cancelable('lgtm', args, at),
  mayUse: async (run, command) => {
    if (command.cancel) return undefined;
    if (run.commenter === run.author) return '`/lgtm`: you cannot LGTM your own pull request.';
    if (!(await run.hasWrite()) && !(await run.ownsAll()).may)
      return '`/lgtm`: only someone with write access or an owner of the changed packages may say this.';
    return undefined;
  },
  act: async (run, command) => {
    const { context, job, labels } = run;
    await setLabel(context.github, job.ref, job.number, labels, LABELS.lgtm, !command.cancel);
    return { ok: true };
  },
});
