// npm run bench: load + validate every real catalog with catalog-bot and with the real
// opm, in the same run, and write the table to bench/results.md.
//
// Wall times are for whole processes (`catalog-bot validate` vs `opm validate`), as a
// user or CI runs them. "warm" is validateCatalog() inside one running process, as the
// app does for each pull request.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const project = join(here, '..');
const shared = join(project, '..', 'shared');
const opm = join(shared, 'tools', 'opm', 'opm');
const cli = join(project, 'dist', 'cli.js');
const measure = join(here, 'measure.mjs');
const runs = Number(process.env.BENCH_RUNS ?? 7);

const catalogsDir = join(shared, 'data', 'real-catalogs');
const roots = readdirSync(catalogsDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((repo) =>
    readdirSync(join(catalogsDir, repo.name, 'catalogs')).map((v) => ({
      name: `${repo.name}/${v}`,
      path: join(catalogsDir, repo.name, 'catalogs', v),
    })),
  );

function sizeOf(dir) {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    bytes += e.isDirectory() ? sizeOf(p) : statSync(p).size;
  }
  return bytes;
}

// One package of the largest catalog: its largest package directory (the worst case).
const largest = roots.reduce((a, b) => (sizeOf(a.path) >= sizeOf(b.path) ? a : b));
const v421 = roots.find((r) => r.name.endsWith('v4.21')) ?? largest;
const packageDirs = readdirSync(v421.path).map((p) => ({
  name: `${v421.name}/${p}`,
  path: join(v421.path, p),
}));
const bySize = [...packageDirs].sort((a, b) => sizeOf(a.path) - sizeOf(b.path));
const largestPackage = bySize[bySize.length - 1];
const medianPackage = bySize[Math.floor(bySize.length / 2)];

// A catalog several times larger than any real one: copies of every package of the
// bundle-object catalog (v4.16) under new package names. Its memory use shows whether
// memory grows with the bundle manifests, which are checked and then dropped.
const SCALE = Number(process.env.BENCH_SCALE ?? 8);
function scaledCatalog(source, copies) {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-'));
  for (const pkgDir of readdirSync(source)) {
    for (const file of readdirSync(join(source, pkgDir))) {
      const text = readFileSync(join(source, pkgDir, file), 'utf8');
      const name =
        /^name: (\S+)\n(?:[^-].*\n)*?schema: olm\.package$|^schema: olm\.package\n(?:[^-].*\n)*?name: (\S+)$/m.exec(
          text,
        );
      const pkg = name?.[1] ?? name?.[2];
      if (!pkg) throw new Error(`no olm.package in ${pkgDir}/${file}`);
      for (let k = 0; k < copies; k++) {
        const renamed = `${pkg}x${k}`;
        const fieldRe = new RegExp(
          `^(\\s*(?:- )?(?:name|package|packageName): )${pkg.replace(/[.]/g, '\\.')}$`,
          'gm',
        );
        mkdirSync(join(dir, `${pkgDir}-${k}`), { recursive: true });
        writeFileSync(join(dir, `${pkgDir}-${k}`, file), text.replace(fieldRe, `$1${renamed}`));
      }
    }
  }
  return dir;
}

/** The catalog with CRLF line ends (as a Windows editor saves it): the reader's other path. */
function crlfCatalog(source) {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-'));
  for (const pkgDir of readdirSync(source)) {
    mkdirSync(join(dir, pkgDir));
    for (const file of readdirSync(join(source, pkgDir))) {
      const text = readFileSync(join(source, pkgDir, file), 'utf8');
      writeFileSync(join(dir, pkgDir, file), /\.ya?ml$/.test(file) ? text.replace(/\n/g, '\r\n') : text);
    }
  }
  return dir;
}

const haveTime = existsSync('/usr/bin/time');

