// Warm, in-process timing of validateCatalog() for one root: one warm-up, then the
// median of N runs. Prints {ms, blobs, valid} as JSON.
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';

const [root, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
let report = await validateCatalog(new DirectorySource(root));
const times = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  report = await validateCatalog(new DirectorySource(root));
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({ ms: times[Math.floor(times.length / 2)], blobs: report.stats.blobs, valid: report.valid }),
);
