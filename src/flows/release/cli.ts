// `catalog-bot release <bundle-dir> [--repo <dir>] [--format text|json]`: on a working tree,
// what the release bot does after a bundle pull request (docs/bundles.md): the bundle is
// added to every template its release-config.yaml names and every catalog those templates
// map to is re-rendered. Nothing is written unless every file could be computed.
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { CONFIG_PATH, parseRepoConfig } from '../../checks/config.js';
import { lineDiff } from '../../catalog/edits/promote-diff.js';
import { releaseBundle, ReleaseRefusal, type ReleaseTree } from '../../catalog/edits/release.js';
import { defineCliCommand, UsageError } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import { openWorkingTree, writeEdits } from '../../commands/working-tree.js';

const RELEASE_USAGE = `catalog-bot release <bundle-dir> [--repo <dir>] [--dry-run] [--format text|json]
  Release a bundle directory (manifests/, metadata/annotations.yaml, release-config.yaml)
  as the release bot does: add it to every catalog template its release-config.yaml names
  (basic: channel entries with replaces/skips/skipRange and an olm.bundle image entry;
  semver: an Image entry under the named channel) and re-render every catalog the package's
  ci.yaml maps those templates to. The bundle is read from the directory (no image pull);
  its image reference comes from ${CONFIG_PATH} bundles.imageTemplate. <bundle-dir> is
  relative to --repo (default: the current directory). --dry-run writes nothing. Exit 0 done,
  1 refused, 2 usage/IO.
`;

/** The bundle directory relative to the repository: as given, or made relative when it lies inside. */
function bundlePath(repo: string, dir: string): string {
  const abs = resolve(dir);
  const root = resolve(repo);
  if (isAbsolute(dir) || abs.startsWith(root + sep)) {
    const rel = relative(root, abs);
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${dir} is not inside the repository ${repo}`);
    return rel.split(sep).join('/');
  }
  return dir;
}

export const command = defineCliCommand({
  usage: RELEASE_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    format: { type: 'string', default: 'text' },
    'dry-run': { type: 'boolean', default: false },
  },
  positionals: { min: 1, message: 'release needs exactly one bundle directory' },
  async run({ values, positionals }, { out, err }) {
    if (values.format !== 'text' && values.format !== 'json')
      throw new UsageError(`invalid --format value "${values.format}", expected text or json`);
    const json = values.format === 'json';
    const fail = (code: number, message: string, file?: string, line?: number): number => {
      if (json)
        out.write(
          `${JSON.stringify({ released: false, error: message, file: file ?? null, line: line ?? null }, null, 2)}\n`,
        );
      err.write(`catalog-bot release: ${code === 1 ? 'refused: ' : ''}${message}\n`);
      return code;
    };
    let tree: ReleaseTree;
    let dir: string;
    try {
      tree = openWorkingTree(values.repo);
      dir = bundlePath(values.repo, positionals[0]!);
    } catch (problem) {
      return fail(2, (problem as Error).message);
    }
    const { config, problems } = parseRepoConfig(tree.read(CONFIG_PATH));
    if (problems.length > 0)
      err.write(
        `warning: ${CONFIG_PATH} has problems, so the defaults apply: ${problems.map((p) => `${p.line}:${p.column} ${p.message}`).join('; ')}\n`,
      );
    let result;
    try {
      result = await releaseBundle(dir, {
        tree,
        settings: {
          path: config.bundles.path,
          imageTemplate: config.bundles.imageTemplate,
          opmVersion: config.bundles.renderer.opmVersion,
          ...(config.bundles.renderer.csvMetadataFrom !== undefined
            ? { csvMetadataFrom: config.bundles.renderer.csvMetadataFrom }
            : {}),
        },
      });
    } catch (problem) {
      if (problem instanceof ReleaseRefusal) return fail(1, problem.message, problem.file, problem.line);
      throw problem;
    }
    const dryRun = values['dry-run'];
    try {
      if (!dryRun) writeEdits(values.repo, result.edits);
    } catch (problem) {
      return fail(2, `writing the files failed: ${(problem as Error).message}`);
    }
    const files = result.edits.map((e) => {
      const changes = lineDiff(e.before ?? '', e.after);
      return {
        path: e.path,
        status: e.before === undefined ? 'created' : 'modified',
        added: changes.filter((c) => c.op === '+').length,
        removed: changes.filter((c) => c.op === '-').length,
      };
    });
    if (json) {
      writeJson(out, {
        released: !dryRun,
        dryRun,
        package: result.package,
        version: result.version,
        bundle: result.bundle,
        image: result.image,
        files,
        notes: result.notes,
      });
    } else {
      for (const note of result.notes) out.write(`${note}\n`);
      for (const f of files)
        out.write(
          `${dryRun ? 'would write' : f.status === 'created' ? 'created' : 'wrote'} ${f.path} (+${f.added} -${f.removed})\n`,
        );
      out.write(
        dryRun
          ? `(dry run: ${result.bundle} would be released, ${files.length} file(s); nothing written)\n`
          : `released ${result.bundle} (${result.image}): ${files.length} file(s) written\n`,
      );
    }
    return 0;
  },
});
