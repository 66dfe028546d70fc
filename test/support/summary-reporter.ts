import type { Reporter, TestModule } from 'vitest/node';

/** Ends the run with one plain line, `N passed, N failed, N skipped`, for tools that read the last line. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed') counts[state]++;
        else counts.skipped++;
      }
      if (testModule.state() === 'failed' && ![...testModule.children.allTests()].length) counts.failed++;
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
