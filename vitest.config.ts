import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Each executor owns a thread; suites run in parallel processes on a 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
