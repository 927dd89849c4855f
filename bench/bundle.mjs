// The App, end to end, on a bundle pull request: a repository holding the real clusterpulse
// package of community-operators-prod (its bundle directories, ci.yaml, semver template,
// and its catalogs in 6 OpenShift versions, v4.17 to v4.22) gets a pull request that adds
// one bundle directory (1.0.3: the 1.0.2 bundle with its version raised). GitHub's API is
// the fake API server the tests use (test/helpers/github-server.ts, over HTTP); git, the
// mirror, every check, the in-memory release of the bundle to the 6 catalogs and the
// check-run writes are real. Measures the time from the signed webhook to the last check
// run completed, with the mirror already cached.
//
//   node bench/bundle.mjs <community-operators-prod snapshot> [rounds]    (after npm run build)
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
import { git, startBenchApp } from './github-app.mjs';

const [snapshot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const pkg = 'clusterpulse';
const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-bundle-'));

try {
  const src = join(work, 'src');
  git(work, 'init', '-q', '-b', 'main', src);
  cpSync(join(snapshot, 'operators', pkg), join(src, 'operators', pkg), { recursive: true });
  let catalogs = 0;
  for (const v of readdirSync(join(snapshot, 'catalogs'))) {
    const from = join(snapshot, 'catalogs', v, pkg);
    if (!existsSync(from)) continue;
    cpSync(from, join(src, 'catalogs', v, pkg), { recursive: true });
    catalogs++;
  }
  // The repository's config as the README documents it for community-operators-prod: a
  // package's ci.yaml reviewers own its files, so its reviewer's bundle PR needs no approval.
  mkdirSync(join(src, '.github'));
  writeFileSync(
    join(src, '.github', 'catalog-bot.yml'),
    'catalogs: [catalogs/*]\nmaintainers: [Allda]\nownership:\n  packageOwners: operators/{package}/ci.yaml\n  newPackages: maintainers\n',
  );
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'base');
  const base = git(src, 'rev-parse', 'HEAD');
  const from = join(src, 'operators', pkg, '1.0.2');
  const to = join(src, 'operators', pkg, '1.0.3');
  cpSync(from, to, { recursive: true });
  const csv = join(to, 'manifests', `${pkg}.clusterserviceversion.yaml`);
  writeFileSync(csv, readFileSync(csv, 'utf8').replaceAll('1.0.2', '1.0.3'));
  git(src, 'add', '-A');
  git(src, 'commit', '-qm', 'head: bundle 1.0.3');
  const head = git(src, 'rev-parse', 'HEAD');
  const bare = join(work, 'repo.git');
  git(work, 'clone', '-q', '--bare', src, bare);
  git(bare, 'update-ref', 'refs/pull/1/head', head);

  const app = await startBenchApp({ work, bare, base, head, author: 'asamoorerh' });
  try {
    const totals = [];
    let bundle;
    for (let i = 0; i <= runs; i++) {
      const { ms, runs: written } = await app.round(`bench-bundle-${i}`);
      bundle = written.find((r) => r.name === 'catalog-bot/bundle');
      // The measurement counts only when the bundle was released to every catalog in the check.
      if (bundle?.conclusion !== 'success' || !/catalog update of \d+ files/.test(bundle.output?.title ?? ''))
        throw new Error(
          `run ${i}: catalog-bot/bundle ${bundle?.conclusion}: ${bundle?.output?.title} (runs: ${written.map((r) => `${r.name} ${r.conclusion} ${r.output?.title}`).join('; ')})`,
        );
      totals.push(ms);
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    process.stdout.write(
      JSON.stringify({
        package: pkg,
        catalogs,
        title: bundle.output.title,
        firstRun: totals[0],
        total: runs > 0 ? median(totals.slice(1)) : totals[0],
      }),
    );
  } finally {
    await app.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
