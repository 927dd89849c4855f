import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { filesOf, LAYERS, type Layer } from './test/layers.js';

// Files that spend most of their time waiting (paced writes, real Redis and replicas,
// deadlines): started first, so the other worker runs the rest beside them.
const WAITING_FILES = ['replicas-crash', 'burst', 'burst-publish', 'replicas', 'bounded', 'automerge'].map(
  (n) => `test/${n}.test.ts`,
);

/**
 * The waiting files first, then the longest first whatever their layer (by the last run's
 * times when vitest has them, else the largest files first): the long files do not end the
 * run alone. vitest's own order runs one project after the other.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const path = (f: TestSpecification) => relative(root, f.moduleId);
    const key = (f: TestSpecification) => `${f.project.name}:${path(f)}`;
    const waiting = (f: TestSpecification) => {
      const i = WAITING_FILES.indexOf(path(f));
      return i < 0 ? WAITING_FILES.length : i;
    };
    const known = (f: TestSpecification) => this.ctx.cache.getFileTestResults(key(f))?.duration;
    const size = (f: TestSpecification) => this.ctx.cache.getFileStats(key(f))?.size ?? 0;
    return [...files].sort((a, b) => {
      const [da, db] = [known(a), known(b)];
      return (
        waiting(a) - waiting(b) ||
        (da !== undefined && db !== undefined
          ? db - da
          : da === undefined && db === undefined
            ? size(b) - size(a)
            : da === undefined
              ? -1
              : 1)
      );
    });
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Hooks remove temp repositories of real catalogs: seconds on a busy 2-core machine.
    hookTimeout: 60_000,
    // Two files at a time even on two cores: most App tests wait on git, servers and pacing.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    // The layers (test/layers.ts): `npm test` runs all three, `npm run test:fast` unit and app.
    projects: (Object.keys(LAYERS) as Layer[]).map((layer) => ({
      extends: true,
      test: { name: layer, include: filesOf(layer) },
    })),
  },
});
