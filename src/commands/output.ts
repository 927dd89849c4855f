// How the CLI prints findings (the Diagnostic of src/catalog/diagnostics.ts): text for people,
// JSON for programs, GitHub Actions workflow commands for annotations in CI. Every command
// that prints findings uses these, so a finding reads the same everywhere.
import { relative } from 'node:path';
import type { Diagnostic } from '../catalog/index.js';

/** Colour only on a terminal that wants it (https://no-color.org). */
export function useColor(out: NodeJS.WritableStream): boolean {
  return (out as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

export function paint(s: string, code: number, color: boolean): string {
  return color ? `\u001b[${code}m${s}\u001b[0m` : s;
}

function location(d: Diagnostic, also?: string): string {
  if (d.file === undefined) return also ? `(${also}): ` : '';
  const file = relative(process.cwd(), d.file) || d.file;
  return `${file}${d.line !== undefined ? `:${d.line}` : ''}${d.column !== undefined ? `:${d.column}` : ''}${also ? ` (${also})` : ''}: `;
}

/**
 * `file:line:column: level RULE: message`, and the hint on the next line; `also` names the
 * other catalogs with the same finding (`v4.17-v4.21, 5 catalogs`).
 */
export function textFinding(d: Diagnostic, color = false, also?: string): string {
  const level = paint(d.level, d.level === 'error' ? 31 : d.level === 'warning' ? 33 : 36, color);
  const head = `${location(d, also)}${level} ${paint(d.rule, 1, color)}: ${d.message}`;
  return d.hint ? `${head}\n    ${paint('hint:', 2, color)} ${d.hint}` : head;
}

/** The JSON form of a finding: every field present, null where unknown. */
export function jsonFinding(d: Diagnostic): Record<string, unknown> {
  return {
    rule: d.rule,
    level: d.level,
    message: d.message,
    file: d.file ?? null,
    line: d.line ?? null,
    column: d.column ?? null,
    package: d.package ?? null,
    hint: d.hint ?? null,
  };
}

/** A Markdown list item, for reports pasted into issues and pull requests. */
export function markdownFinding(d: Diagnostic): string {
  const where = d.file === undefined ? '' : ` ${d.file}${d.line !== undefined ? `:${d.line}` : ''}:`;
  return `- **${d.level}** \`${d.rule}\`${where} ${d.message}`;
}

/** A GitHub Actions workflow command, escaped as the runner expects. */
export function githubAnnotation(d: Diagnostic): string {
  const esc = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const prop = (s: string): string => esc(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
  const kind = d.level === 'notice' ? 'notice' : d.level;
  const params = [
    d.file !== undefined ? `file=${prop(d.file)}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
    `title=${prop(d.rule)}`,
  ].filter(Boolean);
  return `::${kind} ${params.join(',')}::${esc(d.hint ? `${d.message}\n${d.hint}` : d.message)}`;
}

/** Findings in one of the three forms, one per line (json: the list, for callers that embed it). */
export function writeFindings(
  out: NodeJS.WritableStream,
  findings: readonly Diagnostic[],
  format: 'text' | 'github' | 'markdown',
  options: { color?: boolean; indent?: string } = {},
): void {
  for (const d of findings) {
    const line =
      format === 'github'
        ? githubAnnotation(d)
        : format === 'markdown'
          ? markdownFinding(d)
          : textFinding(d, options.color ?? false);
    out.write((options.indent ? line.replace(/^/gm, options.indent) : line) + '\n');
  }
}

/** A JSON document as the commands print it: indented by two, with a final newline. */
export function writeJson(out: NodeJS.WritableStream, value: unknown): void {
  out.write(JSON.stringify(value, null, 2) + '\n');
}
