// Security suite, out of memory: no allocation failure — in agent code, in
// QuickJS's compiler, or in the executor's copies into and out of the sandbox — takes the host
// process down. Each ends as the structured memory-limit error (ERR_RUNTIME_EXCEPTION,
// details.limit "memoryLimitBytes"), DIRTY after a run (usable again after cleanup() + init()),
// READY after sendVariables (nothing ran). Every allocation of representative operations is
// refused in turn by the Rust sweep (tests/allocation_failures.rs); these are the reproducers
// that crashed the process, run from Node against the addon as users get it.
import { afterAll, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from '../helpers'
import { type AttackCase, Canary, expectUsable, runCase } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())

const MiB = 1024 * 1024
const OUT_OF_MEMORY = /^Runtime exception: InternalError: out of memory \(the executor's heap limit, memoryLimitBytes, was reached\)$/
const atLimit = (state: 'READY' | 'DIRTY') =>
  ({ code: 'ERR_RUNTIME_EXCEPTION', state, message: OUT_OF_MEMORY, details: { limit: 'memoryLimitBytes' } }) as const
const heap = (mebibytes: number) => ({ memoryLimitBytes: mebibytes * MiB, maxOperations: 1e12, timeoutMs: 60_000 })

/** An object with 300 000 string keys: about 20 MiB once built in a QuickJS heap. */
function wideObject(): Record<string, number> {
  const wide: Record<string, number> = {}
  for (let i = 0; i < 300_000; i++) wide[`key${i}`] = i
  return wide
}

const propertyFlood = "const o = {}; let i = 0; while (true) { o['key' + i] = i; i++ }"

const agentCode: AttackCase[] = [
  {
    // Crashed with SIGSEGV (QuickJS's shape resize threw while the shape was off the GC list;
    // vendor/quickjs-patches/0100).
    name: 'string-keyed properties added to one object until a 16 MiB heap is full',
    code: propertyFlood,
    options: heap(16),
    expected: atLimit('DIRTY'),
  },
  {
    name: 'string-keyed properties added to one object until a 36 MiB heap is full',
    code: propertyFlood,
    options: heap(36),
    expected: atLimit('DIRTY'),
  },
  {
    name: 'numeric-keyed properties added to a sparse array until the heap is full — original',
    code: 'const a = []; let i = 0; while (true) { a[i * 7 + 2 ** 31] = i; i++ }',
    options: heap(16),
    expected: atLimit('DIRTY'),
  },
  {
    name: 'an object with 300 000 keys built in a 16 MiB heap and returned as the output',
    code: "const o = {}; for (let i = 0; i < 300000; i++) o['key' + i] = i; o",
    options: heap(16),
    expected: atLimit('DIRTY'),
  },
  {
    // QuickJS throws what user code can catch; the run fails at the limit all the same, since
    // QuickJS may have left parts of what the code went on with silently incomplete.
    name: 'an out-of-memory error caught by the code still fails the run at the limit — original',
    code: "let caught = false; try { 'x'.repeat(2 ** 28) } catch (e) { caught = true } caught",
    options: heap(16),
    expected: atLimit('DIRTY'),
  },
  {
    // Was reported as the memory limit (and DIRTY) because QuickJS throws `null` when it
    // cannot allocate an error; now only a refused allocation counts.
    name: '`throw null` is a runtime exception, not the memory limit — original',
    code: 'throw null',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /Uncaught null/ },
  },
]

describe('out of memory: agent code', () => {
  for (const attack of agentCode) it(attack.name, () => runCase(canary, attack))
})

describe('out of memory: copies into and out of the sandbox', () => {
  it('sendVariables of an object with 300 000 keys into a 16 MiB heap fails at the limit, READY', async () => {
    const executor = await SESExecutor.create(heap(16))
    try {
      const error = await rejectionOf(executor.sendVariables({ wide: wideObject() }))
      expect({ code: error.code, message: error.message, details: error.details, state: executor.state }).toEqual({
        code: 'ERR_RUNTIME_EXCEPTION',
        message: expect.stringMatching(OUT_OF_MEMORY),
        details: { limit: 'memoryLimitBytes' },
        state: 'READY',
      })
      await expectUsable(executor, 'READY')
    } finally {
      await executor.cleanup()
    }
  })

  it('a sync tool returning an object with 300 000 keys into a 16 MiB heap fails the run at the limit', () =>
    runCase(canary, {
      name: 'sync tool result',
      code: 'const wide = getWide(); Object.keys(wide).length',
      tools: () => ({ getWide: () => wideObject() }),
      options: heap(16),
      expected: atLimit('DIRTY'),
    }))

  it('an async tool resolving to an object with 300 000 keys into a 16 MiB heap fails the run at the limit', () =>
    runCase(canary, {
      name: 'async tool result',
      code: 'const wide = await getWide(); Object.keys(wide).length',
      tools: () => ({ getWide: async () => wideObject() }),
      options: heap(16),
      expected: atLimit('DIRTY'),
    }))

  it('the same copies succeed where the heap is large enough — original', () =>
    runCase(canary, {
      name: 'control',
      code: 'const wide = await getWide(); Object.keys(wide).length',
      tools: () => ({ getWide: async () => wideObject() }),
      options: heap(256),
      expected: { output: 300_000 },
    }))

  it('an executor whose heap cannot hold a context fails init with ERR_SES_INIT_FAILED — original', async () => {
    const executor = new SESExecutor({ memoryLimitBytes: 64 * 1024 })
    const error = await rejectionOf(executor.init())
    expect({ code: error.code, state: executor.state }).toEqual({ code: 'ERR_SES_INIT_FAILED', state: 'DEAD' })
    expect(error.message).toMatch(/out of memory/)
  })
})
