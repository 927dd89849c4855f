import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Hooks remove temp repositories of real catalogs: seconds on a busy 2-core machine.
    hookTimeout: 60_000,
  },
});
