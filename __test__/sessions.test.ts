// Durable sessions (docs/sessions.md): `snapshot()`, `SESExecutor.restore(bytes, options)` in this
// process and in a fresh one, `pauseRun` / `resume` / `CodeOutput.paused`, the state machine around
// them, and snapshots as untrusted input.
import { execFile } from 'node:child_process'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'

import { ExecutorError, SESExecutor, pauseRun, rejectionOf } from './helpers'

type Executor = InstanceType<typeof SESExecutor>
type Options = NonNullable<ConstructorParameters<typeof SESExecutor>[0]>

const live: Executor[] = []
function track<T extends Executor>(executor: T): T {
  live.push(executor)
  return executor
}
afterEach(async () => {
  await Promise.all(live.splice(0).map((executor) => executor.cleanup().catch(() => {})))
})

/** Tools that count their calls. */
function countingTools() {
  const calls = { lookup: 0, fetchLater: 0 }
  return {
    calls,
    tools: {
      lookup: (x: unknown) => `lookup ${x} #${++calls.lookup}`,
      fetchLater: async (x: unknown) => {
        await new Promise((resolve) => setTimeout(resolve, 2))
        return `later ${x} #${++calls.fetchLater}`
      },
    },
  }
}

const fixture = path.join(__dirname, 'fixtures', 'session-restore.cjs')

type Case = { snapshot: Uint8Array; options?: Options; probe: string; answer?: unknown }
type Restored = {
  results: Array<{
    ok?: string
    resumed?: { paused: unknown; output: unknown; logs: string }
    state?: string
    error?: string
    reason?: string
    message?: string
  }>
  calls: number
}

/** Restores each case in a fresh Node process, and what its probe gave there. */
async function restoreElsewhere(cases: Case[]): Promise<Restored> {
  const directory = await mkdtemp(path.join(tmpdir(), 'ses-session-'))
  const job = path.join(directory, 'job.json')
  await writeFile(
    job,
    JSON.stringify({
      cases: cases.map((c) => ({ ...c, snapshot: Buffer.from(c.snapshot).toString('base64') })),
    }),
  )
  const { stdout } = await promisify(execFile)(process.execPath, [fixture, job], { maxBuffer: 64 << 20 })
  return JSON.parse(stdout)
}

/** A probe's output as the fixture reports it. */
function shown(value: unknown) {
  return JSON.stringify(value === undefined ? { undefined: true } : { value })
}

describe('snapshot and restore', () => {
  it('a restored executor answers as the original, in this process and in a fresh one, and calls no tool again', async () => {
    const { calls, tools } = countingTools()
    const executor = track(await SESExecutor.create())
    await executor.sendTools(tools)
    await executor.sendVariables({ question: 'population of Lyon' })
    await executor.run(`
      const hit = lookup(question)
      const page = await fetchLater(hit)
      let counter = 0
      const bump = () => ++counter
      class Box { #v; constructor(v) { this.#v = v } get v() { return this.#v } }
      const boxes = [new Box(page), new Box(-0)]
      var drawn = [Math.random(), Date.now()]
    `)
    await executor.run('bump(); bump()')
    const snapshot = await executor.snapshot()
    expect(snapshot).toBeInstanceOf(Uint8Array)
    expect(calls).toEqual({ lookup: 1, fetchLater: 1 })

    const probe = '[hit, page, bump(), boxes.map((b) => Object.is(b.v, -0) || b.v), drawn, Math.random()]'
    const expected = (await executor.run(probe)).output

    const here = track(await SESExecutor.restore(snapshot))
    expect(here.state).toBe('READY')
    await here.sendTools(tools)
    expect((await here.run(probe)).output).toEqual(expected)

    const elsewhere = await restoreElsewhere([{ snapshot, probe }])
    expect(elsewhere.results).toEqual([{ ok: shown(expected), state: 'READY' }])
    expect(elsewhere.calls).toBe(0)
    expect(calls).toEqual({ lookup: 1, fetchLater: 1 })
  })

  it('snapshot(restore(s)) is s', async () => {
    const executor = track(await SESExecutor.create({ timers: true }))
    await executor.sendTools({ lookup: (x: unknown) => x })
    await executor.run('const a = lookup(1); await new Promise((r) => setTimeout(r, 3)); let b = [a, Math.random()]')
    const snapshot = await executor.snapshot()
    const restored = track(await SESExecutor.restore(snapshot, { timers: true }))
    expect(Buffer.from(await restored.snapshot()).equals(Buffer.from(snapshot))).toBe(true)
  })

  it('the restored session goes on: it runs, is snapshotted and restored again', async () => {
    const executor = track(await SESExecutor.create())
    await executor.run('let total = 1')
    const first = track(await SESExecutor.restore(await executor.snapshot()))
    await first.run('total *= 6')
    const second = track(await SESExecutor.restore(await first.snapshot()))
    await second.run('total += 1')
    expect((await second.run('total')).output).toBe(7)
  })
})

