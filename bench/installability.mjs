// Warm timings of the installability checks (catalog-bot/dependencies and
// catalog-bot/crd-upgrade), on top of loading: a one-package pull request on a catalog
// root (the package's own files reloaded for the CRD check, as the App does), and every
// package of a whole catalog checked as new. Prints JSON.
import { DirectorySource, validateCatalog } from '../dist/catalog/index.js';
import { crdUpgradeCheck } from '../dist/checks/crd-upgrade.js';
import { directoryObjectLoader } from '../dist/checks/crd-upgrade-objects.js';
import { dependenciesCheck } from '../dist/checks/dependencies.js';

const [prRoot, wholeRoot, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median time of both checks over fresh loads (the first run warms the JIT, not counted). */
async function time(root, packagesOf, withBase) {
  const times = [];
  let findings = 0;
  for (let i = 0; i <= runs; i++) {
    const head = await validateCatalog(new DirectorySource(root));
    const base = withBase ? await validateCatalog(new DirectorySource(root)) : undefined;
    const roots = [{ path: root, base, head, packages: packagesOf(head) }];
    const t = performance.now();
    const deps = dependenciesCheck(roots);
    const crd = await crdUpgradeCheck(roots, directoryObjectLoader());
    if (i > 0) times.push(performance.now() - t);
    findings = deps.findings.length + crd.findings.length;
  }
  return { ms: median(times), findings };
}

// The package with the most bundles: the slowest one-package change there is.
const sample = await validateCatalog(new DirectorySource(prRoot));
let biggest = '';
let most = -1;
for (const [name, pkg] of sample.model) {
  const n = new Set([...pkg.channels.values()].flatMap((c) => [...c.bundles.keys()])).size;
  if (n > most) [biggest, most] = [name, n];
}
const onePackage = await time(prRoot, () => new Set([biggest]), true);
const whole = await time(wholeRoot, (head) => new Set(head.model.keys()), false);
process.stdout.write(JSON.stringify({ package: biggest, bundles: most, onePackage, whole }));
