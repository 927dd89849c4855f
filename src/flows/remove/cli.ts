// `catalog-bot remove <package>[/<bundle>] [--repo <dir>] [--dry-run] [--format text|json]`:
// the removal planned by the core (src/catalog/edits/remove.ts, docs/remove.md) applied to a
// working tree. Nothing is written unless every file could be computed and no path to delete
// or write passes through a symbolic link.
import { CONFIG_PATH, parseRepoConfig } from '../../checks/config.js';
import { lineDiff } from '../../catalog/edits/promote-diff.js';
import {
  packageDirOf,
  parseRemovalTarget,
  planRemoval,
  RemovalRefusal,
  clusterLosses,
  type RemovalResult,
} from '../../catalog/edits/remove.js';
import { defineCliCommand } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import {
  catalogRootsOf,
  linkOnPath,
  openWorkingTree,
  removeDirectories,
  writeEdits,
} from '../../commands/working-tree.js';

const REMOVE_USAGE = `catalog-bot remove <package>[/<bundle>] [--repo <dir>] [--dry-run] [--format text|json]
  Remove a package, or one bundle of it, in one change, as the repository keeps them. On
  file-based catalogs (ci.yaml fbc.enabled): a package's directory in every catalog root, its
  templates and bundle directories; a bundle's entries in every template (comments and layout
  kept), the catalogs those templates map to re-rendered, and its directory. On the bundle
  index (updateGraph): the package's or the bundle's directories. <bundle> is the bundle's
  directory name (operators/<package>/<bundle>). Prints, per catalog, what clusters lose:
  bundles, channels, channel heads, the default channel, and entries left replacing or
  skipping a removed bundle. --dry-run writes nothing. Exit 0 done, 1 refused, 2 usage/IO.
`;

function textReport(result: RemovalResult, dryRun: boolean): string[] {
  const what =
    result.bundle === null ? `package ${result.package}` : `bundle ${result.bundle} of ${result.package}`;
  const lines = [`${dryRun ? 'would remove' : 'removed'} ${what} (${result.mode})`];
  for (const p of result.removed) lines.push(`${dryRun ? 'would delete' : 'deleted'} ${p}/`);
  for (const e of result.edits) {
    const changes = lineDiff(e.before ?? '', e.after);
    const added = changes.filter((c) => c.op === '+').length;
    const removed = changes.filter((c) => c.op === '-').length;
    lines.push(`${dryRun ? 'would write' : 'wrote'} ${e.path} (+${added} -${removed})`);
  }
  for (const note of result.notes) lines.push(`note: ${note}`);
  lines.push(...clusterLosses(result));
  if (dryRun) lines.push('(dry run: nothing written)');
  return lines;
}

export const command = defineCliCommand({
  usage: REMOVE_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    format: { type: 'string', default: 'text' },
    'dry-run': { type: 'boolean', default: false },
  },
  formats: ['text', 'json'],
  positionals: { min: 1, message: 'remove needs exactly one <package> or <package>/<bundle>' },
  async run({ values, positionals }, { out, err }) {
    const json = values.format === 'json';
    const fail = (code: number, message: string): number => {
      if (json) writeJson(out, { done: false, error: message });
      err.write(`catalog-bot remove: ${code === 1 ? 'refused: ' : ''}${message}\n`);
      return code;
    };
    const tree = openWorkingTree(values.repo);
    const { config, problems } = parseRepoConfig(tree.read(CONFIG_PATH));
    if (problems.length > 0)
      err.write(
        `warning: ${CONFIG_PATH} has problems, so the defaults apply: ${problems.map((p) => `${p.line}:${p.column} ${p.message}`).join('; ')}\n`,
      );
    let result: RemovalResult;
    try {
      const request = parseRemovalTarget(positionals[0]!);
      const packageDir = packageDirOf(config.bundles.path, request.package);
      // A link where the package or bundle should be is never followed (the tree does not list
      // what is behind it), so say what it is rather than "no such package".
      const asked = request.bundle === undefined ? packageDir : `${packageDir}/${request.bundle}`;
      const link = linkOnPath(values.repo, asked);
      if (link) throw new RemovalRefusal(`${link}; nothing is deleted through a link`);
      result = await planRemoval(request, {
        tree,
        catalogRoots: catalogRootsOf(tree),
        settings: {
          path: config.bundles.path,
          imageTemplate: config.bundles.imageTemplate,
          opmVersion: config.bundles.renderer.opmVersion,
          ...(config.bundles.renderer.csvMetadataFrom !== undefined
            ? { csvMetadataFrom: config.bundles.renderer.csvMetadataFrom }
            : {}),
        },
      });
      for (const path of result.removed) {
        const found = linkOnPath(values.repo, path, true);
        if (found) throw new RemovalRefusal(`${found}; nothing is deleted through or along a link`);
      }
      for (const edit of result.edits) {
        const found = linkOnPath(values.repo, edit.path);
        if (found) throw new RemovalRefusal(`${found}; nothing is written through a link`);
      }
    } catch (problem) {
      if (problem instanceof RemovalRefusal) return fail(1, problem.message);
      throw problem;
    }
    const dryRun = values['dry-run'];
    try {
      if (!dryRun) {
        writeEdits(values.repo, result.edits);
        removeDirectories(values.repo, result.removed);
      }
    } catch (problem) {
      return fail(2, `writing the files failed: ${(problem as Error).message}`);
    }
    if (json)
      writeJson(out, {
        package: result.package,
        bundle: result.bundle,
        directory: result.directory,
        mode: result.mode,
        done: !dryRun,
        dryRun,
        removed: result.removed,
        edited: result.edits.map((e) => e.path),
        catalogs: result.catalogs,
        allowPrune: result.allowPrune,
        notes: result.notes,
      });
    else out.write(`${textReport(result, dryRun).join('\n')}\n`);
    return 0;
  },
});
