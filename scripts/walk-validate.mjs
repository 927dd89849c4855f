// node scripts/walk-validate.mjs: the walk from a catalog file to a validation message,
// counted at run time (docs/architecture.md, "Walk: a catalog file to a validation message").
// One validateCatalog() of the built core (dist/; run `npm run build` first) on a directory
// holding one catalog.yaml whose bundle's olm.package version is the number 1, under V8's
// precise coverage with call counts: every named function of dist/ entered at least once is
// a step. Functions in dist/catalog/fbc/fast/ (the loader's speed machinery) are counted
// apart, so the figure for what a file means reads without them.
// The walk's path, the steps by which the file becomes the message, is counted too: the
// functions of dist/ on the call stack (async callers included) at the three hand-offs, where
// the bundle's document is decoded into a value, where its typed bundle joins the config and
// where the message is made (breakpoints of V8's debugger).
// `--list` prints the functions, file by file, and the path; `--json` prints it all as JSON.
import { Session } from 'node:inspector';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const SPEED_FOLDER = 'catalog/fbc/fast/';

if (!existsSync(path.join(dist, 'catalog/index.js'))) {
  process.stderr.write('walk-validate: run `npm run build` first (dist/catalog/index.js is missing)\n');
  process.exit(2);
}

const CATALOG = `---
schema: olm.package
name: walk
defaultChannel: stable
---
schema: olm.channel
package: walk
name: stable
entries:
  - name: walk.v1.0.0
---
schema: olm.bundle
package: walk
name: walk.v1.0.0
image: quay.io/example/walk:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: walk
      version: 1
`;

/** Where the walk hands the bundle on: a file of dist/ and a text on the line to stop at. */
const HAND_OFFS = [
  ['catalog/fbc/decode.js', 'out.values.push(value)'],
  ['catalog/fbc/load.js', 'config.bundles.push('],
  ['catalog/fbc/blob-check.js', 'parse properties for bundle'],
];

const dir = mkdtempSync(path.join(tmpdir(), 'walk-validate-'));
try {
  writeFileSync(path.join(dir, 'catalog.yaml'), CATALOG);
  // Loaded before counting starts: what importing runs is not part of the walk.
  const core = await import(pathToFileURL(path.join(dist, 'catalog/index.js')).href);
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, answer) => (error ? reject(error) : resolve(answer))),
    );
  const distUrl = pathToFileURL(dist).href + '/';
  const scripts = new Map();
  session.on('Debugger.scriptParsed', ({ params }) => scripts.set(params.scriptId, params.url));
  const path_ = new Map();
  // A same-thread session is told of a pause at once, while paused: note the stack, go on.
  session.on('Debugger.paused', ({ params }) => {
    const frames = [...params.callFrames];
    for (let trace = params.asyncStackTrace; trace; trace = trace.parent) frames.push(...trace.callFrames);
    for (const frame of frames) {
      const url = scripts.get(frame.location?.scriptId ?? frame.scriptId) ?? frame.url ?? '';
      if (!url.startsWith(distUrl)) continue;
      const step = `${url.slice(distUrl.length).replace(/\.js$/, '')} ${frame.functionName || '(anonymous)'}`;
      path_.set(step, (path_.get(step) ?? 0) + 1);
    }
    session.post('Debugger.resume');
  });
  await post('Debugger.enable');
  await post('Debugger.setAsyncCallStackDepth', { maxDepth: 64 });
  for (const [file, text] of HAND_OFFS) {
    const lineNumber = readFileSync(path.join(dist, file), 'utf8')
      .split('\n')
      .findIndex((line) => line.includes(text));
    if (lineNumber < 0) throw new Error(`walk-validate: no line with ${text} in dist/${file}`);
    await post('Debugger.setBreakpointByUrl', { url: pathToFileURL(path.join(dist, file)).href, lineNumber });
  }
  await post('Profiler.enable');
  await post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const report = await core.validateCatalog(new core.DirectorySource(dir));
  const { result } = await post('Profiler.takePreciseCoverage');
  await post('Profiler.stopPreciseCoverage');
  await post('Debugger.disable');
  session.disconnect();

  const byFile = new Map();
  for (const script of result) {
    if (!script.url.startsWith(distUrl)) continue;
    const file = script.url.slice(distUrl.length).replace(/\.js$/, '');
    // A function's own range is its first; named functions only (module bodies have no name).
    const entered = script.functions
      .filter((f) => f.functionName !== '' && f.ranges[0].count > 0)
      .map((f) => f.functionName);
    if (entered.length > 0) byFile.set(file, entered);
  }
  const count = (files) => files.reduce((n, f) => n + byFile.get(f).length, 0);
  const files = [...byFile.keys()];
  const speed = files.filter((f) => (f + '/').startsWith(SPEED_FOLDER) || f.startsWith(SPEED_FOLDER));
  const semantic = files.filter((f) => !speed.includes(f));
  const figures = {
    functions: count(files),
    files: files.length,
    semanticFunctions: count(semantic),
    semanticFiles: semantic.length,
    speedFunctions: count(speed),
    speedFiles: speed.length,
    pathSteps: path_.size,
    semanticPathSteps: [...path_.keys()].filter((step) => !step.startsWith(SPEED_FOLDER)).length,
    messages: report.diagnostics.map((d) => `${d.rule}: ${d.message}`),
  };
  if (process.argv.includes('--json')) {
    process.stdout.write(
      JSON.stringify({ ...figures, byFile: Object.fromEntries(byFile), path: [...path_.keys()] }, null, 2) +
        '\n',
    );
  } else {
    const lines = [
      `${figures.functions} functions in ${figures.files} files`,
      `outside ${SPEED_FOLDER} (what a file means): ${figures.semanticFunctions} functions in ${figures.semanticFiles} files`,
      `in ${SPEED_FOLDER} (speed machinery): ${figures.speedFunctions} functions in ${figures.speedFiles} files`,
      `path from the file to the message: ${figures.pathSteps} steps, ${figures.semanticPathSteps} outside ${SPEED_FOLDER}`,
      ...figures.messages.map((m) => `message: ${m}`),
    ];
    if (process.argv.includes('--list'))
      for (const [file, names] of byFile) lines.push(`${file} (${names.length}): ${names.join(', ')}`);
    if (process.argv.includes('--list')) lines.push(`path: ${[...path_.keys()].join(' <- ')}`);
    process.stdout.write(lines.join('\n') + '\n');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
