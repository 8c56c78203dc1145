// Resource limits (docs/contract.md "Defaults beyond the spec": memoryLimitBytes, maxStackBytes).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf, thrownBy } from './helpers'

/** The largest maxStackBytes: the QuickJS stack every engine thread has room for (docs/api.md "Options"). */
const MAX_STACK_BYTES = 16 * 1024 * 1024

describe('memoryLimitBytes', () => {
  it('a memory bomb ends the run with a clear error naming the limit; the executor is DIRTY', async () => {
    const executor = await SESExecutor.create({ memoryLimitBytes: 32 * 1024 * 1024, maxOperations: 1e9 })
    const error = await rejectionOf(executor.run('const keep = []; while (true) keep.push("x".repeat(1e5) + Math.random())'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details.limit).toBe('memoryLimitBytes')
    expect(error.message).toContain('memoryLimitBytes')
    // The heap may still be full of what the code kept: the executor cannot be trusted (§7.6).
    expect(executor.state).toBe('DIRTY')
    await executor.cleanup()
    await executor.init()
    expect((await executor.run('"fresh"')).output).toBe('fresh')
    await executor.cleanup()
  })

  it('the host process is unharmed by a sandbox allocating past the limit', async () => {
    const before = process.memoryUsage().rss
    const executor = await SESExecutor.create({ memoryLimitBytes: 16 * 1024 * 1024, maxOperations: 1e9 })
    await rejectionOf(executor.run('const a = []; for (;;) a.push(new Float64Array(1e5))'))
    await executor.cleanup()
    // The sandbox could not take more than its 16 MiB heap, whatever the code tried.
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024)
  })

  it('bounds what the process pays, not QuickJS’s count of its blocks: one string kept per arena', () => {
    // For each size class of QuickJS's arena allocator, fresh arenas are filled with strings,
    // then one string per arena is kept: QuickJS counts the few blocks kept, the process pays
    // for whole arenas (peakHeapBytes 114 MiB and RSS +124 MiB under 32 MiB, when only QuickJS's
    // count was limited).
    const code = `
      const keep = []
      let counter = 0
      for (let n = 1; n <= 480; n += 8) {
        const pad = 'x'.repeat(n)
        const every = Math.max(1, Math.floor(4096 / (n + 32)))
        let temp = new Array(Math.floor(4 * 2 ** 20 / (n + 48)))
        for (let i = 0; i < temp.length; i++) temp[i] = (counter++ + 1e9).toString(36) + pad
        for (let i = 0; i < temp.length; i += every) keep.push(temp[i])
        temp = null
      }
      keep.length`
    const limit = 32 * 1024 * 1024
    const child = spawnSync(process.execPath, [fileURLToPath(new URL('./fixtures/rss-under-limit.cjs', import.meta.url)), code, String(limit)], {
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(child.status, child.stderr).toBe(0)
    const measured = JSON.parse(child.stdout.trim().split('\n').pop()!)
    // It fits, or it fails at the limit; either way the account never held more than the limit.
    if (measured.code !== null) expect(measured).toMatchObject({ code: 'ERR_RUNTIME_EXCEPTION', limit: 'memoryLimitBytes' })
    expect(measured.peakHeapBytes).toBeGreaterThan(limit / 2)
    expect(measured.peakHeapBytes).toBeLessThanOrEqual(limit)
    // The process grew by about what the limit allows (generous margin for the allocator's own
    // bookkeeping and Node's), not by several times it.
    expect(measured.rssGrowth).toBeLessThan(2 * limit)
  })

  it('is validated like the spec’s options', () => {
    expect(thrownBy(() => new SESExecutor({ memoryLimitBytes: 100 })).code).toBe('ERR_VALIDATION_FAILED')
    expect(thrownBy(() => new SESExecutor({ memoryLimitBytes: Number.NaN })).code).toBe('ERR_VALIDATION_FAILED')
  })
})

describe('maxStackBytes', () => {
  it('runaway recursion ends the run with a clear error naming the limit; the executor stays READY', async () => {
    const executor = await SESExecutor.create()
    const error = await rejectionOf(executor.run('function down(n) { return down(n + 1) + 1 }\ndown(0)'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details.limit).toBe('maxStackBytes')
    expect(executor.state).toBe('READY')
    expect((await executor.run('1 + 1')).output).toBe(2)
    await executor.cleanup()
  })

  it('inside the sandbox the overflow is a catchable RangeError', async () => {
    const executor = await SESExecutor.create()
    const code = 'function down() { return down() }\nlet caught; try { down() } catch (e) { caught = e.name } caught'
    expect((await executor.run(code)).output).toBe('RangeError')
    await executor.cleanup()
  })

  it('a smaller stack limit allows less recursion', async () => {
    const depth = 'let d = 0; function f() { d++; f() } try { f() } catch {} d'
    const small = await SESExecutor.create({ maxStackBytes: 64 * 1024 })
    const large = await SESExecutor.create({ maxStackBytes: 1024 * 1024 })
    const [a, b] = [(await small.run(depth)).output as number, (await large.run(depth)).output as number]
    expect(a).toBeGreaterThan(0)
    expect(b).toBeGreaterThan(a * 4)
    await small.cleanup()
    await large.cleanup()
  })

  it('is validated like the spec’s options', () => {
    expect(thrownBy(() => new SESExecutor({ maxStackBytes: 1.5 })).code).toBe('ERR_VALIDATION_FAILED')
  })

  // Option values: maxStackBytes above what the engine thread has (512 MiB) was accepted, and
  // deep recursion then killed Node with SIGSEGV.
  it('no value can promise more stack than an engine thread has: 0, 1, huge and 512 MiB are refused with options_valid', async () => {
    for (const bad of [0, 1, 16 * 1024 - 1, MAX_STACK_BYTES + 1, 512 * 1024 * 1024, 2 ** 53, Number.MAX_VALUE]) {
      const error = thrownBy(() => new SESExecutor({ maxStackBytes: bad }))
      expect(error.code).toBe('ERR_VALIDATION_FAILED')
      const diagnostics = error.details.diagnostics as Array<{ rule: string; message: string }>
      expect(diagnostics.map((d) => d.rule)).toEqual(['options_valid'])
      expect(diagnostics[0].message).toMatch(/maxStackBytes must be (an integer >= 16384|at most 16777216)/)
      expect((await rejectionOf(SESExecutor.create({ maxStackBytes: bad }))).code).toBe('ERR_VALIDATION_FAILED')
    }
  })

  it('the deepest stack allowed (16 MiB) recurses to a clean RangeError, in a process that survives it', () => {
    // In a child process: had the limit outgrown the thread's stack, the crash would end the
    // child, not the test runner.
    const script = `
      const { SESExecutor } = require(${JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))})
      ;(async () => {
        const depth = 'let d = 0, seen; function f() { d++; f() } try { f() } catch (e) { seen = e instanceof RangeError && d } seen'
        const deepest = await SESExecutor.create({ maxStackBytes: ${MAX_STACK_BYTES} })
        const usual = await SESExecutor.create()
        const [a, b] = [(await deepest.run(depth)).output, (await usual.run(depth)).output]
        const uncaught = await deepest.run('function g() { return g() + 1 } g()').catch((e) => e.details.limit)
        console.log(JSON.stringify({ deep: a, usual: b, uncaught, state: deepest.state }))
        await deepest.cleanup()
        await usual.cleanup()
      })()`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
    expect(child.signal).toBeNull()
    expect(child.status).toBe(0)
    const { deep, usual, uncaught, state } = JSON.parse(child.stdout)
    expect(usual).toBeGreaterThan(0)
    expect(deep).toBeGreaterThan(usual * 8)
    expect(uncaught).toBe('maxStackBytes')
    expect(state).toBe('READY')
  })
})
