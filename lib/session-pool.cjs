'use strict'
// `SessionPool` (docs/serving.md): many conversations, few live executors. Each session is an
// executor's state; at most `maxLive` of them are live at once, and the least recently used idle
// one is hibernated (its `snapshot()` saved in the store, its executor cleaned up) when another
// needs its place. The next operation on a hibernated session restores it from the store
// (`SESExecutor.restore`) and sends its tools again: its variables, functions and paused run
// continue as if it had stayed live.
//
// Operations on one session run one after another, in call order; operations on different
// sessions run at the same time, on the engine pool. The pool is no queue and no scheduler: it
// holds what a process holds, and a store shared by several processes is kept consistent by
// the store's compare-and-swap, never by the pool.

const { SESExecutor } = require('./executor.cjs')
const guarded = require('./guarded.cjs')
const { SessionError, checkId } = require('./session-store.cjs')
const { ownTracer, tracerOf, tracedSection } = require('./tracing.cjs')

const SAVE_POLICIES = ['evict', 'run']

/** A store's three methods, read once (a getter on the store runs once, not per call). */
function storeMethods(store) {
  if (store === null || typeof store !== 'object') throw new TypeError('SessionPool: store must be an object with get, put and delete methods')
  const methods = {}
  for (const name of ['get', 'put', 'delete']) {
    const method = guarded.readOrThrow(store, name, 'SessionPool store')
    if (typeof method !== 'function') throw new TypeError(`SessionPool: store.${name} must be a function`)
    methods[name] = (...args) => method.apply(store, args)
  }
  return methods
}

/**
 * The store no longer holds what this pool saw of the session: no snapshot where one was at
 * `known`, or an older generation than `known`. Never met by making the session new: that would
 * lose the conversation silently, or run its next step on a state it already left.
 */
function lost(sessionId, known, stored) {
  const what = stored === undefined ? 'has no snapshot of it' : `has generation ${stored}`
  return new SessionError(
    'ERR_SESSION_LOST',
    `session ${JSON.stringify(sessionId)} was at generation ${known}, and the store ${what}; delete() the session to start it again`,
    { sessionId, expectedGeneration: known, storedGeneration: stored },
  )
}

/** A failure of the store, named as one (its own error is the cause), unless it is a conflict. */
function storeFailure(sessionId, what, error) {
  if (error instanceof SessionError) return error
  return new SessionError('ERR_SESSION_STORE', `session ${JSON.stringify(sessionId)}: the store failed to ${what}: ${error?.message ?? error}`, {
    sessionId,
    cause: error,
  })
}

