// `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]`: the
// `/promote` edit on a local working tree. Prints what it did and a diff of every file.
import { CONFIG_PATH } from '../../checks/config.js';
import { promote } from './plan.js';
import { lineDiff } from '../../catalog/edits/promote-diff.js';
import {
  AlreadyDone,
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
  type PromoteInput,
  type PromoteResult,
} from '../../catalog/edits/promote.js';
import { CommandFailure, defineCliCommand, NothingToDo, type CommandIO } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import { catalogRootsOf, openWorkingTree, writeEdits } from '../../commands/working-tree.js';

const PROMOTE_USAGE = `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run] [--format text|json]
  Add a bundle the catalog already has to a channel (creating the channel if needed),
  with edges that keep the channel single-headed and every installed version
  upgradeable, in every catalog root that has the bundle (or only --root). Packages
  rendered from a template (operators/<package>/ci.yaml fbc.catalog_mapping) get the
  template edited and their catalogs re-rendered. Catalog roots come from
  ${CONFIG_PATH} (catalogs:, default catalogs/*). --dry-run prints the diff and writes nothing.
  Exit 0 done (or nothing to do: the bundle is there already), 1 refused, 2 usage/IO.
`;

/** The options of the commands that edit a channel in a working tree. */
export const CHANNEL_EDIT_OPTIONS = {
  root: { type: 'string' },
  repo: { type: 'string', default: '.' },
  'dry-run': { type: 'boolean', default: false },
  format: { type: 'string', default: 'text' },
} as const;

/** What an edit of files changed, for `--format json`: per file, lines added and removed and the diff. */
export function editedFiles(edits: readonly { path: string; before: string; after: string }[]) {
  return edits.map((e) => {
    const changes = lineDiff(e.before, e.after);
    return {
      path: e.path,
      added: changes.filter((c) => c.op === '+').length,
      removed: changes.filter((c) => c.op === '-').length,
      diff: unifiedDiff(e.path, e.before, e.after),
    };
  });
}

/**
 * A channel edit on a working tree (promote, default-channel): the edit is computed from the
 * tree, its notes and diffs printed, then written unless --dry-run. Exit 1 when refused, 0
 * with "nothing to do" when every place already is as asked.
 */
export async function editChannel(
  { repo, dryRun, format }: { repo: string; dryRun: boolean; format: string },
  { out }: CommandIO,
  edit: (input: PromoteInput) => Promise<PromoteResult>,
  done: (files: number) => string,
): Promise<number> {
  const tree = openWorkingTree(repo);
  let result;
  try {
    result = await edit({ tree, roots: catalogRootsOf(tree), templates: templateMappingsFromTree(tree) });
  } catch (problem) {
    if (problem instanceof AlreadyDone) {
      if (format === 'json')
        writeJson(out, { done: true, written: false, error: null, notes: [problem.message], files: [] });
      throw new NothingToDo(problem.message);
    }
    if (problem instanceof PromoteError) {
      if (format === 'json')
        writeJson(out, { done: false, written: false, error: problem.message, notes: [], files: [] });
      throw new CommandFailure(`refused: ${problem.message}`, 1);
    }
    throw new CommandFailure((problem as Error).message, 2);
  }
  if (!dryRun) writeEdits(repo, result.edits);
  if (format === 'json') {
    writeJson(out, {
      done: true,
      written: !dryRun,
      error: null,
      notes: result.notes,
      files: editedFiles(result.edits),
    });
    return 0;
  }
  for (const note of result.notes) out.write(`${note}\n`);
  out.write('\n');
  for (const e of result.edits) out.write(unifiedDiff(e.path, e.before, e.after));
  out.write(dryRun ? `\n(dry run: nothing written)\n` : `\n${done(result.edits.length)}\n`);
  return 0;
}

export const command = defineCliCommand({
  usage: PROMOTE_USAGE,
  options: CHANNEL_EDIT_OPTIONS,
  formats: ['text', 'json'],
  positionals: { min: 2, message: 'promote needs a bundle name and a channel name' },
  run: ({ values, positionals }, io) => {
    const [bundle, channel] = positionals as [string, string];
    return editChannel(
      { repo: values.repo, dryRun: values['dry-run'], format: values.format },
      io,
      (context) =>
        promote({ bundle, channel, ...(values.root !== undefined ? { root: values.root } : {}) }, context),
      (files) => `promoted ${bundle} to "${channel}": ${files} file(s) written`,
    );
  },
});
