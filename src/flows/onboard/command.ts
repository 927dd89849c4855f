// `/onboard <package>`: move a package still on the bundle index to file-based catalogs in
// one pull request (the flow: ./flow.ts; docs/legacy-index.md). Written on an issue or a
// pull request of the catalog repository; who may ask is decided on the conversion itself,
// as for a change the commenter made (the package's owners or a maintainer).
import { defineCommentCommand } from '../../handlers/commands/command.js';
import { inlineCode } from '../../handlers/quote.js';
import { onboardFromComment } from './flow.js';

// A package name as onboardPackage takes it; `..` would make no git branch name, `.lock` at
// the end neither (the App's branch is named after the package).
const PACKAGE_NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;
export const safePackageName = (name: string): boolean =>
  PACKAGE_NAME.test(name) && !name.includes('..') && !name.endsWith('.lock');

const USAGE = 'usage: `/onboard <package>`';

export const onboard = defineCommentCommand({
  name: 'onboard',
  costly: true,
  help: {
    line: '`/onboard <package>` opens a pull request that moves a package still on the bundle index to file-based catalogs',
    rows: [
      {
        usage: '`/onboard <package>`',
        who: 'owners of the package (its `ci.yaml` reviewers), maintainers (decided as for a change the commenter made)',
        what: 'on an issue or a pull request: converts a package whose `ci.yaml` says `updateGraph` to file-based catalogs on the default branch, as `catalog-bot onboard` does (templates, catalogs, `ci.yaml`), and opens one pull request whose description says what clusters see differently (nothing, when the catalogs equal what the index serves); refused with the reason when the package cannot be converted or the conversion fails a check; asked again while that pull request is open, points to it. The pull request is checked like any other and merges once green and approved',
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length !== 1) return { problem: USAGE };
    const pkg = args[0]!;
    if (!safePackageName(pkg))
      return {
        problem: `${inlineCode(pkg, 100)} is not a package name (lowercase letters, digits, \`-\` and \`.\`; no paths); ${USAGE}`,
      };
    return { name: 'onboard', package: pkg, ...at };
  },
  mayUse: async () => undefined,
  act: (run, command) => onboardFromComment(run.context, run.options, run.target, command.package),
  onIssue: (run, command) => onboardFromComment(run.context, run.options, run.target, command.package),
});
