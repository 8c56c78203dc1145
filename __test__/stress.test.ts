// Stress: 100 executors × 100 runs at once on a 2-core machine, with overlapping async
// tool calls settling in random order, each result checked against its own inputs — no
// cross-talk between executors, runs, tool calls or logs — on no more engine threads than the
// pool's size, and every runtime freed after.
import { readFileSync, readdirSync } from 'node:fs'

import { describe, expect, it } from 'vitest'

import { contractOf, enginePoolStats, SESExecutor } from './helpers'

const EXECUTORS = 100
const RUNS = 100

/** The engine threads alive in this process (each pool thread is named `ses-executor`). */
const engineThreads = () =>
  readdirSync('/proc/self/task').filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'ses-executor'
    } catch {
      return false // the thread ended while we looked
    }
  }).length
const randomDelay = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)))

/** The code of run `k`: three overlapping async calls, one sync call, a log line and a variable. */
const code = (k: number) => `
  const k = ${k};
  const parts = await Promise.all([mix(k, 'a'), mix(k, 'b'), mix(k, 'c')]);
  console.log(me, k);
  runs.push(k);
  ({ me, k, parts, total: add(k, me), seen: runs.length })`

describe('stress', () => {
  it(`${EXECUTORS} executors × ${RUNS} runs concurrently, overlapping async tool calls, no cross-talk`, async () => {
    const before = enginePoolStats().engines
    const executors = await Promise.all(
      Array.from({ length: EXECUTORS }, async (_, me) => {
        // Half of them queue all their runs at once (§2.3 queue), half run one after another.
        const queued = me % 2 === 0
        const executor = await SESExecutor.create({
          timeoutMs: 60_000,
          runConcurrency: queued ? 'queue' : 'reject',
          maxQueuedRuns: queued ? RUNS : 0,
        })
        await executor.sendVariables({ me, runs: [] })
        await executor.sendTools({
          mix: async (k: number, tag: string) => {
            await randomDelay()
            return `${me}/${k}/${tag}`
          },
          add: (a: number, b: number) => a + b,
        })
        return { me, queued, executor }
      }),
    )
    // One runtime each, and no thread each: idle executors wait in the pool's queue.
    expect(enginePoolStats().engines).toBe(before + EXECUTORS)
    expect(engineThreads()).toBeLessThanOrEqual(enginePoolStats().size)

    const expected = (me: number, k: number) => ({
      output: { me, k, parts: [`${me}/${k}/a`, `${me}/${k}/b`, `${me}/${k}/c`], total: k + me, seen: k + 1 },
      logs: `${me} ${k}`,
      is_final_answer: false,
    })
    let mostThreads = 0
    const watch = setInterval(() => (mostThreads = Math.max(mostThreads, engineThreads())), 5)
    const checked = await Promise.all(
      executors.map(async ({ me, queued, executor }) => {
        const ks = Array.from({ length: RUNS }, (_, k) => k)
        if (queued) {
          const results = await Promise.all(ks.map((k) => executor.run(code(k))))
          results.forEach((result, k) => expect(contractOf(result)).toEqual(expected(me, k)))
        } else {
          for (const k of ks) expect(contractOf(await executor.run(code(k)))).toEqual(expected(me, k))
        }
        expect(executor.state).toBe('READY')
        return RUNS
      }),
    )
    clearInterval(watch)
    expect(checked.reduce((a, b) => a + b, 0)).toBe(EXECUTORS * RUNS)
    expect(mostThreads).toBeGreaterThan(0)
    // Beyond the size only while runs wait for Node's thread on a sync tool (src/scheduler/pool.rs).
    expect(mostThreads).toBeLessThanOrEqual(enginePoolStats().maxThreads)

    await Promise.all(executors.map(({ executor }) => executor.cleanup()))
    expect(executors.every(({ executor }) => executor.state === 'DEAD')).toBe(true)
    // cleanup() settles once the executor's runtime is freed: none is left behind.
    expect(enginePoolStats().engines).toBe(before)
  }, 180_000)
})
