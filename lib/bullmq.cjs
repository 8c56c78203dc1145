'use strict'
// `@smolagents-ts/ses-executor/bullmq` (docs/serving.md "Many processes: BullMQ"): sessions served
// by any number of worker processes, on any number of machines, through BullMQ over Redis. Each
// agent step is a BullMQ job naming its session; whichever worker takes it loads the session's
// snapshot from Redis, restores it, runs the step and saves the session back with a
// compare-and-swap on its generation. The package brings no queue of its own: BullMQ moves the
// jobs, retries them and recovers those of a dead worker; this module keeps each session
// consistent across them (one step at a time, no step saved twice, no tool answer asked twice).
//
// What a session is in Redis (every key of a session shares the hash tag `{id}`, so that a Redis
// Cluster keeps them on one node and the Lua scripts below may touch them together):
//   <prefix>:{id}:state       hash: gen, snap (the snapshot), job (the last step saved), commits
//                             (how many saves that step made), result (its result, JSON),
//                             paused (the step that waits for an answer, or '')
//   <prefix>:{id}:lease       the step attempt that holds the session (a token), with a TTL
//   <prefix>:{id}:calls:<step>:<phase>   hash: call number → the answer of a tool call of a step
//                             not saved yet (v8 serialization), so that a retry of the step is
//                             answered from it instead of calling the tool again
//   <prefix>:{id}:answer:<step>:<pause>  the answer to a paused step (v8 serialization); a
//                             step that pauses again waits for an answer of its own
//   <prefix>:{id}:history     the last 64 saves: "<generation> <step>"

const { AsyncLocalStorage } = require('node:async_hooks')
const { randomUUID } = require('node:crypto')
const v8 = require('node:v8')

let bullmq
let IORedis
try {
  bullmq = require('bullmq')
  IORedis = require('ioredis')
} catch (error) {
  throw new Error(
    '@smolagents-ts/ses-executor/bullmq needs the packages bullmq and ioredis (optional peer dependencies): npm install bullmq ioredis',
    { cause: error },
  )
}
const { Queue, QueueEvents, Worker, Job, DelayedError, UnrecoverableError } = bullmq

const { binding } = require('./executor.cjs')
const { SessionPool } = require('./session-pool.cjs')
const { SessionError, conflict, checkId, checkBytes, checkGeneration } = require('./session-store.cjs')
const { toJsonSafe, errorResult } = require('./run-javascript-tool.cjs')

const DEFAULT_QUEUE = 'ses-steps'
const DEFAULT_PREFIX = 'ses'
/** How long a tool-call journal outlives its last write (a step that never finishes). */
const JOURNAL_TTL_SECONDS = 7 * 24 * 3600

// -- Lua ------------------------------------------------------------------------------------------

/** `put`: KEYS state, history; ARGV expected generation, snapshot. */
const PUT = `
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
if gen ~= tonumber(ARGV[1]) then return {-1, gen} end
gen = gen + 1
redis.call('HSET', KEYS[1], 'gen', gen, 'snap', ARGV[2])
redis.call('RPUSH', KEYS[2], gen .. ' -')
redis.call('LTRIM', KEYS[2], -64, -1)
return {gen, 0}`

/** `delete`: KEYS state, history, lease; ARGV expected generation or ''. */
const DELETE = `
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
if gen == 0 then return {0, 0} end
if ARGV[1] ~= '' and gen ~= tonumber(ARGV[1]) then return {-1, gen} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {1, gen}`

/**
 * A step's save: KEYS state, lease, calls journal, history; ARGV expected generation, lease
 * token, snapshot ('' for none: the step's result is kept, the state stays), step id, result,
 * paused step id ('' for none). Refused (-1) unless the attempt still holds the lease, and (-2)
 * unless the state is at the expected generation.
 */
const COMMIT = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return {-1, 0} end
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
if gen ~= tonumber(ARGV[1]) then return {-2, gen} end
local commits = 1
if redis.call('HGET', KEYS[1], 'job') == ARGV[4] then
  commits = tonumber(redis.call('HGET', KEYS[1], 'commits') or '0') + 1
