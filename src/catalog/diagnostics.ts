// What every check reports: one finding per problem, with where it is and how to fix it.

export type Level = 'error' | 'warning' | 'notice';

export interface Diagnostic {
  /** A stable id such as `C-MULTIPLE-HEADS` (see docs/validation-rules in the README). */
  rule: string;
  level: Level;
  /** What opm would say, or our own words where opm says nothing. */
  message: string;
  /** Path relative to the catalog root (or the repository, for checks on repos). */
  file?: string;
  line?: number;
  column?: number;
  package?: string;
  /** How to fix it. */
  hint?: string;
  /**
   * The checks of the tools catalog-bot replaces that report the same problem, like
   * `operator-pipelines:check_required_fields` (docs/bundle-rules.md).
   */
  upstream?: string[];
  /** The repository's waiver (config.yaml `tests`) that turned this finding into a notice. */
  waived?: { test: string; pattern: string };
  /**
   * Set by the pull-request checks: the base has the same finding (rule, package, file and
   * message), so the change did not cause it (docs/output.md).
   */
  preExisting?: boolean;
  /** Set by the pull-request checks: the id of the root cause this finding follows from. */
  cause?: string;
}

export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return list.sort(
    (a, b) =>
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      a.rule.localeCompare(b.rule) ||
      a.message.localeCompare(b.message),
  );
}
