// Security suite, isolation: nothing one executor does — variables, tools, globals,
// prototype changes, failures, modules — is visible to another, and after cleanup() + init()
// nothing of the old sandbox remains.
import { afterAll, afterEach, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from '../helpers'
import { Canary, type Executor, expectUsable } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())

const live: Executor[] = []
async function executor(options?: ConstructorParameters<typeof SESExecutor>[0]) {
  const created = await SESExecutor.create({ timeoutMs: 2_000, ...options })
  live.push(created)
  return created
}
afterEach(async () => {
  // Every case ends with each executor READY and working, and the canary untouched.
  for (const each of live.splice(0)) {
    await expectUsable(each, 'READY')
    await each.cleanup()
  }
  canary.expectUntouched()
})

/** What a fresh sandbox says about the names and prototype changes the attacks below make. */
const PROBE = `[typeof secretVar, typeof secretLet, typeof secretGlobal, typeof sentVariable, typeof onlyA,
  ({}).polluted, typeof [].map, JSON.stringify({ a: 1 }), Object.isFrozen(Object.prototype)]`
const PRISTINE = ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', undefined, 'function', '{"a":1}', false]

/** Cleans up an executor its own code broke on purpose (the checks of afterEach do not apply). */
async function retire(target: Executor) {
  live.splice(live.indexOf(target), 1)
  await target.cleanup()
  expect(target.state).toBe('DEAD')
}

/** Leaves everything PROBE looks for behind in `target`. */
async function contaminate(target: Executor) {
  await target.sendVariables({ sentVariable: { secret: canary.secret } })
  await target.sendTools({ onlyA: () => canary.secret })
  await target.run(`var secretVar = onlyA(); let secretLet = 1; globalThis.secretGlobal = sentVariable;
    Object.prototype.polluted = 'yes'; Array.prototype.map = null; JSON.stringify = () => 'hijacked';
    Object.freeze(Object.prototype)`)
  expect((await target.run(PROBE)).output).toEqual([
    'string', 'number', 'object', 'object', 'function', 'yes', 'object', 'hijacked', true,
  ])
}

describe('isolation between executors', () => {
  it('variables, tools, globals and prototype changes of one executor are invisible to another — original', async () => {
    const a = await executor()
    const b = await executor()
    await contaminate(a)
    const seen = await b.run(PROBE)
    expect(seen.output).toEqual(PRISTINE)
    expect(JSON.stringify(seen)).not.toContain(canary.secret)
    await retire(a)
  })

  it('an executor created after another was contaminated starts pristine — original', async () => {
    const a = await executor()
    await contaminate(a)
    const later = await executor()
    expect((await later.run(PROBE)).output).toEqual(PRISTINE)
    await retire(a)
  })

  it('calling another executor’s tool by name is a ReferenceError — original', async () => {
    const a = await executor()
    const b = await executor()
    await a.sendTools({ onlyA: () => canary.secret })
    const error = await rejectionOf(b.run('onlyA()'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.message).toMatch(/ReferenceError: onlyA is not defined/)
    expect(b.state).toBe('READY')
  })

  it('same-named tools of two executors each answer their own sandbox, with overlapping async calls — original', async () => {
    const a = await executor()
    const b = await executor()
    await a.sendTools({ who: async (n: number) => new Promise((r) => setTimeout(() => r(`a${n}`), 5)) })
    await b.sendTools({ who: async (n: number) => new Promise((r) => setTimeout(() => r(`b${n}`), 1)) })
    const code = 'await Promise.all([1, 2, 3, 4].map((n) => who(n)))'
    const [fromA, fromB] = await Promise.all([a.run(code), b.run(code)])
    expect(fromA.output).toEqual(['a1', 'a2', 'a3', 'a4'])
    expect(fromB.output).toEqual(['b1', 'b2', 'b3', 'b4'])
  })

  it('logs of concurrent runs belong to their own run — original', async () => {
    const a = await executor()
    const b = await executor()
    const [ra, rb] = await Promise.all([
      a.run('for (let i = 0; i < 50; i++) console.log("A", i); "a"'),
      b.run('for (let i = 0; i < 50; i++) console.log("B", i); "b"'),
    ])
    expect(ra.logs.split('\n')).toEqual(Array.from({ length: 50 }, (_, i) => `A ${i}`))
    expect(rb.logs.split('\n')).toEqual(Array.from({ length: 50 }, (_, i) => `B ${i}`))
  })

  it('one executor’s timeout (DIRTY) leaves another running undisturbed — original', async () => {
    const a = await SESExecutor.create({ timeoutMs: 100, maxOperations: 1e12 })
    const b = await executor()
    const [failed, ok] = await Promise.all([rejectionOf(a.run('for (;;) {}')), b.run('let s = 0; for (let i = 0; i < 1e4; i++) s += i; s')])
    expect(failed.code).toBe('ERR_EXEC_TIMEOUT')
    expect(a.state).toBe('DIRTY')
    expect(ok.output).toBe(49_995_000)
    await expectUsable(a, 'DIRTY')
    await a.cleanup()
  })

  it('one executor’s memory bomb leaves another’s heap alone — original', async () => {
    const a = await SESExecutor.create({ memoryLimitBytes: 16 * 1024 * 1024, maxOperations: 1e9 })
    const b = await executor()
    await b.run('var kept = Array.from({ length: 1000 }, (_, i) => i)')
    const error = await rejectionOf(a.run('const hoard = []; for (;;) hoard.push("x".repeat(1e5) + hoard.length)'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details.limit).toBe('memoryLimitBytes')
    expect((await b.run('kept.reduce((s, n) => s + n, 0)')).output).toBe(499_500)
    await expectUsable(a, 'DIRTY')
    await a.cleanup()
  })

  it('registered modules are instantiated per executor: module state is not shared — original', async () => {
    const modules = { counter: 'let n = 0; export const next = () => ++n' }
    const a = await executor({ authorizedImports: ['counter'], modules })
    const b = await executor({ authorizedImports: ['counter'], modules })
    const code = 'const { next } = await import("counter"); [next(), next()]'
    expect((await a.run(code)).output).toEqual([1, 2])
    expect((await a.run(code)).output).toEqual([3, 4])
    expect((await b.run(code)).output).toEqual([1, 2])
  })
})

describe('cleanup() + init() starts from nothing', () => {
  it('no variable, tool, global, prototype change or module state survives a rebuild — original', async () => {
    const a = await executor({ authorizedImports: ['counter'], modules: { counter: 'let n = 0; export const next = () => ++n' } })
    await contaminate(a)
    await a.run('const { next } = await import("counter"); next(); next()')
    await a.cleanup()
    expect(a.state).toBe('DEAD')
    await a.init()
    expect((await a.run(PROBE)).output).toEqual(PRISTINE)
    expect((await a.run('const { next } = await import("counter"); next()')).output).toBe(1)
  })

  it('a tool promise still pending at cleanup() never reaches the rebuilt sandbox — original', async () => {
    const a = await executor({ timeoutMs: 5_000 })
    let settle: (value: string) => void = () => {}
    await a.sendTools({ slow: () => new Promise<string>((resolve) => (settle = resolve)) })
    await a.run('globalThis.box = []; slow().then((v) => box.push(v)); "started"')
    await a.cleanup()
    await a.init()
    settle(canary.secret)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect((await a.run('[typeof box, typeof slow]')).output).toEqual(['undefined', 'undefined'])
  })
})