end
if ARGV[3] ~= '' then
  gen = gen + 1
  redis.call('HSET', KEYS[1], 'gen', gen, 'snap', ARGV[3])
  redis.call('RPUSH', KEYS[4], gen .. ' ' .. ARGV[4])
  redis.call('LTRIM', KEYS[4], -64, -1)
end
redis.call('HSET', KEYS[1], 'job', ARGV[4], 'commits', commits, 'result', ARGV[5], 'paused', ARGV[6])
redis.call('DEL', KEYS[3])
return {gen, commits}`

/** KEYS lease; ARGV token, ms: extends the lease if the token holds it. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`

/** KEYS lease; ARGV token: lets the lease go if the token holds it. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

// -- the store ------------------------------------------------------------------------------------

/** Reads a Redis connection option: an ioredis instance (duplicated) or its options. */
function redisFrom(connection) {
  if (connection instanceof IORedis) return connection.duplicate()
  if (connection === null || typeof connection !== 'object') {
    throw new TypeError('connection must be an ioredis instance or ioredis options ({ host, port, … })')
  }
  return new IORedis({ ...connection, maxRetriesPerRequest: null })
}

/**
 * Sessions in Redis: the `SessionPool` store interface (`get`, `put`, `delete`, with the
 * compare-and-swap done by a Lua script), and what the BullMQ worker adds to it.
 */
