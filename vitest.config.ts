import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { filesOf, ISOLATED_UNIT, LAYERS, type Layer } from './test/layers.js';

// Files that spend most of their time waiting (paced writes, real Redis and replicas,
// deadlines): one of them at a time beside the busy files, so the cores are never left idle
// while two of them wait together.
const WAITING_FILES = ['replicas-crash', 'burst', 'burst-publish', 'replicas', 'bounded', 'automerge'].map(
  (n) => `test/${n}.test.ts`,
);

/**
 * The longest first whatever their layer (by the last run's times when vitest has them, else
 * the largest files first), with a waiting file every third place: with three workers, two
 * keep the cores busy while the third waits. vitest's own order runs one project after the
 * other, and the long files would end the run alone.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const path = (f: TestSpecification) => relative(root, f.moduleId);
    const key = (f: TestSpecification) => `${f.project.name}:${path(f)}`;
    const known = (f: TestSpecification) => this.ctx.cache.getFileTestResults(key(f))?.duration;
    const size = (f: TestSpecification) => this.ctx.cache.getFileStats(key(f))?.size ?? 0;
    const longestFirst = (a: TestSpecification, b: TestSpecification) => {
      const [da, db] = [known(a), known(b)];
      return da !== undefined && db !== undefined
        ? db - da
        : da === undefined && db === undefined
          ? size(b) - size(a)
          : da === undefined
            ? -1
            : 1;
    };
    const waitingRank = (f: TestSpecification) => WAITING_FILES.indexOf(path(f));
    const waiting = files.filter((f) => waitingRank(f) >= 0).sort((a, b) => waitingRank(a) - waitingRank(b));
    const busy = files.filter((f) => waitingRank(f) < 0).sort(longestFirst);
    const order: TestSpecification[] = [];
    while (waiting.length || busy.length) {
      const next = waiting.shift();
      if (next) order.push(next);
      order.push(...busy.splice(0, WORKERS - 1));
    }
    return order;
  }
}

// Three files at a time on two cores: most App and system tests wait on git, servers and
// pacing, so a third worker fills the time they leave idle (README, "Testing").
const WORKERS = Number(process.env.CATALOG_BOT_TEST_WORKERS ?? 3);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Hooks remove temp repositories of real catalogs: seconds on a busy 2-core machine.
    hookTimeout: 60_000,
    maxWorkers: WORKERS,
    sequence: { sequencer: LongestFirst },
    // The layers (test/layers.ts): `npm test` runs all three, `npm run test:fast` unit and app.
    projects: (Object.keys(LAYERS) as Layer[]).flatMap((layer) => {
      // The App files share a module registry per worker too (Probot, Octokit and the App
      // imported once per worker: 20 s of imports less); none mocks a module (layers.test.ts).
      if (layer === 'app')
        return [{ extends: true, test: { name: layer, include: filesOf(layer), isolate: false } }];
      if (layer !== 'unit') return [{ extends: true, test: { name: layer, include: filesOf(layer) } }];
      // The unit files share a module registry per worker: the core and vitest's own modules
      // are imported once per worker, not once per file. The files that mock a module or
      // measure memory keep one of their own, as a project `unit-isolated` of the same layer.
      const isolated = new Set<string>(ISOLATED_UNIT.map((name) => `test/${name}.test.ts`));
      const files = filesOf('unit');
      return [
        {
          extends: true,
          test: { name: 'unit', include: files.filter((f) => !isolated.has(f)), isolate: false },
        },
        { extends: true, test: { name: 'unit-isolated', include: files.filter((f) => isolated.has(f)) } },
      ];
    }),
  },
});
