// Every reference an executor holds to what the host gave it is released when it is cleaned
// up or collected: tool objects above all, which every codeAgentSetup user sends (smolagents'
// `Tool`s). They were kept by a napi reference that nothing released: 300 executors, each
// sent one tool object holding 800 KB, kept 240 MB after cleanup() and full collections (the
// same once the executors were collected), and Node printed "ObjectRef is not unref" for each
// at exit. The figures come from a child process run with --expose-gc
// (`fixtures/tool-objects-freed.cjs`), on the main thread and in a worker thread.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

const fixture = fileURLToPath(new URL('./fixtures/tool-objects-freed.cjs', import.meta.url))

function measure(mode?: string) {
  const child = spawnSync(process.execPath, ['--expose-gc', fixture, ...(mode ? [mode] : [])], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  expect(child.stderr).not.toMatch(/not unref|leak/i)
  expect(child.status).toBe(0)
  return child.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
}

/** The tool objects are 800 KB each: 300 of them would be 240 MB. */
const FEW_MB = 16 * 1024 * 1024

describe('tool references are released at cleanup and collection', () => {
  for (const thread of ['main', 'worker'] as const) {
    it(`codeAgentSetup's tool objects go at cleanup(), while the executors are still referenced, and with collected executors (${thread} thread)`, () => {
      const [result] = measure(thread === 'worker' ? 'worker' : undefined)
      expect(result.thread).toBe(thread)
      // Every tool object of a cleaned-up executor is collectable, though its executor is not.
      expect(result.collectedAfterCleanup).toBeGreaterThanOrEqual(result.count - 2)
      expect(result.afterCleanup).toBeLessThan(FEW_MB)
      expect(result.collected).toBeGreaterThanOrEqual(2 * result.count - 4)
      expect(result.afterCollection).toBeLessThan(FEW_MB)
    })
  }

  it('a worker that exits holding executors with tool objects releases them at teardown, silently', () => {
    expect(measure('abandon')).toEqual([{ exited: 0 }])
  })
})
