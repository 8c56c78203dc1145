// SessionPool (docs/serving.md "One process: SessionPool"): at most maxLive executors live, the
// least recently used idle session hibernated into the store when another needs its place, and
// restored (tools sent again, none called) on its next operation; runs of one session in call
// order, of different sessions at once; pause and resume across hibernation; stale saves refused;
// stores that fail or lie; the figures it reports, as metrics and as OpenTelemetry spans.
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'

import type * as Entry from '../index'
import fc from 'fast-check'

import { ExecutorError, enginePoolStats, pauseRun, rejectionOf } from './helpers'

const require = createRequire(import.meta.url)
const { SessionPool, MemoryStore, FileStore, SessionError } = require('../index.js') as typeof Entry

type Pool = InstanceType<typeof SessionPool>
const pools: Pool[] = []
function pool(options: ConstructorParameters<typeof SessionPool>[0]): Pool {
  const made = new SessionPool(options)
  pools.push(made)
  return made
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()))
})

/** Tools that count their calls and know whose session they serve. */
function countingTools() {
  const calls = { lookup: 0, whoami: 0 }
  const tools = (sessionId: string) => ({
    lookup: async (x: number) => {
      calls.lookup++
      return x * 10
    },
    whoami: () => {
      calls.whoami++
      return sessionId
    },
  })
  return { calls, tools }
}

/** Resolves when `n` callers have called `arrive()`: proves they were in flight together. */
function barrier(n: number) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return {
    arrive: async () => {
      if (++arrived === n) open()
      await opened
      return arrived
    },
  }
}