describe('the state machine', () => {
  it('snapshot() needs a session at rest: READY or PAUSED', async () => {
    const fresh = track(new SESExecutor())
    expect((await rejectionOf(fresh.snapshot())).code).toBe('ERR_INVALID_STATE')
    const executor = track(await SESExecutor.create({ timeoutMs: 50, maxOperations: 1e12 }))
    const running = executor.run('let n = 0; while (n < 1e9) n++')
    const refused = await rejectionOf(executor.snapshot())
    expect(refused.code).toBe('ERR_INVALID_STATE')
    expect(refused.details).toMatchObject({ state: 'RUNNING', method: 'snapshot' })
    expect((await rejectionOf(running)).code).toBe('ERR_EXEC_TIMEOUT')
    expect(executor.state).toBe('DIRTY')
    expect((await rejectionOf(executor.snapshot())).details).toMatchObject({ state: 'DIRTY' })
    await executor.cleanup()
    expect((await rejectionOf(executor.snapshot())).details).toMatchObject({ state: 'DEAD' })
  })

  it('restore(snapshot) is for a NEW executor; resume() for a PAUSED one', async () => {
    const executor = track(await SESExecutor.create())
    const snapshot = await executor.snapshot()
    expect((await rejectionOf(executor.restore(snapshot))).details).toMatchObject({ state: 'READY', method: 'restore' })
    expect((await rejectionOf(executor.resume('yes'))).details).toMatchObject({ state: 'READY', method: 'resume' })
    expect(executor.paused).toBeUndefined()
  })
})

