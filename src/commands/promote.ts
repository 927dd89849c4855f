// `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]`: the
// `/promote` edit on a local working tree. Prints what it did and a diff of every file.
import { CONFIG_PATH } from '../checks/config.js';
import { promote } from '../promotion/promote.js';
import {
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
  type PromoteInput,
  type PromoteResult,
} from '../catalog/edits/promote.js';
import { CommandFailure, defineCommand, type CommandIO } from './command.js';
import { catalogRootsOf, openWorkingTree, writeEdits } from './working-tree.js';

const PROMOTE_USAGE = `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]
  Add a bundle the catalog already has to a channel (creating the channel if needed),
  with edges that keep the channel single-headed and every installed version
  upgradeable, in every catalog root that has the bundle (or only --root). Packages
  rendered from a template (operators/<package>/ci.yaml fbc.catalog_mapping) get the
  template edited and their catalogs re-rendered. Catalog roots come from
  ${CONFIG_PATH} (catalogs:, default catalogs/*). Exit 0 done, 1 refused, 2 usage/IO.
`;

/** The options of the commands that edit a channel in a working tree. */
export const CHANNEL_EDIT_OPTIONS = {
  root: { type: 'string' },
  repo: { type: 'string', default: '.' },
  'dry-run': { type: 'boolean', default: false },
} as const;

/**
 * A channel edit on a working tree (promote, default-channel): the edit is computed from the
 * tree, its notes and diffs printed, then written unless --dry-run. Exit 1 when refused.
 */
export async function editChannel(
  repo: string,
  dryRun: boolean,
  { out }: CommandIO,
  edit: (input: PromoteInput) => Promise<PromoteResult>,
  done: (files: number) => string,
): Promise<number> {
  const tree = openWorkingTree(repo);
  let result;
  try {
    result = await edit({ tree, roots: catalogRootsOf(tree), templates: templateMappingsFromTree(tree) });
  } catch (problem) {
    if (problem instanceof PromoteError) throw new CommandFailure(`refused: ${problem.message}`, 1);
    throw new CommandFailure((problem as Error).message, 2);
  }
  for (const note of result.notes) out.write(`${note}\n`);
  out.write('\n');
  for (const e of result.edits) out.write(unifiedDiff(e.path, e.before, e.after));
  if (!dryRun) {
    writeEdits(repo, result.edits);
    out.write(`\n${done(result.edits.length)}\n`);
  } else out.write(`\n(dry run: nothing written)\n`);
  return 0;
}

export const command = defineCommand({
  usage: PROMOTE_USAGE,
  messages: 'out',
  options: CHANNEL_EDIT_OPTIONS,
  positionals: { min: 2, message: 'promote needs a bundle name and a channel name' },
  run: ({ values, positionals }, io) => {
    const [bundle, channel] = positionals as [string, string];
    return editChannel(
      values.repo,
      values['dry-run'],
      io,
      (context) =>
        promote({ bundle, channel, ...(values.root !== undefined ? { root: values.root } : {}) }, context),
      (files) => `promoted ${bundle} to "${channel}": ${files} file(s) written`,
    );
  },
});