describe('hibernation', () => {
  it('keeps at most maxLive executors live, and a hibernated session continues where it was, its tools sent again and none called', async () => {
    const { calls, tools } = countingTools()
    const store = new MemoryStore()
    const sessions = pool({ maxLive: 2, store, tools })
    const ids = ['a', 'b', 'c', 'd', 'e']
    for (const [i, id] of ids.entries()) {
      const out = await sessions.run(id, `let base = await lookup(${i}); class Counter { #n = base; next() { return ++this.#n } }; const counter = new Counter(); const me = whoami(); counter.next()`)
      expect(out.output).toBe(i * 10 + 1)
      expect(sessions.stats().live).toBeLessThanOrEqual(2)
    }
    expect(store.size.sessions).toBe(3)
    expect(calls).toEqual({ lookup: 5, whoami: 5 })
    for (const [i, id] of ids.entries()) {
      const out = await sessions.run(id, '[counter.next(), me, whoami(), base]')
      expect(out.output).toEqual([i * 10 + 2, id, id, i * 10])
      expect(sessions.stats().live).toBeLessThanOrEqual(2)
    }
    // Restores replayed the first runs without calling lookup or whoami again.
    expect(calls).toEqual({ lookup: 5, whoami: 10 })
    const stats = sessions.stats()
    expect(stats).toMatchObject({ live: 2, maxLive: 2, creates: 5, hits: 0, misses: 10, restores: 5, evictions: 8, saves: 8 })
    expect(stats.restoreMs).toBeGreaterThan(0)
    expect(stats.restoreMaxMs).toBeGreaterThan(0)
  })

  it('hibernates the least recently used idle session', async () => {
    const sessions = pool({ maxLive: 2, store: new MemoryStore() })
    await sessions.run('a', 'let x = 1')
    await sessions.run('b', 'let y = 2')
    await sessions.run('a', 'x')
    await sessions.run('c', 'let z = 3')
    expect(['a', 'b', 'c'].filter((id) => sessions.isLive(id))).toEqual(['a', 'c'])
    expect((await sessions.run('b', 'y')).output).toBe(2)
    expect(['a', 'b', 'c'].filter((id) => sessions.isLive(id))).toEqual(['b', 'c'])
    expect(sessions.stats()).toMatchObject({ hits: 1, evictions: 2, restores: 1 })
  })

  it('runs of one session go in call order; runs of different sessions are in flight together', async () => {
    const both = barrier(2)
    const sessions = pool({ maxLive: 4, store: new MemoryStore(), tools: { meet: both.arrive } })
    await sessions.run('s', 'var log = []')
    const ordered = await Promise.all([1, 2, 3, 4].map((n) => sessions.run('s', `log.push(${n}); await null; log.push(-${n}); log.join(',')`)))
    expect(ordered.map((out) => out.output)).toEqual(['1,-1', '1,-1,2,-2', '1,-1,2,-2,3,-3', '1,-1,2,-2,3,-3,4,-4'])
    // Each waits inside a tool until the other has called it: both runs are in flight at once.
    const met = await Promise.all(['x', 'y'].map((id) => sessions.run(id, 'await meet()')))
    expect(met.map((out) => out.output)).toEqual([2, 2])
  })

  it('under concurrent operations on many sessions, each sees its own in call order, and no more than maxLive runtimes ever exist', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 11 }), { minLength: 40, maxLength: 120 }), fc.integer({ min: 1, max: 4 }), async (order, maxLive) => {
        const sessions = pool({ maxLive, store: new MemoryStore({ compress: true }), tools: { later: async (x: number) => x } })
        let most = 0
        const watch = setInterval(() => (most = Math.max(most, enginePoolStats().engines)), 0)
        try {
          const outputs = await Promise.all(
            order.map((id) => sessions.run(`s${id}`, 'var n = (typeof n === "undefined" ? 0 : n) + 1; await later(n)').then((out) => [id, out.output] as const)),
          )
          const seen = new Map<number, unknown[]>()
          for (const [id, n] of outputs) seen.set(id, [...(seen.get(id) ?? []), n])
          for (const [id, ns] of seen) expect(ns, `session s${id}`).toEqual(ns.map((_, i) => i + 1))
          expect(sessions.stats().live).toBeLessThanOrEqual(maxLive)
        } finally {
          clearInterval(watch)
          await sessions.close()
        }
        expect(most).toBeLessThanOrEqual(maxLive)
      }),
      { numRuns: 6 },
    )
  })

  it('an operation that needs a place waits until a session is idle, and never more than maxLive are live', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const sessions = pool({ maxLive: 1, store: new MemoryStore(), tools: { wait: () => gate } })
    const first = sessions.run('a', 'await wait(); "a done"')
    const second = sessions.run('b', '"b done"')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(sessions.stats()).toMatchObject({ live: 1, creates: 1 })
    release()
    expect((await first).output).toBe('a done')
    expect((await second).output).toBe('b done')
    expect(sessions.stats()).toMatchObject({ live: 1, creates: 2, evictions: 1 })
  })

  it('with spare places, idle sessions are hibernated in the background, and an operation that needs a place does not wait for a hibernation', async () => {
    const backing = new MemoryStore()
    const held: Array<() => void> = []
    let hold = false
    const store = {
      get: (id: string) => backing.get(id),
      put: async (id: string, bytes: Uint8Array, generation: number) => {
        if (hold) await new Promise<void>((open) => held.push(open))
        return backing.put(id, bytes, generation)
      },
      delete: (id: string, generation?: number) => backing.delete(id, generation),
    }
    const sessions = pool({ maxLive: 3, spare: 1, store })
    for (const id of ['a', 'b']) await sessions.run(id, `let v = "${id}"`)
    expect(sessions.stats()).toMatchObject({ live: 2, evictions: 0 })
    // The last free place taken: the least recently used idle session goes, with no one waiting.
    await sessions.run('c', 'let v = "c"')
    const until = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 5_000
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`not so after 5 s: ${what}`)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
    await until('a hibernated in the background', () => !sessions.isLive('a') && sessions.stats().evictions === 1)
    expect(sessions.stats()).toMatchObject({ live: 2, evictions: 1 })
    // Saves held from now: d takes the spare place at once, and only then does b's hibernation
    // (which keeps the next place spare) reach the store, which holds it.
    hold = true
    try {
      expect((await sessions.run('d', 'let v = "d"; v')).output).toBe('d')
      expect(sessions.isLive('b')).toBe(false)
      await until("b's save held by the store", () => held.length === 1)
      expect(sessions.stats().evictions).toBe(1)
    } finally {
      hold = false
      for (const open of held.splice(0)) open()
    }
    expect((await sessions.run('b', 'v')).output).toBe('b')
    expect((await sessions.run('a', 'v')).output).toBe('a')
    expect(sessions.stats().live).toBeLessThanOrEqual(3)
  })

  it('evict() hibernates now, delete() ends a session, close() hibernates all and refuses what comes after', async () => {
    const store = new MemoryStore()
    const sessions = pool({ maxLive: 4, store })
    await sessions.run('a', 'let kept = "yes"')
    await sessions.run('b', 'let gone = 1')
    expect(await sessions.evict('a')).toBe(true)
    expect(await sessions.evict('a')).toBe(false)
    expect(sessions.isLive('a')).toBe(false)
    expect((await store.get('a'))?.generation).toBe(1)
    await sessions.delete('b')
    expect(await store.get('b')).toBeUndefined()
    expect((await rejectionOf(sessions.run('b', 'gone'))).code).toBe('ERR_RUNTIME_EXCEPTION')
    await sessions.close()
    expect(sessions.stats().live).toBe(0)
    expect((await store.get('b'))?.generation).toBe(1)
    const refused = await sessions.run('a', 'kept').catch((error) => error)
    expect(refused).toBeInstanceOf(SessionError)
    expect(refused.code).toBe('ERR_POOL_CLOSED')
    // A new pool over the same store: the sessions go on.
    const again = pool({ maxLive: 1, store })
    expect((await again.run('a', 'kept')).output).toBe('yes')
  })

  it('sessions in a FileStore outlive the pool (a restart)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ses-pool-'))
    const first = pool({ maxLive: 2, store: new FileStore(dir) })
    for (const id of ['p', 'q', 'r']) await first.run(id, `const who = ${JSON.stringify(id)}; const seen = new Map([[who, [1, 2]]])`)
    await first.close()
    const second = pool({ maxLive: 2, store: new FileStore(dir) })
    for (const id of ['p', 'q', 'r']) expect((await second.run(id, 'seen.get(who)')).output).toEqual([1, 2])
  })
})

