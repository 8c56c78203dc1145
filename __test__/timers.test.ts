// `timers: true` gives the sandbox setTimeout/setInterval and their clear*,
// driven by the engine's own clock under the run's deadline, without holding an engine thread
// while a run sleeps (docs/tools.md "Timers"). Spec §5.2: off by default.
import { describe, expect, it } from 'vitest'

import { SESExecutor, executorsCleanedAfterEach, enginePoolStats, rejectionOf, setEngineThreads, validateCode } from './helpers'

const executor = executorsCleanedAfterEach({ timeoutMs: 5000 })

describe('timers', () => {
  it('§5.2: off by default — a warning and a ReferenceError, as before', async () => {
    const ex = await executor()
    expect((await ex.run('typeof setTimeout')).stats).not.toHaveProperty('timersCancelled')
    const error = await rejectionOf(ex.run('setTimeout(() => {}, 1)'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect((error.details.diagnostics as Array<{ rule: string }>).map((d) => d.rule)).toEqual(['forbidden_global_access'])
  })

  it('validateCode and prepareProgram take the option too', () => {
    const rules = (options: { timers?: boolean }) =>
      validateCode('setTimeout(f, 1); clearInterval(t); setImmediate(f)', options).map((d) => d.rule + ' ' + d.message)
    expect(rules({})).toHaveLength(3)
    expect(rules({ timers: true })).toEqual(["forbidden_global_access 'setImmediate' is not available in the sandbox (timers are not provided)"])
  })

  it('are refused as an option that is not a boolean', async () => {
    const error = await rejectionOf(SESExecutor.create({ timers: 'yes' as never }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toContain('timers must be a boolean')
  })

  it('run callbacks in due order; the run waits for the Promise it returns; no warning', async () => {
    const ex = await executor({ timers: true })
    const result = await ex.run(`
      const order = []
      setTimeout(() => order.push('later'), 30)
      setTimeout(() => order.push('sooner'), 5)
      let ticks = 0
      const every = setInterval(() => { if (++ticks === 3) clearInterval(every) }, 2)
      await new Promise((resolve) => setTimeout(resolve, 50))
      return { order, ticks }
    `)
    expect(result.output).toEqual({ order: ['sooner', 'later'], ticks: 3 })
    expect(result.diagnostics).toEqual([])
    expect(result.stats.timersCancelled).toBe(0)
  })

  it('cancel what is pending when the run ends, and report how many', async () => {
    const ex = await executor({ timers: true })
    const result = await ex.run('setTimeout(() => { globalThis.late = true }, 20); setInterval(() => {}, 5); "now"')
    expect(result.output).toBe('now')
    expect(result.stats.timersCancelled).toBe(2)
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect((await ex.run('typeof late')).output).toBe('undefined')
  })

  it('end at the run deadline (ERR_EXEC_TIMEOUT), however long the timer', async () => {
    const ex = await executor({ timers: true, timeoutMs: 300 })
    const started = Date.now()
    const error = await rejectionOf(ex.run('await new Promise((resolve) => setTimeout(resolve, 3_600_000))'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(Date.now() - started).toBeLessThan(3000)
    expect(ex.state).toBe('DIRTY')
  })

  it('hold no engine thread while a run sleeps: with one pool thread, another executor runs meanwhile', async () => {
    const size = enginePoolStats().size
    setEngineThreads(1)
    try {
      const sleeper = await executor({ timers: true })
      const other = await executor()
      const sleeping = sleeper.run('await new Promise((resolve) => setTimeout(resolve, 1500)); "woke"')
      await new Promise((resolve) => setTimeout(resolve, 50))
      const started = Date.now()
      expect((await other.run('1 + 1')).output).toBe(2)
      // Were the thread held, this run would wait for the sleeper's 1.5 s.
      expect(Date.now() - started).toBeLessThan(1000)
      expect((await sleeping).output).toBe('woke')
    } finally {
      setEngineThreads(size)
    }
  })

  it('are stopped by an abort signal, which wakes the sleeping run at once', async () => {
    const ex = await executor({ timers: true, timeoutMs: 60_000 })
    const controller = new AbortController()
    const started = Date.now()
    const aborted = ex.run('await new Promise((resolve) => setTimeout(resolve, 60_000))', { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    const error = await rejectionOf(aborted)
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.details.reason).toBe('aborted')
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('count what they hold against memoryLimitBytes', async () => {
    const ex = await executor({ timers: true, memoryLimitBytes: 16 * 1024 * 1024, maxOperations: 1e9 })
    const error = await rejectionOf(
      ex.run('for (let i = 0; i < 5000; i++) setTimeout(() => {}, 100_000, new Array(20_000).fill(i))'),
    )
    expect(error.details.limit).toBe('memoryLimitBytes')
  })
})