describe('pause for approval', () => {
  async function pausing(options: Options = {}) {
    const { calls, tools } = countingTools()
    const executor = track(await SESExecutor.create(options))
    await executor.sendTools({
      ...tools,
      approve: (action: unknown) => pauseRun({ ask: `may I ${action}?` }),
      approveLater: async (action: unknown) => pauseRun(`later: ${action}`),
    })
    return { executor, calls }
  }

  it('a synchronous tool pauses the run; resume(answer) continues it from that call', async () => {
    const { executor, calls } = await pausing()
    await executor.run('const log = []')
    const paused = await executor.run('log.push(lookup("before"))\nconst verdict = approve("deploy")\nlog.push(verdict)\nconsole.log("after", verdict)\nlog')
    expect(paused.paused).toEqual({ tool: 'approve', args: ['deploy'], line: 2, reason: { ask: 'may I deploy?' } })
    expect(paused.output).toBeUndefined()
    expect(paused.is_final_answer).toBe(false)
    expect(executor.state).toBe('PAUSED')
    expect(executor.paused).toEqual(paused.paused)

    const resumed = await executor.resume('yes')
    expect(resumed.output).toEqual(['lookup before #1', 'yes'])
    expect(resumed.logs).toBe('after yes')
    expect(resumed.paused).toBeUndefined()
    expect(executor.state).toBe('READY')
    expect(calls.lookup).toBe(1)
    expect((await executor.run('log.length')).output).toBe(2)
  })

  it('an awaited tool pauses the run; resume({ error }) throws into it', async () => {
    const { executor } = await pausing()
    const paused = await executor.run('let v\ntry { v = await approveLater("ship") } catch (e) { v = e.message }\nv')
    expect(paused.paused).toEqual({ tool: 'approveLater', args: ['ship'], line: 2, reason: 'later: ship' })
    const resumed = await executor.resume({ error: new Error('refused by Ana') })
    expect(resumed.output).toBe('refused by Ana')
    const again = await executor.run('approve("x")')
    expect(again.paused?.tool).toBe('approve')
    const uncaught = await rejectionOf(executor.resume({ error: 'no' }))
    expect(uncaught.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(executor.state).toBe('READY')
  })

  it('while PAUSED: resume once, snapshot yes, run, sendVariables and new tools no, cleanup yes', async () => {
    const { executor } = await pausing()
    await executor.run('approve("a")')
    expect((await rejectionOf(executor.run('1'))).details).toMatchObject({ state: 'PAUSED', method: 'run' })
    expect((await rejectionOf(executor.sendVariables({ x: 1 }))).details).toMatchObject({ state: 'PAUSED' })
    const stranger = await rejectionOf(executor.sendTools({ other: () => 1 }))
    expect(stranger.details).toMatchObject({ state: 'PAUSED', method: 'sendTools', tool: 'other' })
    await executor.sendTools({ approve: () => 'fine' })
    expect((await executor.snapshot()).length).toBeGreaterThan(0)
    const first = executor.resume(1)
    expect((await rejectionOf(executor.resume(2))).details).toMatchObject({ state: 'RUNNING', method: 'resume' })
    await first
    const again = await pausing()
    await again.executor.run('approve("b")')
    await again.executor.cleanup()
    expect(again.executor.state).toBe('DEAD')
    expect((await rejectionOf(again.executor.resume(1))).details).toMatchObject({ state: 'DEAD' })
  })

  it('pauseRun thrown by a tool fails the call, and anywhere but a tool it is an object like any other', async () => {
    const logged: unknown[] = []
    const executor = track(await SESExecutor.create({ onLog: () => pauseRun('ignored') }))
    await executor.sendTools({
      thrower: () => {
        throw pauseRun('no')
      },
    })
    const error = await rejectionOf(executor.run('console.log(1); thrower()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.message).toContain('not when a tool throws it')
    await executor.sendVariables({ request: pauseRun('as a variable') })
    expect((await executor.run('request')).output).toEqual({})
    expect(logged).toEqual([])
    const refused = await rejectionOf(executor.resume(pauseRun('x')))
    expect(refused.code).toBe('ERR_INVALID_STATE')
  })

  it('a paused session is snapshotted, restored in a fresh process and resumed there', async () => {
    const { executor, calls } = await pausing()
    const paused = await executor.run('const seen = lookup("x")\nconst verdict = await approveLater("go");\n[seen, verdict, lookup("y")]')
    const snapshot = await executor.snapshot()
    const restored = await restoreElsewhere([{ snapshot, probe: 'seen', answer: 'granted' }])
    expect(restored.results).toEqual([
      {
        ok: shown('lookup x #1'),
        resumed: { paused: paused.paused, output: ['lookup x #1', 'granted', 'fresh y'], logs: '' },
        state: 'READY',
      },
    ])
    expect(restored.calls).toBe(1)
    expect(calls.lookup).toBe(1)
  })
})

describe('snapshots are untrusted input', () => {
  it('a truncated, changed or foreign snapshot is refused naming what is wrong, and the executor is DEAD', async () => {
    const executor = track(await SESExecutor.create())
    await executor.run('let kept = 1')
    const snapshot = await executor.snapshot()
    const reason = async (bytes: unknown) => {
      const error = await rejectionOf(SESExecutor.restore(bytes as Uint8Array))
      expect(error).toBeInstanceOf(ExecutorError)
      expect(error.code).toBe('ERR_SNAPSHOT_INVALID')
      return error.details.reason
    }
    expect(await reason(snapshot.subarray(0, snapshot.length - 5))).toBe('truncated')
    const flipped = Uint8Array.from(snapshot)
    flipped[flipped.length - 8] ^= 4
    expect(await reason(flipped)).toBe('checksum')
    expect(await reason(new TextEncoder().encode('{"not":"a snapshot"}'))).toBe('malformed')
    expect(await reason('a string')).toBe('malformed')
    const other = Uint8Array.from(snapshot)
    other[8] = 9
    expect(await reason(other)).toBe('version')
    const restoring = new SESExecutor()
    await rejectionOf(restoring.restore(flipped))
    expect(restoring.state).toBe('DEAD')
  })

  it('a restore under other options the state depends on is refused; limits hold during the replay', async () => {
    const executor = track(await SESExecutor.create({ maxOperations: 100_000 }))
    // A function the session made keeps its state from a checkpoint: its runs are replayed.
    await executor.run('function kept() {} let s = 0; for (let i = 0; i < 50000; i++) s += i')
    const snapshot = await executor.snapshot()
    const refused = await rejectionOf(SESExecutor.restore(snapshot, { timers: true }))
    expect(refused.details).toMatchObject({ reason: 'options', limit: 'timers' })
    const limited = await rejectionOf(SESExecutor.restore(snapshot, { maxOperations: 1000 }))
    expect(limited.details).toMatchObject({ reason: 'limit', limit: 'maxOperations' })
    const restored = track(await SESExecutor.restore(snapshot, { maxOperations: 60_000 }))
    expect((await restored.run('s')).output).toBe(1249975000)
  })
})

describe('what a replay cannot repeat', () => {
  it('a WeakRef keeps the session from a snapshot and pauseRun fails the call, until a checkpoint holds the state', async () => {
    const executor = track(await SESExecutor.create())
    await executor.sendTools({ approve: () => pauseRun('may I?') })
    await executor.run('globalThis.data = Array.from({ length: 2000 }, (_, i) => ({ i }))')
    // Cycles collected or not depending on when the garbage collector ran, which a replay on
    // another heap does not repeat: a restored session would have found them alive.
    await executor.run('globalThis.refs = []; for (let k = 0; k < 50; k++) { const a = { k }; a.self = a; refs.push(new WeakRef(a)) }')
    const refused = await rejectionOf(executor.snapshot())
    expect(refused.code).toBe('ERR_INVALID_STATE')
    expect(refused.details.reason).toContain('WeakRef')
    const failed = await executor.run('let m; try { approve() } catch (e) { m = e.message } m')
    expect(failed.paused).toBeUndefined()
    expect(failed.output).toContain('cannot pause')
    expect(executor.state).toBe('READY')
    await executor.run('delete globalThis.refs')
    const restored = track(await SESExecutor.restore(await executor.snapshot()))
    expect((await restored.run('[data.length, typeof refs, m]')).output).toEqual([2000, 'undefined', failed.output])
  })
})

// Random agent sessions (declarations of every kind, closures sharing counters, classes with
// private fields, cycles, objects as Map keys, -0 and NaN, typed arrays sharing a buffer,
// canvases, the clock and Math.random, tools, failing runs) restored in a fresh process: every
// probe answers there as in the original.
describe('round trip, property', () => {
  const DESCRIBE = `
    const ids = new Map()
    const describe = (v, depth = 0) => {
      if (v === null) return 'null'
      if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v)
      if (typeof v === 'bigint') return v + 'n'
      if (typeof v === 'string') return JSON.stringify(v)
      if (typeof v === 'symbol') return 'symbol ' + String(v.description)
      if (typeof v === 'function') return 'function ' + v.name
      if (typeof v !== 'object') return typeof v + ' ' + String(v)
      if (ids.has(v)) return '#' + ids.get(v)
      ids.set(v, ids.size)
      if (depth > 6) return 'deep'
      const kind = Object.prototype.toString.call(v)
      const parts = [kind, String(Object.getPrototypeOf(v)?.constructor?.name), String(Object.isExtensible(v))]
      if (v instanceof Map) for (const [k, x] of v) parts.push(describe(k, depth + 1) + '=>' + describe(x, depth + 1))
      if (v instanceof Set) for (const x of v) parts.push(describe(x, depth + 1))
      if (ArrayBuffer.isView(v)) parts.push(describe(v.buffer, depth + 1), Array.from(v).join())
      if (v instanceof ArrayBuffer) parts.push(Array.from(new Uint8Array(v)).join())
      if (v instanceof Date) parts.push(String(v.getTime()))
      if (v instanceof Error) parts.push(v.name, v.message)
      for (const key of Reflect.ownKeys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, key)
        const flags = (d.writable ? 'w' : '') + (d.enumerable ? 'e' : '') + (d.configurable ? 'c' : '')
        parts.push(String(key) + ':' + flags + ':' + ('value' in d ? describe(d.value, depth + 1) : 'accessor'))
      }
      return '{' + parts.join(',') + '}'
    }`

  type Step = { code: string; probes: string[] }

  const literal: fc.Arbitrary<string> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom('-0', 'NaN', 'Infinity', 'undefined', 'null', 'true', '10n', "'é\\u{1F600}'"),
      fc.double().map((d) => (Number.isNaN(d) ? 'NaN' : Object.is(d, -0) ? '-0' : String(d))),
      fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
      fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
      fc
        .array(fc.tuple(fc.constantFrom('a', 'b', 'key with space', '1'), tie('value')), { maxLength: 3 })
        .map((entries) => `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')} }`),
    ),
  })).value

  const step = (n: number): fc.Arbitrary<Step> =>
    fc.oneof(
      fc.tuple(fc.constantFrom('let', 'const', 'var'), literal).map(([kind, value]) => ({
        code: `${kind} v${n} = ${value}`,
        probes: [`v${n}`],
      })),
      literal.map((value) => ({ code: `globalThis.v${n} = ${value}; Object.freeze(globalThis.v${n})`, probes: [`v${n}`] })),
      fc.integer({ min: -5, max: 5 }).map((k) => ({
        code: `const v${n} = (() => { let c = ${k}; return { inc: () => ++c, get: () => c } })(); v${n}.inc()`,
        probes: [`v${n}.inc()`, `v${n}.get()`],
      })),
      fc.integer({ min: 0, max: 9 }).map((k) => ({
        code: `class C${n} { #x = ${k}; static made = 0; constructor() { C${n}.made++ } bump() { return ++this.#x } }\nconst v${n} = [new C${n}(), new C${n}()]; v${n}[0].bump()`,
        probes: [`v${n}.map((c) => c.bump())`, `C${n}.made`],
      })),
      fc.constant({
        code: `const v${n} = { name: 'cycle' }; v${n}.self = v${n}; v${n}.list = [v${n}, { back: v${n} }]`,
        probes: [`v${n}`, `v${n}.list[1].back === v${n}`],
      }),
      fc.string({ maxLength: 4 }).map((s) => ({
        code: `const k${n} = { id: ${JSON.stringify(s)} }; const v${n} = new Map([[k${n}, 'object key'], [-0, 'zero'], [NaN, 'nan']]); const w${n} = new Set([k${n}, NaN])`,
        probes: [`v${n}.get(k${n})`, `v${n}.get(0)`, `v${n}.get(NaN)`, `w${n}.has(k${n})`, `v${n}`],
      })),
      fc.integer({ min: 0, max: 255 }).map((byte) => ({
        code: `const b${n} = new ArrayBuffer(8); const v${n} = [new Uint8Array(b${n}), new Float32Array(b${n}, 4, 1)]; v${n}[0][1] = ${byte}; v${n}[1][0] = -0`,
        probes: [`v${n}`, `v${n}[0].buffer === v${n}[1].buffer`],
      })),
      fc.constantFrom('#e11d48', 'rgba(0, 128, 255, 0.5)', 'green').map((color) => ({
        code: `const v${n} = getCanvas(6, 4); const g${n} = v${n}.getContext('2d'); g${n}.fillStyle = ${JSON.stringify(color)}; g${n}.fillRect(1, 1, 3, 2)`,
        probes: [`Array.from(g${n}.getImageData(0, 0, 6, 4).data).join()`],
      })),
      fc.constant({ code: `var v${n} = [Math.random(), Date.now(), new Date().getTime(), performance.now() >= 0]`, probes: [`v${n}`] }),
      fc.constant({ code: `const v${n} = lookup(${n}); const u${n} = await fetchLater(${n})`, probes: [`[v${n}, u${n}]`] }),
      fc.constant({
        code: `globalThis.p${n} = 1\nlet z${n} = (() => { throw new RangeError('step ${n} fails') })()`,
        probes: [`p${n}`, `typeof z${n}`],
      }),
      fc.constant({ code: `for (;;) { globalThis.n${n} = (globalThis.n${n} ?? 0) + 1 }`, probes: [`n${n}`] }),
    )

  const session = fc.integer({ min: 1, max: 6 }).chain((length) => fc.tuple(...Array.from({ length }, (_, i) => step(i))))

  it('every probe of a random session answers in a fresh process as in the original', async () => {
    await fc.assert(
      fc.asyncProperty(session, async (steps) => {
        const options = { maxOperations: 500 }
        const executor = await SESExecutor.create(options)
        try {
          await executor.sendTools(countingTools().tools)
          for (const { code } of steps) await executor.run(code).catch(() => {})
          const snapshot = await executor.snapshot()
          const probes = steps.flatMap((s) => s.probes)
          const probe = `${DESCRIBE}\n[${probes.map((p) => `(() => { try { return describe(${p}) } catch (e) { return 'threw ' + e.name } })()`).join(',\n')}]`
          const expected = (await executor.run(probe)).output
          const restored = await restoreElsewhere([{ snapshot, options, probe }])
          expect(restored.results).toEqual([{ ok: shown(expected), state: 'READY' }])
          expect(restored.calls).toBe(0)
        } finally {
          await executor.cleanup()
        }
      }),
      // SESSION_PROPERTY_RUNS=500 for a longer search.
      { numRuns: Number(process.env.SESSION_PROPERTY_RUNS ?? 25) },
    )
  }, 1_800_000)
})

describe('a CodeAgent conversation through codeAgentSetup', () => {
  it('is interrupted between steps and continued, each step in a fresh process', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'ses-agent-'))
    const file = path.join(directory, 'conversation.json')
    await writeFile(file, JSON.stringify({ messages: [{ role: 'user', content: 'What do 12 apples and 4 pears cost?' }], state: {} }))
    const steps = []
    for (let step = 0; step < 3; step++) {
      const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, 'fixtures', 'code-agent-step.mjs'), file])
      steps.push(JSON.parse(stdout))
    }
    expect(steps).toEqual([
      { calls: 1, logs: '0.5' },
      { calls: 1, logs: '9' },
      { calls: 0, answer: '12 apples and 4 pears cost 9 EUR', logs: '' },
    ])
  }, 60_000)
})
