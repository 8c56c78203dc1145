// Time slices on the engine-thread pool (docs/tools.md "Concurrency"): a spinning guest
// gives its thread up after each slice while other runs wait, a new or just-answered run goes
// ahead of the spinners, spinners share the threads evenly, and `timeoutMs` counts from the
// `run()` call whatever the load (docs/limits-and-errors.md). Bounds are generous: these are
// behaviours (who answers before whom), not speeds; the bench's W13 measures the latencies.
import { afterEach, describe, expect, it } from 'vitest'

import { SESExecutor, enginePoolStats, rejectionOf, setEngineThreads } from './helpers'

const initialSize = enginePoolStats().size
afterEach(() => setEngineThreads(initialSize))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The grace a run gets past its deadline before it is answered without its engine. */
const GRACE_MS = 500

async function spinners(count: number, timeoutMs: number) {
  return Promise.all(Array.from({ length: count }, () => SESExecutor.create({ timeoutMs, maxOperations: 1e12 })))
}

/** Runs `code`, resolving to the error and how long after the call it settled. */
async function timedRejection(executor: InstanceType<typeof SESExecutor>, code: string) {
  const called = performance.now()
  const error = await rejectionOf(executor.run(code))
  return { error, after: performance.now() - called }
}

describe('time slices', () => {
  it('four spinners and a fifth run 50 ms later: the fifth answers at once, each spinner at its own deadline from its call', async () => {
    setEngineThreads(2)
    const timeoutMs = 1_500
    const spinning = await spinners(4, timeoutMs)
    const fifth = await SESExecutor.create()
    const runs = spinning.map((e) => timedRejection(e, 'while (true) {}'))
    await sleep(50)
    const asked = performance.now()
    expect((await fifth.run('1 + 1')).output).toBe(2)
    // First come, first served had it wait for two spinners' whole deadline.
    expect(performance.now() - asked).toBeLessThan(500)
    for (const { error, after } of await Promise.all(runs)) {
      expect(error.code).toBe('ERR_EXEC_TIMEOUT')
      // Stopped by its engine at its deadline, counted from its call: not answered without the
      // engine after the grace, and not a second deadline after waiting for a thread.
      expect(error.details.stillRunning).toBeUndefined()
      expect(after).toBeGreaterThanOrEqual(timeoutMs - 1)
      expect(after).toBeLessThan(timeoutMs + GRACE_MS)
    }
    await Promise.all([...spinning, fifth].map((e) => e.cleanup()))
  })

  it('a polite agent step among six spinners finishes with its final answer', async () => {
    setEngineThreads(2)
    const spinning = await spinners(6, 3_000)
    const polite = await SESExecutor.create({ timeoutMs: 3_000 })
    await polite.sendTools({ slow: () => new Promise((resolve) => setTimeout(() => resolve('ok'), 50)) })
    const runs = spinning.map((e) => rejectionOf(e.run('while (true) {}')))
    await sleep(20)
    const result = await polite.run("await slow(50); await slow(50); final_answer('polite')")
    expect(result.output).toBe('polite')
    expect(result.is_final_answer).toBe(true)
    // It held a thread for a sliver of the time it took.
    expect(result.stats.cpuTimeMs).toBeLessThan(result.stats.wallTimeMs)
    expect(polite.state).toBe('READY')
    expect((await Promise.all(runs)).map((e) => e.code)).toEqual(Array(6).fill('ERR_EXEC_TIMEOUT'))
    await Promise.all([...spinning, polite].map((e) => e.cleanup()))
  })

  it('a run that waits for its slices times out at its own deadline from its call, and reports the CPU it used', async () => {
    setEngineThreads(1)
    const spinning = await spinners(3, 3_000)
    const runs = spinning.map((e) => rejectionOf(e.run('while (true) {}')))
    const late = await SESExecutor.create({ timeoutMs: 300, maxOperations: 1e12 })
    await sleep(20)
    // Its deadline is its call plus 300 ms, though it computes a quarter of that time.
    const { error, after } = await timedRejection(late, 'while (true) {}')
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.details.stillRunning).toBeUndefined()
    expect(after).toBeGreaterThanOrEqual(299)
    expect(after).toBeLessThan(300 + GRACE_MS)
    // A run that finishes among them: wall time from its call, CPU time its slices.
    const sharing = await SESExecutor.create({ timeoutMs: 3_000, maxOperations: 1e12 })
    const { stats } = await sharing.run('const end = Date.now() + 300; while (Date.now() < end) {}')
    expect(stats.wallTimeMs).toBeGreaterThanOrEqual(300)
    expect(stats.cpuTimeMs).toBeGreaterThan(0)
    expect(stats.cpuTimeMs).toBeLessThan(stats.wallTimeMs * 0.8)
    await Promise.all(runs)
    await Promise.all([...spinning, late, sharing].map((e) => e.cleanup()))
  })

  it('spinners share the threads evenly', async () => {
    setEngineThreads(2)
    const spinning = await spinners(6, 10_000)
    const outputs = await Promise.all(
      spinning.map((e) => e.run('const end = Date.now() + 1200; while (Date.now() < end) {}')),
    )
    const shares = outputs.map((o) => o.stats.cpuTimeMs)
    // Six runs on two threads for 1.2 s: about 400 ms of CPU each.
    expect(Math.max(...shares) / Math.min(...shares)).toBeLessThan(2)
    await Promise.all(spinning.map((e) => e.cleanup()))
  })

  it('an aborted run answers at once though it was suspended among spinners', async () => {
    setEngineThreads(1)
    const spinning = await spinners(4, 3_000)
    const runs = spinning.map((e) => rejectionOf(e.run('while (true) {}')))
    const aborted = await SESExecutor.create({ timeoutMs: 60_000, maxOperations: 1e12 })
    const controller = new AbortController()
    const running = rejectionOf(aborted.run('while (true) {}', { signal: controller.signal }))
    await sleep(200)
    const asked = performance.now()
    controller.abort()
    const error = await running
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.details.reason).toBe('aborted')
    expect(performance.now() - asked).toBeLessThan(500)
    await Promise.all(runs)
    await Promise.all([...spinning, aborted].map((e) => e.cleanup()))
  })

  it('each run on a thread or suspended holds one coroutine stack, and gives it back when it ends', async () => {
    setEngineThreads(2)
    const many = await spinners(200, 400)
    const runs = many.map((e) => rejectionOf(e.run('while (true) {}')))
    await sleep(100)
    const during = enginePoolStats()
    expect(during.suspended).toBeGreaterThan(0)
    expect(during.stacks).toBeLessThanOrEqual(200 + 32 + during.maxThreads)
    expect((await Promise.all(runs)).map((e) => e.code)).toEqual(Array(200).fill('ERR_EXEC_TIMEOUT'))
    // Trivial runs of 2,000 executors reuse a few stacks.
    const idle = await Promise.all(Array.from({ length: 2_000 }, () => SESExecutor.create()))
    const outputs = await Promise.all(idle.map((e, i) => e.run(`${i} + 1`)))
    expect(outputs.every((o, i) => o.output === i + 1)).toBe(true)
    const after = enginePoolStats()
    expect(after.suspended).toBe(0)
    expect(after.stacks).toBeLessThanOrEqual(32 + after.maxThreads)
    await Promise.all([...many, ...idle].map((e) => e.cleanup()))
  })
})