describe('pause and resume', () => {
  it('a paused run waits hibernated, and resume() continues it after a restore', async () => {
    const approvals: unknown[] = []
    const sessions = pool({
      maxLive: 1,
      store: new MemoryStore(),
      tools: { approve: (action: string) => pauseRun({ ask: action }), note: (x: unknown) => approvals.push(x) },
    })
    const paused = await sessions.run('s', 'const ok = approve("send"); note(ok); ok ? "sent" : "kept"')
    expect(paused.paused).toMatchObject({ tool: 'approve', args: ['send'], reason: { ask: 'send' } })
    await sessions.run('other', '1')
    expect(sessions.isLive('s')).toBe(false)
    const resumed = await sessions.resume('s', true)
    expect(resumed.output).toBe('sent')
    expect(approvals).toEqual([true])
    expect((await sessions.run('s', 'ok')).output).toBe(true)
  })
})

describe('stores shared by several writers', () => {
  it('write-through: a pool whose copy is stale has its save refused and drops the copy; nothing is lost or forked', async () => {
    const store = new MemoryStore()
    const one = pool({ maxLive: 2, store, saveAfter: 'run' })
    const two = pool({ maxLive: 2, store, saveAfter: 'run' })
    await one.run('s', 'var steps = ["one"]')
    expect((await store.get('s'))?.generation).toBe(1)
    await two.run('s', 'steps.push("two"); steps')
    const refused = await one.run('s', 'steps.push("one again"); steps').catch((error) => error)
    expect(refused).toBeInstanceOf(SessionError)
    expect(refused.code).toBe('ERR_SESSION_CONFLICT')
    expect(one.isLive('s')).toBe(false)
    expect((await one.run('s', 'steps.push("one, after"); steps')).output).toEqual(['one', 'two', 'one, after'])
    expect((await store.get('s'))?.generation).toBe(3)
  })

  it('write-back: an eviction whose save is refused keeps the store\'s copy and counts a conflict', async () => {
    const store = new MemoryStore()
    const one = pool({ maxLive: 4, store })
    await one.run('s', 'var v = 1')
    await one.evict('s')
    await one.run('s', 'v = 2')
    // Another writer saves over generation 1 meanwhile.
    const other = pool({ maxLive: 1, store, saveAfter: 'run' })
    await other.run('s', 'v = 3')
    await one.evict('s')
    expect(one.stats().conflicts).toBe(1)
    expect((await one.run('s', 'v')).output).toBe(3)
  })

  it('withSession({ generation }) drops a live copy that grew from another generation', async () => {
    const store = new MemoryStore()
    const sessions = pool({ maxLive: 2, store, saveAfter: 'run' })
    await sessions.run('s', 'var v = "first"')
    const elsewhere = pool({ maxLive: 1, store, saveAfter: 'run' })
    await elsewhere.run('s', 'v = "second"')
    const seen = await sessions.withSession('s', async (executor, session) => [session.generation, (await executor.run('v')).output], { generation: 2 })
    expect(seen).toEqual([2, 'second'])
    expect(sessions.stats()).toMatchObject({ restores: 1 })
  })
})

