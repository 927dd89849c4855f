// What every check returns: the shape of a GitHub check run, with no GitHub types.
import type { Diagnostic } from '../catalog/diagnostics.js';

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
