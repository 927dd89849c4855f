// `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]`: the
// `/promote` edit on a local working tree. Prints what it did and a diff of every file.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { matchesGlob } from '../checks/changes.js';
import { CONFIG_PATH, parseRepoConfig } from '../checks/config.js';
import {
  promote,
  PromoteError,
  templateMappingsFromTree,
  unifiedDiff,
  type FileTree,
} from '../catalog/edits/promote.js';

export const PROMOTE_USAGE = `catalog-bot promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]
  Add a bundle the catalog already has to a channel (creating the channel if needed),
  with edges that keep the channel single-headed and every installed version
  upgradeable, in every catalog root that has the bundle (or only --root). Packages
  rendered from a template (operators/<package>/ci.yaml fbc.catalog_mapping) get the
  template edited and their catalogs re-rendered. Catalog roots come from
  ${CONFIG_PATH} (catalogs:, default catalogs/*). Exit 0 done, 1 refused, 2 usage/IO.
`;

const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** The files of a working tree, read when asked. */
export function directoryTree(dir: string): FileTree {
  const paths: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      if (SKIPPED_DIRS.has(name)) continue;
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const info = statSync(childAbs);
      if (info.isDirectory()) walk(childAbs, childRel);
      else if (info.isFile()) paths.push(childRel);
    }
  };
  walk(dir, '');
  const cache = new Map<string, string>();
  return {
    list: () => paths,
    read: (p) => {
      if (!cache.has(p)) {
        if (!paths.includes(p)) return undefined;
        cache.set(p, readFileSync(join(dir, p), 'utf8'));
      }
      return cache.get(p);
    },
  };
}

/** Directories of the tree that match the repository's catalog globs. */
export function catalogRootsOf(tree: FileTree): string[] {
  const { config } = parseRepoConfig(tree.read(CONFIG_PATH));
  const dirs = new Set<string>();
  for (const p of tree.list()) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [...dirs].filter((d) => config.catalogs.some((g) => matchesGlob(d, g))).sort();
}

export async function promoteCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
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
    if (positionals.length !== 2) throw new Error('promote needs a bundle name and a channel name');
  } catch (problem) {
    out.write(`catalog-bot promote: ${(problem as Error).message}\n\n${PROMOTE_USAGE}`);
    return 2;
  }
  const [bundle, channel] = positionals as [string, string];
  let tree: FileTree;
  try {
    if (!statSync(values.repo).isDirectory()) throw new Error(`${values.repo} is not a directory`);
    tree = directoryTree(values.repo);
  } catch (problem) {
    out.write(`catalog-bot promote: ${(problem as Error).message}\n`);
    return 2;
  }
  try {
    const result = await promote(
      { bundle, channel, ...(values.root !== undefined ? { root: values.root } : {}) },
      { tree, roots: catalogRootsOf(tree), templates: templateMappingsFromTree(tree) },
    );
    for (const note of result.notes) out.write(`${note}\n`);
    out.write('\n');
    for (const edit of result.edits) out.write(unifiedDiff(edit.path, edit.before, edit.after));
    if (!values['dry-run']) {
      for (const edit of result.edits) writeFileSync(join(values.repo, edit.path), edit.after);
      out.write(`\npromoted ${bundle} to "${channel}": ${result.edits.length} file(s) written\n`);
    } else out.write(`\n(dry run: nothing written)\n`);
    return 0;
  } catch (problem) {
    if (problem instanceof PromoteError) {
      out.write(`catalog-bot promote: refused: ${problem.message}\n`);
      return 1;
    }
    out.write(`catalog-bot promote: ${(problem as Error).message}\n`);
    return 2;
  }
}