describe('what a store gives back is checked', () => {
  it('a corrupted or foreign snapshot is refused with ERR_SNAPSHOT_INVALID, and the pool goes on', async () => {
    const store = new MemoryStore()
    const sessions = pool({ maxLive: 1, store })
    await sessions.run('good', 'let g = 1')
    await sessions.evict('good')
    const { bytes } = (await store.get('good'))!
    const flipped = new Uint8Array(bytes)
    flipped[flipped.length - 5] ^= 0xff
    await store.put('flipped', flipped, 0)
    await store.put('cut', bytes.subarray(0, bytes.length >> 1), 0)
    await store.put('noise', new Uint8Array(256).fill(7), 0)
    for (const id of ['flipped', 'cut', 'noise']) {
      const error = await rejectionOf(sessions.run(id, '1'))
      expect(error).toBeInstanceOf(ExecutorError)
      expect(error.code).toBe('ERR_SNAPSHOT_INVALID')
    }
    expect(sessions.stats().live).toBe(0)
    expect((await sessions.run('good', 'g')).output).toBe(1)
  })

  it('a session whose snapshot the store lost, or put back older, is refused with ERR_SESSION_LOST, never made new; delete() starts it again', async () => {
    const store = new MemoryStore()
    const { calls, tools } = countingTools()
    const sessions = pool({ maxLive: 1, store, tools })
    await sessions.run('a', 'let n = 1')
    await sessions.evict('a')
    const first = (await store.get('a'))!
    await sessions.run('a', 'n += 1')
    await sessions.evict('a')
    expect((await store.get('a'))!.generation).toBe(2)
    // Deleted behind the pool's back.
    await store.delete('a')
    const gone = await sessions.run('a', 'whoami(); n').catch((error) => error)
    expect(gone).toBeInstanceOf(SessionError)
    expect(gone).toMatchObject({ code: 'ERR_SESSION_LOST', sessionId: 'a', expectedGeneration: 2, storedGeneration: undefined })
    // Put back older (generation 1, its first state).
    await store.put('a', first.bytes, 0)
    const older = await sessions.run('a', 'whoami(); n').catch((error) => error)
    expect(older).toMatchObject({ code: 'ERR_SESSION_LOST', expectedGeneration: 2, storedGeneration: 1 })
    // Neither ran anything, and nothing was made new.
    expect(calls.whoami).toBe(0)
    expect(sessions.stats()).toMatchObject({ live: 0, creates: 1 })
    expect((await sessions.run('b', '"b goes on"')).output).toBe('b goes on')
    await sessions.delete('a')
    expect((await sessions.run('a', 'typeof n')).output).toBe('undefined')
  })

  it('a store that fails or answers nonsense fails the operation with ERR_SESSION_STORE, and the pool goes on', async () => {
    const backing = new MemoryStore()
    let mode: 'ok' | 'throw' | 'generation' = 'ok'
    const store = {
      get: (id: string) => (mode === 'throw' ? Promise.reject(new Error('disk on fire')) : backing.get(id)),
      put: (id: string, bytes: Uint8Array, generation: number) =>
        mode === 'generation' ? Promise.resolve(generation) : mode === 'throw' ? Promise.reject(new Error('disk on fire')) : backing.put(id, bytes, generation),
      delete: (id: string) => backing.delete(id),
    }
    const sessions = pool({ maxLive: 1, store })
    await sessions.run('a', 'let a = 1')
    mode = 'throw'
    const failed = await sessions.run('b', '1').catch((error) => error)
    expect(failed).toMatchObject({ code: 'ERR_SESSION_STORE' })
    expect(failed.cause.message).toBe('disk on fire')
    // The session that could not be hibernated is still live and still itself.
    expect(sessions.isLive('a')).toBe(true)
    mode = 'generation'
    expect((await sessions.evict('a').catch((error) => error)).code).toBe('ERR_SESSION_STORE')
    // What get() gives must be a snapshot with a generation, read once.
    for (const answer of [{ bytes: 'text', generation: 1 }, { bytes: new Uint8Array(4), generation: 0 }, Object.defineProperty({}, 'bytes', { get: () => { throw new Error('getter') } })]) {
      const odd = pool({ maxLive: 1, store: { get: async () => answer, put: async () => 1, delete: async () => true } })
      expect(await odd.run('x', '1').catch((error) => error.code)).toBe('ERR_SESSION_STORE')
      expect(odd.stats().live).toBe(0)
    }
    mode = 'ok'
    expect((await sessions.run('a', 'a')).output).toBe(1)
    expect((await sessions.run('b', '2')).output).toBe(2)
  })

  it('reads the options, the store\'s methods and each option once', async () => {
    const reads: string[] = []
    const backing = new MemoryStore()
    const store = Object.defineProperties(
      {},
      Object.fromEntries(
        (['get', 'put', 'delete'] as const).map((name) => [
          name,
          {
            get() {
              reads.push(name)
              return (...args: [string, Uint8Array, number]) => (backing[name] as (...a: unknown[]) => unknown)(...args)
            },
          },
        ]),
      ),
    )
    const options = new Proxy(
      { maxLive: 1, store, executorOptions: { timeoutMs: 5000 } },
      {
        get(target, key, receiver) {
          reads.push(String(key))
          return Reflect.get(target, key, receiver)
        },
      },
    )
    const sessions = pool(options as never)
    await sessions.run('a', '1')
    await sessions.run('b', '2')
    await sessions.run('a', '3')
    expect(reads.sort()).toEqual(['delete', 'executorOptions', 'get', 'maxLive', 'put', 'saveAfter', 'spare', 'store', 'tools'])
  })

  it('refuses malformed options and ids', async () => {
    const store = new MemoryStore()
    for (const options of [undefined, null, {}, { maxLive: 0, store }, { maxLive: 1.5, store }, { maxLive: 1 }, { maxLive: 1, store: {} }, { maxLive: 1, store, saveAfter: 'never' }, { maxLive: 1, store, tools: 3 }, { maxLive: 2, store, spare: 2 }, { maxLive: 2, store, spare: -1 }, { maxLive: 2, store, spare: 0.5 }]) {
      expect(() => new SessionPool(options as never)).toThrow(TypeError)
    }
    const sessions = pool({ maxLive: 1, store })
    for (const id of ['', 7, 'x'.repeat(1025)]) await expect(sessions.run(id as string, '1')).rejects.toBeInstanceOf(TypeError)
  })
})

