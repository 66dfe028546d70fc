import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: one worker per core keeps the embedded servers responsive.
    maxWorkers: 2,
  },
});