/** One run of a command: wall ms and peak RSS (MiB, null without /usr/bin/time). */
function runOnce(cmd, args) {
  const full = haveTime ? ['/usr/bin/time', ['-f', '%M', cmd, ...args]] : [cmd, args];
  const started = process.hrtime.bigint();
  const r = spawnSync(full[0], full[1], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  const rss = haveTime ? Number(r.stderr.trim().split('\n').pop()) / 1024 : null;
  return { ms, rss };
}

/**
 * Paired runs: each round runs both commands back to back (alternating which goes first),
 * so that both see the same machine load. Median wall ms and peak RSS of each, and the
 * median of the per-round ratios.
 */
function timePaired(ours, theirs) {
  const a = [];
  const b = [];
  const ratios = [];
  for (let i = 0; i < runs; i++) {
    let o;
    let t;
    if (i % 2 === 0) {
      o = runOnce(...ours);
      t = runOnce(...theirs);
    } else {
      t = runOnce(...theirs);
      o = runOnce(...ours);
    }
    a.push(o);
    b.push(t);
    ratios.push(o.ms / t.ms);
  }
  const peak = (xs) => (haveTime ? Math.max(...xs.map((x) => x.rss)) : null);
  return {
    ours: { ms: median(a.map((x) => x.ms)), rss: peak(a) },
    theirs: { ms: median(b.map((x) => x.ms)), rss: peak(b) },
    ratio: median(ratios),
  };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function warm(path) {
  const r = spawnSync(process.execPath, [measure, path, String(runs)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * A bench script run as its own process, its JSON answer parsed; a script that fails says
 * why (the end of its stderr) instead of leaving an unparsable answer.
 */
function runScript(script, args) {
  const r = spawnSync(process.execPath, [join(here, script), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0 || r.signal) {
    const why = (r.stderr || r.error?.message || '').trim().split('\n').slice(-12).join('\n');
    throw new Error(`${script} exited ${r.signal ?? r.status}: ${why || '(no output on stderr)'}`);
  }
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${script} printed no JSON answer: ${r.stdout.slice(0, 300)}`);
  }
}

// The parts, in the order of bench/results.md; `BENCH_ONLY=app,validate` runs only those.
const PARTS = [
  'validate',
  'graph',
  'site',
  'impact',
  'app',
  'bundle',
  'bundle-rules',
  'installability',
  'git',
  'ocp',
  'publish',
  'burst-publish',
  'serve',
  'templates',
  'onboard',
  'load',
];
const only = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
const unknown = only.filter((p) => !PARTS.includes(p));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown part ${unknown.join(', ')} in BENCH_ONLY (parts: ${PARTS.join(', ')})\n`,
  );
  process.exit(2);
}
const selected = only.length > 0 ? PARTS.filter((p) => only.includes(p)) : PARTS;

if (!existsSync(cli)) throw new Error('run `npm run build` first');
if (!existsSync(opm)) throw new Error(`the opm oracle is missing at ${opm}`);

const v416 = roots.find((r) => r.name.endsWith('v4.16')) ?? largest;
const temporary = [];
process.on('exit', () => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});
// Stopped by hand: still remove the temporary catalogs.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
let scaledOnce;
const scaled = () => {
  if (!scaledOnce) {
    scaledOnce = { name: `${v416.name} × ${SCALE} (synthetic)`, path: scaledCatalog(v416.path, SCALE) };
    temporary.push(scaledOnce.path);
  }
  return scaledOnce;
};

// Other work on the machine moves every figure; say how busy it was.
const startLoad = loadavg()[0].toFixed(1);

async function benchValidate() {
  const crlf = { name: `${v421.name} with CRLF line ends (synthetic)`, path: crlfCatalog(v421.path) };
  temporary.push(crlf.path);
  const rows = [];
  for (const target of [...roots, medianPackage, largestPackage, scaled(), crlf]) {
    const bytes = sizeOf(target.path);
    const { ours, theirs, ratio } = timePaired(
      [process.execPath, [cli, 'validate', target.path]],
      [opm, ['validate', target.path]],
    );
    const inProcess = warm(target.path);
    rows.push({ target, bytes, ours, theirs, ratio, inProcess, packageDir: packageDirs.includes(target) });
    process.stderr.write(
      `${target.name}: catalog-bot ${ours.ms.toFixed(0)} ms, opm ${theirs.ms.toFixed(0)} ms\n`,
    );
  }

  const mb = (b) => (b / 1e6).toFixed(1);
  const fmtRss = (x) => (x === null ? 'n/a' : x.toFixed(0));
  const header = [
    '| catalog | size MB | blobs | catalog-bot validate (ms) | opm validate (ms) | ratio | catalog-bot peak RSS (MiB) | opm peak RSS (MiB) | warm in-process (ms) | MB/s (warm) | blobs/s (warm) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const row = (r) =>
    `| ${r.target.name} | ${mb(r.bytes)} | ${r.inProcess.blobs} | ${r.ours.ms.toFixed(0)} | ${r.theirs.ms.toFixed(0)} | ` +
    `${r.ratio.toFixed(2)} | ${fmtRss(r.ours.rss)} | ${fmtRss(r.theirs.rss)} | ${r.inProcess.ms.toFixed(0)} | ` +
    `${(r.bytes / 1e6 / (r.inProcess.ms / 1000)).toFixed(0)} | ${Math.round(r.inProcess.blobs / (r.inProcess.ms / 1000))} |`;
  return [
    '# Benchmark: load + validate',
    '',
    `Measured by \`npm run bench\` (\`BENCH_ONLY=validate npm run bench\` for this table alone) on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ` +
      `${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${startLoad} when it started. Paired runs: ${runs} rounds per catalog, each running ` +
      '`catalog-bot validate` and `opm validate` as fresh processes back to back (alternating which goes first); ' +
      'times are medians, "ratio" is the median of the per-round ratios catalog-bot / opm (lower is better; the goal is 0.5), peak RSS is the highest of the rounds.',
    '',
    ...header,
    ...rows.filter((r) => !r.packageDir).map(row),
    '',
    'The synthetic row copies every package of ' +
      v416.name +
      ` ${SCALE} times under new names (bundle manifests included), to show that throughput and memory hold as a catalog grows.`,
    `The CRLF row is ${v421.name} with every YAML line ending in CRLF: the fast reader reads it as LF (README, "Benchmarks").`,
    '',
    '### Package directories (start-up dominated)',
    '',
    ...header,
    ...rows.filter((r) => r.packageDir).map(row),
    '',
    `Package directories of ${v421.name} (the median-sized one and the largest), as an incremental check of a pull request`,
    "that touches one package sees them. Here most of catalog-bot's time is starting Node and loading its code (about 0.1 s on",
    'this machine, against a few milliseconds for a Go binary), so the ratio says little about reading speed; the warm',
    'in-process column is what the App pays.',
    '"warm in-process" is `validateCatalog()` in a running process after one warm-up (what the app pays per PR).',
  ];
}

// Upgrade-graph checks on v4.21 (warm, on top of loading).
async function benchGraph() {
  const graph = runScript('graph.mjs', [v421.path, String(runs)]);
  return [
    '## Upgrade-graph checks',
    '',
    `On ${v421.name}, warm, on top of loading (median of ${runs}):`,
    '',
    '| what | time (ms) | findings |',
    '|---|---:|---:|',
    `| every graph check and the skipRange lint on every package | ${graph.allChecks.toFixed(1)} | ${graph.findings} |`,
    `| old vs new + graph checks for a change to one package (${graph.onePackageName}) | ${graph.onePackage.toFixed(2)} | ${graph.compareCount} |`,
  ];
}

// The static catalog site for v4.21 (docs/site.md): every package, channel and bundle page.
async function benchSite() {
  const site = runScript('site.mjs', [v421.path, opm, String(Math.min(runs, 3))]);
  const s = (ms) => (ms / 1000).toFixed(1);
  return [
    '## Catalog pages',
    '',
    `\`catalog-bot site\` on ${v421.name}: ${site.packages} packages, ${site.channels} channels (one SVG graph each), ${site.entries} channel entries; ${site.files} files, ${(site.bytes / 1e6).toFixed(1)} MB, the largest page ${(site.largestPage / 1e3).toFixed(0)} kB (median of ${Math.min(runs, 3)}):`,
    '',
    '| what | time (s) |',
    '|---|---:|',
    `| the whole site: \`catalog-bot site\` as a process (load, validate, lay out and write every page) | ${s(site.cliMs)} |`,
    `| the pages alone, on a loaded catalog (warm, in process) | ${s(site.pagesMs)} |`,
    `| for comparison: \`opm alpha render-graph\` on the same root (Mermaid text of every channel; drawing it needs mermaid-cli, and there are no pages) | ${s(site.opmMs)} |`,
    '',
    'Without the pages a reviewer reads the channel blobs of the catalog file (thousands of lines for the',
    'largest packages) or pastes render-graph output into a Mermaid renderer, one package at a time.',
  ];
}

// `catalog-bot impact` on a real release pull request (docs/impact.md), against opm render
// of both sides of every changed catalog and a diff of the renders, in the same run.
async function benchImpact() {
  const r = runScript('impact.mjs', [
    join(shared, 'data', 'real-repo', 'community-operators-prod'),
    opm,
    String(Math.min(runs, 3)),
  ]);
  const s = (ms) => (ms / 1000).toFixed(1);
  return [
    '## Impact of a release pull request',
    '',
    `The real ${r.release} release of community-operators-prod: its catalog commit rewrites ${r.catalogs} identical catalogs, a git diff of ${r.gitDiffLines} lines (median of ${Math.min(runs, 3)}):`,
    '',
    '| what | time (s) | what a reviewer reads |',
    '|---|---:|---|',
    `| \`catalog-bot impact --format json\` as a process (both commits' changed catalogs loaded, validated, compared) | ${s(r.impactMs)} | ${r.impactMarkdownLines} lines of Markdown (${r.impactJsonBytes} bytes of JSON): the ${r.catalogs} catalogs grouped, heads, the added bundle and edges |`,
    `| for comparison: \`opm render\` of every changed catalog at both commits, then \`diff -u\` of the renders | ${s(r.opmDiffMs)} | ${r.renderDiffLines} lines of rendered JSON diff, no heads, no stranded versions |`,
    '',
    'The App computes the same impact inside the pull-request checks from the catalogs they already',
    'loaded, so on a pull request it costs no second load (docs/impact.md).',
  ];
}

// The App end to end (GitHub's API the tests' fake server; git, mirror, checks real).
async function benchApp() {
  const appRun = runScript('app.mjs', [v421.path, String(runs)]);
  return [
    '## GitHub App, webhook to completed check runs',
    '',
    `A pull request changing one package of a repository holding ${v421.name}; signed webhooks to the real HTTP`,
    "server (the one `npm start` runs), GitHub's API answered by the fake API server the tests use (test/helpers/github-server.ts,",
    `over HTTP; writes not paced), everything else real (median of ${runs}, mirror already cached; \`node bench/app.mjs <v4.21 root> ${runs}\` alone`,
    `gives the same). Each of the ${appRun.checkRuns} check runs that apply is created completed in one request; the time is to the last one:`,
    '',
    '| what | time (ms) |',
    '|---|---:|',
    `| webhook answer over HTTP, p50 / p99 / max of ${appRun.answers} signed deliveries while jobs run | ${appRun.answerP50.toFixed(1)} / ${appRun.answerP99.toFixed(1)} / ${appRun.answerMax.toFixed(1)} |`,
    `| webhook to all check runs completed | ${appRun.total.toFixed(0)} |`,
    `| the first pull request of a repository (mirror cloned) | ${appRun.firstRun.toFixed(0)} |`,
  ];
}

// A bundle pull request end to end: checked and released in memory to 6 OpenShift catalogs.
async function benchBundle() {
  const bundleRun = runScript('bundle.mjs', [
    join(shared, 'data', 'real-repo', 'community-operators-prod'),
    String(runs),
  ]);
  return [
    '## GitHub App, bundle pull request',
    '',
    `A pull request adding one bundle directory to the real ${bundleRun.package} package (its ${bundleRun.catalogs} OpenShift catalogs and semver`,
    "template; the bundle is 1.0.2's with its version raised to 1.0.3); signed webhooks to the real HTTP server, GitHub answered by",
    'the fake API server the tests use, every check real, `catalog-bot/bundle` releasing',
    `the bundle in memory (${bundleRun.title}; median of ${runs}, mirror already cached; \`node bench/bundle.mjs <community-operators-prod snapshot> ${runs}\` alone gives the same):`,
    '',
    '| what | time (ms) |',
    '|---|---:|',
    `| webhook to all check runs completed | ${bundleRun.total.toFixed(0)} |`,
  ];
}

// Every real bundle directory through `bundle validate` (docs/bundle-rules.md), one run.
async function benchBundleRules() {
  const r = runScript('bundle-rules.mjs', [
    join(shared, 'data', 'real-repo', 'community-operators-prod'),
    String(runs),
  ]);
  return [
    '## Bundle rules, `bundle validate` on every real bundle',
    '',
    `\`catalog-bot bundle validate\` (the built CLI, suite \`community\`: operator-pipelines' static tests and both \`operator-sdk bundle validate\``,
    `runs) on all ${r.bundles} bundle directories of the ${r.packages} real community-operators-prod packages in one process, each package's other bundles`,
    `read for the package-wide rules (median of ${runs}; \`node bench/bundle-rules.mjs <community-operators-prod snapshot> ${runs}\` alone gives the same):`,
    '',
    '| what | time (ms) |',
    '|---|---:|',
    `| ${r.bundles} bundles, Node start included (${r.errors} errors, ${r.warnings} warnings found) | ${r.median.toFixed(0)} |`,
    `| fastest run | ${r.min.toFixed(0)} |`,
  ];
}

// Installability checks (dependencies + CRD upgrade) on top of loading.
async function benchInstallability() {
  const cert = roots.find((r) => r.name.includes('certified')) ?? largest;
  const inst = runScript('installability.mjs', [v421.path, cert.path, String(runs)]);
  return [
    '## Installability checks',
    '',
    `\`catalog-bot/dependencies\` and \`catalog-bot/crd-upgrade\` together, warm, on top of loading (median of ${runs}):`,
    '',
    '| what | time (ms) | findings |',
    '|---|---:|---:|',
    `| a change to the largest package of ${v421.name} (${inst.package}, ${inst.bundles} bundles), old vs new | ${inst.onePackage.ms.toFixed(1)} | ${inst.onePackage.findings} |`,
    `| every package of ${cert.name}, checked as new | ${inst.whole.ms.toFixed(1)} | ${inst.whole.findings} |`,
  ];
}

// Starting git from a process that holds catalogs: straight from it, and through the helper.
async function benchGitStart() {
  const catalogs = roots.map((r) => r.path);
  const rows = [1, 4].map((copies) =>
    runScript('git-start.mjs', [String(runs * 15), String(copies), ...catalogs]),
  );
  const ms = (x) => x.toFixed(1);
  return [
    '## Starting git from the App',
    '',
    `\`git rev-parse HEAD\` ${rows[0].runs} times from a process holding every real catalog loaded once and four times (src/git/helper.ts): started straight from that process, and through the git helper. Per run: the wall time, and the longest and mean delay of the process's event loop while they ran.`,
    '',
    '| process RSS (MiB) | bundles held | straight: ms a run | straight: event loop max / mean (ms) | helper: ms a run | helper: event loop max / mean (ms) |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.rssMiB.toFixed(0)} | ${r.blobs} | ${ms(r.direct.msPerRun)} | ${ms(r.direct.loopMaxMs)} / ${ms(r.direct.loopMeanMs)} | ${ms(r.helper.msPerRun)} | ${ms(r.helper.loopMaxMs)} / ${ms(r.helper.loopMeanMs)} |`,
    ),
  ];
}

// OpenShift version continuity: one package across the real repository's 11 catalogs.
async function benchOcp() {
  const ocp = runScript('ocp.mjs', [
    join(shared, 'data', 'real-repo', 'community-operators-prod'),
    String(runs),
  ]);
  return [
    '## OpenShift version continuity',
    '',
    `\`catalog-bot/ocp-continuity\` on the real community-operators-prod packages, catalogs v4.12 to v4.22 (${ocp.catalogs} catalogs), warm, on top of loading (median of ${runs}; loading all ${ocp.catalogs} takes ${ocp.one.loadMs.toFixed(0)} ms):`,
    '',
    '| what | time (ms) | findings |',
    '|---|---:|---:|',
    `| one package (${ocp.package}, in ${ocp.inCatalogs} catalogs), every consecutive pair and every per-version rule | ${ocp.one.ms.toFixed(1)} | ${ocp.one.findings} |`,
    `| all ${ocp.packages} packages | ${ocp.all.ms.toFixed(1)} | ${ocp.all.findings} |`,
  ];
}

// Publishing: native build and push of v4.16 to a local docker-registry, beside buildah.
async function benchPublishing() {
  const { benchPublish, benchBuildah } = await import('./publish.mjs');
  const pub = await benchPublish({ runs });
  const buildah = await benchBuildah({ runs: Math.min(runs, 3) });
  return [
    '## Catalog image publishing',
    '',
    `Build the community-operators-prod v4.16 catalog image (${(pub.bytes / 1e6).toFixed(1)} MB of catalog) onto a small`,
    `two-platform base and push it to a local \`docker-registry\` (median of ${runs}):`,
    '',
    '| what | time (ms) |',
    '|---|---:|',
    `| catalog-bot, cold (fresh registry, nothing cached) | ${median(pub.coldMs).toFixed(0)} |`,
    `| catalog-bot, nothing changed (same process) | ${median(pub.unchangedMs).toFixed(0)} |`,
    `| catalog-bot, nothing changed (new process: tar and gzip again) | ${median(pub.unchangedUncachedMs).toFixed(0)} |`,
    buildah.ms
      ? `| \`buildah bud\` + \`buildah push\` (vfs storage, chroot isolation), cold, median of ${buildah.ms.length} | ${median(buildah.ms).toFixed(0)} |`
      : `| buildah: ${buildah.skipped} | |`,
  ];
}

// Catalog pod start: catalog-bot's image (pre-built opm cache) vs opm's own Dockerfile way.
async function benchServing() {
  const { benchServe, serveMarkdown } = await import('./serve.mjs');
  const serve = await benchServe({
    catalogs: [v416, v421, scaled()],
    runs: Math.min(runs, 3),
  });
  return serveMarkdown(serve);
}

// A burst of merges published (issue 35): test/burst-publish.test.ts with 64 pull requests,
// once as merges were published before batches (one build each) and once in batches.
async function benchBurstPublish() {
  const prs = Number(process.env.BENCH_BURST_PRS ?? 64);
  const measure = (batches) => {
    const r = spawnSync('npx', ['vitest', 'run', 'test/burst-publish.test.ts'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, BURST_PUBLISH_PRS: String(prs), BURST_PUBLISH_BATCHES: batches ? 'on' : 'off' },
      timeout: 20 * 60_000,
    });
    const line = /burst-publish: (\{.*\})/.exec(r.stdout ?? '')?.[1];
    if (!line)
      throw new Error(`test/burst-publish.test.ts printed no figures:\n${(r.stdout ?? '').slice(-2000)}`);
    const figures = JSON.parse(line);
    figures.passed = r.status === 0;
    return figures;
  };
  const before = measure(false);
  const after = measure(true);
  const row = (what, f) =>
    `| ${what} | ${f.builds} | ${f.appWrites} | ${f.checkRunWrites} | ${f.commentWrites} | ${f.refusedWrites} | ${f.minutes.toFixed(2)} | ${f.passed ? 'yes' : 'no'} |`;
  return [
    '## A burst of merges published',
    '',
    `${prs} pull requests (one new package with one bundle each, into two catalogs in turn) merged ${process.env.BURST_PUBLISH_MERGE_MS ?? 300} ms apart, each push delivered to the App server (in-process queue) with a real docker-registry, GitHub's write pacing replayed four times faster (${before.pacing}: the fake refuses sooner writes, the App paces itself). Builds are image builds (one \`{root}-{sha}\` tag each); writes are the App's accepted writes to GitHub; minutes from the first merge to the last release comment. "all checks" is whether every merge's release comment names an image holding its package and each moving tag names a build of the newest commit that changed its catalog (test/burst-publish.test.ts).`,
    '',
    '| publishing | builds | GitHub writes | check-run writes | comment writes | refused writes | minutes | all checks |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    row('one build per merge (`CATALOG_BOT_PUBLISH_BATCHES=off`, as before)', before),
    row('in batches (default)', after),
  ];
}

// Templates: render the largest real template with its bundles cached.
async function benchTemplating() {
  const { benchTemplates } = await import('./templates.mjs');
  const tpl = await benchTemplates({ runs: Math.max(runs, 10) });
  return [
    '## Templates',
    '',
    `Render ${tpl.template} (${tpl.bundles} bundles, the largest real template) with its bundles cached (median of ${tpl.ms.length}): ${median(tpl.ms).toFixed(1)} ms.`,
  ];
}

// Onboarding: the largest real onboarding case, from its bundle directories and with --index.
async function benchOnboarding() {
  const r = runScript('onboard.mjs', [join(shared, 'data', 'onboarding'), String(Math.min(runs, 5))]);
  const perCatalog = (ms) => (ms / r.catalogs).toFixed(0);
  return [
    '## Onboarding a package to FBC',
    '',
    `\`catalog-bot onboard ${r.package}\` (the largest real onboarding case: ${r.bundles} bundle directories, ${r.catalogs} OpenShift catalogs), whole process, median of ${r.runs}:`,
    '',
    "| from | total (ms) | per catalog (ms) | the pipeline's converter, per catalog |",
    '|---|---:|---:|---:|',
    `| bundle directories | ${r.fromDirectories.toFixed(0)} | ${perCatalog(r.fromDirectories)} | about 40,000 ms (an opm render of the published index) |`,
    `| \`--index\` for every catalog | ${r.withIndex.toFixed(0)} | ${perCatalog(r.withIndex)} | about 40,000 ms |`,
    '',
    "opm has no emulation of `opm index add` any more (SQLite support was dropped), so no opm run does the same job; the converter's figure is the one the issue gives.",
  ];
}

// Several replicas on one Redis: 1,000 deliveries for 200 pull requests in 20 repositories,
// unpaced (the paced run is `node bench/load.mjs`: about a second per write).
async function benchReplicas() {
  const { benchLoad, loadTable } = await import('./load.mjs');
  const load = await benchLoad({ log: () => undefined, pace: false });
  const split = await benchLoad({
    log: () => undefined,
    pace: false,
    replicas: 3,
    roles: ['web', 'worker', 'worker'],
  });
  return [
    '## Replicas under load',
    '',
    'Signed deliveries (opened, then synchronize with moving heads) sent 16 at a time to `npm start` replicas',
    'sharing a redis-server, GitHub answered by a local fake API server. Everything shares this 2-core machine,',
    'and the fake API (16,000 requests) runs in the process that sends the deliveries and times their answers,',
    'so the answer times include that process being busy. First two replicas doing everything, then one',
    'webhook-only replica (`CATALOG_BOT_ROLE=web`) in front of two job workers at lower CPU priority, as if on',
    'nodes of their own:',
    '',
    loadTable(load),
    '',
    loadTable(split),
  ];
}

const benches = {
  validate: benchValidate,
  graph: benchGraph,
  site: benchSite,
  impact: benchImpact,
  app: benchApp,
  bundle: benchBundle,
  'bundle-rules': benchBundleRules,
  installability: benchInstallability,
  git: benchGitStart,
  ocp: benchOcp,
  publish: benchPublishing,
  'burst-publish': benchBurstPublish,
  serve: benchServing,
  templates: benchTemplating,
  onboard: benchOnboarding,
  load: benchReplicas,
};

// Each part on its own: one that fails says which and why, the others still run, and the
// run exits non-zero. results.md keeps the previous section of every part not re-measured.
const fresh = new Map();
const failures = [];
for (const part of selected) {
  const started = performance.now();
  const load = loadavg()[0].toFixed(1);
  process.stderr.write(`bench: ${part}...\n`);
  try {
    const lines = await benches[part]();
    // Sections are re-measured one by one: each says when (validate's text says it already).
    if (part !== 'validate')
      lines.push(
        '',
        `Measured on ${new Date().toISOString().slice(0, 10)} by \`npm run bench\` (part \`${part}\`), load average ${load} when the part started.`,
      );
    fresh.set(part, lines);
    process.stderr.write(`bench: ${part} done in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    failures.push({ part, why });
    process.stderr.write(`bench: part ${part} FAILED: ${why}\n`);
  }
}

const resultsFile = join(here, 'results.md');
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const text = mergeResults(previous, fresh);
writeFileSync(resultsFile, text);
process.stdout.write(text);
if (failures.length > 0) {
  process.stderr.write(
    `bench: ${failures.length} of ${selected.length} parts failed (their sections in bench/results.md are the previous ones):\n` +
      failures
        .map(
          (f) =>
            `  ${f.part}: ${f.why.split('\n').find((l) => /^\w*Error:/.test(l)) ?? f.why.split('\n')[0]}\n`,
        )
        .join(''),
  );
  process.exit(1);
}

/**
 * results.md with the fresh sections in place of their previous ones: the validate part is
 * the text before the first `## ` heading, every other part the section under its heading.
 */
function mergeResults(before, sections) {
  const at = before.search(/^## /m);
  const oldHead = at >= 0 ? before.slice(0, at) : before;
  const oldSections = at >= 0 ? before.slice(at).split(/^(?=## )/m) : [];
  const block = (lines) => `${lines.join('\n').trimEnd()}\n\n`;
  const heading = (s) => s.split('\n', 1)[0].trim();
  const byHeading = new Map();
  for (const [part, lines] of sections) if (part !== 'validate') byHeading.set(lines[0].trim(), block(lines));
  let out = sections.has('validate') ? block(sections.get('validate')) : oldHead.trimEnd() + '\n\n';
  for (const s of oldSections) {
    const h = heading(s);
    out += byHeading.get(h) ?? `${s.trimEnd()}\n\n`;
    byHeading.delete(h);
  }
  for (const s of byHeading.values()) out += s;
  return `${out.trimEnd()}\n`;
}
