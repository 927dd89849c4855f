// The App benchmark (bench/app.mjs) still measures what it says: webhook -> completed check
// runs, with the App as it is (runs created completed in one write), against the fake GitHub
// API server the tests use. One round on the example catalog, so it stays small; the figures
// themselves come from `npm run bench` (bench/results.md). Uses dist/: `npm run build` first.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALWAYS_CHECK_NAMES, PR_CHECK_NAMES } from '../src/handlers/check-runs.js';

const project = fileURLToPath(new URL('..', import.meta.url));
const catalog = fileURLToPath(new URL('../examples/catalog-repo/base/catalogs/v4.21', import.meta.url));

interface Run {
  name: string;
  status: string;
  conclusion: string | null;
  output?: { title?: string; summary?: string };
}
type RoundProblem = (runs: Run[]) => string | undefined;

async function roundProblem(): Promise<RoundProblem> {
  // A plain-Node bench module: imported by path (it has no types).
  const path = `${project}bench/check-round.mjs`;
  return ((await import(path)) as { roundProblem: RoundProblem }).roundProblem;
}

const completed = (name: string, conclusion = 'success', title = 'ok'): Run => ({
  name,
  status: 'completed',
  conclusion,
  output: { title },
});

describe('bench/app.mjs', () => {
  it('times a pull request from webhook to its completed check runs, created completed', () => {
    const r = spawnSync(process.execPath, ['bench/app.mjs', catalog, '1', '3', 'example-operator'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as Record<string, number>;
    // Every check that always applies wrote one completed run, at most one per check.
    expect(result.checkRuns).toBeGreaterThanOrEqual(ALWAYS_CHECK_NAMES.length);
    expect(result.checkRuns).toBeLessThanOrEqual(PR_CHECK_NAMES.length);
    expect(result.firstRun).toBeGreaterThan(0);
    expect(result.total).toBeGreaterThan(0);
    expect(result.answers).toBe(3);
    expect(result.answerMax).toBeGreaterThanOrEqual(result.answerP50!);
  }, 30_000);

  it('counts a round only when every check that applies completed once, and the job ran them', async () => {
    const problem = await roundProblem();
    const all = ALWAYS_CHECK_NAMES.map((n) => completed(n));
    expect(problem(all)).toBeUndefined();
    expect(problem([])).toMatch(/no check runs/);
    expect(problem(all.slice(1))).toMatch(new RegExp(`missing: ${ALWAYS_CHECK_NAMES[0]}`));
    expect(problem([...all, completed(ALWAYS_CHECK_NAMES[0]!)])).toMatch(/written twice/);
    expect(problem([{ ...all[0]!, status: 'in_progress', conclusion: null }, ...all.slice(1)])).toMatch(
      /not completed/,
    );
    // What a job that could not check writes: every run failed, with the reason.
    const failed = ALWAYS_CHECK_NAMES.map((n) =>
      completed(n, 'failure', 'catalog-bot could not check this pull request'),
    );
    expect(problem(failed)).toMatch(/did not run the checks/);
  });
});