class RedisStore {
  #redis
  #prefix

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('new RedisStore(options): options must be an object')
    const { connection, prefix = DEFAULT_PREFIX } = options
    if (typeof prefix !== 'string' || !/^[\w.-]{1,64}$/.test(prefix)) throw new TypeError('RedisStore: prefix must be 1-64 letters, digits, _ . or -')
    this.#prefix = prefix
    this.#redis = redisFrom(connection)
    const commands = { sesPut: [2, PUT], sesDelete: [3, DELETE], sesCommit: [4, COMMIT], sesRenew: [1, RENEW], sesRelease: [1, RELEASE] }
    for (const [name, [numberOfKeys, lua]] of Object.entries(commands)) this.#redis.defineCommand(name, { numberOfKeys, lua })
  }

  /** The key of one of a session's records. */
  key(sessionId, ...parts) {
    checkId(sessionId)
    // Encoded so that no id can end the hash tag early or pass for another session's key.
    return [`${this.#prefix}:{${encodeURIComponent(sessionId)}}`, ...parts].join(':')
  }

  async get(sessionId) {
    const [gen, snap] = await this.#redis.hmgetBuffer(this.key(sessionId, 'state'), 'gen', 'snap')
    const generation = gen === null ? 0 : Number(gen.toString())
    if (generation === 0) return undefined
    if (!Number.isSafeInteger(generation) || generation < 0 || snap === null || snap.length === 0) {
      // Every save writes the generation and the snapshot together: one without the other is
      // a session someone else cut, never a new one.
      throw new SessionError('ERR_SESSION_LOST', `session ${JSON.stringify(sessionId)}: Redis has generation ${gen} and ${snap === null || snap.length === 0 ? 'no snapshot' : 'a snapshot'}`, {
        sessionId,
      })
    }
    return { bytes: new Uint8Array(snap.buffer, snap.byteOffset, snap.byteLength), generation }
  }

  async put(sessionId, bytes, expectedGeneration) {
    checkBytes(bytes)
    checkGeneration(expectedGeneration)
    const [generation, stored] = await this.#redis.sesPut(
      this.key(sessionId, 'state'),
      this.key(sessionId, 'history'),
      expectedGeneration,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    )
    if (generation < 0) throw conflict(sessionId, expectedGeneration, stored)
    return generation
  }

  async delete(sessionId, expectedGeneration) {
    if (expectedGeneration !== undefined) checkGeneration(expectedGeneration)
    const [deleted, stored] = await this.#redis.sesDelete(
      this.key(sessionId, 'state'),
      this.key(sessionId, 'history'),
      this.key(sessionId, 'lease'),
      expectedGeneration ?? '',
    )
    if (deleted < 0) throw conflict(sessionId, expectedGeneration, stored)
    return deleted === 1
  }

  /** What a step needs to know of its session first: its generation and its last step. */
  async head(sessionId) {
    const [gen, job, commits, result, paused] = await this.#redis.hmget(this.key(sessionId, 'state'), 'gen', 'job', 'commits', 'result', 'paused')
    return {
      generation: gen === null ? 0 : Number(gen),
      step: job ?? undefined,
      commits: commits === null ? 0 : Number(commits),
      result: result ?? undefined,
      paused: paused === null || paused === '' ? undefined : paused,
    }
  }

  /** The saves of the session, oldest first (the last 64): `{ generation, step }`. */
  async history(sessionId) {
    const lines = await this.#redis.lrange(this.key(sessionId, 'history'), 0, -1)
    return lines.map((line) => {
      const [generation, step] = line.split(' ')
      return { generation: Number(generation), step: step === '-' ? undefined : step }
    })
  }

  /** Takes the session for a step attempt, unless another attempt holds it. */
  async acquireLease(sessionId, token, ms) {
    return (await this.#redis.set(this.key(sessionId, 'lease'), token, 'PX', ms, 'NX')) === 'OK'
  }

  async renewLease(sessionId, token, ms) {
    return (await this.#redis.sesRenew(this.key(sessionId, 'lease'), token, ms)) === 1
  }

  async releaseLease(sessionId, token) {
    await this.#redis.sesRelease(this.key(sessionId, 'lease'), token)
  }

  #journalKey(sessionId, step, phase) {
    return this.key(sessionId, 'calls', step, String(phase))
  }

  /** The answered calls of a step's phase: call number → its record. */
  async journal(sessionId, step, phase) {
    const entries = await this.#redis.hgetallBuffer(this.#journalKey(sessionId, step, phase))
    const calls = new Map()
    for (const [field, value] of Object.entries(entries)) calls.set(Number(field), v8.deserialize(value))
    return calls
  }

  /** Records a call's answer before (async tool) or while (sync tool) the sandbox gets it. */
  async recordCall(sessionId, step, phase, call, record) {
    const key = this.#journalKey(sessionId, step, phase)
    await this.#redis.multi().hset(key, String(call), v8.serialize(record)).expire(key, JOURNAL_TTL_SECONDS).exec()
  }

  /** A step's save (see COMMIT); resolves with the generation and the step's count of saves. */
  async commitStep(sessionId, { expected, token, bytes, step, phase, result, paused }) {
    const [generation, commits] = await this.#redis.sesCommit(
      this.key(sessionId, 'state'),
      this.key(sessionId, 'lease'),
      this.#journalKey(sessionId, step, phase),
      this.key(sessionId, 'history'),
      expected,
      token,
      bytes === undefined ? '' : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      step,
      JSON.stringify(result),
      paused ? step : '',
    )
    if (generation === -1) {
      throw new SessionError('ERR_SESSION_LEASE_LOST', `session ${JSON.stringify(sessionId)}: step ${step} lost the session's lease before saving; its save is refused`, {
        sessionId,
        step,
      })
    }
    if (generation === -2) throw conflict(sessionId, expected, commits)
    return { generation, commits }
  }

  /**
   * Stores the answer to a pause of a step (`pause`: the step's count of saves when it paused);
   * false when that pause has one already.
   */
  async setAnswer(sessionId, step, pause, answer) {
    const set = await this.#redis.set(this.key(sessionId, 'answer', step, String(pause)), v8.serialize({ answer }), 'EX', JOURNAL_TTL_SECONDS, 'NX')
    return set === 'OK'
  }

  /** The answer to a pause of a step, as `{ answer }`, or undefined. */
  async answer(sessionId, step, pause) {
    const stored = await this.#redis.getBuffer(this.key(sessionId, 'answer', step, String(pause)))
    return stored === null ? undefined : v8.deserialize(stored)
  }

  async close() {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }
}

// -- tool calls ----------------------------------------------------------------------------------

const toolCalls = new AsyncLocalStorage()

