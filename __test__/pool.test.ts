// The engine-thread pool (docs/tools.md "Concurrency"): idle executors hold no thread, a run
// that waits for an async tool gives its thread up, a spinning guest never holds up the others
// (it is stopped at its deadline, and gives its thread up after each time slice while others
// wait: slices.test.ts), executors with queued runs take turns, and the size is configurable.
// Vitest runs each test file in a process of its own, so resizing the pool here affects only
// this file; each test restores the size it found.
import { readFileSync, readdirSync } from 'node:fs'

import { afterEach, describe, expect, it } from 'vitest'

import { SESExecutor, enginePoolStats, rejectionOf, setEngineThreads } from './helpers'

const initialSize = enginePoolStats().size
afterEach(() => setEngineThreads(initialSize))

/** Threads of this process named like the pool's. */
const engineThreads = () =>
  readdirSync('/proc/self/task').filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'ses-executor'
    } catch {
      return false
    }
  }).length

/** A promise with its resolve function, for tools the test settles when it chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('the engine-thread pool', () => {
  it('is sized to the cores by default, and setEngineThreads refuses sizes that are not 1..1024', () => {
    expect(initialSize).toBeGreaterThanOrEqual(1)
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1025]) {
      expect(() => setEngineThreads(bad)).toThrow(RangeError)
    }
    setEngineThreads(3)
    expect(enginePoolStats().size).toBe(3)
  })

  it('idle executors hold no thread: 300 live executors, each having run, use at most the pool’s threads', async () => {
    const before = enginePoolStats().engines
    const executors = []
    for (let i = 0; i < 300; i++) {
      const executor = await SESExecutor.create()
      expect((await executor.run(`${i} + 1`)).output).toBe(i + 1)
      executors.push(executor)
    }
    expect(enginePoolStats().engines).toBe(before + 300)
    expect(engineThreads()).toBeLessThanOrEqual(enginePoolStats().size)
    // Every one of them can still run.
    const outputs = await Promise.all(executors.map((e, i) => e.run(`${i} * 2`)))
    expect(outputs.map((o) => o.output)).toEqual(executors.map((_, i) => i * 2))
    await Promise.all(executors.map((e) => e.cleanup()))
    expect(enginePoolStats().engines).toBe(before)
  })

  it('a run awaiting a slow tool gives its thread up: with one engine thread, another executor runs meanwhile', async () => {
    setEngineThreads(1)
    const answer = deferred<number>()
    const waiting = await SESExecutor.create({ timeoutMs: 10_000 })
    await waiting.sendTools({ slow: () => answer.promise })
    const other = await SESExecutor.create()
    const pending = waiting.run('const x = await slow(); x * 2')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(waiting.state).toBe('RUNNING')
    // The only engine thread is free: these run while the first run still waits.
    for (let i = 0; i < 20; i++) expect((await other.run(`${i} + 1`)).output).toBe(i + 1)
    expect(waiting.state).toBe('RUNNING')
    answer.resolve(21)
    expect((await pending).output).toBe(42)
    await Promise.all([waiting.cleanup(), other.cleanup()])
  })

  it('a run awaiting a tool that never answers still ends at its deadline, without a thread', async () => {
    setEngineThreads(1)
    const executor = await SESExecutor.create({ timeoutMs: 200 })
    await executor.sendTools({ never: () => new Promise(() => {}) })
    const started = Date.now()
    const error = await rejectionOf(executor.run('await never()'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(executor.state).toBe('DIRTY')
    await executor.cleanup()
  })

  it('a spinning guest does not hold up the others: with two threads they go on at once', async () => {
    setEngineThreads(2)
    const spinner = await SESExecutor.create({ timeoutMs: 1_500, maxOperations: 1e12 })
    const other = await SESExecutor.create()
    const spinning = rejectionOf(spinner.run('for (;;) {}'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = Date.now()
    for (let i = 0; i < 20; i++) expect((await other.run(`${i}`)).output).toBe(i)
    // Well before the spinner's deadline.
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(spinner.state).toBe('RUNNING')
    expect((await spinning).code).toBe('ERR_EXEC_TIMEOUT')
    await Promise.all([spinner.cleanup(), other.cleanup()])
  })

  it('a run waiting for Node’s thread on a synchronous tool lets queued executors run on another thread, within maxThreads', async () => {
    setEngineThreads(1)
    const waiting = await SESExecutor.create()
    const other = await SESExecutor.create()
    let toolEnd = 0
    let quick: Promise<{ output: unknown }> | undefined
    await waiting.sendTools({
      // Starts the other executor's run, then holds Node's thread (and so the waiting run on
      // the only configured engine thread) for 300 ms.
      slow: () => {
        quick = other.run('Date.now()')
        const end = Date.now() + 300
        while (Date.now() < end) {}
        toolEnd = Date.now()
        return 'done'
      },
    })
    expect((await waiting.run('slow()')).output).toBe('done')
    // The other run computed while the tool held Node's thread and the waiting run its thread.
    expect((await quick!).output).toBeLessThan(toolEnd)
    const stats = enginePoolStats()
    expect(stats.maxThreads).toBe(1 + 4)
    expect(stats.threads).toBeLessThanOrEqual(stats.maxThreads)
    expect(stats.blocked).toBe(0)
    await Promise.all([waiting.cleanup(), other.cleanup()])
  })

  it('timeouts and abort signals stop spinning guests on every pool thread, and the threads serve others after', async () => {
    setEngineThreads(2)
    const spinners = await Promise.all(
      Array.from({ length: 5 }, () => SESExecutor.create({ timeoutMs: 200, maxOperations: 1e12 })),
    )
    const aborted = await SESExecutor.create({ timeoutMs: 60_000, maxOperations: 1e12 })
    const controller = new AbortController()
    const abortedRun = rejectionOf(aborted.run('while (true) {}', { signal: controller.signal }))
    setTimeout(() => controller.abort(), 100)
    const errors = await Promise.all(spinners.map((e) => rejectionOf(e.run('while (true) {}'))))
    expect(errors.map((e) => e.code)).toEqual(Array(5).fill('ERR_EXEC_TIMEOUT'))
    const abortError = await abortedRun
    expect(abortError.code).toBe('ERR_EXEC_TIMEOUT')
    expect(abortError.details.reason).toBe('aborted')
    const fresh = await SESExecutor.create()
    expect((await fresh.run('"free"')).output).toBe('free')
    // A thread counts as busy until it has put its executor back, just after the answer.
    for (let i = 0; i < 50 && enginePoolStats().busy > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(enginePoolStats().busy).toBe(0)
    await Promise.all([...spinners, aborted, fresh].map((e) => e.cleanup()))
  })

  it('an executor with a queue of runs takes turns with others: one engine thread, 20 queued runs and one more run', async () => {
    setEngineThreads(1)
    const busy = await SESExecutor.create({ runConcurrency: 'queue', maxQueuedRuns: 20, maxOperations: 1e12 })
    const other = await SESExecutor.create()
    const order: string[] = []
    const spin = 'const end = Date.now() + 10; while (Date.now() < end) {}'
    const queued = Array.from({ length: 20 }, (_, i) => busy.run(spin).then(() => order.push(`busy ${i}`)))
    await new Promise((resolve) => setTimeout(resolve, 5))
    const single = other.run('1').then(() => order.push('other'))
    await Promise.all([...queued, single])
    // The other executor's run went in between, not after all twenty.
    expect(order.indexOf('other')).toBeLessThan(5)
    await Promise.all([busy.cleanup(), other.cleanup()])
  })

  it('a smaller size takes effect: threads beyond it exit once free', async () => {
    setEngineThreads(4)
    const executors = await Promise.all(Array.from({ length: 8 }, () => SESExecutor.create({ maxOperations: 1e12 })))
    await Promise.all(executors.map((e) => e.run('const end = Date.now() + 50; while (Date.now() < end) {}')))
    setEngineThreads(1)
    for (let i = 0; i < 100 && enginePoolStats().threads > 1; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(enginePoolStats().threads).toBe(1)
    expect(engineThreads()).toBe(1)
    const outputs = await Promise.all(executors.map((e, i) => e.run(`${i}`)))
    expect(outputs.map((o) => o.output)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    await Promise.all(executors.map((e) => e.cleanup()))
  })
})
