// Check runs on GitHub: create them in progress, complete them from a CheckResult.
import { MAX_ANNOTATIONS, type Annotation, type CheckResult } from '../checks/check.js';
import { ALWAYS_CHECK_NAMES, PR_CHECK_NAMES } from '../checks/pr-checks.js';
import type { GitHub, RepoRef } from '../github/port.js';

/** The check-run names, from the one list of checks (src/checks/pr-checks.ts). */
export { PR_CHECK_NAMES };

/**
 * The checks the App decides on every change (the list's `always`; the others apply only to
 * some changes). The merge gate requires these whatever a record says
 * (docs/github-limits.md, "Checks that do not apply").
 */
export { ALWAYS_CHECK_NAMES };

/** Whether a conclusion lets a merge go: neutral is GitHub's "passed, with a note" (a registry that could not be asked). */
export function isGreen(conclusion: string | null | undefined): boolean {
  return conclusion === 'success' || conclusion === 'neutral';
}

/**
 * What a check result was computed against (docs/security.md: results belong to (head,
 * base, config)): the pull request and its author (the same head may be opened as several
 * pull requests, by other authors), the base branch, the commit whose rules applied, and
 * the blob id of that commit's config file ('' when it has none; absent when the job
 * failed before reading it). It rides in the check run's output text, which only this App
 * can write; the merge gate counts a run only for that pull request, base branch and config.
 */
export interface CheckedAgainst {
  base: string;
  sha: string;
  /** The pull request (absent in records written before it was kept: those never count). */
  pr?: number;
  author?: string;
  config?: string;
  /**
   * The checks that apply to this change, as the job that wrote the run computed them: it
   * writes a run for each of them and none for the others (docs/github-limits.md). Absent
   * (older records, a job that failed before its results): every check applies.
   */
  checks?: string[];
}

const CHECKED = '<!-- catalog-bot:checked ';

export function checkedText(c: CheckedAgainst): string {
  const config = c.config === undefined ? '' : `, config \`${c.config ? c.config.slice(0, 12) : 'none'}\``;
  const pr = c.pr === undefined ? '' : ` for #${c.pr}${c.author ? ` by @${c.author}` : ''}`;
  // JSON never contains `-->` once `>` is escaped.
  const data = JSON.stringify(c).replace(/>/g, '\\u003e');
  return `Checked against \`${c.base}\` at ${c.sha.slice(0, 12)}${config}${pr}.\n\n${CHECKED}${data} -->`;
}

/** The base and config a run of this App was computed against, from its output text. */
export function readChecked(text: string | null | undefined): CheckedAgainst | undefined {
  const start = text?.lastIndexOf(CHECKED) ?? -1;
  if (!text || start < 0) return undefined;
  const end = text.indexOf(' -->', start);
  try {
    const data = JSON.parse(text.slice(start + CHECKED.length, end < 0 ? undefined : end)) as CheckedAgainst;
    if (typeof data.base !== 'string' || typeof data.sha !== 'string') return undefined;
    if (data.config !== undefined && typeof data.config !== 'string') return undefined;
    if (data.pr !== undefined && !Number.isSafeInteger(data.pr)) return undefined;
    if (data.author !== undefined && typeof data.author !== 'string') return undefined;
    if (
      data.checks !== undefined &&
      !(Array.isArray(data.checks) && data.checks.every((c) => typeof c === 'string'))
    )
      return undefined;
    return data;
  } catch {
    return undefined;
  }
}

/** GitHub's limits: output text 65535 characters, 50 annotations per request. */
export const MAX_TEXT = 65_535;
export const ANNOTATIONS_PER_REQUEST = 50;

export type { RepoRef };

export function truncate(text: string, max = MAX_TEXT): string {
  if (text.length <= max) return text;
  const note = '\n\n… (truncated; see the annotations or run `catalog-bot check` locally)';
  return text.slice(0, max - note.length) + note;
}

/**
 * Create one in-progress check run per name on the head sha; returns name -> check run id.
 * With `externalId` (the job's key) the runs carry it, and `again` (the job may have run
 * before: a retry, or another replica taking over) first looks for the runs it already
 * created, so a job run twice still leaves one run per name.
 */
