// Check runs on GitHub: create them in progress, complete them from a CheckResult.
import type { Context } from 'probot';
import { MAX_ANNOTATIONS, type Annotation, type CheckResult } from '../checks/check.js';

export type Octokit = Context['octokit'];

/** design.md: the check-run names MUST be exact. */
export const PR_CHECK_NAMES = [
  'catalog-bot/permissions',
  'catalog-bot/validate',
  'catalog-bot/upgrade-graph',
  'catalog-bot/dependencies',
  'catalog-bot/crd-upgrade',
  'catalog-bot/images',
  'catalog-bot/templates',
] as const;

/** Whether a conclusion lets a merge go: neutral is GitHub's "passed, with a note" (a registry that could not be asked). */
export function isGreen(conclusion: string | null | undefined): boolean {
  return conclusion === 'success' || conclusion === 'neutral';
}

/** GitHub's limits: output text 65535 characters, 50 annotations per request. */
export const MAX_TEXT = 65_535;
export const ANNOTATIONS_PER_REQUEST = 50;

export interface RepoRef {
  owner: string;
  repo: string;
}

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
  octokit: Octokit,
  ref: RepoRef,
  headSha: string,
  names: readonly string[] = PR_CHECK_NAMES,
  options: { externalId?: string; again?: boolean } = {},
): Promise<Map<string, number>> {
  const { externalId, again } = options;
  const runs = new Map<string, number>();
  if (externalId !== undefined && again) {
    const existing = await octokit.paginate(octokit.rest.checks.listForRef, {
      ...ref,
      ref: headSha,
      filter: 'all',
      per_page: 100,
    });
    for (const r of existing)
      if (r.external_id === externalId && names.includes(r.name) && !runs.has(r.name)) runs.set(r.name, r.id);
  }
  const startedAt = new Date().toISOString();
  await Promise.all(
    names
      .filter((name) => !runs.has(name))
      .map(async (name) => {
        const { data } = await octokit.rest.checks.create({
          ...ref,
          name,
          head_sha: headSha,
          status: 'in_progress',
          started_at: startedAt,
          ...(externalId !== undefined ? { external_id: externalId } : {}),
          output: { title: 'Checking…', summary: 'catalog-bot is checking this pull request.' },
        });
        runs.set(name, data.id);
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
}

/** Complete a check run; annotations go in batches of 50, the last request completes it. */
export async function completeCheckRun(
  octokit: Octokit,
  ref: RepoRef,
  id: number,
  c: Completion,
): Promise<void> {
  const title = truncate(c.title, 255);
  // The pull-request checks cap their annotations and say how to list the rest
  // (capAnnotations); this keeps every other caller within the same few requests.
  const more = (c.annotations?.length ?? 0) - MAX_ANNOTATIONS;
  const summary = truncate(
    more > 0
      ? `> **${more} more findings are not shown as annotations** (at most ${MAX_ANNOTATIONS} per check run).\n\n${c.summary}`
      : c.summary,
  );
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
  for (const [i, batch] of batches.entries()) {
    const last = i === batches.length - 1;
    await octokit.rest.checks.update({
      ...ref,
      check_run_id: id,
      ...(last
        ? { status: 'completed' as const, conclusion: c.conclusion, completed_at: new Date().toISOString() }
        : {}),
      output: { title, summary, ...(batch.length > 0 ? { annotations: batch } : {}) },
    });
  }
}

/** Complete every run with the same outcome (errors, superseded heads). */
export async function completeAll(
  octokit: Octokit,
  ref: RepoRef,
  runs: Map<string, number>,
  c: Completion,
): Promise<void> {
  await Promise.all([...runs.values()].map((id) => completeCheckRun(octokit, ref, id, c)));
}
