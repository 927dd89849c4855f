// `/default-channel <package> <channel>`: set a package's default channel where it is written
// (the App's flow: ./flow.ts; the edit: ./plan.ts). Who may ask is decided on the
// edit itself, as for a change the commenter made; the reply says what changes for new
// installs under classic OLM and OLM v1 (docs/default-channel.md).
import { defaultChannelFromComment } from './flow.js';
import { inlineCode } from '../../handlers/quote.js';
import { defineCommentCommand } from '../../handlers/commands/command.js';
import { SAFE_ARGUMENT } from '../promote/command.js';

export const defaultChannel = defineCommentCommand({
  name: 'default-channel',
  costly: true,
  help: {
    line: "`/default-channel <package> <channel>` sets the package's default channel, checked like `/promote`",
    rows: [
      {
        usage: '`/default-channel <package> <channel>`',
        who: 'owners of the package, maintainers (decided as for a change the commenter made)',
        what: "sets the package's `defaultChannel` where it is written (its catalogs, or the `olm.template.basic` template they are rendered from, then re-rendered), keeping comments and layout; written like `/promote` once every check passes; the reply says what a new install gets under classic OLM and OLM v1, and the diff",
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length !== 2) return { problem: 'usage: `/default-channel <package> <channel>`' };
    const [pkg, channel] = args as [string, string];
    const bad = [pkg, channel].find((a) => !SAFE_ARGUMENT.test(a) || a.includes('/'));
    if (bad !== undefined) return { problem: `${inlineCode(bad, 100)} is not a package or channel name` };
    return { name: 'default-channel', package: pkg, channel, ...at };
  },
  mayUse: async () => undefined,
  act: (run, command) =>
    defaultChannelFromComment(run.context, run.options, run.target, run.pr, {
      package: command.package,
      channel: command.channel,
    }),
});
