// What every check returns: the shape of a GitHub check run, with no GitHub types.
import type { Diagnostic } from '../catalog/diagnostics.js';
import {
  catalogsLabel,
  countPreExisting,
  groupAcrossCatalogs,
  preExistingLine,
  type ExplainedCause,
} from './findings.js';

export type Conclusion = 'success' | 'failure' | 'neutral';

export interface Annotation {
  /** Path relative to the repository root. */
  path: string;
  line: number;
  level: 'failure' | 'warning' | 'notice';
  title: string;
  message: string;
}

export interface CheckResult {
  /** The check-run name, e.g. `catalog-bot/validate` (exact: branch protection names it). */
  name: string;
  conclusion: Conclusion;
  /** One-line title for the check run. */
  title: string;
  /** Markdown summary. */
  summary: string;
  findings: Diagnostic[];
  annotations: Annotation[];
  /** Plain-text notes for the command line too (e.g. findings counted but not kept). */
  notes?: string[];
}

/**
 * Annotations per check run (docs/security.md, bounded work): GitHub takes 50 per request,
 * so at most 4 requests per run however many findings a pull request provokes.
 */
export const MAX_ANNOTATIONS = 200;

/**
 * At most MAX_ANNOTATIONS annotations; the summary then starts by saying how many more
 * findings there are and the command (`listAll`) that lists them all.
 */
export function capAnnotations(check: CheckResult, listAll: string): CheckResult {
  const more = check.annotations.length - MAX_ANNOTATIONS;
  if (more <= 0) return check;
  return {
    ...check,
    summary: `> **${more} more finding${more === 1 ? ' is' : 's are'} not shown as annotations** (catalog-bot annotates at most ${MAX_ANNOTATIONS} per check run). To list them all: ${listAll}\n\n${check.summary}`,
    annotations: check.annotations.slice(0, MAX_ANNOTATIONS),
  };
}

/** GitHub needs a line for every annotation; findings without a file go in the summary only. */
export function toAnnotations(findings: Diagnostic[]): Annotation[] {
  return findings
    .filter((d) => d.file !== undefined)
    .map((d) => ({
      path: d.file as string,
      line: d.line ?? 1,
      level: d.level === 'error' ? 'failure' : d.level,
      title: d.rule,
      message: d.hint ? `${d.message}\n\n${d.hint}` : d.message,
    }));
}

/** Text that is safe inside a markdown table cell. */
export function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The findings as a markdown table (where, rule, message, fix), after a blank line; nothing when there are none. */
export function findingsTable(findings: Diagnostic[]): string[] {
  if (findings.length === 0) return [];
  return [
    '',
    '| where | rule | message | fix |',
    '|---|---|---|---|',
    ...findings.map(
      (d) =>
        `| ${cell(d.file ? `${d.file}${d.line ? `:${d.line}` : ''}` : '')} | ${d.rule} | ${cell(d.message)} | ${cell(d.hint ?? '')} |`,
    ),
  ];
}

/**
 * Annotations an author can act on (docs/output.md): one per root cause, then the change's
 * own findings, then the ones the base already had; the same finding in several catalogs
 * is one annotation on its first file naming the others.
 */
export function presentedAnnotations(
  findings: Diagnostic[],
  roots: readonly string[],
  causes: readonly ExplainedCause[],
): Annotation[] {
  const out: Annotation[] = [];
  for (const c of causes) {
    const members = findings.filter((d) => d.cause !== undefined && c.ids.includes(d.cause));
    if (members.length === 0) continue;
    const where = catalogsLabel(c.roots, roots);
    out.push({
      path: c.file,
      line: c.line ?? 1,
      level: members.some((d) => d.level === 'error') ? 'failure' : 'warning',
      title: `root cause of ${members.length} finding${members.length === 1 ? '' : 's'} (${c.rules.join(', ')})`,
      message: `${c.message}${where ? ` (the same in ${where})` : ''}\n\n${c.fix}`,
    });
  }
  const order = (d: Diagnostic): number => (d.preExisting ? 2 : d.cause !== undefined ? 1 : 0);
  const sorted = [...findings].sort((a, b) => order(a) - order(b));
  for (const g of groupAcrossCatalogs(sorted, roots)) {
    const [a] = toAnnotations([g.first]);
    if (!a) continue;
    const where = catalogsLabel(g.roots, roots);
    const others = g.members.slice(1).map((d) => `${d.file}${d.line !== undefined ? `:${d.line}` : ''}`);
    const notes = [
      ...(where ? [`The same in ${where}: ${others.join(', ')}.`] : []),
      ...(g.first.preExisting ? ['Already so on the base branch: not caused by this change.'] : []),
      ...(g.first.cause !== undefined
        ? ['Follows from the root cause annotated on the entry: fix that first.']
        : []),
    ];
    out.push(notes.length > 0 ? { ...a, message: `${a.message}\n\n${notes.join(' ')}` } : a);
  }
  return out;
}

/** Lines that open a check's summary: the root causes, and what the base already had. */
export function presentedSummary(
  findings: Diagnostic[],
  roots: readonly string[],
  causes: readonly ExplainedCause[],
): string[] {
  const lines: string[] = [];
  for (const c of causes) {
    const n = findings.filter((d) => d.cause !== undefined && c.ids.includes(d.cause)).length;
    if (n === 0) continue;
    const where = catalogsLabel(c.roots, roots) ?? c.file;
    lines.push(
      `> **One root cause for ${n} of these findings** (${c.rules.join(', ')}; ${where}): ${cell(c.message)}. **Fix:** ${cell(c.fix)}`,
    );
  }
  const old = countPreExisting(findings, roots);
  if (old.length > 0)
    lines.push(
      `> **${old.reduce((n, c) => n + c.count, 0)} of ${findings.length} findings were already on the base branch** (not caused by this change; listed last):`,
      ...old.map((c) => `> - ${preExistingLine(c, roots)}`),
    );
  return lines.length > 0 ? [...lines, ''] : [];
}

/**
 * findingsTable in the order an author reads (the change's own, those under a root cause,
 * the base's) with the same finding in several catalogs as one row naming them.
 */
export function presentedFindingsTable(findings: Diagnostic[], roots: readonly string[]): string[] {
  if (findings.length === 0) return [];
  const order = (d: Diagnostic): number => (d.preExisting ? 2 : d.cause !== undefined ? 1 : 0);
  const sorted = [...findings].sort((a, b) => order(a) - order(b));
  return [
    '',
    '| where | rule | message | fix |',
    '|---|---|---|---|',
    ...groupAcrossCatalogs(sorted, roots).map((g) => {
      const d = g.first;
      const where = catalogsLabel(g.roots, roots);
      const note = d.preExisting
        ? '*already on the base:* '
        : d.cause !== undefined
          ? '*from the root cause:* '
          : '';
      return `| ${cell(`${d.file ? `${d.file}${d.line ? `:${d.line}` : ''}` : ''}${where ? ` (${where})` : ''}`)} | ${d.rule} | ${note}${cell(d.message)} | ${cell(d.hint ?? '')} |`;
    }),
  ];
}

/**
 * One word of a command a hint prints, quoted for the shell when it must be: paths and names
 * can come from the pull request (a ci.yaml's template names, directory and package names),
 * and a hint people paste into a shell must not run what such a name smuggles in (`;`, `$(...)`).
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