/**
 * The tool call being answered, inside a tool of a `SessionWorker`:
 * `{ sessionId, step, call, idempotencyKey }`, or `undefined` outside one. `idempotencyKey` is
 * the same for every attempt of that call (a retry after a crashed worker, a stale worker still
 * running it): a tool with an effect outside (a payment, a message, a row) passes it on, or
 * records it with the effect, so that the effect happens once.
 */
function currentToolCall() {
  return toolCalls.getStore()
}

/** Replays a recorded answer as the tool gave it: a value or a throw, at once or as a promise. */
function replay(record) {
  const settle = () => {
    if (record.threw === undefined) return record.value
    const error = new Error(record.threw.message)
    error.name = record.threw.name
    throw error
  }
  if (!record.async) return settle()
  return new Promise((resolve) => resolve(settle()))
}

function thrownRecord(error) {
  return { name: typeof error?.name === 'string' ? error.name : 'Error', message: typeof error?.message === 'string' ? error.message : String(error) }
}

/**
 * Wraps each tool of a session so that its calls go through the step's journal: a call the
 * journal answers is not made again; any other is made (with its `currentToolCall()`) and its
 * answer recorded before the sandbox continues (for a tool that returns a promise) or as it does
 * (for one that answers at once, which cannot wait for Redis).
 */
function journaledTools(tools, sessionId, steps) {
  if (tools === undefined || tools === null) return tools
  const wrapped = {}
  for (const [name, tool] of Object.entries(tools)) {
    if (typeof tool === 'function') {
      wrapped[name] = journaled(name, (args) => Reflect.apply(tool, undefined, args), sessionId, steps)
    } else if (tool !== null && typeof tool === 'object' && typeof tool.forward === 'function') {
      const forward = tool.forward
      wrapped[name] = { ...tool, forward: journaled(name, (args) => Reflect.apply(forward, tool, args), sessionId, steps) }
    } else {
      wrapped[name] = tool
    }
  }
  return wrapped
}

function journaled(name, call, sessionId, steps) {
  return function (...args) {
    const step = steps.get(sessionId)
    // Outside a step (never, for a worker's executor): the tool as it is.
    if (step === undefined) return call(args)
    const number = step.calls++
    const argBytes = v8.serialize(args)
    const recorded = step.journal.get(number)
    if (recorded !== undefined) {
      if (recorded.tool !== name || !Buffer.from(recorded.args).equals(argBytes)) {
        step.diverged(number, name, recorded.tool)
        throw new SessionError('ERR_STEP_DIVERGED', `call ${number} of this step went to ${name}, its earlier attempt's to ${recorded.tool} with other arguments`)
      }
      step.replayed++
      return replay(recorded)
    }
    if (step.lost()) throw new SessionError('ERR_SESSION_LEASE_LOST', 'this step attempt no longer holds its session')
    const context = { sessionId, step: step.id, call: number, idempotencyKey: `${sessionId}:${step.id}:${step.phase}:${number}` }
    const record = (value, threw, async) => step.record(number, { tool: name, args: argBytes, async, value, threw })
    // A tool that answers at once cannot wait for Redis: its record goes out as the sandbox
    // continues, and the step's save waits for it (a failure to record fails the step).
    const recordLater = (value, threw) => {
      const written = record(value, threw, false)
      written.catch(() => {})
      step.pending.push(written)
    }
    let answer
    try {
      answer = toolCalls.run(context, () => call(args))
    } catch (error) {
      recordLater(undefined, thrownRecord(error))
      throw error
    }
    if (answer === null || (typeof answer !== 'object' && typeof answer !== 'function') || typeof answer.then !== 'function') {
      if (!isPause(answer)) recordLater(answer, undefined)
      return answer
    }
    return Promise.resolve(answer).then(
      async (value) => {
        if (!isPause(value)) await record(value, undefined, true)
        return value
      },
      async (error) => {
        await record(undefined, thrownRecord(error), true)
        throw error
      },
    )
  }
}

/** A tool's `pauseRun()` answer: not recorded (a retry asks the tool again, and it pauses again). */
function isPause(value) {
  const PauseRequest = binding.PauseRequest
  return typeof PauseRequest === 'function' && value instanceof PauseRequest
}

// -- the worker -----------------------------------------------------------------------------------