describe('failures inside a session', () => {
  it('a run that times out leaves the session usable: saved as it was, or back at its stored snapshot, and the error says which', async () => {
    const sessions = pool({ maxLive: 2, store: new MemoryStore(), executorOptions: { timeoutMs: 200, maxOperations: 1_000_000_000 } })
    await sessions.run('s', 'var x = 1')
    await sessions.evict('s')
    const timedOut = await rejectionOf(sessions.run('s', 'x = 2; while (true) {}'))
    expect(timedOut.code).toBe('ERR_EXEC_TIMEOUT')
    const after = (await sessions.run('s', 'x')).output
    const reverted = (timedOut as unknown as { sessionReverted?: { generation: number } }).sessionReverted
    if (reverted === undefined) {
      expect(after).toBe(2)
    } else {
      expect(reverted).toEqual({ generation: 1 })
      expect(after).toBe(1)
      expect(sessions.stats().reverts).toBe(1)
    }
  })

  it('a run that throws keeps the session live and what the code did before the throw', async () => {
    const sessions = pool({ maxLive: 1, store: new MemoryStore() })
    const thrown = await rejectionOf(sessions.run('s', 'var y = 5; throw new Error("boom")'))
    expect(thrown.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(sessions.isLive('s')).toBe(true)
    await sessions.run('t', '0')
    expect((await sessions.run('s', 'y')).output).toBe(5)
  })
})

describe('as an executor, and observed', () => {
  it('session(id) is what CodeAgent drives: sendVariables, sendTools({}), run, cleanup, and the session stays in the pool', async () => {
    const sessions = pool({ maxLive: 1, store: new MemoryStore(), tools: { double: (x: number) => x * 2 } })
    const handle = sessions.session('chat-1')
    await handle.init()
    await handle.sendVariables({ task: 'double 21' })
    await handle.sendTools({})
    expect((await handle.run('const answer = double(21); answer')).output).toBe(42)
    await handle.cleanup()
    await sessions.run('chat-2', '1')
    expect((await sessions.session('chat-1').run('final_answer(`${task}: ${answer}`)')).output).toBe('double 21: 42')
    await expect(handle.sendTools({ other: () => 1 })).rejects.toBeInstanceOf(TypeError)
  })

  it('gives each operation an OpenTelemetry span with hit, generation and restore figures, the run its child', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const tracer = provider.getTracer('test')
    const sessions = pool({ maxLive: 1, store: new MemoryStore(), executorOptions: { tracer } })
    await sessions.run('a', 'let a = 1')
    await sessions.run('b', 'let b = 1')
    await sessions.run('a', 'a')
    const spans = exporter.getFinishedSpans()
    const operations = spans.filter((span) => span.name === 'ses_session_pool.run')
    expect(operations.map((span) => span.attributes['ses.pool.hit'])).toEqual([false, false, false])
    const restored = operations[2]
    expect(restored.attributes).toMatchObject({ 'session.id': 'a', 'ses.pool.generation': 1 })
    expect(restored.attributes['ses.pool.restore_ms']).toBeGreaterThan(0)
    expect(restored.attributes['ses.pool.snapshot_bytes']).toBeGreaterThan(0)
    const runs = spans.filter((span) => span.name === 'ses_executor.run')
    expect(runs).toHaveLength(3)
    expect(runs[2].parentSpanContext?.spanId).toBe(restored.spanContext().spanId)
    context.disable()
  })
})
