// Spec §2.3 (concurrency), §7.5 / §7.6 (timeouts, DIRTY), CF-02, CF-03, CF-04, CF-10.
import { afterEach, describe, expect, it } from 'vitest'

import { contractOf, rejectionOf, SESExecutor } from './helpers'

const sleepTool = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const live: InstanceType<typeof SESExecutor>[] = []
async function executorWith(options = {}) {
  const executor = await SESExecutor.create(options)
  live.push(executor)
  await executor.sendTools({ sleepTool, never: () => new Promise(() => {}) })
  return executor
}
afterEach(async () => {
  for (const executor of live.splice(0)) if (executor.state === 'READY' || executor.state === 'DIRTY') await executor.cleanup()
})

describe('runConcurrency (§2.3)', () => {
  it('CF-02 reject: the second concurrent run() throws ERR_INVALID_STATE, the first completes', async () => {
    const executor = await executorWith({ runConcurrency: 'reject' })
    const first = executor.run('await sleepTool(300); "first"')
    const second = await rejectionOf(executor.run('await sleepTool(300)'))
    expect(second.code).toBe('ERR_INVALID_STATE')
    expect((await first).output).toBe('first')
  })

  it('CF-03 queue: runs complete in FIFO order with their own answers', async () => {
    const executor = await executorWith({ runConcurrency: 'queue', maxQueuedRuns: 10 })
    const finished: string[] = []
    const runA = executor.run('await sleepTool(100); final_answer("A")').then((result) => {
      finished.push('A')
      return result
    })
    const runB = executor.run('final_answer("B")').then((result) => {
      finished.push('B')
      return result
    })
    const [a, b] = await Promise.all([runA, runB])
    expect(finished).toEqual(['A', 'B'])
    expect(contractOf(a)).toEqual({ output: 'A', logs: '', is_final_answer: true })
    expect(contractOf(b)).toEqual({ output: 'B', logs: '', is_final_answer: true })
    expect(executor.state).toBe('READY')
  })

  it('CF-04 queue capacity: with maxQueuedRuns=1 the third concurrent run fails with ERR_INVALID_STATE', async () => {
    const executor = await executorWith({ runConcurrency: 'queue', maxQueuedRuns: 1 })
    const first = executor.run('await sleepTool(200); 1')
    const second = executor.run('2')
    const third = await rejectionOf(executor.run('3'))
    expect(third.code).toBe('ERR_INVALID_STATE')
    expect(third.details.maxQueuedRuns).toBe(1)
    expect((await first).output).toBe(1)
    expect((await second).output).toBe(2)
  })

  it('queued runs see each other’s state in order', async () => {
    const executor = await executorWith({ runConcurrency: 'queue', maxQueuedRuns: 5 })
    const results = await Promise.all([
      executor.run('var seq = [1]; await sleepTool(20)'),
      executor.run('seq.push(2)'),
      executor.run('seq.push(3); seq'),
    ])
    expect(results[2].output).toEqual([1, 2, 3])
  })

  it('the state stays RUNNING until the last queued run is answered', async () => {
    const executor = await executorWith({ runConcurrency: 'queue', maxQueuedRuns: 2 })
    const first = executor.run('await sleepTool(50)')
    const second = executor.run('await sleepTool(50)')
    await first
    expect(executor.state).toBe('RUNNING')
    await second
    expect(executor.state).toBe('READY')
  })

  it('separate executors run in parallel on their own threads', async () => {
    const a = await executorWith({ maxOperations: 1e12, timeoutMs: 10_000 })
    const b = await executorWith({ maxOperations: 1e12, timeoutMs: 10_000 })
    const spin = 'const end = Date.now() + 300; let n = 0; while (Date.now() < end) n++; n > 0'
    const started = Date.now()
    await Promise.all([a.run(spin), b.run(spin)])
    // One after the other would take 600 ms; the machine has two cores.
    expect(Date.now() - started).toBeLessThan(550)
  })
})

describe('timeouts (§7.5) and the DIRTY path (§7.6)', () => {
  it('CF-10 a timed-out run is ERR_EXEC_TIMEOUT and DIRTY; cleanup()+init() recovers', async () => {
    const executor = await executorWith({ timeoutMs: 100 })
    const error = await rejectionOf(executor.run('await sleepTool(999999)'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(executor.state).toBe('DIRTY')
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
    await executor.init()
    const result = await executor.run('final_answer("ok")')
    expect(result.output).toBe('ok')
    expect(result.is_final_answer).toBe(true)
  })

  const paths: Array<[string, string]> = [
    ['an awaited tool call that never settles', 'await never()'],
    ['a microtask flood', 'Promise.resolve().then(function f() { Promise.resolve().then(f) }); await never()'],
    ['while (true) { await null }', 'while (true) { await null }'],
    ['a synchronous CPU loop the guard does not count', 'const f = () => { for (;;) {} }; f()'],
    ['a catastrophic regex', '/^(a+)+$/.test("a".repeat(40) + "b")'],
  ]
  for (const [name, code] of paths) {
    it(`stops ${name} within tens of milliseconds of the deadline`, async () => {
      const executor = await executorWith({ timeoutMs: 100, maxOperations: 1e12 })
      const started = Date.now()
      const error = await rejectionOf(executor.run(code))
      const elapsed = Date.now() - started
      expect(error.code).toBe('ERR_EXEC_TIMEOUT')
      expect(executor.state).toBe('DIRTY')
      expect(elapsed).toBeGreaterThanOrEqual(95)
      expect(elapsed).toBeLessThan(400)
    })
  }

  it('a tool promise that settles after the timeout is dropped harmlessly', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 50 })
    live.push(executor)
    let settled = false
    await executor.sendTools({
      late: () =>
        new Promise((resolve) =>
          setTimeout(() => {
            settled = true
            resolve('too late')
          }, 150),
        ),
    })
    expect((await rejectionOf(executor.run('await late()'))).code).toBe('ERR_EXEC_TIMEOUT')
    await executor.cleanup()
    await sleepTool(200)
    expect(settled).toBe(true)
    await executor.init()
    expect((await executor.run('"alive"')).output).toBe('alive')
  })
})
