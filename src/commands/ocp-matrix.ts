// `catalog-bot ocp-matrix [--repo <dir>] [--format text|json|markdown]`: every package of the
// repository's OpenShift catalogs against every OpenShift version, with the head of its
// default channel in each cell and the ocp-continuity findings (docs/ocp-lifecycle.md).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { ocpCatalogVersion } from '../catalog/olm/ocp-continuity.js';
import { CONFIG_PATH, parseRepoConfig } from '../checks/config.js';
import { matrixCellText, matrixMarkdown, ocpMatrix, type OcpCatalog } from '../checks/ocp-continuity.js';
import { catalogRootsOf, directoryTree } from './promote.js';

export const OCP_MATRIX_USAGE = `catalog-bot ocp-matrix [--repo <dir>] [--package <pkg>]... [--format text|json|markdown]
  Every package of the repository's OpenShift catalogs (catalog roots named like v4.21)
  against every OpenShift version: the head of its default channel in each cell, "-"
  where the package is not, marked where catalog-bot/ocp-continuity finds a problem
  (✗ error, ⚠ warning, ℹ notice), then the findings. Exit 0 no errors, 1 errors, 2 usage/IO.
`;

export async function ocpMatrixCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        repo: { type: 'string', default: '.' },
        package: { type: 'string', multiple: true, default: [] },
        format: { type: 'string', default: 'text' },
      },
    }));
    if (!['text', 'json', 'markdown'].includes(values.format))
      throw new Error('--format must be text, json or markdown');
  } catch (problem) {
    out.write(`catalog-bot ocp-matrix: ${(problem as Error).message}\n\n${OCP_MATRIX_USAGE}`);
    return 2;
  }
  const catalogs: OcpCatalog[] = [];
  let config;
  try {
    if (!statSync(values.repo).isDirectory()) throw new Error(`${values.repo} is not a directory`);
    const tree = directoryTree(values.repo);
    const parsed = parseRepoConfig(tree.read(CONFIG_PATH));
    if (parsed.problems.length > 0) throw new Error(`${CONFIG_PATH}: ${parsed.problems[0]!.message}`);
    config = parsed.config.ocp;
    for (const root of catalogRootsOf(tree)) {
      const name = root.slice(root.lastIndexOf('/') + 1);
      if (!ocpCatalogVersion(name)) continue;
      const report = await validateCatalog(new DirectorySource(join(values.repo, root)), {
        keepBundleObjects: true,
      });
      catalogs.push({ name, root, model: report.model });
    }
  } catch (problem) {
    out.write(`catalog-bot ocp-matrix: ${(problem as Error).message}\n`);
    return 2;
  }
  const matrix = ocpMatrix({
    catalogs,
    config,
    ...(values.package.length > 0 ? { packages: new Set(values.package) } : {}),
  });
  if (values.format === 'json') {
    out.write(`${JSON.stringify(matrix, null, 2)}\n`);
  } else if (values.format === 'markdown') {
    out.write(`${matrixMarkdown(matrix).join('\n')}\n`);
    if (matrix.findings.length > 0) out.write('\n');
    for (const d of matrix.findings)
      out.write(`- **${d.level}** \`${d.rule}\` ${d.file}:${d.line ?? 1}: ${d.message}\n`);
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
    for (const d of matrix.findings) {
      out.write(`${d.file}:${d.line ?? 1}: ${d.level} ${d.rule}: ${d.message}\n`);
      if (d.hint) out.write(`    hint: ${d.hint}\n`);
    }
  }
  return matrix.findings.some((d) => d.level === 'error') ? 1 : 0;
}
