// Timings of the static catalog site (docs/site.md) for one catalog root: the whole
// `catalog-bot site` process (load, validate, every page written), the pages alone on a
// loaded catalog (warm, in this process), and, as the nearest thing opm offers, `opm alpha
// render-graph` on the same root (Mermaid text for every channel: no layout, no pages).
// Prints JSON.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';
import { buildSite } from '../dist/site/site.js';

const [root, opm, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 3);
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function processMs(command, args) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.stderr.slice(-500)}`);
    times.push(performance.now() - t);
  }
  return median(times);
}

const out = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-site-'));
try {
  const cliMs = processMs(process.execPath, [cli, 'site', root, '-o', out]);
  const opmMs = processMs(opm, ['alpha', 'render-graph', root]);
  const report = await validateCatalog(new DirectorySource(root));
  const catalog = {
    name: 'v4.21',
    valid: report.valid,
    diagnostics: report.diagnostics,
    model: report.model,
    packages: report.config.packages,
  };
  // The first build warms up the JIT and is not counted. Caches are per model object, so
  // each counted run reloads the catalog (outside the timing).
  let files = buildSite([catalog]);
  const pagesTimes = [];
  for (let i = 0; i < runs; i++) {
    const fresh = await validateCatalog(new DirectorySource(root));
    const c = { ...catalog, model: fresh.model, diagnostics: fresh.diagnostics };
    const t = performance.now();
    files = buildSite([c]);
    pagesTimes.push(performance.now() - t);
  }
  const sizes = [...files.values()].map((f) => Buffer.byteLength(f));
  let channels = 0;
  let bundles = 0;
  for (const p of report.model.values()) {
    channels += p.channels.size;
    for (const ch of p.channels.values()) bundles += ch.bundles.size;
  }
  process.stdout.write(
    JSON.stringify({
      packages: report.model.size,
      channels,
      entries: bundles,
      files: files.size,
      bytes: sizes.reduce((a, b) => a + b, 0),
      largestPage: Math.max(...sizes),
      cliMs,
      pagesMs: median(pagesTimes),
      opmMs,
    }) + '\n',
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}
