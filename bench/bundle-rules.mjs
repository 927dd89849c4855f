// `catalog-bot bundle validate` on every bundle directory of a community-operators-prod
// snapshot in one run (docs/bundle-rules.md): the built CLI as an author or CI runs it, the
// community suite, the package-wide rules reading each package's other bundles. Prints the
// median wall time of `runs` runs (Node's start included) and what was found.
//
//   node bench/bundle-rules.mjs <community-operators-prod snapshot> [runs]    (after npm run build)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [snapshot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dirs = readdirSync(join(snapshot, 'operators'))
  .sort()
  .flatMap((pkg) =>
    readdirSync(join(snapshot, 'operators', pkg))
      .sort()
      .filter((v) => existsSync(join(snapshot, 'operators', pkg, v, 'manifests')))
      .map((v) => `operators/${pkg}/${v}`),
  );
const times = [];
let report;
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  const r = spawnSync(process.execPath, [cli, 'bundle', 'validate', ...dirs, '--format', 'json'], {
    cwd: snapshot,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  times.push(performance.now() - started);
  if (r.status !== 0 && r.status !== 1) throw new Error(`bundle validate exited ${r.status}: ${r.stderr}`);
  report = JSON.parse(r.stdout);
}
const findings = report.bundles.flatMap((b) => b.findings);
const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
process.stdout.write(
  JSON.stringify({
    bundles: report.bundles.length,
    packages: new Set(report.bundles.map((b) => b.package)).size,
    errors: findings.filter((f) => f.level === 'error').length,
    warnings: findings.filter((f) => f.level === 'warning').length,
    median,
    min: Math.min(...times),
  }),
);