/** The job data of a step, checked. */
function readStep(data) {
  if (data === null || typeof data !== 'object') throw new UnrecoverableError('a step job needs data { sessionId, code }')
  const { sessionId, code, input, variables } = data
  if (typeof sessionId !== 'string' || sessionId === '' || sessionId.length > 1024) throw new UnrecoverableError('a step job needs a sessionId string')
  if (typeof code !== 'string') throw new UnrecoverableError('a step job needs a code string')
  if (variables !== undefined && (variables === null || typeof variables !== 'object' || Array.isArray(variables))) {
    throw new UnrecoverableError('a step job\'s variables must be an object')
  }
  return { sessionId, code, hasInput: Object.hasOwn(data, 'input'), input, variables }
}

/** A run's CodeOutput as a step result: JSON-safe (BullMQ and Redis keep it as JSON). */
function stepResult(output) {
  const result = {
    ok: true,
    output: toJsonSafe(output.output),
    logs: output.logs,
    is_final_answer: output.is_final_answer,
    images: (output.images ?? []).map(({ mimeType, width, height, data }) => ({
      mimeType,
      width,
      height,
      dataUrl: `data:${mimeType};base64,${Buffer.from(data).toString('base64')}`,
    })),
  }
  if (output.paused !== undefined) result.paused = toJsonSafe(output.paused)
  return result
}

/**
 * A BullMQ worker that runs agent steps of sessions (`SessionQueue` adds them). It keeps up to
 * `maxLive` sessions live (a `SessionPool` over a `RedisStore`) and takes a live one only when it
 * is at the generation Redis has; any other step restores the session from Redis first.
 */
