// `/promote <bundle-name> <channel> [<catalog-root>]`: add an existing bundle to a channel
// (the App's flow: ./flow.ts; the edit: ./plan.ts). Who may ask is decided on the edit itself, as for a change
// the commenter made.
import { promoteFromComment } from './flow.js';
import { defineCommentCommand } from '../../handlers/commands/command.js';

// Names as they appear in catalogs and repository paths; no `..` path segments.
export const SAFE_ARGUMENT = /^(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9][A-Za-z0-9._+/-]{0,252}$/;

export const promote = defineCommentCommand({
  name: 'promote',
  costly: true,
  help: {
    line: '`/promote <bundle-name> <channel> [<catalog-root>]` adds an existing bundle to a channel, with safe edges',
    rows: [
      {
        usage: '`/promote <bundle-name> <channel> [<catalog-root>]`',
        who: 'owners of the package, maintainers (decided as for a change the commenter made)',
        what: "adds a bundle the catalog already has to a channel (creating it if needed) with edges that keep the channel single-headed and every installed version upgradeable, in every catalog root that has the bundle (or the one named); where the package is rendered from an `olm.semver` or `olm.template.basic` template (community-operators `ci.yaml` `fbc.catalog_mapping`), edits the template and re-renders; keeps comments and layout. The edit must pass every check before it is written: onto the pull request's branch when it is open and in this repository, otherwise as a new pull request from the default branch; the reply shows the diff",
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length < 2 || args.length > 3)
      return { problem: 'usage: `/promote <bundle-name> <channel> [<catalog-root>]`' };
    const [bundle, channel, root] = args as [string, string, string | undefined];
    const bad = [bundle, channel, root].find((a) => a !== undefined && !SAFE_ARGUMENT.test(a));
    if (bad !== undefined)
      return { problem: `\`${bad.slice(0, 100)}\` is not a bundle, channel or catalog-root name` };
    return root === undefined
      ? { name: 'promote', bundle, channel, ...at }
      : { name: 'promote', bundle, channel, root, ...at };
  },
  mayUse: async () => undefined,
  act: (run, command) =>
    promoteFromComment(run.context, run.options, run.target, run.pr, {
      bundle: command.bundle,
      channel: command.channel,
      ...(command.root ? { root: command.root } : {}),
    }),
});
