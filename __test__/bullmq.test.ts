// Sessions served by several worker processes through BullMQ over a real Redis (docs/serving.md
// "Many processes: BullMQ"): 50 conversations of several steps (every fifth waits for approval,
// some twice in one step) driven through three workers, one of which is killed with SIGKILL
// while it runs steps. Every conversation ends with the right answer, every tool effect
// happened once, and every session's saves form one line of generations. Two more workers die
// right after a tool's effect, two right after a save: those steps are taken up again by
// others, without a second effect or a second save.
import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { type RedisServer, startRedis } from './redis-server'

const require = createRequire(import.meta.url)
const { SessionQueue } = require('../lib/bullmq.cjs')
const IORedis = require('ioredis')

const WORKER = path.join(__dirname, 'fixtures', 'session-worker.cjs')
const CONVERSATIONS = 50
const STEP_WAIT_MS = 60_000
const READY_MS = 20_000

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})

interface WorkerProcess {
  name: string
  child: ChildProcess
  output: string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts a worker process and waits (bounded) until it takes jobs. */
async function startWorker(name: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER, String(redis.port), name], { stdio: ['ignore', 'pipe', 'pipe'] })
  const worker: WorkerProcess = {
    name,
    child,
    output: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  }
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (worker.output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (worker.output += chunk))
  const started = Date.now()
  while (!worker.output.includes('ready')) {
    if (child.exitCode !== null) throw new Error(`worker ${name} exited before it was ready:\n${worker.output}`)
    if (Date.now() - started > READY_MS) throw new Error(`worker ${name} not ready after ${READY_MS} ms:\n${worker.output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return worker
}

async function stopWorker(worker: WorkerProcess) {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return
  worker.child.kill('SIGTERM')
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000))
  if ((await Promise.race([worker.exited, timeout])) === 'timeout') {
    worker.child.kill('SIGKILL')
    await worker.exited
    throw new Error(`worker ${worker.name} did not stop on SIGTERM:\n${worker.output}`)
  }
}

/** What a conversation does, and what each step must answer. */
function conversation(i: number) {
  const account = `acct-${i}`
  const approval = i % 5 === 0
  // Every other approval step asks twice: the resumed run pauses again.
  const twice = i % 10 === 5
  const crashes = i === 7 || i === 31
  const steps: Array<{ code: string; expect: unknown; answers?: unknown[] }> = [
    { code: `let total = await add_points("${account}", 1); const notes = [note("${account}", "one")]; total`, expect: 1 },
    { code: `total = await add_points("${account}", 2); await slow(30); notes.push(note("${account}", "two")); total`, expect: 3 },
    approval && twice
      ? { code: `const ok = approve("bonus") && approve("really?"); if (ok) total = await add_points("${account}", 10); total`, expect: 13, answers: [true, true] }
      : approval
        ? { code: `const ok = approve("bonus"); if (ok) total = await add_points("${account}", 10); total`, expect: 13, answers: [true] }
        : { code: `total = await add_points("${account}", 3); await slow(20); total`, expect: 6 },
  ]
  let total = approval ? 13 : 6
  if (crashes) {
    total += 100
    steps.push({ code: `total = await crash_once("${account}", 100); total`, expect: total })
  }
  steps.push({ code: 'final_answer({ total, notes: notes.length })', expect: { total, notes: 2 } })
  const effects = steps.filter((step) => /add_points|crash_once/.test(step.code)).length
  return { sessionId: `conv-${i}`, account, steps, total, effects, pauses: approval ? (twice ? 2 : 1) : 0 }
}

describe('sessions on BullMQ workers', () => {
  it('50 conversations through three workers, one killed mid-step: right answers, every tool effect once, no session lost or forked', async () => {
    const workers: WorkerProcess[] = []
    const dead: WorkerProcess[] = []
    let stopping = false
    let spawned = 0
    // A process manager: a worker that dies is replaced.
    const supervise = async (name: string) => {
      const worker = await startWorker(name)
      workers.push(worker)
      worker.exited.then(() => {
        workers.splice(workers.indexOf(worker), 1)
        dead.push(worker)
        if (!stopping) supervise(`w${++spawned}`).catch((error) => console.error(error))
      })
      return worker
    }
    const queue = new SessionQueue({ connection: redis.connection })
    const client = new IORedis(redis.connection)
    try {
      await Promise.all([1, 2, 3].map(() => supervise(`w${++spawned}`)))

      let stepsDone = 0
      let killed: string | undefined
      const killWhenBusy = (async () => {
        // After about a third of the steps: a worker inside a step whose first tool call is
        // answered (and journaled), which its retry must not make again.
        const deadline = Date.now() + STEP_WAIT_MS
        while (Date.now() < deadline) {
          if (stepsDone >= 50) {
            for (const worker of workers) {
              const inside = await client.smembers(`slow:${worker.name}`)
              if (inside.length > 0 && worker.child.exitCode === null) {
                killed = worker.name
                worker.child.kill('SIGKILL')
                return inside
              }
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 2))
        }
        throw new Error('no worker was inside a step to kill')
      })()

      const plans = Array.from({ length: CONVERSATIONS }, (_, i) => conversation(i))
      const generations = new Map<string, number[]>()
      await Promise.all(
        plans.map(async (plan) => {
          const seen: number[] = []
          generations.set(plan.sessionId, seen)
          for (const [n, step] of plan.steps.entries()) {
            const stepId = `${plan.sessionId}-s${n}`
            let outcome = await queue.step(plan.sessionId, step.code, { stepId, waitMs: STEP_WAIT_MS })
            for (const [k, answer] of (step.answers ?? []).entries()) {
              expect(outcome.paused, `${stepId} pauses`).toMatchObject({ tool: 'approve', reason: { what: k === 0 ? 'bonus' : 'really?' } })
              seen.push(outcome.generation)
              outcome = await queue.answer(plan.sessionId, stepId, answer, { waitMs: STEP_WAIT_MS })
            }
            expect(outcome, `${stepId}: ${JSON.stringify(outcome)}`).toMatchObject({ ok: true, output: step.expect })
            seen.push(outcome.generation)
            stepsDone++
          }
        }),
      )
      const stepsKilled = await killWhenBusy
      expect(killed).toBeDefined()
      expect(stepsKilled.length).toBeGreaterThan(0)

      for (const plan of plans) {
        // Tool effects: once each, whatever the retries made of the calls.
        const [points, effects, notes] = await Promise.all([
          client.get(`points:${plan.account}`),
          client.get(`effects:${plan.account}`),
          client.llen(`notes:${plan.account}`),
        ])
        expect({ account: plan.account, points: Number(points), effects: Number(effects), notes }).toEqual({
          account: plan.account,
          points: plan.total,
          effects: plan.effects,
          notes: 2,
        })
        // One line of saves per session: generations 1, 2, 3, … in step order, each step saved
        // once, and once more for each pause.
        const saves = plan.steps.length + plan.pauses
        expect(generations.get(plan.sessionId)).toEqual(Array.from({ length: saves }, (_, g) => g + 1))
        const history = await queue.store.history(plan.sessionId)
        const expectedHistory = plan.steps.flatMap((_, n) => {
          const stepId = `${plan.sessionId}-s${n}`
          return n === 2 ? Array(1 + plan.pauses).fill(stepId) : [stepId]
        })
        expect(history).toEqual(expectedHistory.map((step, g) => ({ generation: g + 1, step })))
        expect(await queue.generation(plan.sessionId)).toBe(saves)
      }
      // The crashes happened, and the steps they cut were taken up again.
      expect(await client.keys('crashed:*')).toHaveLength(2)
      expect(await client.keys('crashed-after-save:*')).toHaveLength(2)
      const jobs = await queue.queue.getJobs(['completed'])
      expect(jobs.length).toBe(plans.reduce((n, plan) => n + plan.steps.length, 0))
      const retried = jobs.filter((job: { attemptsStarted: number }) => job.attemptsStarted > 1).map((job: { id: string }) => job.id)
      expect(retried).toEqual(expect.arrayContaining([...stepsKilled, 'conv-7-s3', 'conv-31-s3', 'conv-13-s1', 'conv-29-s1']))
      expect(dead.map((w) => w.child.signalCode)).toEqual(Array(5).fill('SIGKILL'))
      // The killed worker's session probes: a new step on every session still sees its state.
      const probes = await Promise.all(plans.map((plan) => queue.step(plan.sessionId, '[total, notes]', { waitMs: STEP_WAIT_MS })))
      expect(probes.map((p: { output: unknown }) => p.output)).toEqual(plans.map((plan) => [plan.total, ['one'.length, 'two'.length]]))
      // The retries of the steps killed inside slow() answered their add_points call from the
      // journal: the tool was not called again. (Those cut by crash_once were: its answer never
      // reached the journal, and the idempotency key kept the effect single.)
      const crashed = ['acct-7', 'acct-31']
      for (const account of new Set([...stepsKilled.map((step) => `acct-${/^conv-(\d+)-/.exec(step)![1]}`), ...crashed])) {
        expect({ account, invocations: Number(await client.get(`invocations:${account}`)) }).toEqual({
          account,
          invocations: Number(await client.get(`effects:${account}`)) + (crashed.includes(account) ? 1 : 0),
        })
      }
      // The steps whose worker died after their save: taken up again, answered from the save.
      for (const step of ['conv-13-s1', 'conv-29-s1']) {
        const job = jobs.find((j: { id: string }) => j.id === step)
        expect(job.returnvalue).toMatchObject({ ok: true, generation: 2 })
      }
    } finally {
      stopping = true
      const stopped = await Promise.allSettled(workers.map(stopWorker))
      await queue.close()
      client.disconnect()
      for (const result of stopped) if (result.status === 'rejected') throw result.reason
    }
  }, 180_000)
})
