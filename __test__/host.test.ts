// The host stays free (issue "Call the host safely" §7): Node's event loop is never blocked,
// idle executors never keep the process alive, garbage-collected executors free their runtimes,
// and the addon works inside worker_threads.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

import { describe, expect, it } from 'vitest'

import { SESExecutor, enginePoolStats } from './helpers'

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

describe('Node’s event loop is never blocked by sandbox code', () => {
  it('timers keep firing while an executor spins a 1 s CPU loop', async () => {
    const executor = await SESExecutor.create({ maxOperations: 1e12, timeoutMs: 10_000 })
    let last = Date.now()
    let maxGap = 0
    const timer = setInterval(() => {
      const now = Date.now()
      maxGap = Math.max(maxGap, now - last)
      last = now
    }, 5)
    const result = await executor.run('const end = Date.now() + 1000; let n = 0; while (Date.now() < end) n++; n > 0')
    clearInterval(timer)
    expect(result.output).toBe(true)
    // Generous bound: a blocked loop would show a gap of about 1000 ms.
    expect(maxGap).toBeLessThan(250)
    await executor.cleanup()
  })

  // Node's thread waits briefly after answering a tool for the same run's next call (node/host.rs
  // `Burst`), for synchronous tools and for promises that settle at once; a chain of such calls
  // is bounded, so that timers and I/O keep their turn.
  it.each([
    ['a synchronous tool', 'ping()'],
    ['an async tool whose promise settles at once', 'await pingAsync()'],
  ])('timers keep firing while the guest calls %s in a loop for 1 s', async (_, call) => {
    const executor = await SESExecutor.create({ maxOperations: 1e12, timeoutMs: 10_000 })
    await executor.sendTools({ ping: () => 1, pingAsync: async () => 1 })
    let last = Date.now()
    let maxGap = 0
    let ticks = 0
    const timer = setInterval(() => {
      const now = Date.now()
      maxGap = Math.max(maxGap, now - last)
      last = now
      ticks++
    }, 5)
    const result = await executor.run(
      `const end = Date.now() + 1000; let calls = 0; while (Date.now() < end) calls += ${call}; calls`,
    )
    clearInterval(timer)
    expect(result.output).toBeGreaterThan(1000)
    expect(maxGap).toBeLessThan(100)
    expect(ticks).toBeGreaterThan(50)
    await executor.cleanup()
  })
})

describe('process lifetime', () => {
  it('a process that never calls cleanup() still exits by itself', () => {
    const started = Date.now()
    const child = spawnSync(process.execPath, [join(fixtures, 'exit-without-cleanup.cjs')], {
      encoding: 'utf8',
      timeout: 15_000,
    })
    expect(child.stdout.trim()).toBe('ran 3')
    expect(child.status).toBe(0)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('a pending run keeps the process alive until it is answered', () => {
    const child = spawnSync(process.execPath, [join(fixtures, 'pending-run-keeps-alive.cjs')], {
      encoding: 'utf8',
      timeout: 15_000,
    })
    expect(child.stdout.trim()).toBe('answered true 7')
    expect(child.status).toBe(0)
  })

  it('executors garbage-collected without cleanup() free their runtimes, tools and pending tool promises, and never held a thread each', () => {
    const child = spawnSync(process.execPath, ['--expose-gc', join(fixtures, 'gc-frees-engines.cjs')], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(child.status).toBe(0)
    const { before, during, after, threads, size, toolsCollected, executorsCollected, lateReads } = JSON.parse(
      child.stdout,
    )
    expect(during).toBeGreaterThanOrEqual(before + 10)
    // V8 may keep the last executor or two reachable a while longer.
    expect(after).toBeLessThanOrEqual(before + 2)
    expect(toolsCollected).toBeGreaterThanOrEqual(18)
    expect(threads).toBeLessThanOrEqual(size)
    // A collected executor's tool promise that settles afterwards is never copied.
    expect(executorsCollected).toBeGreaterThanOrEqual(18)
    expect(lateReads).toBe(0)
  })
})

describe('worker_threads', () => {
  it('the addon loads and runs inside a worker', async () => {
    const worker = new Worker(join(fixtures, 'worker.cjs'))
    const message = await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    expect(message).toEqual({ output: 42 })
    await worker.terminate()
  })

  it('terminating a worker in the middle of a run neither crashes nor hangs the process, and frees its engine thread', async () => {
    const engines = enginePoolStats().engines
    const worker = new Worker(join(fixtures, 'worker.cjs'), { workerData: { spin: true } })
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message) => message.spinning && resolve())
      worker.once('error', reject)
    })
    const started = Date.now()
    const code = await worker.terminate()
    expect(code).toBe(1)
    expect(Date.now() - started).toBeLessThan(5_000)
    // The worker's executor is torn down with it: its spinning run is interrupted on whichever
    // pool thread ran it, and its runtime freed.
    for (let i = 0; i < 100 && (enginePoolStats().busy > 0 || enginePoolStats().engines > engines); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // At most as many runtimes as before the worker started: the previous test's worker may
    // still have been freeing its own when they were counted.
    expect(enginePoolStats().busy).toBe(0)
    expect(enginePoolStats().engines).toBeLessThanOrEqual(engines)
    // The process is still healthy: a fresh executor runs.
    const executor = await SESExecutor.create()
    expect((await executor.run('"still alive"')).output).toBe('still alive')
    await executor.cleanup()
  })
})
