import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Test files run one at a time: each executor owns a thread, and the suites that check
    // behaviour in time (parallel executors, timeouts, the event-loop probe) must not compete
    // with other files for this machine's two cores.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
