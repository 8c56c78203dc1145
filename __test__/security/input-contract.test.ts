// Bad input accepted or explained badly. maxLogBytes below 1024 (spec §3.3);
// `SESExecutor()` without `new`, which used to return normally (wrapping the global object); and
// awaited async tool failures, which carried no line or column although the README promises
// them (synchronous ones did).
import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf, thrownBy, validateCode } from '../helpers'

describe('class 6: SESExecutor is a class, and must be constructed with new', () => {
  const WITHOUT_NEW = "Class constructor SESExecutor cannot be invoked without 'new'"

  it('SESExecutor() throws a TypeError, as a class constructor does, and leaves the global object alone', () => {
    const call = SESExecutor as unknown as (options?: unknown) => unknown
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect((thrown as TypeError).message).toBe(WITHOUT_NEW)
    expect(Object.prototype.hasOwnProperty.call(globalThis, 'state')).toBe(false)
  })

  it('call, apply and Reflect.apply with any receiver throw the same TypeError', () => {
    const asFunction = SESExecutor as unknown as (...args: unknown[]) => unknown
    for (const invoke of [
      () => asFunction.call({}),
      () => asFunction.call(undefined, { timeoutMs: 5 }),
      () => asFunction.apply(globalThis, []),
      () => Reflect.apply(asFunction, Object.create(null), []),
    ]) {
      expect(invoke).toThrow(TypeError)
      expect(invoke).toThrow(WITHOUT_NEW)
    }
  })

  it('new, Reflect.construct and subclasses still construct executors', async () => {
    class Mine extends SESExecutor {}
    for (const made of [new SESExecutor(), Reflect.construct(SESExecutor, []), new Mine()]) {
      expect(made.state).toBe('NEW')
      await made.init()
      expect((await made.run('6 * 7')).output).toBe(42)
      await made.cleanup()
    }
  })
})

describe('class 6: maxLogBytes follows spec §3.3 (>= 1024), with log_budget_too_small above that', () => {
  it('0, 1 and 1023 are refused as options_valid; 1024 is accepted with the INFO; 16 KiB without', () => {
    for (const bytes of [0, 1, 1023]) {
      const error = thrownBy(() => new SESExecutor({ maxLogBytes: bytes }))
      expect(error.details.diagnostics).toEqual([
        expect.objectContaining({ rule: 'options_valid', severity: 'ERROR', message: `maxLogBytes must be an integer >= 1024, got ${bytes}` }),
      ])
    }
    expect(validateCode('1', { maxLogBytes: 1024 }).map((d) => `${d.severity} ${d.rule}`)).toEqual(['INFO log_budget_too_small'])
    expect(validateCode('1', { maxLogBytes: 16 * 1024 })).toEqual([])
  })
})

describe('class 6: an awaited async tool failure names the line and column of the call', () => {
  async function failing() {
    const executor = await SESExecutor.create()
    await executor.sendTools({
      fetchData: async (what: string) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        throw new Error(`no ${what}`)
      },
      ok: async () => 1,
    })
    return executor
  }

  it('at the top level, as a synchronous failure does', async () => {
    const executor = await failing()
    const error = await rejectionOf(executor.run('const a = await ok();\nconst data = await fetchData("users");'))
    expect([error.code, error.message, error.details]).toEqual([
      'ERR_TOOL_PROXY_FAIL',
      'Tool execution failed: fetchData: Error: no users',
      { tool: 'fetchData', line: 2, column: 20, sourceLine: 'const data = await fetchData("users");' },
    ])
    await executor.cleanup()
  })

  it('inside a function, the line of the call (where a synchronous failure points too), not of the await', async () => {
    const executor = await failing()
    const error = await rejectionOf(
      executor.run('async function load(name) {\n  const pending = fetchData(name);\n  return await pending;\n}\n\nawait load("orders");'),
    )
    // QuickJS places a call at its arguments, for synchronous and awaited failures alike.
    expect(error.details).toEqual({ tool: 'fetchData', line: 2, column: 29, sourceLine: 'const pending = fetchData(name);' })
    await executor.cleanup()
  })

  it('in Promise.all, the line of the call that failed', async () => {
    const executor = await failing()
    const error = await rejectionOf(executor.run('const [a, b] = await Promise.all([\n  ok(),\n  fetchData("b"),\n]);'))
    expect(error.details).toMatchObject({ tool: 'fetchData', line: 3, column: 3, sourceLine: 'fetchData("b"),' })
    await executor.cleanup()
  })

  it('in TypeScript, at the user\'s own line', async () => {
    const executor = await failing()
    const error = await rejectionOf(executor.run('const n: number = 1;\ninterface T { a: string }\nconst t: T = { a: await fetchData("t") };'))
    expect(error.details).toMatchObject({ line: 3, sourceLine: 'const t: T = { a: await fetchData("t") };' })
    await executor.cleanup()
  })

  it('the sandbox sees the call site in the error\'s stack too (it used to be empty)', async () => {
    const executor = await failing()
    const { output } = await executor.run('let stack = "";\ntry { await fetchData("x") } catch (e) { stack = e.stack }\nstack')
    expect(output).toMatch(/^ {4}at agent\.js:\d+:\d+\n$/)
    await executor.cleanup()
  })
})