class SessionWorker {
  #store
  #pool
  #worker
  #steps = new Map()
  #leaseMs
  #busyDelayMs
  #pausedRecheckMs
  #counts = { steps: 0, replayedCalls: 0, alreadySaved: 0, parked: 0, conflicts: 0 }

  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('new SessionWorker(options): options must be an object')
    const {
      connection,
      queueName = DEFAULT_QUEUE,
      prefix = DEFAULT_PREFIX,
      executorOptions = {},
      tools,
      maxLive = 100,
      concurrency = 4,
      leaseMs = 30_000,
      busyDelayMs = 250,
      pausedRecheckMs = 3_600_000,
      workerOptions = {},
    } = options
    for (const [name, value, min] of [
      ['leaseMs', leaseMs, 100],
      ['busyDelayMs', busyDelayMs, 1],
      ['pausedRecheckMs', pausedRecheckMs, 1],
      ['concurrency', concurrency, 1],
    ]) {
      if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`SessionWorker: ${name} must be an integer ≥ ${min}`)
    }
    if (tools !== undefined && (tools === null || (typeof tools !== 'object' && typeof tools !== 'function'))) {
      throw new TypeError('SessionWorker: tools must be a record of tools or a function of the session id that returns one')
    }
    this.#leaseMs = leaseMs
    this.#busyDelayMs = busyDelayMs
    this.#pausedRecheckMs = pausedRecheckMs
    this.#store = new RedisStore({ connection, prefix })
    const steps = this.#steps
    this.#pool = new SessionPool({
      maxLive,
      store: this.#store,
      executorOptions,
      tools: async (sessionId) => journaledTools(typeof tools === 'function' ? await tools(sessionId) : tools, sessionId, steps),
    })
    this.#worker = new Worker(queueName, (job, token, signal) => this.#process(job, token, signal), { ...workerOptions, connection, concurrency })
  }

  /** The BullMQ worker (its events: `completed`, `failed`, `error`, …). */
  get worker() {
    return this.#worker
  }

  /** The session pool of this worker. */
  get pool() {
    return this.#pool
  }

  /**
   * What this worker did: `steps` run, `replayedCalls` (tool calls a retry answered from the
   * journal), `alreadySaved` (retries of steps an earlier attempt had saved), `parked` (steps
   * set to wait for an answer), `conflicts`, and its pool's figures.
   */
  stats() {
    return { ...this.#counts, pool: this.#pool.stats() }
  }

  /** Stops taking steps, waits for those under way, hibernates nothing (Redis has every session). */
  async close() {
    await this.#worker.close()
    await this.#pool.close()
    await this.#store.close()
  }

  async #process(job, token, signal) {
    const { sessionId, code, hasInput, input, variables } = readStep(job.data)
    const store = this.#store
    const lease = `${job.id}/${randomUUID()}`
    if (!(await store.acquireLease(sessionId, lease, this.#leaseMs))) {
      // Another attempt (of this step, on a worker that died or stalls, or of another step of
      // the session) holds it: this one waits, and it does not count as an attempt.
      await job.moveToDelayed(Date.now() + this.#busyDelayMs, token)
      throw new DelayedError()
    }
    const abort = new AbortController()
    let lost = false
    const loseLease = () => {
      lost = true
      abort.abort()
    }
    signal?.addEventListener('abort', () => abort.abort(), { once: true })
    const renewal = setInterval(() => {
      store.renewLease(sessionId, lease, this.#leaseMs).then(
        (held) => held || loseLease(),
        () => {},
      )
    }, Math.max(50, Math.floor(this.#leaseMs / 3)))
    try {
      const head = await store.head(sessionId)
      const ours = head.step === job.id
      if (ours && head.paused === undefined) {
        // An earlier attempt saved this step and died before BullMQ heard of it.
        this.#counts.alreadySaved++
        return JSON.parse(head.result)
      }
      if (head.paused !== undefined && head.paused !== job.id) {
        throw new UnrecoverableError(`ERR_SESSION_PAUSED: session ${sessionId} waits for the answer to step ${head.paused}`)
      }
      let answer
      if (head.paused === job.id) {
        answer = await store.answer(sessionId, job.id, head.commits)
        if (answer === undefined) return await this.#park(job, token, sessionId, JSON.parse(head.result), head.commits)
      }
      const phase = ours ? head.commits : 0
      let divergence
      const step = {
        id: job.id,
        phase,
        calls: 0,
        replayed: 0,
        journal: await store.journal(sessionId, job.id, phase),
        pending: [],
        lost: () => lost,
        record: (number, record) => store.recordCall(sessionId, job.id, phase, number, record),
        diverged: (number, name, recorded) => {
          divergence ??= `call ${number} went to ${name}, the earlier attempt's to ${recorded}`
          abort.abort()
        },
      }
      this.#steps.set(sessionId, step)
      const { saved: result, commits } = await this.#pool.withSession(
        sessionId,
        async (executor, session) => {
          try {
            return await this.#runStep(executor, session, { sessionId, job, code, hasInput, input, variables, answer, step, lease, abort })
          } catch (error) {
            session.discard()
            throw error
          } finally {
            this.#counts.replayedCalls += step.replayed
          }
        },
        { generation: head.generation },
      )
      if (divergence !== undefined) {
        throw new UnrecoverableError(`ERR_STEP_DIVERGED: step ${job.id} of session ${sessionId} went another way than its earlier attempt (${divergence}); the session stays at generation ${head.generation}`)
      }
      if (lost) throw new SessionError('ERR_SESSION_LEASE_LOST', `step ${job.id} lost the lease of session ${sessionId}`)
      this.#counts.steps++
      if (result.paused !== undefined) return await this.#park(job, token, sessionId, result, commits)
      return result
    } catch (error) {
      if (error?.code === 'ERR_SESSION_CONFLICT') this.#counts.conflicts++
      // A snapshot the store gave that restore refuses, or a session the store lost, will not
      // get better by retrying: the step fails for good, the session stays as Redis has it.
      if (error?.code === 'ERR_SNAPSHOT_INVALID' || error?.code === 'ERR_SESSION_LOST') {
        throw new UnrecoverableError(`${error.code}: ${error.message}`)
      }
      throw error
    } finally {
      clearInterval(renewal)
      this.#steps.delete(sessionId)
      await store.releaseLease(sessionId, lease).catch(() => {})
    }
  }

  /** Runs the step on the live executor and saves the session with its result. */
  async #runStep(executor, session, { sessionId, job, code, hasInput, input, variables, answer, step, lease, abort }) {
    let result
    try {
      let output
      if (answer !== undefined) {
        output = await executor.resume(answer.answer)
      } else {
        if (variables !== undefined) await executor.sendVariables(variables)
        const runOptions = { signal: abort.signal }
        if (hasInput) runOptions.input = input
        output = await executor.run(code, runOptions)
      }
      result = stepResult(output)
    } catch (error) {
      // A failure of the code is the step's result (the model reads it); anything else is not.
      result = errorResult(error)
    }
    await Promise.all(step.pending)
    if (step.lost()) throw new SessionError('ERR_SESSION_LEASE_LOST', `step ${job.id} lost the lease of session ${sessionId}`)
    const state = executor.state
    let bytes
    if (state === 'READY' || state === 'PAUSED') bytes = await executor.snapshot()
    const generation = bytes === undefined ? session.generation : session.generation + 1
    const saved = { ...result, generation }
    const { commits } = await this.#store.commitStep(sessionId, {
      expected: session.generation,
      token: lease,
      bytes,
      step: job.id,
      phase: step.phase,
      result: saved,
      paused: result.paused !== undefined,
    })
    // A step whose executor could not be snapshotted (left DIRTY) changed nothing the store
    // keeps: the session stays at its generation, and this copy of it goes.
    if (bytes === undefined) session.discard()
    else session.saved(generation)
    return { saved, commits }
  }

  /**
   * Makes a paused step wait for its answer: reports the pause (the job's progress, which
   * `SessionQueue` listens for), moves the job to BullMQ's delayed set, and promotes it at once
   * if the answer came in meanwhile (`SessionQueue.answer` stores it, then promotes the job).
   * `pause` is the step's count of saves, the last of which saved it paused.
   */
  async #park(job, token, sessionId, result, pause) {
    this.#counts.parked++
    await job.updateProgress({ paused: result.paused, generation: result.generation, logs: result.logs })
    await job.moveToDelayed(Date.now() + this.#pausedRecheckMs, token)
    if ((await this.#store.answer(sessionId, job.id, pause)) !== undefined) await job.promote().catch(() => {})
    throw new DelayedError()
  }
}

// -- the producer -------------------------------------------------------------------------------

/**
 * Adds agent steps to the queue and waits for their outcome: what a server handling
 * conversations uses. A step resolves with its result once a worker saved it, or with
 * `{ paused }` once it waits for an answer (`answer()` continues it).
 */
class SessionQueue {
  #queue
  #events
  #store
  #ready
  #jobOptions

  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('new SessionQueue(options): options must be an object')
    const { connection, queueName = DEFAULT_QUEUE, prefix = DEFAULT_PREFIX, jobOptions = {}, queueOptions = {} } = options
    this.#queue = new Queue(queueName, { ...queueOptions, connection })
    this.#events = new QueueEvents(queueName, queueOptions.prefix === undefined ? { connection } : { connection, prefix: queueOptions.prefix })
    this.#store = new RedisStore({ connection, prefix })
    this.#jobOptions = { attempts: 5, backoff: { type: 'exponential', delay: 200 }, removeOnComplete: 1000, removeOnFail: 1000, ...jobOptions }
    // One listener per step waited for (BullMQ's waitUntilFinished adds its own too): as many
    // as there are steps in flight, not a leak.
    this.#queue.setMaxListeners(0)
    this.#events.setMaxListeners(0)
    this.#ready = this.#events.waitUntilReady()
  }

  /** The BullMQ queue. */
  get queue() {
    return this.#queue
  }

  /** The session store (Redis) the workers save to. */
  get store() {
    return this.#store
  }

  /**
   * Adds a step (`code` to run in the session, with `input`, after `sendVariables(variables)`)
   * and waits for its outcome, for at most `waitMs` (the step goes on if the wait ends first).
   * `stepId` names the job (default: a new UUID); a step added again under the same id is the
   * same job. Resolves with the step's result: `{ ok: true, output, logs, is_final_answer,
   * images, paused?, generation, stepId }` or `{ ok: false, error, logs, generation, stepId }`.
   */
  async step(sessionId, code, options = {}) {
    checkId(sessionId)
    if (typeof code !== 'string') throw new TypeError('step(sessionId, code): code must be a string')
    const { input, variables, stepId = randomUUID(), waitMs } = options
    if (typeof stepId !== 'string' || !/^[\w.-]{1,128}$/.test(stepId)) throw new TypeError('stepId must be 1-128 letters, digits, _ . or -')
    const data = { sessionId, code }
    if (Object.hasOwn(options, 'input')) data.input = input
    if (variables !== undefined) data.variables = variables
    await this.#ready
    const job = await this.#queue.add('step', data, { ...this.#jobOptions, jobId: stepId })
    return this.#outcome(job, sessionId, undefined, waitMs)
  }

  /**
   * Answers a paused step (what `executor.resume(answer)` takes: the paused call's result, or
   * `{ error }`) and waits for its next outcome. Refused (`ERR_NOT_PAUSED`) unless the session
   * waits for this step, or (`ERR_ALREADY_ANSWERED`) when it has an answer already.
   */
  async answer(sessionId, stepId, answer, options = {}) {
    const head = await this.#store.head(sessionId)
    if (head.paused !== stepId) {
      throw new SessionError('ERR_NOT_PAUSED', `session ${JSON.stringify(sessionId)} does not wait for an answer to step ${stepId}`, { sessionId, stepId })
    }
    if (!(await this.#store.setAnswer(sessionId, stepId, head.commits, answer))) {
      throw new SessionError('ERR_ALREADY_ANSWERED', `step ${stepId} of session ${JSON.stringify(sessionId)} has an answer already`, { sessionId, stepId })
    }
    await this.#ready
    const job = await Job.fromId(this.#queue, stepId)
    if (job === undefined) throw new SessionError('ERR_NOT_PAUSED', `no job ${stepId} in the queue`, { sessionId, stepId })
    // Not delayed yet (the worker is still parking it): the worker promotes it itself.
    await job.promote().catch(() => {})
    return this.#outcome(job, sessionId, head.generation, options.waitMs)
  }

  /** The session's generation in Redis (0: none). */
  async generation(sessionId) {
    return (await this.#store.head(sessionId)).generation
  }

  /** Waits for a step to finish or to pause at a generation above `after`. */
  #outcome(job, sessionId, after, waitMs) {
    const events = this.#events
    const stepId = job.id
    return new Promise((resolve, reject) => {
      let done = false
      let timer
      const finish = (settle, value) => {
        if (done) return
        done = true
        events.off('progress', onProgress)
        clearTimeout(timer)
        settle(value)
      }
      const pausedOutcome = (data) =>
        data !== null && typeof data === 'object' && data.paused !== undefined && (after === undefined || data.generation > after)
      const onProgress = ({ jobId, data }) => {
        if (jobId === stepId && pausedOutcome(data)) {
          finish(resolve, { ok: true, paused: data.paused, logs: data.logs, generation: data.generation, stepId, sessionId })
        }
      }
      events.on('progress', onProgress)
      if (waitMs !== undefined) {
        timer = setTimeout(
          () => finish(reject, new SessionError('ERR_STEP_TIMEOUT', `step ${stepId} of session ${JSON.stringify(sessionId)} has no outcome after ${waitMs} ms`, { sessionId, stepId })),
          waitMs,
        )
      }
      job.waitUntilFinished(events).then(
        (result) => finish(resolve, { ...result, stepId, sessionId }),
        (error) =>
          finish(
            reject,
            new SessionError('ERR_STEP_FAILED', `step ${stepId} of session ${JSON.stringify(sessionId)} failed: ${error?.message ?? error}`, { sessionId, stepId, cause: error }),
          ),
      )
      // A pause reported before the listener was there.
      Job.fromId(this.#queue, stepId).then(
        (fresh) => {
          if (fresh !== undefined && pausedOutcome(fresh.progress)) onProgress({ jobId: stepId, data: fresh.progress })
        },
        () => {},
      )
    })
  }

  async close() {
    await Promise.allSettled([this.#events.close(), this.#queue.close(), this.#store.close()])
  }
}

module.exports = { SessionWorker, SessionQueue, RedisStore, currentToolCall }
