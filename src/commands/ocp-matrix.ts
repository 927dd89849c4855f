// `catalog-bot ocp-matrix [--repo <dir>] [--format text|json|markdown]`: every package of the
// repository's OpenShift catalogs against every OpenShift version, with the head of its
// default channel in each cell and the ocp-continuity findings (docs/ocp-lifecycle.md).
import { join } from 'node:path';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { ocpCatalogVersion } from '../catalog/olm/ocp-continuity.js';
import { CONFIG_PATH, parseRepoConfig } from '../checks/config.js';
import { templateMappingsFromTree } from '../catalog/edits/promote.js';
import { matrixCellText, matrixMarkdown, ocpMatrix, type OcpCatalog } from '../checks/ocp-continuity.js';
import { CommandFailure, defineCliCommand, UsageError } from './command.js';
import { writeFindings, writeJson } from './output.js';
import { catalogRootsOf, openWorkingTree } from './working-tree.js';

const OCP_MATRIX_USAGE = `catalog-bot ocp-matrix [--repo <dir>] [--package <pkg>]... [--format text|json|markdown]
  Every package of the repository's OpenShift catalogs (catalog roots named like v4.21)
  against every OpenShift version: the head of its default channel in each cell, "-"
  where the package is not, marked where catalog-bot/ocp-continuity finds a problem
  (✗ error, ⚠ warning, ℹ notice), then the findings. Exit 0 no errors, 1 errors, 2 usage/IO.
`;

export const command = defineCliCommand({
  usage: OCP_MATRIX_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    package: { type: 'string', multiple: true, default: [] },
    format: { type: 'string', default: 'text' },
  },
  async run({ values }, { out }) {
    if (!['text', 'json', 'markdown'].includes(values.format))
      throw new UsageError('--format must be text, json or markdown');
    const catalogs: OcpCatalog[] = [];
    let config;
    let templates: { template: string; outputs: string[] }[];
    const tree = openWorkingTree(values.repo);
    try {
      const parsed = parseRepoConfig(tree.read(CONFIG_PATH));
      if (parsed.problems.length > 0) throw new Error(`${CONFIG_PATH}: ${parsed.problems[0]!.message}`);
      config = parsed.config.ocp;
      // For the hints that re-render a catalog; a ci.yaml that does not parse maps nothing.
      templates = parsed.config.templates;
      try {
        templates = [...templates, ...templateMappingsFromTree(tree)];
      } catch {
        // keep the configured ones
      }
      for (const root of catalogRootsOf(tree)) {
        const name = root.slice(root.lastIndexOf('/') + 1);
        if (!ocpCatalogVersion(name)) continue;
        const report = await validateCatalog(new DirectorySource(join(values.repo, root)), {
          keepBundleObjects: true,
        });
        catalogs.push({ name, root, model: report.model });
      }
    } catch (problem) {
      throw new CommandFailure((problem as Error).message, 2);
    }
    const matrix = ocpMatrix({
      catalogs,
      config,
      templates,
      ...(values.package.length > 0 ? { packages: new Set(values.package) } : {}),
    });
    if (values.format === 'json') {
      writeJson(out, matrix);
    } else if (values.format === 'markdown') {
      out.write(`${matrixMarkdown(matrix).join('\n')}\n`);
      if (matrix.findings.length > 0) out.write('\n');
      writeFindings(out, matrix.findings, 'markdown');
    } else {
      const rows = [
        ['package', ...matrix.catalogs],
        ...matrix.packages.map((p) => [
          p.package,
          ...matrix.catalogs.map((c) => matrixCellText(p.cells[c] ?? null)),
        ]),
      ];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
      for (const r of rows)
        out.write(
          `${r
            .map((x, i) => x + ' '.repeat(widths[i]! - [...x].length))
            .join('  ')
            .trimEnd()}\n`,
        );
      if (matrix.findings.length > 0) out.write('\n');
      writeFindings(out, matrix.findings, 'text');
    }
    return matrix.findings.some((d) => d.level === 'error') ? 1 : 0;
  },
});
