// `/remove <package>[/<bundle>]`: remove a package, or one bundle of it, as one pull request
// into the default branch (the flow: ./flow.ts; docs/remove.md, "In the App"). Who may ask is
// decided on the removal itself, as for a change the commenter made: the package's owners or
// a maintainer.
import { parseRemovalTarget, RemovalRefusal } from '../../catalog/edits/remove.js';
import { defineCommentCommand } from '../../handlers/commands/command.js';
import { inlineCode } from '../../handlers/quote.js';
import { removeFromComment } from './flow.js';

const USAGE = 'usage: `/remove <package>` or `/remove <package>/<bundle>`';

export const remove = defineCommentCommand({
  name: 'remove',
  costly: true,
  help: {
    line: '`/remove <package>[/<bundle>]` opens one pull request that removes a package or one of its bundles, saying what clusters lose',
    rows: [
      {
        usage: '`/remove <package>[/<bundle>]`',
        who: 'owners of the package, maintainers (decided as for a change the commenter made)',
        what: 'on an issue or a pull request: removes a package, or one bundle (its directory name or its name in the catalogs), as `catalog-bot remove` does on the default branch: catalog entries, templates and bundle directories, for packages on file-based catalogs and on the bundle index. Opens one pull request whose description says, per catalog (identical ones together), the bundles, channels and heads lost and the installed versions stranded; asking again while it is open points to it. It is checked like any other: `catalog-bot/prune` holds it until an owner says `/allow-prune`',
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length !== 1) return { problem: USAGE };
    try {
      const request = parseRemovalTarget(args[0]!);
      return {
        name: 'remove',
        package: request.package,
        ...(request.bundle !== undefined ? { bundle: request.bundle } : {}),
        ...at,
      };
    } catch (error) {
      if (!(error instanceof RemovalRefusal)) throw error;
      return {
        problem: `${inlineCode(args[0]!, 100)} is not \`<package>\` or \`<package>/<bundle>\`: each is one name of letters, digits, \`.\`, \`_\`, \`+\` and \`-\` (no path)`,
      };
    }
  },
  mayUse: async () => undefined,
  act: (run, command) =>
    removeFromComment(run.context, run.options, run.target, {
      package: command.package,
      ...(command.bundle !== undefined ? { bundle: command.bundle } : {}),
    }),
  // On an issue as on a pull request: the removal is its own pull request either way.
  onIssue: (run, command) =>
    removeFromComment(run.context, run.options, run.target, {
      package: command.package,
      ...(command.bundle !== undefined ? { bundle: command.bundle } : {}),
    }),
});
