// When a benchmark round of the App counts (bench/app.mjs, bench/bundle.mjs): the check
// runs one delivery's job wrote on the head. Kept apart from the App harness so that
// test/bench-smoke.test.ts can check it without starting anything.
import { ALWAYS_CHECK_NAMES, PR_CHECK_NAMES } from '../dist/handlers/check-runs.js';

/** The title of the runs a job completes when it could not check (src/handlers/pull-request.ts). */
const COULD_NOT_CHECK = 'catalog-bot could not check this pull request';

/**
 * What one delivery's job wrote on the head: an error unless every run is completed, each
 * check at most once, every check that always applies is there, and none says the job
 * could not check (a failed job is not a measurement).
 */
export function roundProblem(runs) {
  if (runs.length === 0) return 'no check runs were written';
  const names = runs.map((r) => r.name);
  const open = runs.filter((r) => r.status !== 'completed');
  if (open.length > 0)
    return `${open.length} check runs not completed: ${open.map((r) => r.name).join(', ')}`;
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length > 0) return `check runs written twice: ${twice.join(', ')}`;
  const unknown = names.filter((n) => !PR_CHECK_NAMES.includes(n));
  if (unknown.length > 0) return `unknown check runs: ${unknown.join(', ')}`;
  const failed = runs.filter((r) => r.output?.title === COULD_NOT_CHECK);
  if (failed.length > 0)
    return `the job did not run the checks: ${failed[0].output?.summary?.replace(/\s+/g, ' ').slice(0, 400)}`;
  const missing = ALWAYS_CHECK_NAMES.filter((n) => !names.includes(n));
  if (missing.length > 0) return `check runs missing: ${missing.join(', ')}`;
  return undefined;
}
