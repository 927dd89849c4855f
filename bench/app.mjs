// The App, end to end: a pull request that changes one package of a repository holding
// community-operators-prod v4.21. GitHub's API is the fake API server the tests use
// (test/helpers/github-server.ts, over HTTP); git, the mirror, the checks and the check-run
// writes are real. Measures the webhook answer and the time until the last check run is
// completed (each created completed in one write), with the mirror already cached. The
// webhooks go through the real HTTP server (the one `npm start` runs), signed.
//
//   node bench/app.mjs <catalog root> [rounds] [answers] [package]    (after npm run build)
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, startBenchApp } from './github-app.mjs';

const [catalogRoot, runsArg, answersArg, pkgArg] = process.argv.slice(2);
if (!catalogRoot) throw new Error('usage: node bench/app.mjs <catalog root> [rounds] [answers] [package]');
const runs = Number(runsArg ?? 5);
const answerRuns = Number(answersArg ?? 200);
const pkg = pkgArg ?? 'kepler-operator';
const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-app-'));

try {
  // A repository whose pull request adds a skipRange to one package's head entry.
  const src = join(work, 'src');
  git(work, 'init', '-q', '-b', 'main', src);
  cpSync(catalogRoot, join(src, 'catalogs', 'v4.21'), { recursive: true });
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'base');
  const base = git(src, 'rev-parse', 'HEAD');
  const file = join(src, `catalogs/v4.21/${pkg}/catalog.yaml`);
  const before = readFileSync(file, 'utf8');
  const entry = new RegExp(`^( *)(- name: ${pkg.replace(/[.]/g, '\\.')}\\.v[^\\n]+)$`, 'm');
  if (!entry.test(before)) throw new Error(`no channel entry of ${pkg} in ${file}`);
  writeFileSync(file, before.replace(entry, "$1$2\n$1  skipRange: '>=0.0.1 <0.0.2'"));
  git(src, 'commit', '-qam', 'head');
  const head = git(src, 'rev-parse', 'HEAD');
  const bare = join(work, 'repo.git');
  git(work, 'clone', '-q', '--bare', src, bare);
  git(bare, 'update-ref', 'refs/pull/1/head', head);

  const app = await startBenchApp({ work, bare, base, head, author: 'alice' });
  try {
    const totals = [];
    let checkRuns = 0;
    let validateTitle = '';
    for (let i = 0; i <= runs; i++) {
      const { ms, runs: written } = await app.round(`bench-${i}`);
      // The change must reach the checks: a pull request that changes nothing measures nothing.
      const validate = written.find((r) => r.name === 'catalog-bot/validate');
      if (!validate || /No catalog changed/.test(validate.output?.title ?? ''))
        throw new Error(
          `round ${i}: catalog-bot/validate did not check the change: ${validate?.output?.title}`,
        );
      totals.push(ms);
      checkRuns = written.length;
      validateTitle = validate.output?.title ?? '';
    }
    // Webhook answers while the queue is busy: synchronize events whose head has already
    // moved on (the job finds that out from the API and drops it), sent back to back.
    const stale = JSON.stringify({
      ...app.payload,
      action: 'synchronize',
      pull_request: {
        ...app.payload.pull_request,
        head: { ...app.payload.pull_request.head, sha: '0'.repeat(40) },
      },
    });
    const answers = [];
    for (let i = 0; i < answerRuns; i++) answers.push(await app.deliver(`answer-${i}`, stale));
    await app.queue.onIdle();
    const sorted = [...answers].sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
    // The first run clones the mirror; the rest find it cached.
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    process.stdout.write(
      JSON.stringify({
        checkRuns,
        validate: validateTitle,
        firstRun: totals[0],
        total: runs > 0 ? median(totals.slice(1)) : totals[0],
        answers: answerRuns,
        answerP50: pct(50),
        answerP99: pct(99),
        answerMax: sorted[sorted.length - 1],
        requests: app.gh.requests.length,
      }),
    );
  } finally {
    await app.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
