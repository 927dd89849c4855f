// `/ocp-promote <from> <to>`: open a new OpenShift catalog as pull requests into the default
// branch (the plan and the writes: ./flow.ts). Maintainers only: it is decided on the
// default branch's configuration, once the mirror is open.
import { ocpPromoteFromComment } from './flow.js';
import { inlineCode } from '../../handlers/quote.js';
import { defineCommentCommand } from '../../handlers/commands/command.js';
import { SAFE_ARGUMENT } from '../promote/command.js';

export const ocpPromote = defineCommentCommand({
  name: 'ocp-promote',
  help: {
    line: '`/ocp-promote <from> <to>` opens OpenShift catalog `<to>` from `<from>` as pull requests',
    rows: [
      {
        usage: '`/ocp-promote <from> <to>`',
        who: "maintainers (the default branch's `maintainers`)",
        what: "opens OpenShift catalog `<to>` from `<from>` (like `v4.21 v4.22`) as `catalog-bot ocp-promote` does, as pull requests into the default branch: one for the packages whose `ci.yaml` says `always`, one per `review-needed` package (labelled `catalog-promotion/review-needed`, its owners mentioned); the reply lists them and the skipped packages with why. Branches are named after the versions and the package, so asking again updates them; the pull requests are written one after another at GitHub's pace",
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length !== 2)
      return { problem: 'usage: `/ocp-promote <from> <to>`, like `/ocp-promote v4.21 v4.22`' };
    const [from, to] = args as [string, string];
    const bad = [from, to].find((a) => !SAFE_ARGUMENT.test(a) || a.includes('/'));
    if (bad !== undefined)
      return { problem: `${inlineCode(bad, 100)} is not an OpenShift catalog name like \`v4.21\`` };
    return { name: 'ocp-promote', from, to, ...at };
  },
  mayUse: async () => undefined,
  act: (run, command) =>
    ocpPromoteFromComment(run.context, run.options, run.target, {
      from: command.from,
      to: command.to,
      commentId: run.job.commentId,
    }),
});
