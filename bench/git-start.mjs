// What starting git costs the App (src/git/helper.ts): a process that holds decoded catalogs
// (real catalogs loaded, each `copies` times, and kept in memory) runs `git rev-parse HEAD` N times, started
// straight from itself with child_process and through the git helper (runGit), in a
// repository of one commit. Prints JSON:
// per run, the wall time and how long this process's event loop was blocked.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';
import { runGit } from '../dist/git/run.js';

const [runsArg, copiesArg, ...catalogs] = process.argv.slice(2);
const runs = Number(runsArg ?? 100);
// The App holds several jobs' catalogs at once: each catalog is loaded (and kept) this often.
const copies = Number(copiesArg ?? 1);
// A repository of one commit: what git is asked costs nothing, its start is all there is.
const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-git-'));
process.on('exit', () => rmSync(repo, { recursive: true, force: true }));
const id = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com'];
for (const args of [
  ['init', '-q'],
  [...id, 'commit', '-q', '--allow-empty', '-m', 'one'],
])
  spawnSync('git', ['-C', repo, ...args], { stdio: 'ignore' });
const held = [];
for (let k = 0; k < copies; k++)
  for (const root of catalogs) held.push(await validateCatalog(new DirectorySource(root)));
globalThis.gc?.();

const direct = () =>
  new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repo, 'rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.resume();
    child
      .on('error', reject)
      .on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
const helper = () => runGit(repo, ['rev-parse', 'HEAD']);

async function time(start) {
  await start(); // the helper starts on its first run: not counted
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t = performance.now();
  for (let i = 0; i < runs; i++) await start();
  const ms = (performance.now() - t) / runs;
  delay.disable();
  return { msPerRun: ms, loopMaxMs: delay.max / 1e6, loopMeanMs: delay.mean / 1e6 };
}

const rssMiB = process.memoryUsage().rss / 2 ** 20;
const results = { rssMiB, copies, blobs: held.reduce((n, r) => n + r.config.bundles.length, 0), runs };
results.direct = await time(direct);
results.helper = await time(helper);
process.stdout.write(JSON.stringify(results));
