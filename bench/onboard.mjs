// Onboarding a package from the bundle index to FBC: `catalog-bot onboard` (whole process,
// as a maintainer runs it, --dry-run so every run starts from the same tree) on the largest
// real onboarding case (most bundle directories), from its bundle directories alone and
// with --index for every catalog. The pipeline's converter renders each published index
// with opm (podman, a registry login), about 40 s per OpenShift version; opm itself has no
// index-add emulation any more (SQLite support was dropped), so there is no opm run to pair.
//
//   node bench/onboard.mjs <onboarding cases dir> [runs]    (after npm run build)
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const [casesDir, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);

const bundleDirs = (c) => {
  const ops = join(casesDir, c, 'before', 'operators');
  const pkg = readdirSync(ops)[0];
  return readdirSync(join(ops, pkg)).filter((d) => existsSync(join(ops, pkg, d, 'manifests'))).length;
};
const cases = readdirSync(casesDir).filter((c) => existsSync(join(casesDir, c, 'case.yaml')));
const largest = cases.reduce((a, b) => (bundleDirs(a) >= bundleDirs(b) ? a : b));
const pkg = /^package: (\S+)$/m.exec(readFileSync(join(casesDir, largest, 'case.yaml'), 'utf8'))[1];
const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-onboard-'));
try {
  const repo = join(work, 'repo');
  cpSync(join(casesDir, largest, 'before'), repo, { recursive: true });
  mkdirSync(join(repo, '.github'));
  writeFileSync(join(repo, '.github', 'catalog-bot.yml'), 'catalogs: [catalogs/*]\n');
  const catalogs = readdirSync(join(repo, 'catalogs'));
  // The index stand-ins: each catalog as the pipeline wrote it from the published index.
  const index = [];
  for (const v of catalogs) {
    const dir = join(work, `index-${v}`);
    cpSync(join(repo, 'catalogs', v), dir, { recursive: true });
    const served = join(casesDir, largest, 'expected', 'catalogs', v, pkg);
    if (existsSync(served)) cpSync(served, join(dir, pkg), { recursive: true });
    index.push('--index', `${v}=${dir}`);
  }
  const time = (args) => {
    const ms = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      const r = spawnSync(
        process.execPath,
        [cli, 'onboard', pkg, '--repo', repo, '--dry-run', '--format', 'json', ...args],
        {
          encoding: 'utf8',
          maxBuffer: 64 * 2 ** 20,
        },
      );
      ms.push(performance.now() - start);
      if (r.status !== 0) throw new Error(`onboard exited ${r.status}: ${r.stderr}`);
    }
    return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)];
  };
  const fromDirectories = time([]);
  const withIndex = time(index);
  process.stdout.write(
    JSON.stringify({
      case: largest,
      package: pkg,
      bundles: bundleDirs(largest),
      catalogs: catalogs.length,
      runs,
      fromDirectories,
      withIndex,
    }),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