class SessionPool {
  #maxLive
  #store
  #executorOptions
  #tools
  #saveAfter
  #spare
  #tracer
  /** Live sessions, least recently used first: id → Live. */
  #live = new Map()
  /** Sessions with an operation running or waiting: id → { tail, holders }. */
  #locks = new Map()
  /** Executors that exist: live, being brought in, or being hibernated. Never above maxLive. */
  #occupied = 0
  /** Operations waiting for a place, first come first served: their settle functions. */
  #waiting = []
  /** Hibernations under way that will free a place. */
  #freeing = 0
  /**
   * The newest generation of each session this pool saved or restored: a store that later has
   * none, or an older one, lost the session (`ERR_SESSION_LOST`).
   */
  #known = new Map()
  #closed = false
  #counts = {
    hits: 0,
    misses: 0,
    restores: 0,
    creates: 0,
    evictions: 0,
    saves: 0,
    conflicts: 0,
    reverts: 0,
    restoreMs: 0,
    restoreMaxMs: 0,
    toolsMs: 0,
    loadMs: 0,
    evictMs: 0,
    snapshotMs: 0,
    saveMs: 0,
  }

  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('new SessionPool(options): options must be an object')
    // Each option read once, through the guarded path: one whose getter throws is a TypeError
    // naming it.
    const option = (name, fallback) => {
      const value = guarded.readOrThrow(options, name, 'SessionPool options')
      return value === undefined ? fallback : value
    }
    const maxLive = option('maxLive')
    const store = option('store')
    const executorOptions = option('executorOptions', {})
    const tools = option('tools')
    const saveAfter = option('saveAfter', 'evict')
    const spare = option('spare', 0)
    if (!Number.isSafeInteger(maxLive) || maxLive < 1) throw new TypeError('SessionPool: maxLive must be an integer ≥ 1')
    if (!Number.isSafeInteger(spare) || spare < 0 || spare >= maxLive) throw new TypeError('SessionPool: spare must be an integer from 0 to maxLive - 1')
    if (executorOptions === null || typeof executorOptions !== 'object') throw new TypeError('SessionPool: executorOptions must be an object')
    if (tools !== undefined && (tools === null || (typeof tools !== 'object' && typeof tools !== 'function'))) {
      throw new TypeError('SessionPool: tools must be a record of tools or a function of the session id that returns one')
    }
    if (!SAVE_POLICIES.includes(saveAfter)) throw new TypeError(`SessionPool: saveAfter must be one of ${SAVE_POLICIES.join(', ')}`)
    this.#maxLive = maxLive
    this.#store = storeMethods(store)
    // Every executor is made with one copy of the options, read here once.
    try {
      this.#executorOptions = { ...executorOptions }
    } catch (thrown) {
      throw new TypeError(`SessionPool options.executorOptions cannot be read (reading it threw ${guarded.describe(thrown)})`)
    }
    this.#tools = tools
    this.#saveAfter = saveAfter
    this.#spare = spare
    this.#tracer = ownTracer(this.#executorOptions)
  }

  /**
   * Runs `code` in the session (restoring it first if it is hibernated, creating it if the store
   * has no snapshot of it) and resolves with the run's `CodeOutput`, or rejects with its
   * `ExecutorError`, as `executor.run` does.
   */
  run(sessionId, code, runOptions) {
    return this.#operation('run', sessionId, (executor) => executor.run(code, runOptions))
  }

  /** `executor.resume(answer)` of the session's paused run. */
  resume(sessionId, answer) {
    return this.#operation('resume', sessionId, (executor) => executor.resume(answer))
  }

  /** `executor.sendVariables(variables)` in the session. */
  sendVariables(sessionId, variables) {
    return this.#operation('sendVariables', sessionId, (executor) => executor.sendVariables(variables))
  }

  /**
   * Exclusive use of the session's live executor, for adapters that run a session under their
   * own rules (the BullMQ worker is one): `fn(executor, session)` runs once the session's earlier
   * operations are done and its executor is live, and no other operation of the session starts
   * until `fn`'s promise settles. `session.generation` is the store generation the live state
   * grew from; `session.save()` saves it now and `session.saved(generation)` tells the pool the
   * caller saved it itself (either as the last use of the executor: the pool then takes the live
   * state as saved); `session.discard()` throws the live state away when `fn` ends.
   * With `options.generation`, a live state that grew from another generation is thrown away
   * and the session restored from the store first. Do not keep `executor` past `fn`.
   */
  withSession(sessionId, fn, options = {}) {
    if (typeof fn !== 'function') return Promise.reject(new TypeError('withSession(sessionId, fn): fn must be a function'))
    const generation = options?.generation
    if (generation !== undefined && (!Number.isSafeInteger(generation) || generation < 0)) {
      return Promise.reject(new TypeError('withSession: options.generation must be a non-negative integer'))
    }
    return this.#use('withSession', sessionId, fn, generation)
  }

  /** Hibernates the session now if it is live (after its earlier operations). */
  evict(sessionId) {
    return this.#exclusive(sessionId, async () => {
      const live = this.#live.get(sessionId)
      if (live === undefined) return false
      this.#live.delete(sessionId)
      this.#freeing++
      await this.#evictNow(sessionId, live)
      return true
    })
  }

  /** Ends the session: its executor cleaned up and its snapshot deleted from the store. */
  delete(sessionId) {
    return this.#exclusive(sessionId, async () => {
      const live = this.#live.get(sessionId)
      if (live !== undefined) {
        this.#live.delete(sessionId)
        await this.#dispose(live)
      }
      try {
        await this.#store.delete(sessionId)
      } catch (error) {
        throw storeFailure(sessionId, 'delete the snapshot', error)
      }
      this.#known.delete(sessionId)
    })
  }

  /**
   * A handle on one session with the executor's methods (`run`, `resume`, `sendVariables`,
   * `sendTools`, `cleanup`, `state`): what smolagents-ts's `CodeAgent` takes as its `executor`.
   */
  session(sessionId) {
    checkId(sessionId)
    return new PooledSession(this, sessionId)
  }

  /** Whether the session's executor is live in this pool now. */
  isLive(sessionId) {
    return this.#live.has(sessionId)
  }

  /**
   * What the pool did so far: `live` executors (of `maxLive`), `hits` (the session was live),
   * `misses` (it was not: `restores` from a snapshot, `creates` of new sessions), `evictions`,
   * `saves`, `conflicts` (saves the store refused), `reverts` (runs whose session went back to
   * its stored snapshot), and the milliseconds spent: `restoreMs` (restore and tools, in all;
   * `restoreMaxMs` the longest; `toolsMs` the tools' part), `loadMs` (reading the store),
   * `evictMs` (hibernating: snapshot, save, cleanup), `snapshotMs` (`executor.snapshot()`, in
   * every save) and `saveMs` (the store's `put`).
   */
  stats() {
    return { live: this.#live.size, maxLive: this.#maxLive, busy: this.#locks.size, ...this.#counts }
  }

  /**
   * Hibernates every live session and refuses new operations (`ERR_POOL_CLOSED`); resolves once
   * the operations under way are done and every executor is cleaned up.
   */
  async close() {
    if (this.#closed) return
    this.#closed = true
    for (const waiter of this.#waiting.splice(0)) waiter.reject(closedError())
    await Promise.all([...this.#live.keys()].map((id) => this.evict(id).catch(() => {})))
    await Promise.all([...this.#locks.values()].map((lock) => lock.tail))
    // Sessions an operation brought in while closing.
    await Promise.all([...this.#live.keys()].map((id) => this.evict(id).catch(() => {})))
  }

  [Symbol.asyncDispose]() {
    return this.close()
  }

  // -- operations -----------------------------------------------------------------------------

  #operation(kind, sessionId, call) {
    return this.#use(kind, sessionId, async (executor, session) => {
      if (this.#saveAfter !== 'run') return call(executor)
      // Write-through: what a run did is saved whether it succeeded or failed (a failed run
      // changed the state too); its result is given only once the save is in the store.
      let result
      let failure
      try {
        result = await call(executor)
      } catch (error) {
        failure = error ?? new Error(String(error))
      }
      const state = executor.state
      if (state === 'READY' || state === 'PAUSED') await session.save()
      if (failure !== undefined) throw failure
      return result
    })
  }

  #use(kind, sessionId, fn, generation) {
    try {
      checkId(sessionId)
    } catch (error) {
      return Promise.reject(error)
    }
    if (this.#closed) return Promise.reject(closedError())
    const tracer = tracerOf(this.#tracer)
    const body = (span) => this.#exclusive(sessionId, () => this.#inside(sessionId, fn, generation, span))
    if (tracer === undefined) return body(undefined)
    return tracedSection(tracer, `ses_session_pool.${kind}`, { 'session.id': sessionId }, body)
  }

  /** One operation, with the session's lock held. */
  async #inside(sessionId, fn, generation, span) {
    if (this.#closed && !this.#live.has(sessionId)) throw closedError()
    let live = this.#live.get(sessionId)
    if (live !== undefined && generation !== undefined && live.generation !== generation) {
      // Another process moved the session on: this copy is stale.
      this.#live.delete(sessionId)
      await this.#dispose(live)
      live = undefined
    }
    const hit = live !== undefined
    if (hit) {
      this.#counts.hits++
      // Most recently used: to the end of the order.
      this.#live.delete(sessionId)
      this.#live.set(sessionId, live)
    } else {
      this.#counts.misses++
      live = await this.#bringIn(sessionId, span, generation)
      this.#live.set(sessionId, live)
    }
    span?.setAttributes({ 'ses.pool.hit': hit, 'ses.pool.generation': live.generation })
    let discard = false
    let savedAfter = false
    const session = {
      id: sessionId,
      get generation() {
        return live.generation
      },
      save: async () => {
        live.dirty = true
        await this.#save(sessionId, live)
        savedAfter = true
        return live.generation
      },
      saved: (stored) => {
        if (!Number.isSafeInteger(stored) || stored < 1) throw new TypeError('session.saved(generation): a generation ≥ 1')
        live.generation = stored
        live.dirty = false
        savedAfter = true
        this.#known.set(sessionId, stored)
      },
      discard: () => {
        discard = true
      },
    }
    live.pinned = false
    try {
      const result = await fn(live.executor, session)
      if (!savedAfter) live.dirty = true
      return result
    } catch (error) {
      if (!savedAfter) live.dirty = true
      // The store holds a newer state than this copy (another writer saved it): drop it.
      if (error?.code === 'ERR_SESSION_CONFLICT') discard = true
      // A copy its user discards is dropped as it is, never saved.
      if (discard) throw error
      throw await this.#afterFailure(sessionId, live, error)
    } finally {
      if (discard && this.#live.get(sessionId) === live) {
        this.#live.delete(sessionId)
        await this.#dispose(live)
      }
      // A caller that names the generation keeps it itself (the BullMQ worker has it from
      // Redis): the pool keeps no number for a session of that caller's.
      if (generation !== undefined) this.#known.delete(sessionId)
    }
  }

  /**
   * After a failed operation: an executor left `DIRTY` (a timeout, an abort, the memory limit)
   * cannot run again, so its session is saved as it is and restored clean on its next
   * operation; where the executor cannot snapshot it, the session goes back to its stored
   * snapshot (the error says so: `error.sessionReverted`).
   */
  async #afterFailure(sessionId, live, error) {
    const state = live.executor.state
    if (state !== 'DIRTY' && state !== 'DEAD') return error
    if (this.#live.get(sessionId) !== live) return error
    this.#live.delete(sessionId)
    let saved = false
    if (state === 'DIRTY') {
      try {
        await this.#save(sessionId, live)
        saved = true
      } catch {
        // Not saved: what the store holds is the session now.
      }
    }
    await this.#dispose(live)
    if (saved) return error
    this.#counts.reverts++
    if (error !== null && typeof error === 'object') {
      try {
        Object.defineProperty(error, 'sessionReverted', { value: { generation: live.generation }, enumerable: true, configurable: true })
      } catch {
        // A frozen error keeps its shape.
      }
    }
    return error
  }

  // -- places and hibernation ------------------------------------------------------------------

  /**
   * Makes the session's executor live: restored from the store, or new where the store has no
   * snapshot and none was expected (`expected`, the caller's generation, else the newest this
   * pool saw).
   */
  async #bringIn(sessionId, span, expected) {
    // The store is read while a place is freed (this operation holds the session's lock, so
    // nothing in this pool changes it meanwhile).
    const reading = this.#read(sessionId)
    reading.catch(() => {})
    await this.#place()
    try {
      const { stored, loadMs } = await reading
      const known = expected ?? this.#known.get(sessionId) ?? 0
      if (known > 0 && (stored === undefined || stored.generation < known)) throw lost(sessionId, known, stored?.generation)
      if (stored !== undefined) {
        const { bytes, generation } = stored
        const started = performance.now()
        const executor = await SESExecutor.restore(bytes, this.#executorOptions)
        await this.#sendTools(sessionId, executor)
        const took = performance.now() - started
        this.#counts.restores++
        this.#counts.restoreMs += took
        this.#counts.restoreMaxMs = Math.max(this.#counts.restoreMaxMs, took)
        span?.setAttributes({ 'ses.pool.restore_ms': took, 'ses.pool.load_ms': loadMs, 'ses.pool.snapshot_bytes': bytes.byteLength })
        this.#known.set(sessionId, generation)
        return { executor, generation, dirty: false, pinned: false }
      }
      const executor = await SESExecutor.create(this.#executorOptions)
      await this.#sendTools(sessionId, executor)
      this.#counts.creates++
      return { executor, generation: 0, dirty: false, pinned: false }
    } catch (error) {
      this.#release()
      throw error
    }
  }

  /** The session's snapshot in the store, checked for shape, and how long reading it took. */
  async #read(sessionId) {
    const started = performance.now()
    let stored
    try {
      stored = await this.#store.get(sessionId)
    } catch (error) {
      throw storeFailure(sessionId, 'read the snapshot', error)
    }
    const loadMs = performance.now() - started
    this.#counts.loadMs += loadMs
    if (stored === undefined || stored === null) return { stored: undefined, loadMs }
    // Read once; what a store gives that is no snapshot with a generation fails here.
    let bytes
    let generation
    try {
      ;({ bytes, generation } = stored)
    } catch (error) {
      throw storeFailure(sessionId, 'read the snapshot', error)
    }
    if (!(bytes instanceof Uint8Array) || !Number.isSafeInteger(generation) || generation < 1) {
      throw storeFailure(sessionId, 'read the snapshot', new TypeError('the store gave no { bytes: Uint8Array, generation ≥ 1 }'))
    }
    return { stored: { bytes, generation }, loadMs }
  }

  async #sendTools(sessionId, executor) {
    const started = performance.now()
    try {
      const tools = typeof this.#tools === 'function' ? await this.#tools(sessionId) : this.#tools
      if (tools !== undefined) await executor.sendTools(tools)
      this.#counts.toolsMs += performance.now() - started
    } catch (error) {
      await executor.cleanup().catch(() => {})
      throw error
    }
  }

  /** Takes a place for one executor, waiting (and hibernating idle sessions) while none is free. */
  #place() {
    if (this.#occupied < this.#maxLive) {
      this.#occupied++
      // Fewer than `spare` places left: idle sessions go now, in the background, so that the
      // next operation that needs a place finds one instead of waiting for a hibernation.
      if (this.#spare > 0) this.#freePlaces()
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject })
      this.#freePlaces()
    })
  }

  /** Gives a place back: to the first operation waiting for one, else to the pool. */
  #release() {
    const waiter = this.#waiting.shift()
    if (waiter !== undefined) waiter.resolve()
    else this.#occupied--
  }

  /**
   * Hibernates the least recently used idle sessions: one per operation waiting for a place,
   * and as many more as keep `spare` places free (counting those being freed).
   */
  #freePlaces() {
    const wanted = () => this.#waiting.length + (this.#closed ? 0 : this.#spare) - (this.#maxLive - this.#occupied)
    while (this.#freeing < wanted()) {
      const victim = this.#idleVictim()
      if (victim === undefined) return
      const [sessionId, live] = victim
      // Out of the live set now, so that no other operation picks it or uses it; an operation
      // on it waits for the lock and then restores what this saves.
      this.#live.delete(sessionId)
      this.#freeing++
      this.#exclusive(sessionId, async () => {
        try {
          await this.#evictNow(sessionId, live)
        } catch (error) {
          // Not hibernated (the store or the snapshot failed): the session stays live, not
          // chosen again until its next operation, and the operation that needed its place
          // fails with the reason (the others look for another once this lock is let go).
          live.pinned = true
          this.#waiting.shift()?.reject(error)
        }
      })
    }
  }

  /**
   * Hibernates a live session that the caller took out of the live set and counted in
   * `#freeing` (so that waiting operations do not evict a second for the same place), with its
   * lock held; puts it back when that fails.
   */
  async #evictNow(sessionId, live) {
    try {
      await this.#hibernate(sessionId, live)
      this.#counts.evictions++
    } catch (error) {
      if (!this.#live.has(sessionId)) this.#live.set(sessionId, live)
      throw error
    } finally {
      this.#freeing--
    }
  }

  /** The least recently used live session that no operation holds or waits for. */
  #idleVictim() {
    for (const entry of this.#live) {
      const [sessionId, live] = entry
      if (!this.#locks.has(sessionId) && !live.pinned) return entry
    }
    return undefined
  }

  /**
   * Saves the session if its state is newer than the store's, then cleans its executor up and
   * frees its place. Refused by the store (another writer saved the session since): the store's
   * copy is the session, this one is dropped. Any other failure leaves the executor live.
   */
  async #hibernate(sessionId, live) {
    const started = performance.now()
    try {
      await this.#save(sessionId, live)
    } catch (error) {
      if (error?.code !== 'ERR_SESSION_CONFLICT') throw error
    }
    await this.#dispose(live)
    this.#counts.evictMs += performance.now() - started
  }

  async #save(sessionId, live) {
    if (!live.dirty) return
    const started = performance.now()
    const bytes = await live.executor.snapshot()
    const snapshotted = performance.now()
    this.#counts.snapshotMs += snapshotted - started
    let generation
    try {
      generation = await this.#store.put(sessionId, bytes, live.generation)
    } catch (error) {
      if (error?.code === 'ERR_SESSION_CONFLICT') this.#counts.conflicts++
      throw storeFailure(sessionId, 'save the snapshot', error)
    } finally {
      this.#counts.saveMs += performance.now() - snapshotted
    }
    if (!Number.isSafeInteger(generation) || generation <= live.generation) {
      throw storeFailure(sessionId, 'save the snapshot', new TypeError(`the store answered generation ${generation} to a save over ${live.generation}`))
    }
    live.generation = generation
    live.dirty = false
    this.#known.set(sessionId, generation)
    this.#counts.saves++
  }

  /** Cleans a live executor up and frees its place. */
  async #dispose(live) {
    try {
      await live.executor.cleanup()
    } catch {
      // cleanup() refuses only a run in flight, which an idle session has not.
    } finally {
      this.#release()
    }
  }

  /** Runs `fn` once the session's earlier operations are done; the next waits for it. */
  #exclusive(sessionId, fn) {
    let lock = this.#locks.get(sessionId)
    if (lock === undefined) {
      lock = { tail: Promise.resolve(), holders: 0 }
      this.#locks.set(sessionId, lock)
    }
    lock.holders++
    const turn = lock.tail.then(fn)
    lock.tail = turn.then(
      () => {},
      () => {},
    )
    const done = () => {
      if (--lock.holders > 0 || this.#locks.get(sessionId) !== lock) return
      this.#locks.delete(sessionId)
      // The session is idle now: operations waiting for a place, or the spare places, may take its.
      if (this.#waiting.length > 0 || this.#spare > 0) this.#freePlaces()
    }
    return turn.then(
      (value) => {
        done()
        return value
      },
      (error) => {
        done()
        throw error
      },
    )
  }
}

