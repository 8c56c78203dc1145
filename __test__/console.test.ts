// Spec §7.3 (console capture), docs/contract.md "Logs": Node's util.inspect formatting, levels,
// maxLogBytes truncation, logs per run.
import { inspect, format } from 'node:util'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from './helpers'

let executor: InstanceType<typeof SESExecutor>
beforeAll(async () => {
  executor = await SESExecutor.create()
})
afterAll(async () => {
  await executor.cleanup()
})

const logsOf = async (code: string) => (await executor.run(code)).logs

describe('formatting follows Node’s console.log (util.format + util.inspect)', () => {
  // Each case is evaluated by Node itself for the expected text, so the test states the rule
  // (same output as Node) rather than a copy of it.
  const cases: Array<[string, () => unknown[]]> = [
    ['"plain", "strings", 1, true, null, undefined', () => ['plain', 'strings', 1, true, null, undefined]],
    ['{ a: 1, b: [1, 2], c: { d: { e: { f: 1 } } } }', () => [{ a: 1, b: [1, 2], c: { d: { e: { f: 1 } } } }]],
    ['["it\'s", "a \\"q\\"", `x${1}`]', () => [["it's", 'a "q"', `x${1}`]]],
    ['-0, NaN, -Infinity, 10n', () => [-0, NaN, -Infinity, 10n]],
    ['[1, , 3], new Array(5)', () => [[1, , 3], new Array(5)]], // eslint-disable-line no-sparse-arrays
    ['new Map([["k", { v: 1 }]]), new Set([1, "two"])', () => [new Map([['k', { v: 1 }]]), new Set([1, 'two'])]],
    ['new Date(0), /re+/gi', () => [new Date(0), /re+/gi]],
    ['function named() {}, () => {}, class K {}', () => [function named() {}, () => {}, class K {}]],
    ['Array.from({ length: 30 }, (_, i) => i * 7)', () => [Array.from({ length: 30 }, (_, i) => i * 7)]],
    ['{ "needs-quotes": 1, valid_id: 2 }', () => [{ 'needs-quotes': 1, valid_id: 2 }]],
    ['"%s has %d items costing %f (%j) %o %%", "cart", 3, 1.5, { a: 1 }, "x"', () => ['%s has %d items costing %f (%j) %o %%', 'cart', 3, 1.5, { a: 1 }, 'x']],
    ['Object.create(null)', () => [Object.create(null)]],
    ['{ long: "x".repeat(100), list: ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddddd"] }', () => [{ long: 'x'.repeat(100), list: ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc', 'dddddddddd'] }]],
  ]
  for (const [source, values] of cases) {
    it(`console.log(${source.length > 60 ? source.slice(0, 57) + '...' : source})`, async () => {
      expect(await logsOf(`console.log(${source})`)).toBe(format(...values()))
    })
  }

  it('circular references print like Node', async () => {
    const node: Record<string, unknown> = { name: 'root' }
    node.self = node
    expect(await logsOf('const n = { name: "root" }; n.self = n; console.log(n)')).toBe(inspect(node))
  })

  it('getters are shown, never called', async () => {
    expect(await logsOf('console.log({ get secret() { globalThis.called = true; return 1 } }); console.log(typeof called)')).toBe(
      '{ secret: [Getter] }\nundefined',
    )
  })

  it('errors print their name and message', async () => {
    expect(await logsOf('console.log(String(new TypeError("bad")))')).toBe('TypeError: bad')
    expect((await logsOf('console.log(new TypeError("bad"))')).split('\n')[0]).toBe('TypeError: bad')
  })
})

describe('levels (§7.3, collectConsoleLevels)', () => {
  it('log, info, warn and error are all captured in call order by default', async () => {
    expect(await logsOf('console.log("l"); console.info("i"); console.warn("w"); console.error("e")')).toBe('l\ni\nw\ne')
  })

  it('only the configured levels are collected', async () => {
    const picky = await SESExecutor.create({ collectConsoleLevels: ['warn', 'error'] })
    expect((await picky.run('console.log("l"); console.info("i"); console.warn("w"); console.error("e")')).logs).toBe('w\ne')
    await picky.cleanup()
  })

  it('an unknown level is refused', async () => {
    const error = await rejectionOf(SESExecutor.create({ collectConsoleLevels: ['debug' as 'log'] }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
  })

  it('console cannot be replaced or re-wired by sandbox code', async () => {
    const code = `
      try { console = { log() {} } } catch {}
      try { console.log = () => {} } catch {}
      try { delete globalThis.console } catch {}
      console.log("still captured")`
    expect(await logsOf(code)).toBe('still captured')
  })
})

describe('maxLogBytes truncation (§7.3)', () => {
  it('keeps the first maxLogBytes bytes, then appends ...[TRUNCATED] once', async () => {
    const small = await SESExecutor.create({ maxLogBytes: 1024 })
    const { logs } = await small.run('for (let i = 0; i < 500; i++) console.log("line " + i)')
    const full = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n')
    expect(logs).toBe(full.slice(0, 1024) + '...[TRUNCATED]')
    expect(logs.match(/\.\.\.\[TRUNCATED\]/g)).toHaveLength(1)
    await small.cleanup()
  })

  it('logs that fit are left whole', async () => {
    const small = await SESExecutor.create({ maxLogBytes: 1024 })
    expect((await small.run('console.log("short")')).logs).toBe('short')
    await small.cleanup()
  })

  it('the budget counts UTF-8 bytes and never splits a character', async () => {
    const small = await SESExecutor.create({ maxLogBytes: 1024 })
    const { logs } = await small.run('console.log("é".repeat(600))')
    expect(logs).toBe('é'.repeat(512) + '...[TRUNCATED]')
    await small.cleanup()
  })
})

describe('logs belong to one run', () => {
  it('a run’s logs do not carry over into the next run', async () => {
    expect(await logsOf('console.log("first")')).toBe('first')
    expect(await logsOf('console.log("second")')).toBe('second')
    expect(await logsOf('1')).toBe('')
  })

  it('a failing run reports the logs written before the failure', async () => {
    const error = await rejectionOf(executor.run('console.log("before"); throw new Error("x")'))
    expect(error.logs).toBe('before')
  })

  it('late promise callbacks still log into the run that scheduled them', async () => {
    expect(await logsOf('Promise.resolve().then(() => Promise.resolve()).then(() => console.log("late")); console.log("sync")')).toBe('sync\nlate')
  })
})
