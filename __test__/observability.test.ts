// Spec §10.2 optional extensions: structured `logEntries`, per-run
// `stats`, streaming `onLog`, `run(code, { signal })` and `Symbol.asyncDispose`.
import { afterEach, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from './helpers'
import type { LogEntry } from '../index'

const live: Array<InstanceType<typeof SESExecutor>> = []
async function executor(options?: ConstructorParameters<typeof SESExecutor>[0]) {
  const created = await SESExecutor.create(options)
  live.push(created)
  return created
}
afterEach(async () => {
  for (const created of live.splice(0)) {
    if (created.state === 'READY' || created.state === 'DIRTY') await created.cleanup()
  }
})

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('logEntries (§10.2 structured logs)', () => {
  it('lists each console call with its level, message and ISO time, in call order', async () => {
    const ex = await executor()
    const before = Date.now()
    const out = await ex.run('console.log("a", 1); console.warn({ b: 2 }); console.error("c")')
    const after = Date.now()
    expect(out.logEntries.map(({ level, message }) => [level, message])).toEqual([
      ['log', 'a 1'],
      ['warn', '{ b: 2 }'],
      ['error', 'c'],
    ])
    for (const entry of out.logEntries) {
      expect(entry.ts).toMatch(ISO)
      const at = Date.parse(entry.ts)
      expect(at).toBeGreaterThanOrEqual(before - 1)
      expect(at).toBeLessThanOrEqual(after + 1)
    }
    expect(out.logs).toBe(out.logEntries.map((entry) => entry.message).join('\n'))
  })

  it('follows collectConsoleLevels and the maxLogBytes truncation of logs', async () => {
    const ex = await executor({ collectConsoleLevels: ['warn'], maxLogBytes: 1024 })
    const out = await ex.run('console.log("hidden"); console.warn("x".repeat(1000)); console.warn("y".repeat(100)); console.warn("dropped")')
    expect(out.logEntries.map((entry) => entry.level)).toEqual(['warn', 'warn'])
    expect(out.logEntries[1].message).toBe('y'.repeat(23) + '...[TRUNCATED]')
    expect(out.logs).toBe(out.logEntries.map((entry) => entry.message).join('\n'))
  })

  it('is empty for a run that logged nothing', async () => {
    const ex = await executor()
    expect((await ex.run('1 + 1')).logEntries).toEqual([])
  })
})

describe('stats (§10.2)', () => {
  it('counts loop operations, tool calls and the time spent in tools', async () => {
    const ex = await executor()
    await ex.sendTools({
      slow: () => new Promise((resolve) => setTimeout(() => resolve(1), 30)),
      quick: (x: number) => x + 1,
    })
    const out = await ex.run('let n = 0; for (let i = 0; i < 250; i++) n = quick(n); await slow(); await slow(); n')
    expect(out.output).toBe(250)
    expect(out.stats.operations).toBe(250)
    expect(out.stats.toolCalls).toBe(252)
    // Two sequential 30 ms timers: at least 60 ms in tools, and the run lasted at least that.
    expect(out.stats.toolTimeMs).toBeGreaterThanOrEqual(55)
    expect(out.stats.wallTimeMs).toBeGreaterThanOrEqual(out.stats.toolTimeMs)
  })

  it('reports the peak heap of the run, which grows with what the run allocates', async () => {
    const ex = await executor()
    const small = await ex.run('1')
    const big = await ex.run('const big = new Array(200000).fill(0).map((_, i) => ({ i })); big.length')
    expect(small.stats.peakHeapBytes).toBeGreaterThan(0)
    expect(big.stats.peakHeapBytes - small.stats.peakHeapBytes).toBeGreaterThan(200000 * 16)
  })

  it('starts from zero for every run', async () => {
    const ex = await executor()
    await ex.sendTools({ t: () => 1 })
    await ex.run('for (let i = 0; i < 10; i++) t()')
    const second = await ex.run('2')
    expect(second.stats.operations).toBe(0)
    expect(second.stats.toolCalls).toBe(0)
    expect(second.stats.toolTimeMs).toBe(0)
  })
})

describe('onLog streams entries while the run goes on', () => {
  it('delivers every entry before the run settles, in order, while the run still waits', async () => {
    const seen: LogEntry[] = []
    let seenWhileWaiting = -1
    const ex = await executor({ onLog: (entry: LogEntry) => seen.push(entry) })
    await ex.sendTools({
      wait: () => new Promise((resolve) => setTimeout(() => {
        seenWhileWaiting = seen.length
        resolve(undefined)
      }, 50)),
    })
    const out = await ex.run('console.log("one"); console.info("two"); await wait(); console.error("three")')
    expect(seenWhileWaiting).toBe(2)
    expect(seen).toEqual(out.logEntries)
    expect(seen.map((entry) => entry.message)).toEqual(['one', 'two', 'three'])
  })

  it('streams the logs of a failing run too', async () => {
    const seen: string[] = []
    const ex = await executor({ onLog: (entry: LogEntry) => seen.push(entry.message) })
    const error = await rejectionOf(ex.run('console.log("before"); throw new Error("boom")'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(seen).toEqual(['before'])
  })

  it('ignores what onLog throws: the run is unaffected', async () => {
    const ex = await executor({
      onLog: () => {
        throw new Error('logger broke')
      },
    })
    const out = await ex.run('console.log("x"); 42')
    expect(out.output).toBe(42)
    expect(out.logs).toBe('x')
  })

  it('refuses an onLog that is not a function', () => {
    expect(() => new SESExecutor({ onLog: 'nope' } as never)).toThrow(/onLog must be a function/)
  })
})

describe('run(code, { signal }) accepts an AbortSignal', () => {
  it('aborting a busy run ends it like a timeout, with reason "aborted", and leaves DIRTY', async () => {
    const ex = await executor({ maxOperations: 1e12, timeoutMs: 60_000 })
    const controller = new AbortController()
    const started = Date.now()
    setTimeout(() => controller.abort(), 50)
    const error = await rejectionOf(ex.run('while (true) {}', { signal: controller.signal }))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.details).toMatchObject({ reason: 'aborted', started: true })
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(ex.state).toBe('DIRTY')
  })

  it('aborting a run that awaits a tool that never settles ends it', async () => {
    const ex = await executor({ timeoutMs: 60_000 })
    await ex.sendTools({ never: () => new Promise(() => {}) })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 30)
    const error = await rejectionOf(ex.run('await never()', { signal: controller.signal }))
    expect(error.details.reason).toBe('aborted')
    expect(ex.state).toBe('DIRTY')
  })

  it('a signal aborted before the call runs nothing and leaves the executor READY', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('globalThis.ran = true', { signal: AbortSignal.abort() }))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.details).toMatchObject({ reason: 'aborted', started: false })
    expect(ex.state).toBe('READY')
    expect((await ex.run('typeof ran')).output).toBe('undefined')
  })

  it('aborting a queued run keeps it from starting; the running one is unaffected', async () => {
    const ex = await executor({ runConcurrency: 'queue', maxQueuedRuns: 1 })
    await ex.sendTools({ pause: () => new Promise((resolve) => setTimeout(resolve, 50)) })
    const controller = new AbortController()
    const first = ex.run('await pause(); "first"')
    const second = ex.run('globalThis.second = true', { signal: controller.signal })
    controller.abort()
    expect((await first).output).toBe('first')
    expect((await rejectionOf(second)).details).toMatchObject({ reason: 'aborted', started: false })
    expect(ex.state).toBe('READY')
    expect((await ex.run('typeof second')).output).toBe('undefined')
  })

  it('a run that finishes first is unaffected, and the signal keeps no listener of it', async () => {
    const ex = await executor()
    const controller = new AbortController()
    let added = 0
    let removed = 0
    const signal = controller.signal
    const add = signal.addEventListener.bind(signal)
    const remove = signal.removeEventListener.bind(signal)
    signal.addEventListener = ((...args: Parameters<typeof add>) => { added++; add(...args) }) as typeof add
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => { removed++; remove(...args) }) as typeof remove
    for (let i = 0; i < 20; i++) expect((await ex.run(`${i}`, { signal })).output).toBe(i)
    expect([added, removed]).toEqual([20, 20])
    controller.abort()
    expect((await ex.run('"still fine"')).output).toBe('still fine')
    expect(ex.state).toBe('READY')
  })

  it('refuses a signal that is not an AbortSignal', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('1', { signal: 42 } as never))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toMatch(/AbortSignal/)
  })
})

describe('Symbol.asyncDispose', () => {
  it('await using cleans the executor up at the end of the block', async () => {
    let seen: InstanceType<typeof SESExecutor> | undefined
    {
      await using ex = await SESExecutor.create()
      seen = ex
      expect((await ex.run('1 + 1')).output).toBe(2)
    }
    expect(seen.state).toBe('DEAD')
  })

  it('is idempotent with cleanup(), and a NEW executor disposes without error', async () => {
    const ex = await SESExecutor.create()
    await ex.cleanup()
    await ex[Symbol.asyncDispose]()
    expect(ex.state).toBe('DEAD')
    const fresh = new SESExecutor()
    await fresh[Symbol.asyncDispose]()
    expect(fresh.state).toBe('NEW')
  })
})
