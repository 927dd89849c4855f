// `/deprecate <bundle|channel|package> <name> [-- message]`: write the package's
// olm.deprecations entry (the flow: ./flow.ts; the edit: ./plan.ts). Who may ask is decided on the edit
// itself, as for a change the commenter made, like `/promote`.
import { DEPRECATION_KINDS, type DeprecationKind } from '../../catalog/edits/deprecate.js';
import { deprecateFromComment } from './flow.js';
import {
  defineCommentCommand,
  type At,
  type CommandHelp,
  type TableCommand,
} from '../../handlers/commands/command.js';

// Names as they appear in catalogs (`<package>/<channel>` for a channel); no `..` segments.
const SAFE_NAME = /^(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9][A-Za-z0-9._+/-]{0,252}$/;
const MAX_MESSAGE = 500;

/** `<kind> <name> [-- message]` of /deprecate and /undeprecate. */
export function parseDeprecation(
  name: 'deprecate' | 'undeprecate',
  args: string[],
  at: At,
):
  | {
      name: 'deprecate' | 'undeprecate';
      kind: DeprecationKind;
      target: string;
      message?: string;
      line: number;
      text: string;
    }
  | { problem: string } {
  const usage = `usage: \`/${name} <bundle|channel|package> <name>${name === 'deprecate' ? ' [-- message]' : ''}\` (a channel as \`<package>/<channel>\`)`;
  const dashes = args.indexOf('--');
  const words = dashes < 0 ? args : args.slice(0, dashes);
  if (words.length !== 2) return { problem: usage };
  const [kind, target] = words as [string, string];
  if (!(DEPRECATION_KINDS as readonly string[]).includes(kind.toLowerCase())) return { problem: usage };
  if (!SAFE_NAME.test(target))
    return { problem: `\`${target.slice(0, 100)}\` is not a bundle, channel or package name` };
  if (dashes < 0) return { name, kind: kind.toLowerCase() as DeprecationKind, target, ...at };
  if (name === 'undeprecate') return { problem: '`/undeprecate` takes no message' };
  const message = args.slice(dashes + 1).join(' ');
  if (message === '' || message.length > MAX_MESSAGE)
    return { problem: `the message after \`--\` must be 1 to ${MAX_MESSAGE} characters` };
  // The reply shows the message in the diff's code block: a backtick could close it.
  if (message.includes('`')) return { problem: 'the message after `--` may not contain backticks' };
  return { name, kind: kind.toLowerCase() as DeprecationKind, target, message, ...at };
}

/**
 * `/deprecate` or `/undeprecate`: the same parse and the same edit, one writing the entry
 * and the other removing it; who may ask is decided on the edit itself.
 */
export function deprecationCommand(name: 'deprecate' | 'undeprecate', help: CommandHelp): TableCommand {
  return defineCommentCommand({
    name,
    costly: true,
    help,
    parse: (args, _typed, at) => parseDeprecation(name, args, at),
    mayUse: async () => undefined,
    act: (run, command) =>
      deprecateFromComment(run.context, run.options, run.target, run.pr, {
        kind: command.kind,
        name: command.target,
        undo: name === 'undeprecate',
        ...(command.message !== undefined ? { message: command.message } : {}),
      }),
  });
}

export const deprecate = deprecationCommand('deprecate', {
  line: '`/deprecate <bundle|channel|package> <name> [-- message]` writes an olm.deprecations entry, with a message naming the way forward',
  rows: [
    {
      usage: '`/deprecate <kind> <name> [-- message]`',
      who: 'owners of the package, maintainers (decided as for a change the commenter made)',
      what: "`<kind>` is `bundle`, `channel` or `package`: adds the package's `olm.deprecations` entry for a bundle, a channel (named `<package>/<channel>`) or the package, in every catalog root that has it: beside the package in a plain catalog, or in the `olm.template.basic` template its catalogs are rendered from (then re-rendered); keeps comments and layout. Without a message, the message names the way forward. Refused, with what would work, when installed users would be left with no way forward that is not deprecated, or it would deprecate the default channel or its only head. Checked and written like `/promote`",
    },
  ],
});
