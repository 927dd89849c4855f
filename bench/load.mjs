// Load benchmark (issue 9): webhook deliveries for many pull requests across many
// repositories, sent to two `node dist/server.js` replicas that share a real redis-server;
// GitHub's API is the local fake (test/helpers/github-server.ts) over HTTP. Everything is
// on 127.0.0.1, bounded in count and time, and every process is stopped at the end.
//
// Checks that every pull request ends with exactly one completed set of catalog-bot check
// runs on its final head (none lost, none duplicated) and reports the webhook answer time
// (HTTP round trip of a delivery) and the end-to-end latency (final head's delivery sent ->
// its last check run completed), and the writes GitHub accepted per pull request. The fake
// paces writes like github.com (one a second per installation, sooner is a secondary rate
// limit) and the replicas pace theirs as the App does by default (docs/github-limits.md);
// LOAD_PACING=off turns both off.
//
//   node bench/load.mjs [deliveries] [prs] [repos]      (after npm run build)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { PR_CHECK_NAMES } from '../dist/handlers/check-runs.js';

const project = fileURLToPath(new URL('..', import.meta.url));

/** The fleet helpers are TypeScript (shared with the tests): transpile them next to node_modules. */
export async function loadFleet() {
  const out = join(project, 'node_modules', '.cache', 'catalog-bot-fleet');
  mkdirSync(out, { recursive: true });
  for (const name of ['github-model', 'github-server', 'fleet']) {
    const source = readFileSync(join(project, 'test', 'helpers', `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeFileSync(join(out, `${name}.js`), outputText);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  return import(pathToFileURL(join(out, 'fleet.js')).href);
}

const fmt = (ms) => (Number.isFinite(ms) ? ms.toFixed(ms < 10 ? 1 : 0) : 'n/a');

/**
 * Run the load. `deliveries` are spread evenly over `prs` pull requests (the first of each
 * is `opened`, the rest `synchronize` with the head moved on) in `repos` repositories.
 */
export async function benchLoad({
  /** Pace writes like github.com (the fake) and as the App does by default (the replicas). */
  pace = true,
  // Paced, writes take about a second each: fewer pull requests by default.
  deliveries = pace ? 200 : 1000,
  prs = pace ? 40 : 200,
  repos = pace ? 4 : 20,
  replicas = 2,
  timeoutMs = 10 * 60_000,
  concurrency = 16,
  /** CATALOG_BOT_ROLE per replica; deliveries go to the ones that answer webhooks (web, all). */
  roles,
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const { Fleet, haveRedis, percentile, until } = await loadFleet();
  if (!haveRedis()) throw new Error('redis-server is not installed');
  if (prs % repos !== 0) throw new Error('prs must be a multiple of repos');
  const heads = Math.ceil(deliveries / prs);
  const started = Date.now();
  const deadline = started + timeoutMs;
  const fleet = await Fleet.start({
    repos,
    prsPerRepo: prs / repos,
    headsPerPr: heads,
    replicas,
    server: join(project, 'dist', 'server.js'),
    ...(roles ? { roles } : {}),
    // The App's default: its writes paced (the fleet turns that off unless asked).
    env: { LOG_LEVEL: 'warn', ...(pace ? { CATALOG_BOT_WRITE_PACING: 'on' } : {}) },
  });
  if (pace) fleet.gh.paceWrites({ minGapMs: 1000 });
  const hardStop = setTimeout(() => {
    log('load: hard timeout, stopping everything');
    void fleet.stop(500).finally(() => process.exit(2));
  }, timeoutMs + 30_000);
  try {
    log(`load: ${repos} repositories, ${prs} pull requests, ${heads} heads each, ${replicas} replicas`);
    // Round k moves every pull request to its k-th head, in a shuffled order; deliveries
    // alternate between the replicas and up to `concurrency` are in flight.
    const plan = [];
    for (let k = 0; k < heads; k++) {
      const round = fleet.prs.filter(() => plan.length < deliveries);
      for (let i = round.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [round[i], round[j]] = [round[j], round[i]];
      }
      for (const pr of round) if (plan.length < deliveries) plan.push(pr);
    }
    const front = [...Array(replicas).keys()].filter((i) => (roles?.[i] ?? 'all') !== 'worker');
    const busy = new Set(); // one delivery in flight per pull request keeps its heads in order
    let sent = 0;
    let refused = 0;
    const sendStarted = Date.now();
    const workers = Array.from({ length: concurrency }, async () => {
      while (plan.length > 0 && Date.now() < deadline) {
        const index = plan.findIndex((pr) => !busy.has(pr));
        if (index < 0) {
          await new Promise((r) => setTimeout(r, 1));
          continue;
        }
        const [pr] = plan.splice(index, 1);
        busy.add(pr);
        const n = sent++;
        const { status } = await fleet.advance(pr, front[n % front.length]);
        if (status !== 200) refused++;
        busy.delete(pr);
      }
    });
    await Promise.all(workers);
    const sendMs = Date.now() - sendStarted;
    log(`load: ${sent} deliveries sent in ${(sendMs / 1000).toFixed(1)} s; waiting for the checks`);
    // Every final head checked and the shared queue idle (nothing left that could add a run).
    const settled = await until(
      () => fleet.settled(PR_CHECK_NAMES) && fleet.queueIdle(),
      Math.max(0, deadline - Date.now()),
      250,
    );
    const problems = fleet.verify(PR_CHECK_NAMES);
    const e2e = fleet.endToEnd();
    const runs = fleet.gh.checkRuns;
    const figures = {
      deliveries: sent,
      refused,
      prs,
      repos,
      replicas,
      roles: roles ?? [...Array(replicas)].map(() => 'all'),
      settled,
      problems: problems.length,
      problemSample: problems.slice(0, 10),
      answerP50: percentile(fleet.answers, 50),
      answerP99: percentile(fleet.answers, 99),
      answerMax: Math.max(...fleet.answers),
      e2eP50: percentile(e2e, 50),
      e2eP99: percentile(e2e, 99),
      e2eMax: Math.max(...e2e),
      sendSeconds: sendMs / 1000,
      totalSeconds: (Date.now() - started) / 1000,
      checkRuns: runs.length,
      completedFinal: fleet.prs.reduce(
        (n, pr) =>
          n +
          fleet.finalRuns(pr).filter((r) => r.status === 'completed' && r.conclusion !== 'skipped').length,
        0,
      ),
      skipped: runs.filter((r) => r.conclusion === 'skipped').length,
      apiRequests: fleet.gh.requests.length,
      pace,
      writes: fleet.gh.writes.length,
      refusedWrites: fleet.gh.requests.filter((r) => r.status === 403 && r.method !== 'GET').length,
    };
    return figures;
  } finally {
    clearTimeout(hardStop);
    await fleet.stop();
  }
}

export function loadTable(f) {
  return [
    `| ${f.deliveries} deliveries, ${f.prs} PRs, ${f.repos} repos, replicas: ${f.roles.join(' + ')} | value |`,
    '|---|---|',
    `| webhook answer p50 / p99 / max (ms) | ${fmt(f.answerP50)} / ${fmt(f.answerP99)} / ${fmt(f.answerMax)} |`,
    `| end-to-end, final heads, p50 / p99 / max (ms) | ${fmt(f.e2eP50)} / ${fmt(f.e2eP99)} / ${fmt(f.e2eMax)} |`,
    `| deliveries sent in (s) | ${f.sendSeconds.toFixed(1)} |`,
    `| all final heads checked | ${f.settled ? 'yes' : 'no'} (${f.completedFinal} of ${f.prs * PR_CHECK_NAMES.length} runs) |`,
    `| problems (lost, duplicated, unfinished) | ${f.problems} |`,
    `| check runs created / of them skipped | ${f.checkRuns} / ${f.skipped} |`,
    `| GitHub API requests | ${f.apiRequests} |`,
    `| writes accepted (per pull request) / refused as too soon | ${f.writes} (${(f.writes / f.prs).toFixed(1)}) / ${f.refusedWrites} |`,
    `| writes paced (App and fake GitHub) | ${f.pace ? 'yes, one a second' : 'no'} |`,
    `| total wall time (s) | ${f.totalSeconds.toFixed(1)} |`,
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [deliveries, prs, repos] = process.argv.slice(2).map(Number);
  // LOAD_ROLES=web,worker,worker: a webhook-only replica in front of job workers.
  const roles = process.env.LOAD_ROLES?.split(',');
  const figures = await benchLoad({
    ...(roles ? { roles, replicas: roles.length } : {}),
    ...(deliveries ? { deliveries } : {}),
    ...(prs ? { prs } : {}),
    ...(repos ? { repos } : {}),
    pace: process.env.LOAD_PACING !== 'off',
  });
  process.stdout.write(`${loadTable(figures)}\n`);
  if (figures.problemSample.length > 0) process.stderr.write(`${figures.problemSample.join('\n')}\n`);
  process.exit(figures.settled && figures.problems === 0 && figures.refused === 0 ? 0 : 1);
}
