// `catalog-bot default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]`:
// set a package's default channel where it is written, checked before anything is written.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_PATH } from '../checks/config.js';
import { setDefaultChannel } from '../catalog/edits/default-channel.js';
import {
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
  type FileTree,
} from '../catalog/edits/promote.js';
import { catalogRootsOf, directoryTree } from './promote.js';

export const DEFAULT_CHANNEL_USAGE = `catalog-bot default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]
  Set the package's defaultChannel where it is written: its olm.package object in every
  catalog root that has the package (or only --root), or the olm.template.basic template
  the catalog is rendered from (operators/<package>/ci.yaml), whose outputs are then
  re-rendered. Every result is validated first; prints the diff. Catalog roots come from
  ${CONFIG_PATH} (catalogs:, default catalogs/*). Exit 0 done, 1 refused, 2 usage/IO.
`;

export async function defaultChannelCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        root: { type: 'string' },
        repo: { type: 'string', default: '.' },
        'dry-run': { type: 'boolean', default: false },
      },
    }));
    if (positionals.length !== 2) throw new Error('default-channel needs a package name and a channel name');
  } catch (problem) {
    out.write(`catalog-bot default-channel: ${(problem as Error).message}\n\n${DEFAULT_CHANNEL_USAGE}`);
    return 2;
  }
  const [pkg, channel] = positionals as [string, string];
  let tree: FileTree;
  try {
    if (!statSync(values.repo).isDirectory()) throw new Error(`${values.repo} is not a directory`);
    tree = directoryTree(values.repo);
  } catch (problem) {
    out.write(`catalog-bot default-channel: ${(problem as Error).message}\n`);
    return 2;
  }
  try {
    const result = await setDefaultChannel(
      { package: pkg, channel, ...(values.root !== undefined ? { root: values.root } : {}) },
      { tree, roots: catalogRootsOf(tree), templates: templateMappingsFromTree(tree) },
    );
    for (const note of result.notes) out.write(`${note}\n`);
    out.write('\n');
    for (const edit of result.edits) out.write(unifiedDiff(edit.path, edit.before, edit.after));
    if (!values['dry-run']) {
      for (const edit of result.edits) writeFileSync(join(values.repo, edit.path), edit.after);
      out.write(`\ndefault channel of ${pkg} set to "${channel}": ${result.edits.length} file(s) written\n`);
    } else out.write(`\n(dry run: nothing written)\n`);
    return 0;
  } catch (problem) {
    if (problem instanceof PromoteError) {
      out.write(`catalog-bot default-channel: refused: ${problem.message}\n`);
      return 1;
    }
    out.write(`catalog-bot default-channel: ${(problem as Error).message}\n`);
    return 2;
  }
}