export async function createCheckRuns(
  github: GitHub,
  ref: RepoRef,
  headSha: string,
  names: readonly string[] = PR_CHECK_NAMES,
  options: { externalId?: string; again?: boolean; startedAt?: string } = {},
): Promise<Map<string, number>> {
  const { externalId, again } = options;
  const runs = new Map<string, number>();
  if (externalId !== undefined && again) {
    const existing = await github.checks.onCommit(ref, headSha, { filter: 'all' });
    for (const r of existing)
      if (r.external_id === externalId && names.includes(r.name) && !runs.has(r.name)) runs.set(r.name, r.id);
  }
  const startedAt = options.startedAt ?? new Date().toISOString();
  await Promise.all(
    names
      .filter((name) => !runs.has(name))
      .map(async (name) => {
        const { id } = await github.checks.create(ref, {
          name,
          head_sha: headSha,
          status: 'in_progress',
          started_at: startedAt,
          ...(externalId !== undefined ? { external_id: externalId } : {}),
          output: { title: 'Checking…', summary: 'catalog-bot is checking this pull request.' },
        });
        runs.set(name, id);
      }),
  );
  return new Map(names.map((name) => [name, runs.get(name)!]));
}

type GitHubConclusion = CheckResult['conclusion'] | 'skipped' | 'cancelled';

export interface Completion {
  conclusion: GitHubConclusion;
  title: string;
  summary: string;
  annotations?: Annotation[];
  /** What the result was computed against (results without it never count for a merge). */
  checked?: CheckedAgainst;
  /** The run's "Details" link: the pull request's impact page (docs/site.md). */
  detailsUrl?: string;
}

/** The output of a completed run, its annotations in batches of 50 (GitHub's limit per request). */
function completedOutput(c: Completion) {
  const title = truncate(c.title, 255);
  // The pull-request checks cap their annotations and say how to list the rest
  // (capAnnotations); this keeps every other caller within the same few requests.
  const more = (c.annotations?.length ?? 0) - MAX_ANNOTATIONS;
  const summary = truncate(
    more > 0
      ? `> **${more} more findings are not shown as annotations** (at most ${MAX_ANNOTATIONS} per check run).\n\n${c.summary}`
      : c.summary,
  );
  const text = c.checked ? { text: checkedText(c.checked) } : {};
  const annotations = (c.annotations ?? []).slice(0, MAX_ANNOTATIONS).map((a) => ({
    path: a.path,
    start_line: a.line,
    end_line: a.line,
    annotation_level: a.level,
    title: truncate(a.title, 255),
    message: truncate(a.message, 64_000),
  }));
  const batches: (typeof annotations)[] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) {
    batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  }
  if (batches.length === 0) batches.push([]);
  const output = (batch: typeof annotations) => ({
    title,
    summary,
    ...text,
    ...(batch.length > 0 ? { annotations: batch } : {}),
  });
  return { batches, output };
}

/** Complete a check run; annotations go in batches of 50, the last request completes it. */
export async function completeCheckRun(
  github: GitHub,
  ref: RepoRef,
  id: number,
  c: Completion,
): Promise<void> {
  const { batches, output } = completedOutput(c);
  for (const [i, batch] of batches.entries()) {
    const last = i === batches.length - 1;
    await github.checks.update(ref, id, {
      ...(c.detailsUrl ? { details_url: c.detailsUrl } : {}),
      ...(last
        ? { status: 'completed' as const, conclusion: c.conclusion, completed_at: new Date().toISOString() }
        : {}),
      output: output(batch),
    });
  }
}

/**
 * Create a check run already completed: one request (docs/github-limits.md: writes are paced
 * at one a second), with the first 50 annotations; more annotations, when there are, go in
 * further requests that add to the same run.
 */
