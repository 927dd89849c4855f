// The static checks of `npm test` (type-check, lint, format check), run side by side: each
// is one process that mostly uses one core, so together they take about as long as the
// slowest instead of the sum. `--build` runs the build (dist/, which the system tests run)
// beside them too: on two cores it ends while the others still run, instead of before them.
// Output is printed per check when it ends; exit 1 if any fails.
import { spawn } from 'node:child_process';

const CHECKS = [
  ...(process.argv.includes('--build') ? [['build', 'tsc', ['-p', 'tsconfig.build.json']]] : []),
  ['type-check', 'tsc', ['-p', 'tsconfig.json', '--noEmit']],
  ['lint', 'eslint', ['.']],
  ['format check', 'prettier', ['--check', '--log-level', 'warn', '.']],
];

const results = await Promise.all(
  CHECKS.map(
    ([name, bin, args]) =>
      new Promise((resolve) => {
        const started = Date.now();
        const child = spawn('npx', ['--no-install', bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        child.on('error', (e) => resolve({ name, ok: false, output: String(e), ms: Date.now() - started }));
        child.on('close', (code) => resolve({ name, ok: code === 0, output, ms: Date.now() - started }));
      }),
  ),
);

for (const r of results) {
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${(r.ms / 1000).toFixed(1)} s)`);
  if (r.output.trim()) console.log(r.output.trimEnd());
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
