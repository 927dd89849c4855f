// The `catalog-bot/validate` check: every changed catalog root passes opm-equivalent
// validation. Pure: it is given the roots to check and how to read them.
import type { CatalogReport } from '../catalog/index.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { cell, shellWord, toAnnotations, type CheckResult } from './check.js';

export const VALIDATE_CHECK = 'catalog-bot/validate';

export interface ValidatedRoot {
  /** The root's path in the repository, e.g. `catalogs/v4.21`. */
  path: string;
  report: CatalogReport;
}

export function validateCheck(roots: ValidatedRoot[]): CheckResult {
  const findings: Diagnostic[] = [];
  const rows: string[] = [];
  const notes: string[] = [];
  let omittedErrors = 0;
  for (const { path, report } of roots) {
    const errors =
      report.diagnostics.filter((d) => d.level === 'error').length + (report.omitted?.errors ?? 0);
    const warnings = report.diagnostics.length + (report.omitted?.total ?? 0) - errors;
    if (report.omitted) {
      omittedErrors += report.omitted.errors;
      notes.push(
        `${path}: ${report.omitted.total} more finding${report.omitted.total === 1 ? '' : 's'} not listed (catalog-bot keeps the first ${report.diagnostics.length}); to list them all: catalog-bot validate ${shellWord(path)}`,
      );
    }
    rows.push(
      `| \`${cell(path)}\` | ${report.valid ? 'valid' : '**invalid**'} | ${errors} | ${warnings} | ${report.model.size} |`,
    );
    for (const d of report.diagnostics)
      findings.push(d.file === undefined ? d : { ...d, file: `${path}/${d.file}` });
  }
  const failed = findings.some((d) => d.level === 'error');
  const errorCount = findings.filter((d) => d.level === 'error').length + omittedErrors;
  const title =
    roots.length === 0
      ? 'No catalog changed'
      : failed
        ? `${errorCount} error${errorCount === 1 ? '' : 's'} in ${roots.length} catalog${roots.length === 1 ? '' : 's'}`
        : `${roots.length} catalog${roots.length === 1 ? '' : 's'} valid`;
  const summary = [
    ...notes.map((n) => `> **${cell(n)}**\n`),
    roots.length === 0
      ? 'This change touches no catalog root.'
      : '| catalog | verdict | errors | warnings | packages |\n|---|---|---:|---:|---:|\n' + rows.join('\n'),
    ...(findings.length > 0
      ? [
          '',
          '| where | rule | message |',
          '|---|---|---|',
          ...findings.map(
            (d) =>
              `| ${cell(d.file ? `${d.file}${d.line ? `:${d.line}` : ''}` : '')} | ${d.rule} | ${cell(d.message)} |`,
          ),
        ]
      : []),
  ].join('\n');
  return {
    name: VALIDATE_CHECK,
    conclusion: failed ? 'failure' : 'success',
    title,
    summary,
    findings,
    annotations: toAnnotations(findings),
    ...(notes.length > 0 ? { notes } : {}),
  };
}
