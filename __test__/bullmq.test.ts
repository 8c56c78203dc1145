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
/** Every worker process started, so that none outlives the tests, whatever fails. */
const children = new Set<ChildProcess>()
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await Promise.all([...children].map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)))
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
  // With an IPC channel: a worker whose test process is gone exits.
  const child = spawn(process.execPath, [WORKER, String(redis.port), name], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  children.add(child)
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
      // The retries of the steps killed inside slow() answered their add_points call (made
      // before slow) from the journal: the tool was called once in that step, over both
      // attempts. Those cut by crash_once called it twice: its answer never reached the journal,
      // and the idempotency key kept the effect single (the points above). Other steps the
      // killed worker was running may have been cut inside add_points, between its effect and
      // the journal: their retries call it again, which is why effects carry keys.
      for (const step of stepsKilled) {
        expect({ step, invocations: Number(await client.get(`invocations-step:${step}`)) }).toEqual({ step, invocations: 1 })
      }
      for (const step of ['conv-7-s3', 'conv-31-s3']) {
        expect({ step, invocations: Number(await client.get(`invocations-step:${step}`)) }).toEqual({ step, invocations: 2 })
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
  it('two workers never run steps of one session at once; a snapshot cut or corrupted in Redis fails its step for good, calls no tool, and leaves the session as it was', async () => {
    const started = await Promise.all(['pair-a', 'pair-b'].map((name) => startWorker(name)))
    const stopAll = async () => {
      const stopped = await Promise.allSettled(started.splice(0).map(stopWorker))
      for (const result of stopped) if (result.status === 'rejected') throw result.reason
    }
    const queue = new SessionQueue({ connection: redis.connection })
    const client = new IORedis(redis.connection)
    try {
      // Twelve steps of one session added at once: both workers take some; the session's lease
      // makes each wait for the one before it.
      expect((await queue.step('shared', 'let count = 0; count', { waitMs: STEP_WAIT_MS })).output).toBe(0)
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          queue.step('shared', 'count += 1; const seen = count; await exclusive("shared", 25); seen', { stepId: `shared-${n}`, waitMs: STEP_WAIT_MS }),
        ),
      )
      expect(outcomes.map((outcome: { output: number }) => outcome.output).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 12 }, (_, n) => n + 1))
      expect(Number(await client.get('overlaps:shared'))).toBe(0)
      expect(new Set(await client.lrange('ran:shared', 0, -1)).size).toBe(2)
      expect(await queue.generation('shared')).toBe(13)
      const history = await queue.store.history('shared')
      expect(new Set(history.map((save: { step: string }) => save.step)).size).toBe(13)
      expect(history.map((save: { generation: number }) => save.generation)).toEqual(Array.from({ length: 13 }, (_, g) => g + 1))

      // Cut: the generation is there, the snapshot is not. Corrupted: a byte of it changed.
      const state = (id: string) => queue.store.key(id, 'state')
      for (const id of ['cut', 'corrupt']) await queue.step(id, 'let x = 1; x', { waitMs: STEP_WAIT_MS })
      // New workers, as on other machines: neither has the sessions live, both read Redis.
      await stopAll()
      started.push(...(await Promise.all(['pair-c', 'pair-d'].map((name) => startWorker(name)))))
      const good = await client.hgetBuffer(state('corrupt'), 'snap')
      const flipped = Buffer.from(good!)
      flipped[flipped.length - 5] ^= 0xff
      await client.hdel(state('cut'), 'snap')
      await client.hset(state('corrupt'), 'snap', flipped)
      for (const [id, code] of [
        ['cut', 'ERR_SESSION_LOST'],
        ['corrupt', 'ERR_SNAPSHOT_INVALID'],
      ]) {
        const failed = await queue.step(id, `x += 1; await add_points("${id}", 1); x`, { stepId: `${id}-2`, waitMs: STEP_WAIT_MS }).catch((error: unknown) => error)
        expect(failed).toMatchObject({ code: 'ERR_STEP_FAILED' })
        expect(String((failed as { message: string }).message)).toContain(code)
        const job = await queue.queue.getJob(`${id}-2`)
        // Failed for good at its first attempt: retrying cannot make the snapshot whole.
        expect({ id, attempts: job.attemptsMade, failed: await job.isFailed() }).toEqual({ id, attempts: 1, failed: true })
        expect(await client.get(`invocations:${id}`)).toBeNull()
        expect(await queue.generation(id)).toBe(1)
      }
      // The corrupted snapshot put back whole: the session goes on from where it was.
      await client.hset(state('corrupt'), 'snap', good!)
      expect((await queue.step('corrupt', 'x += 1; x', { waitMs: STEP_WAIT_MS })).output).toBe(2)
    } finally {
      await queue.close()
      client.disconnect()
      await stopAll()
    }
  }, 120_000)
})
