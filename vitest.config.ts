import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Files that spend most of their time waiting (paced writes, real Redis and replicas,
// deadlines): started first, so the other worker runs the rest beside them.
const WAITING_FILES = ['burst.test.ts', 'replicas.test.ts', 'bounded.test.ts', 'automerge.test.ts'];

class WaitingFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = WAITING_FILES.findIndex((name) => f.moduleId.endsWith(`/test/${name}`));
      return i < 0 ? WAITING_FILES.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Hooks remove temp repositories of real catalogs: seconds on a busy 2-core machine.
    hookTimeout: 60_000,
    // Two files at a time even on two cores: most App tests wait on git, servers and pacing.
    maxWorkers: 2,
    sequence: { sequencer: WaitingFirst },
  },
});
