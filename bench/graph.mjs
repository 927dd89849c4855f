// Warm timings of the upgrade-graph checks on one catalog root: every check on every
// package, and the old-vs-new check for a change to one package. Prints JSON.
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';
import { compareFindings } from '../dist/checks/upgrade-graph/compare.js';
import { singleCatalogFindings } from '../dist/checks/upgrade-graph/single.js';
import { skipRangeFindings } from '../dist/checks/upgrade-graph/index.js';

const [root, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// The checks cache results per model object, so every run gets freshly loaded models
// (the first run also warms up the JIT and is not counted).
async function time(load, fn) {
  const times = [];
  for (let i = 0; i <= runs; i++) {
    const models = await load();
    const t = performance.now();
    fn(models);
    if (i > 0) times.push(performance.now() - t);
  }
  return median(times);
}

const loadRoot = async (path) => (await validateCatalog(new DirectorySource(path))).model;
const before = await validateCatalog(new DirectorySource(root));
const all = new Set(before.model.keys());
let findings = 0;
const allChecks = await time(
  () => loadRoot(root),
  (model) => {
    findings = singleCatalogFindings(model, { packages: all }).length + skipRangeFindings(model, all).length;
  },
);

// A one-package pull request: the largest package directory loses the entry of its first
// `replaces` edge (a realistic, graph-changing edit).
const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-graph-'));
cpSync(root, dir, { recursive: true });
const size = (p) => readFileSync(join(dir, p, 'catalog.yaml'), 'utf8').length;
const pkgDir = readdirSync(dir).sort((a, b) => size(b) - size(a))[0];
const file = join(dir, pkgDir, 'catalog.yaml');
writeFileSync(file, readFileSync(file, 'utf8').replace(/\n- name: [^\n]+\n {2}replaces: [^\n]+\n/, '\n'));
const after = await validateCatalog(new DirectorySource(dir));
const one = new Set(
  after.config.packages.filter((p) => p.pos.file.startsWith(pkgDir + '/')).map((p) => p.name),
);
let compareCount = 0;
const onePackage = await time(
  async () => [await loadRoot(root), await loadRoot(dir)],
  ([oldModel, newModel]) => {
    compareCount =
      compareFindings(oldModel, newModel, { packages: one }).length +
      singleCatalogFindings(newModel, { packages: one }).length;
  },
);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  JSON.stringify({ allChecks, findings, onePackage, onePackageName: [...one].join(','), compareCount }),
);
