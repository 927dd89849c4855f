// Warm timings of catalog-bot/ocp-continuity on the real community-operators packages: one
// package across the 11 OpenShift catalogs v4.12 to v4.22, and all six packages, on top of
// loading. Prints JSON.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';
import { ocpContinuityFindings } from '../dist/checks/ocp-continuity.js';

const [repo, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const names = readdirSync(join(repo, 'catalogs')).sort();

// The graph engines cache per model object: every run gets freshly loaded models (the
// first run warms up the JIT and is not counted).
async function load() {
  const catalogs = [];
  for (const name of names) {
    const report = await validateCatalog(new DirectorySource(join(repo, 'catalogs', name)), {
      keepBundleObjects: true,
    });
    catalogs.push({ name, root: `catalogs/${name}`, model: report.model });
  }
  return catalogs;
}

const first = await load();
// The package in the most catalogs (ecr-secret-operator is in all eleven).
const counts = new Map();
for (const c of first) for (const p of c.model.keys()) counts.set(p, (counts.get(p) ?? 0) + 1);
const [pkg, inCatalogs] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];

async function time(packages) {
  const times = [];
  let findings = 0;
  let loadMs = 0;
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    const catalogs = await load();
    const t1 = performance.now();
    findings = ocpContinuityFindings({ catalogs, ...(packages ? { packages } : {}) }).length;
    if (i > 0) {
      times.push(performance.now() - t1);
      loadMs = t1 - t0;
    }
  }
  return { ms: median(times), findings, loadMs };
}

const one = await time(new Set([pkg]));
const all = await time(undefined);
process.stdout.write(
  JSON.stringify({ catalogs: names.length, package: pkg, inCatalogs, packages: counts.size, one, all }),
);