export async function createCompletedRun(
  github: GitHub,
  ref: RepoRef,
  headSha: string,
  name: string,
  c: Completion,
  options: { externalId?: string; startedAt?: string } = {},
): Promise<number> {
  const { batches, output } = completedOutput(c);
  const { id } = await github.checks.create(ref, {
    name,
    head_sha: headSha,
    status: 'completed',
    conclusion: c.conclusion,
    ...(c.detailsUrl ? { details_url: c.detailsUrl } : {}),
    ...(options.startedAt ? { started_at: options.startedAt } : {}),
    completed_at: new Date().toISOString(),
    ...(options.externalId !== undefined ? { external_id: options.externalId } : {}),
    output: output(batches[0]!),
  });
  for (const batch of batches.slice(1)) await github.checks.update(ref, id, { output: output(batch) });
  return id;
}

/** Complete every run with the same outcome (errors, superseded heads). */
export async function completeAll(
  github: GitHub,
  ref: RepoRef,
  runs: Map<string, number>,
  c: Completion,
): Promise<void> {
  await Promise.all([...runs.values()].map((id) => completeCheckRun(github, ref, id, c)));
}

export type ListedRun = {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  started_at?: string | null;
  output?: { text?: string | null };
};

/**
 * Is run `a` newer than run `b`? By when its job started (every run the App writes carries
 * its job's start as `started_at`), then by id: results of an older job that waited in the
 * write queue are written after a newer job's runs, with higher ids, and must not hide them.
 */
export function newerRun(a: ListedRun, b: ListedRun): boolean {
  const at = Date.parse(a.started_at ?? '');
  const bt = Date.parse(b.started_at ?? '');
  if (!Number.isNaN(at) && !Number.isNaN(bt) && at !== bt) return at > bt;
  return a.id > b.id;
}

/**
 * The result of each check for pull request `number` into `baseRef`: per name, the newest
 * run of this App on the head that was computed for that pull request against that base
 * branch, or still runs (docs/security.md: results belong to (head, base, config)). A run
 * for the same head in another pull request (another author, another base branch and its
 * config) never counts, nor does a record that names no pull request.
 */
export function resultsFor<R extends ListedRun>(
  runs: R[],
  baseRef: string,
  number: number,
): Map<string, R & { checked?: CheckedAgainst }> {
  const results = new Map<string, R & { checked?: CheckedAgainst }>();
  for (const run of runs) {
    const checked = readChecked(run.output?.text);
    if (run.status === 'completed' && (checked?.base !== baseRef || checked.pr !== number)) continue;
    const seen = results.get(run.name);
    if (!seen || newerRun(run, seen)) results.set(run.name, { ...run, ...(checked ? { checked } : {}) });
  }
  return results;
}

/**
 * The checks whose runs must be complete (for the merge gate: green) among `resultsFor`'s
 * runs: those the newest completed record names as applying to the change, every check
 * when it names none (older records, a job that failed before its results) or when there
 * is none, and always ALWAYS_CHECK_NAMES (docs/github-limits.md, "Checks that do not
 * apply"). The list comes only from a run of this App (the caller keeps only its runs): a
 * check it names without a run is missing, never "does not apply".
 */
export function requiredChecks(results: Map<string, ListedRun & { checked?: CheckedAgainst }>): string[] {
  let newest: (ListedRun & { checked?: CheckedAgainst }) | undefined;
  for (const run of results.values())
    if (run.status === 'completed' && run.checked && (!newest || newerRun(run, newest))) newest = run;
  const applying = newest?.checked?.checks ?? PR_CHECK_NAMES;
  return [...new Set([...ALWAYS_CHECK_NAMES, ...applying])];
}

/**
 * Why the results do not yet answer the pull request, or undefined when they do: a required
 * check without a completed run, or any of this App's runs still in progress. With `green`,
 * a required check that is not green too.
 */
export function unanswered(
  results: Map<string, ListedRun & { checked?: CheckedAgainst }>,
  green = false,
): string | undefined {
  for (const run of results.values()) if (run.status !== 'completed') return `${run.name} is still running`;
  for (const name of requiredChecks(results)) {
    const run = results.get(name);
    if (!run) return `${name} has no run`;
    if (green && !isGreen(run.conclusion)) return `${name} is not green`;
  }
  return undefined;
}