function closedError() {
  return new SessionError('ERR_POOL_CLOSED', 'the session pool is closed')
}

/**
 * One session of a pool with the executor's methods, for code written against an executor
 * (smolagents-ts's `CodeAgent`). Tools come from the pool's `tools` option: they must be sent
 * again after every restore, so a handle takes none of its own.
 */
class PooledSession {
  #pool
  #id

  constructor(pool, sessionId) {
    this.#pool = pool
    this.#id = sessionId
  }

  get sessionId() {
    return this.#id
  }

  /** Nothing to do: the pool brings the session in on its first operation. */
  init() {
    return Promise.resolve()
  }

  run(code, options) {
    return this.#pool.run(this.#id, code, options)
  }

  resume(answer) {
    return this.#pool.resume(this.#id, answer)
  }

  sendVariables(variables) {
    return this.#pool.sendVariables(this.#id, variables)
  }

  /** Accepts an empty record (CodeAgent sends one every step); tools belong to the pool. */
  sendTools(tools) {
    if (tools !== null && typeof tools === 'object' && Object.keys(tools).length === 0) return Promise.resolve()
    return Promise.reject(
      new TypeError("a pooled session's tools come from the pool's tools option (they are sent again after every restore)"),
    )
  }

  /** Lets the session go: the pool keeps it (live or hibernated); `pool.delete(id)` ends it. */
  cleanup() {
    return Promise.resolve()
  }
}

module.exports = { SessionPool, PooledSession }
