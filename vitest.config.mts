import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Outside the Functions host every app.http/app.storageQueue/app.timer call warns that it registers nothing.
    setupFiles: ['scripts/local/mute-registration-warnings.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: one worker per core keeps the embedded servers responsive.
    maxWorkers: 2,
  },
});
