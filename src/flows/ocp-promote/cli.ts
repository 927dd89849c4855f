// `catalog-bot ocp-promote <from> <to> [--repo <dir>] [--package <pkg>]... [--format text|json]`:
// open a new OpenShift catalog on a working tree (docs/ocp-lifecycle.md).
import { CONFIG_PATH, parseRepoConfig } from '../../checks/config.js';
import {
  DEFAULT_CSV_METADATA_FROM,
  ocpPromote,
  OcpPromoteError,
  type OcpPackageResult,
} from '../../catalog/edits/ocp-promote.js';
import type { FileTree } from '../../catalog/edits/promote.js';
import { defineCliCommand, UsageError } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import { openWorkingTree, writeEdits } from '../../commands/working-tree.js';

const OCP_PROMOTE_USAGE = `catalog-bot ocp-promote <from> <to> [--repo <dir>] [--package <pkg>]... [--dry-run]
      [--format text|json]
  Open OpenShift catalog <to> from <from> (like v4.21 -> v4.22): every package of
  catalogs/<from> whose operators/<pkg>/ci.yaml fbc.version_promotion_strategy is
  "always" (and every --package, whatever its strategy) gets catalogs/<to>/<pkg>/catalog.yaml
  (a copy of <from>'s, or the render of its template when <to> needs olm.csv.metadata)
  and <to> in its catalog_mapping (comments and layout kept). Prints per package:
  promoted, needs review or skipped, and why; --dry-run also the files it would write, and
  writes nothing. Exit 0 done (or nothing to do), 1 refused (nothing written), 2 usage or
  I/O error.
`;

/** `bundles.renderer.csvMetadataFrom` of the repository config (its default when the file is bad). */
function csvMetadataFrom(tree: FileTree): string {
  return (
    parseRepoConfig(tree.read(CONFIG_PATH)).config.bundles.renderer.csvMetadataFrom ??
    DEFAULT_CSV_METADATA_FROM
  );
}

const LABEL: Record<OcpPackageResult['status'], string> = {
  promoted: 'promoted',
  'needs-review': 'needs review',
  skipped: 'skipped',
  refused: 'refused',
};

export const command = defineCliCommand({
  usage: OCP_PROMOTE_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    package: { type: 'string', multiple: true, default: [] },
    format: { type: 'string', default: 'text' },
    'dry-run': { type: 'boolean', default: false },
  },
  positionals: { min: 2, message: 'ocp-promote needs <from> and <to>, like v4.21 v4.22' },
  async run({ values, positionals }, { out, err }) {
    if (values.format !== 'text' && values.format !== 'json')
      throw new UsageError('--format must be text or json');
    const [from, to] = positionals as [string, string];
    const json = values.format === 'json';
    const dryRun = values['dry-run'];
    // The error on stderr in one line; in JSON, stdout also gets the document programs read.
    const fail = (code: number, message: string): number => {
      if (json) out.write(`${JSON.stringify({ from, to, error: message, packages: [], written: [] })}\n`);
      err.write(`catalog-bot ocp-promote: ${message}\n`);
      return code;
    };
    let tree: FileTree;
    try {
      tree = openWorkingTree(values.repo);
    } catch (problem) {
      return fail(2, (problem as Error).message);
    }
    let result;
    try {
      result = await ocpPromote(tree, {
        from,
        to,
        packages: values.package,
        csvMetadataFrom: csvMetadataFrom(tree),
      });
    } catch (problem) {
      if (problem instanceof OcpPromoteError) return fail(1, `refused: ${problem.message}`);
      return fail(2, (problem as Error).message);
    }
    const refused = result.packages.some((p) => p.status === 'refused');
    let written: string[] = [];
    if (!refused && !dryRun) {
      try {
        written = writeEdits(values.repo, result.edits);
      } catch (problem) {
        return fail(2, `writing: ${(problem as Error).message}`);
      }
    }
    if (json) {
      writeJson(out, {
        from,
        to,
        packages: result.packages,
        written,
        dryRun,
        wouldWrite: refused ? [] : result.edits.map((e) => e.path),
      });
    } else {
      out.write(`ocp-promote ${from} -> ${to}\n`);
      for (const p of result.packages) {
        out.write(`  ${LABEL[p.status].padEnd(12)} ${p.package}: ${p.reason}\n`);
        for (const note of p.notes) out.write(`               note: ${note}\n`);
      }
      const promoted = result.packages.filter((p) => p.status === 'promoted').length;
      if (dryRun && !refused) for (const e of result.edits) out.write(`would write ${e.path}\n`);
      out.write(
        refused
          ? `\nrefused: nothing written (fix the packages marked refused, then run again)\n`
          : result.edits.length === 0
            ? `\nnothing to do: no package to promote to ${to}\n`
            : dryRun
              ? `\n(dry run: ${promoted} package(s) would be promoted to ${to}, ${result.edits.length} file(s); nothing written)\n`
              : `\n${promoted} package(s) promoted to ${to}: ${written.length} file(s) written\n`,
      );
    }
    return refused ? 1 : 0;
  },
});
