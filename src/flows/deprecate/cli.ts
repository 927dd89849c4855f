// `catalog-bot deprecate <bundle|channel|package> <name> [--package <p>] [--message <m>] [--undo]`:
// write (or with --undo remove) the olm.deprecations entry where the repository keeps it,
// checked before anything is written (docs/deprecate.md).
import { CONFIG_PATH } from '../../checks/config.js';
import { DEPRECATION_KINDS, type DeprecationKind } from '../../catalog/edits/deprecate.js';
import {
  AlreadyDone,
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
} from '../../catalog/edits/promote.js';
import { deprecate } from './plan.js';
import { CommandFailure, defineCliCommand, NothingToDo, UsageError } from '../../commands/command.js';
import { editedFiles } from '../promote/cli.js';
import { writeJson } from '../../commands/output.js';
import { catalogRootsOf, openWorkingTree, writeEdits } from '../../commands/working-tree.js';

const DEPRECATE_USAGE = `catalog-bot deprecate <bundle|channel|package> <name> [--package <package>]
        [--message <text>] [--undo] [--root <root>] [--repo <dir>] [--dry-run] [--format text|json]
  Write the package's olm.deprecations entry for a bundle, channel or the package itself
  (one olm.deprecations blob per package and catalog, as opm requires), beside the package
  in its catalog, or in the olm.template.basic template the catalog is rendered from
  (operators/<package>/ci.yaml), whose outputs are then re-rendered. A channel is named
  <package>/<channel> or with --package. Without --message, the message names the way
  forward. --undo removes the entry. Refused when installed users would be left without a
  way forward that is not deprecated, or new installs would start on a deprecated default
  channel or head. Every result is validated first; prints the diff. Catalog roots come
  from ${CONFIG_PATH} (catalogs:, default catalogs/*). --dry-run prints the diff and writes
  nothing. Exit 0 done (or nothing to do: already as asked), 1 refused, 2 usage/IO.
`;

/** A message fits on one line of a console condition, and stays readable. */
const MAX_MESSAGE = 1000;

export const command = defineCliCommand({
  usage: DEPRECATE_USAGE,
  options: {
    package: { type: 'string' },
    message: { type: 'string' },
    undo: { type: 'boolean', default: false },
    root: { type: 'string' },
    repo: { type: 'string', default: '.' },
    'dry-run': { type: 'boolean', default: false },
    format: { type: 'string', default: 'text' },
  },
  formats: ['text', 'json'],
  positionals: {
    min: 2,
    message: 'deprecate needs what to deprecate (bundle, channel or package) and its name',
  },
  async run({ values, positionals }, { out }) {
    const [kind, name] = positionals as [string, string];
    if (!(DEPRECATION_KINDS as readonly string[]).includes(kind))
      throw new UsageError(`"${kind}" is not bundle, channel or package`);
    const message = values.message?.trim();
    if (message !== undefined && (message === '' || message.length > MAX_MESSAGE || /[\r\n]/.test(message)))
      throw new UsageError(`--message must be one line of 1 to ${MAX_MESSAGE} characters`);
    if (values.undo && message !== undefined) throw new UsageError('--undo takes no --message');
    const json = values.format === 'json';
    const tree = openWorkingTree(values.repo);
    let result;
    try {
      result = await deprecate(
        {
          kind: kind as DeprecationKind,
          name,
          undo: values.undo,
          ...(values.package !== undefined ? { package: values.package } : {}),
          ...(message !== undefined ? { message } : {}),
          ...(values.root !== undefined ? { root: values.root } : {}),
        },
        { tree, roots: catalogRootsOf(tree), templates: templateMappingsFromTree(tree) },
      );
    } catch (problem) {
      if (!(problem instanceof PromoteError)) throw problem;
      const already = problem instanceof AlreadyDone;
      if (json)
        writeJson(out, {
          done: already,
          written: false,
          error: already ? null : problem.message,
          notes: already ? [problem.message] : [],
          files: [],
        });
      if (already) throw new NothingToDo(problem.message);
      throw new CommandFailure(`refused: ${problem.message}`, 1);
    }
    if (!values['dry-run']) writeEdits(values.repo, result.edits);
    if (json) {
      writeJson(out, {
        done: true,
        written: !values['dry-run'],
        error: null,
        notes: result.notes,
        files: editedFiles(result.edits),
      });
      return 0;
    }
    for (const note of result.notes) out.write(`${note}\n`);
    out.write('\n');
    for (const e of result.edits) out.write(unifiedDiff(e.path, e.before, e.after));
    out.write(
      values['dry-run']
        ? '\n(dry run: nothing written)\n'
        : `\n${values.undo ? 'undeprecated' : 'deprecated'} ${kind} ${name}: ${result.edits.length} file(s) written\n`,
    );
    return 0;
  },
});
