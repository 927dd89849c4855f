// Timings of `catalog-bot impact` (docs/impact.md) on a real release pull request: the
// clusterpulse 1.0.2 release of community-operators-prod, whose catalog commit rewrites five
// identical catalogs (HISTORY.md of the real-repo data). The repository is rebuilt from the
// data: main is the state before the release (the later promotion and the release's catalog
// patch reversed), the release branch applies the release's catalog patch. Compared, in the
// same run, with what a reviewer could do without it: `opm render` of every changed catalog
// at both commits and a `diff -u` of the two renders. Prints JSON.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [realRepo, opm, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 3);
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const history = join(realRepo, '..', 'history');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const RELEASE = 'clusterpulse-1.0.2-catalog';
const LATER = ['clusterpulse-promote-v4.22'];

const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-impact-'));
const repo = join(dir, 'repo');
const git = (...args) =>
  execFileSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });

function timed(fn) {
  const times = [];
  let last;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    last = fn();
    times.push(performance.now() - t);
  }
  return { ms: median(times), last };
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, ...options });
  if (r.status !== 0 && !(options.okStatus ?? [0]).includes(r.status))
    throw new Error(`${command} ${args.join(' ')}: ${r.stderr.slice(-500)}`);
  return r.stdout;
}

try {
  mkdirSync(repo);
  git('init', '-q', '-b', 'main');
  cpSync(join(realRepo, 'catalogs'), join(repo, 'catalogs'), { recursive: true });
  mkdirSync(join(repo, '.github'));
  writeFileSync(join(repo, '.github', 'catalog-bot.yml'), 'catalogs: [catalogs/*]\n');
  for (const p of [...LATER, RELEASE])
    git('apply', '-R', '--include=catalogs/*', '--whitespace=nowarn', join(history, `${p}.patch`));
  git('add', '-A');
  git('commit', '-qm', 'before the release');
  git('checkout', '-qb', 'release');
  git('apply', '--include=catalogs/*', '--whitespace=nowarn', join(history, `${RELEASE}.patch`));
  git('commit', '-qam', 'the release');
  const changed = git('diff', '--name-only', 'main', 'release').trim().split('\n');
  const roots = [...new Set(changed.map((f) => f.split('/').slice(0, 2).join('/')))].sort();
  const gitDiffLines = git('diff', 'main', 'release').split('\n').length;

  const impactAs = (format) =>
    run(process.execPath, [
      cli,
      'impact',
      '--repo',
      repo,
      '--base',
      'main',
      '--head',
      'release',
      '--format',
      format,
    ]);
  const impact = timed(() => impactAs('json'));
  const markdown = impactAs('markdown');

  // Both sides checked out once (a reviewer has them), outside the timing.
  const sides = {};
  for (const side of ['main', 'release']) {
    sides[side] = join(dir, side);
    mkdirSync(sides[side]);
    execFileSync('sh', ['-c', `git -C "${repo}" archive ${side} catalogs | tar -x -C "${sides[side]}"`]);
  }
  const opmDiff = timed(() => {
    let lines = 0;
    for (const root of roots) {
      const before = join(dir, `before-${root.replace('/', '_')}.json`);
      const after = join(dir, `after-${root.replace('/', '_')}.json`);
      writeFileSync(before, run(opm, ['render', join(sides.main, root), '-o', 'json']));
      writeFileSync(after, run(opm, ['render', join(sides.release, root), '-o', 'json']));
      lines += run('diff', ['-u', before, after], { okStatus: [0, 1] }).split('\n').length;
    }
    return lines;
  });
  process.stdout.write(
    JSON.stringify({
      release: 'clusterpulse 1.0.2',
      catalogs: roots.length,
      filesChanged: changed.length,
      gitDiffLines,
      impactMs: impact.ms,
      impactJsonBytes: Buffer.byteLength(impact.last),
      impactMarkdownLines: markdown.split('\n').length,
      opmDiffMs: opmDiff.ms,
      renderDiffLines: opmDiff.last,
    }) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
