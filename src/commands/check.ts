// `catalog-bot check [--base <ref>] [--head <ref>]`: the pull-request checks on two commits of
// a git repository (by default: the working tree against the default branch), as the App runs
// them. The text output puts what the change caused first (docs/output.md): root causes, then
// its own findings, identical catalogs once, and the base's findings counted per rule (`--all`
// lists them).
import type { Diagnostic } from '../catalog/index.js';
import {
  catalogsLabel,
  countPreExisting,
  groupAcrossCatalogs,
  preExistingLine,
  type ExplainedCause,
} from '../checks/findings.js';
import { runPrChecks } from '../checks/pr.js';
import { defineCliCommand, EXIT_FAIL, EXIT_OK, requireDirectory, UsageError } from './command.js';
import { changeRange } from './working-tree.js';
import { jsonFinding, paint, textFinding, useColor, writeFindings, writeJson } from './output.js';

export const command = defineCliCommand({
  options: {
    repo: { type: 'string', default: '.' },
    base: { type: 'string' },
    head: { type: 'string' },
    format: { type: 'string', default: 'text' },
    author: { type: 'string' },
    approver: { type: 'string', multiple: true, default: [] },
    all: { type: 'boolean', default: false },
  },
  formats: ['text', 'json', 'github'],
  async run({ values }, { out }) {
    if (values.approver.length > 0 && values.author === undefined)
      throw new UsageError('--approver needs --author');
    await requireDirectory(values.repo);
    const { head, base } = changeRange(values.repo, values.head, values.base);
    const result = await runPrChecks({
      repo: values.repo,
      base,
      head,
      author: values.author,
      approvers: values.approver,
      // As the App does: a bundle-only change is checked with the release it needs applied
      // (docs/bundles.md), so its CRDs and upgrade graph are judged before the merge.
      checkRelease: true,
    });
    const failed = result.checks.some((c) => c.conclusion === 'failure');
    const roots = [...result.roots.map((r) => r.path), ...(result.releasedRoots ?? [])];
    const causes = result.causes ?? [];
    if (values.format === 'json') {
      // Every finding stays (design.md); the fields after `hint` say how it is presented.
      const checks = result.checks.map((c) => {
        const groups = groupAcrossCatalogs(c.findings, roots);
        const catalogsOf = new Map(groups.flatMap((g) => g.members.map((d) => [d, g.roots] as const)));
        return {
          name: c.name,
          conclusion: c.conclusion,
          title: c.title,
          findings: c.findings.map((d) => ({
            ...jsonFinding(d),
            new: d.preExisting !== true,
            catalogs: catalogsOf.get(d) ?? [],
            cause: d.cause ?? null,
          })),
          ...(c.notes ? { notes: c.notes } : {}),
        };
      });
      writeJson(out, {
        checks,
        causes: causes.map((c) => ({
          ids: c.ids,
          package: c.package,
          channel: c.channel,
          bundle: c.bundle,
          file: c.file,
          line: c.line ?? null,
          message: c.message,
          fix: c.fix,
          rules: c.rules,
          findings: c.findings,
          catalogs: c.roots,
        })),
      });
    } else if (values.format === 'github') {
      for (const c of result.checks) writeFindings(out, c.findings, 'github');
    } else {
      const color = useColor(out);
      const changed = result.roots.map(
        (r) => `${r.path} (${[...r.packages].sort().join(', ') || 'no package'})`,
      );
      out.write(`changed catalogs: ${changed.join('; ') || 'none'}\n`);
      if (result.releasedRoots?.length && result.release)
        out.write(`with the bundle's catalog update: ${result.releasedRoots.join('; ')}\n`);
      for (const line of result.indexed ?? []) out.write(`${line}\n`);
      const listAll = [
        'catalog-bot check',
        ...(values.repo !== '.' ? ['--repo', shellWord(values.repo)] : []),
        // The refs as given: without them the defaults pick the same commits again.
        ...(values.base !== undefined ? ['--base', shellWord(values.base)] : []),
        ...(values.head !== undefined ? ['--head', shellWord(values.head)] : []),
        '--all',
      ].join(' ');
      writeCauses(out, causes, roots, color);
      for (const c of result.checks) {
        const mark =
          c.conclusion === 'failure'
            ? paint('✗', 31, color)
            : c.conclusion === 'neutral'
              ? paint('–', 33, color) // not decided (e.g. no manifests to compare)
              : paint('✓', 32, color);
        out.write(`\n${mark} ${c.name}: ${c.title}\n`);
        writeCheckFindings(out, c.findings, roots, causes, { color, all: values.all, listAll });
        for (const note of c.notes ?? []) out.write(`  note: ${note}\n`);
      }
    }
    return failed ? EXIT_FAIL : EXIT_OK;
  },
});

/** A word as a shell reads it back (single quotes unless it is plain). */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function writeCauses(
  out: NodeJS.WritableStream,
  causes: readonly ExplainedCause[],
  roots: readonly string[],
  color: boolean,
): void {
  for (const [i, c] of causes.entries()) {
    const where = catalogsLabel(c.roots, roots);
    out.write(
      `\n${paint('✗', 31, color)} root cause ${i + 1}: ${c.file}${c.line !== undefined ? `:${c.line}` : ''}${where ? ` (${where})` : ''}: ${c.message}\n` +
        `    ${paint('fix:', 2, color)} ${c.fix}\n` +
        `    explains ${c.findings} finding${c.findings === 1 ? '' : 's'} below: ${c.rules.join(', ')}\n`,
    );
  }
}

/** One check's findings: its own (grouped), the ones a root cause explains, the base's. */
function writeCheckFindings(
  out: NodeJS.WritableStream,
  findings: readonly Diagnostic[],
  roots: readonly string[],
  causes: readonly ExplainedCause[],
  options: { color: boolean; all: boolean; listAll: string },
): void {
  const indent = (s: string): string => s.replace(/^/gm, '  ') + '\n';
  const own = findings.filter((d) => !d.preExisting && d.cause === undefined);
  for (const g of groupAcrossCatalogs(own, roots))
    out.write(indent(textFinding(g.first, options.color, catalogsLabel(g.roots, roots))));
  for (const [i, c] of causes.entries()) {
    const mine = findings.filter((d) => d.cause !== undefined && c.ids.includes(d.cause));
    if (mine.length === 0) continue;
    const rules = [...new Set(mine.map((d) => d.rule))].sort().join(', ');
    out.write(
      `  ${mine.length} finding${mine.length === 1 ? '' : 's'} (${rules}) follow${mine.length === 1 ? 's' : ''} from root cause ${i + 1} above${options.all ? ':' : ''}\n`,
    );
    if (options.all)
      for (const g of groupAcrossCatalogs(mine, roots))
        out.write(
          indent(textFinding(g.first, options.color, catalogsLabel(g.roots, roots))).replace(/^/gm, '  '),
        );
  }
  const old = findings.filter((d) => d.preExisting);
  if (old.length === 0) return;
  if (options.all) {
    out.write(`  already on the base branch (not caused by this change):\n`);
    for (const g of groupAcrossCatalogs(old, roots))
      out.write(
        indent(textFinding(g.first, options.color, catalogsLabel(g.roots, roots))).replace(/^/gm, '  '),
      );
    return;
  }
  const counts = countPreExisting(old, roots);
  for (const [i, c] of counts.entries())
    out.write(
      `  ${preExistingLine(c, roots)}${i === counts.length - 1 ? ` (\`${options.listAll}\` lists them)` : ''}\n`,
    );
}
