// Resource limits (DESIGN.md "Defaults beyond the spec": memoryLimitBytes, maxStackBytes).
import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf, thrownBy } from './helpers'

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
})
