// Hosts: the addon loaded in several Node environments at once (worker_threads and the
// main thread, each with executors in use), and processes that end with executors still alive —
// idle, DIRTY, or in the middle of a run — exit promptly and cleanly.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

import { describe, expect, it } from 'vitest'

import { SESExecutor } from './helpers'

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

function runWorker(id: number, runs: number): Promise<string[]> {
  const worker = new Worker(join(fixtures, 'worker-loop.cjs'), { workerData: { id, runs } })
  return new Promise((resolve, reject) => {
    worker.once('message', (outputs) => {
      void worker.terminate()
      resolve(outputs)
    })
    worker.once('error', reject)
  })
}

describe('worker_threads: the addon in several environments at once', () => {
  it('two workers and the main thread use their own executors concurrently, each answer going to its own environment', async () => {
    const main = await SESExecutor.create()
    await main.sendTools({ tag: async (n: number) => `main:${n}` })
    const mainRuns = (async () => {
      const outputs = []
      for (let n = 0; n < 50; n++) outputs.push((await main.run(`await tag(${n})`)).output)
      return outputs
    })()
    const [one, two, own] = await Promise.all([runWorker(1, 50), runWorker(2, 50), mainRuns])
    expect(one).toEqual(Array.from({ length: 50 }, (_, n) => `1:${n}`))
    expect(two).toEqual(Array.from({ length: 50 }, (_, n) => `2:${n}`))
    expect(own).toEqual(Array.from({ length: 50 }, (_, n) => `main:${n}`))
    await main.cleanup()
  })
})

describe('process exit with live executors (never cleaned up)', () => {
  const child = (mode: string) => {
    const started = Date.now()
    const result = spawnSync(process.execPath, [join(fixtures, 'live-executors.cjs'), mode], {
      encoding: 'utf8',
      timeout: 20_000,
    })
    return { ...result, ms: Date.now() - started }
  }

  it('READY and DIRTY executors left behind do not keep the process alive', () => {
    const { status, signal, stdout, ms } = child('idle')
    expect({ status, signal }).toEqual({ status: 0, signal: null })
    expect(stdout.trim().split('\n')).toEqual(['ERR_EXEC_TIMEOUT', 'READY DIRTY'])
    expect(ms).toBeLessThan(10_000)
  })

  it('process.exit() while one run spins a CPU loop and another awaits a tool exits at once, without a crash', () => {
    const { status, signal, stdout, stderr, ms } = child('exit')
    expect({ status, signal, stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    expect(stdout.trim().split('\n')).toEqual(['ERR_EXEC_TIMEOUT', 'RUNNING RUNNING'])
    // The runs' own deadline is 60 s: the process did not wait for it.
    expect(ms).toBeLessThan(10_000)
  })

  it('an uncaught exception during those runs ends the process with code 1, not a native crash', () => {
    const { status, signal, stderr, ms } = child('throw')
    expect({ status, signal }).toEqual({ status: 1, signal: null })
    expect(stderr).toContain('Error: uncaught on purpose')
    expect(ms).toBeLessThan(10_000)
  })
})
