// Host exceptions: the host never gets an uncaught exception or an unhandled rejection, and no
// executor wedges, whatever host code hands the executor — a tool that throws or rejects with a
// hostile value (Proxies whose traps throw, revoked Proxies, null-prototype objects, errors
// whose name/message/stack getters throw, Symbols, BigInts), a hostile result, an onLog that
// throws or rejects, options, variables, tool objects and AbortSignals whose getters throw.
//
// The cases run in a child process (`fixtures/hostile-host.cjs`) that listens for
// 'uncaughtException' and 'unhandledRejection' itself: in this process Vitest's own handlers
// would catch them first. Each case asserts the exact outcome, that nothing fired, the state,
// that the executor still runs code and that cleanup() succeeds.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

import { beforeAll, describe, expect, it } from 'vitest'

type Outcome = { output?: unknown; logs?: string; code?: string; message?: string; details?: Record<string, unknown>; threw?: string; type?: string }
type Result = { run?: Outcome; again?: Outcome; sent?: Outcome; made?: Outcome; state?: string; works?: boolean; cleanedUp?: boolean; fired: unknown[] }

const FIXTURE = fileURLToPath(new URL('../fixtures/hostile-host.cjs', import.meta.url))
let results: Record<string, Result>

beforeAll(async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [FIXTURE], { maxBuffer: 64 * 1024 * 1024 })
  results = JSON.parse(stdout)
}, 120_000)

/** The scenario's result, after checking that Node reported nothing and the executor is well. */
function scenario(name: string, { executor = true } = {}): Result {
  const result = results[name]
  expect(result, name).toBeDefined()
  expect(result.fired).toEqual([])
  if (executor) expect([result.state, result.works, result.cleanedUp]).toEqual(['READY', true, true])
  return result
}

/** `ERR_TOOL_PROXY_FAIL` for `tool` with `message`, at the line of the call. */
function toolFailure(tool: string, message: string, column: number) {
  return {
    code: 'ERR_TOOL_PROXY_FAIL',
    message: `Tool execution failed: ${tool}: ${message}`,
    details: { tool, line: 2, column, sourceLine: column === 1 ? `${tool}()` : `await ${tool}()` },
  }
}

// What the sandbox (and the run's error) says for each thrown value: an error's own name and
// message, a primitive's string form (a BigInt with its `n`), a plain object's JSON, and for a
// value with no string form at all, that.
const thrownValues: [string, string][] = [
  ['a Proxy whose traps throw', 'Error: a value that has no string form'],
  ['a revoked Proxy', 'Error: a value that has no string form'],
  ['a null-prototype object', 'Error: {"code":"E42","detail":"rate limited"}'],
  ['an Error whose message getter throws', 'Error: (reading its message threw)'],
  ['an Error whose name getter throws a Symbol', 'Error: the message'],
  ['an Error whose stack getter throws', 'Error: the message'],
  ['an Error whose name is a Symbol', 'Error: the message'],
  ['an object whose toString throws', 'Error: a value that has no string form'],
  ['an object whose Symbol.toPrimitive throws a Symbol', 'Error: a value that has no string form'],
  ['a BigInt', 'Error: 12345678901234567890n'],
  ['a Symbol', 'Error: Symbol(thrown)'],
  ['undefined', 'Error: undefined'],
  ['a plain object', 'Error: {"error":"not found","status":404}'],
]

describe('class 4: a tool that throws or rejects with a hostile value', () => {
  for (const [value, message] of thrownValues) {
    it(`a sync tool throwing ${value} is ERR_TOOL_PROXY_FAIL at the call's line; Node reports nothing`, () => {
      expect(scenario(`sync tool throws ${value}`).run).toEqual(toolFailure('boom', message, 1))
    })
    it(`an async tool rejecting with ${value} is ERR_TOOL_PROXY_FAIL at the call's line; no unhandled rejection`, () => {
      expect(scenario(`async tool rejects with ${value}`).run).toEqual(toolFailure('boom', message, 7))
    })
    it(`sandbox code catches ${value} as an Error with a string message, sync and async`, () => {
      expect(scenario(`caught in the sandbox: ${value}`).run).toEqual({ output: [true, 'string', true, 'string'], logs: '' })
    })
  }
})

describe('class 4: a tool that returns a hostile value', () => {
  it('a Proxy whose traps throw, returned synchronously, is ERR_TOOL_PROXY_FAIL naming what threw', () => {
    expect(scenario('sync tool returns a Proxy whose traps throw').run).toMatchObject({
      code: 'ERR_TOOL_PROXY_FAIL',
      message: 'Tool execution failed: give: Error: the result of give is unreadable (reading it threw Error: trap get), which cannot be copied (values cross as structured clones)',
    })
  })
  it('a promise resolved with a Proxy whose traps throw rejects (Promise resolution asks for its then): ERR_TOOL_PROXY_FAIL', () => {
    expect(scenario('async tool resolves to a Proxy whose traps throw').run).toMatchObject({
      code: 'ERR_TOOL_PROXY_FAIL',
      message: 'Tool execution failed: give: Error: trap get',
    })
  })
  it('a revoked Proxy is ERR_TOOL_PROXY_FAIL, sync and async', () => {
    expect(scenario('sync tool returns a revoked Proxy').run).toMatchObject({
      code: 'ERR_TOOL_PROXY_FAIL',
      message: expect.stringMatching(/^Tool execution failed: give: Error: the result of give is unreadable \(reading it threw TypeError: .*revoked/),
    })
    expect(scenario('async tool resolves to a revoked Proxy').run).toMatchObject({ code: 'ERR_TOOL_PROXY_FAIL' })
  })
  it('an object whose getter throws names the property, sync and async', () => {
    expect(scenario('sync tool returns an object whose getter throws').run?.message).toBe(
      'Tool execution failed: give: Error: the result of give.bad is unreadable (reading it threw Error: result getter), which cannot be copied (values cross as structured clones)',
    )
    expect(scenario('async tool resolves to an object whose getter throws').run?.message).toBe(
      'Tool execution failed: give: Error: the result of the tool.bad is unreadable (reading it threw Error: result getter), which cannot be copied (values cross as structured clones)',
    )
  })
  it('an array whose element getter throws a Symbol names the element and the Symbol', () => {
    expect(scenario('sync tool returns an array whose element getter throws a Symbol').run?.message).toBe(
      'Tool execution failed: give: Error: the result of give[1] is unreadable (reading it threw Symbol(element)), which cannot be copied (values cross as structured clones)',
    )
    expect(scenario('async tool resolves to an array whose element getter throws a Symbol').run?.code).toBe('ERR_TOOL_PROXY_FAIL')
  })
  it("a Map subclass whose entries() throws is read through the host's own Map methods", () => {
    expect(scenario('sync tool returns a Map subclass whose entries throw').run).toEqual({ output: { Map: [[1, 2]] }, logs: '' })
    expect(scenario('async tool resolves to a Map subclass whose entries throw').run).toEqual({ output: { Map: [[1, 2]] }, logs: '' })
  })
  it('a Promise whose constructor getter throws fails the call (its then cannot be attached) without an unhandled rejection', () => {
    expect(scenario('async tool returns a Promise whose constructor getter throws').run).toMatchObject({
      code: 'ERR_TOOL_PROXY_FAIL',
      message: 'Tool execution failed: give: Error: species',
    })
  })
  it("a Promise whose own then throws is awaited through Promise.prototype.then, not its own", () => {
    expect(scenario('async tool returns a Promise whose own then throws').run).toEqual({ output: 7, logs: '' })
  })
})

describe('class 4: onLog', () => {
  it('an onLog that throws a Symbol for every entry changes nothing, and Node reports nothing', () => {
    expect(scenario('onLog throws a Symbol for every entry').run).toEqual({ output: 4, logs: '1\n2\n3' })
  })
  it('an onLog that throws a Proxy whose traps throw changes nothing', () => {
    expect(scenario('onLog throws a Proxy whose traps throw').run).toEqual({ output: 2, logs: '1' })
  })
  it('an async onLog that rejects leaves no unhandled rejection', () => {
    expect(scenario('an async onLog rejects').run).toEqual({ output: 3, logs: '1\n2' })
  })
})

describe('class 4: run options and AbortSignals', () => {
  const refused = (message: string) => ({
    code: 'ERR_VALIDATION_FAILED',
    message: `Code validation failed:\noptions_valid: ${message}`,
  })
  it('run options that are a Proxy whose traps throw refuse the run before it starts; the executor stays READY', () => {
    // `input` is looked up first (`'input' in options`: the has trap).
    expect(scenario('run options are a Proxy whose traps throw').run).toMatchObject(
      refused('options.input cannot be read (reading it threw Error: trap has)'),
    )
  })
  it('a throwing input getter refuses the run before it starts', () => {
    expect(scenario('run options have a throwing input getter').run).toMatchObject(
      refused('options.input cannot be read (reading it threw Symbol(input getter))'),
    )
  })
  it('a run input with a throwing getter inside is refused naming the path', () => {
    expect(scenario('run input whose nested getter throws').run).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      details: { path: 'input.deep.x' },
    })
  })
  it('a throwing signal getter refuses the run before it starts (it used to start, then throw, leaving RUNNING forever)', () => {
    expect(scenario('run options have a throwing signal getter').run).toMatchObject(
      refused('options.signal cannot be read (reading it threw Error: signal getter)'),
    )
  })
  it('a signal whose removeEventListener throws: the run still settles, and the signal serves the next run', () => {
    const result = scenario('a signal whose removeEventListener throws')
    expect([result.run, result.again]).toEqual([
      { output: 42, logs: '' },
      { output: 1, logs: '' },
    ])
  })
  it('a signal whose addEventListener throws a Symbol refuses the run', () => {
    expect(scenario('a signal whose addEventListener throws a Symbol').run).toMatchObject(
      refused('options.signal.addEventListener("abort") cannot be read (reading it threw Symbol(addEventListener))'),
    )
  })
  it('an AbortSignal subclass whose aborted getter throws refuses the run', () => {
    expect(scenario('an AbortSignal subclass with throwing accessors').run).toMatchObject(
      refused('options.signal.aborted cannot be read (reading it threw Error: aborted getter)'),
    )
  })
})

describe('class 4: variables, tools and executor options read from host code', () => {
  it('sendVariables with a throwing getter is ERR_VALIDATION_FAILED naming the variable', () => {
    expect(scenario('sendVariables with a throwing getter').sent).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: variables.bad cannot be read (reading it threw Error: variable getter)',
    })
  })
  it('a nested getter that throws a BigInt names the path and the BigInt', () => {
    expect(scenario('sendVariables with a nested getter that throws a BigInt').sent).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: variables.cfg.deep is unreadable (reading it threw 42n), which cannot be copied (values cross as structured clones)',
      details: { path: 'variables.cfg.deep' },
    })
  })
  it('sendVariables and sendTools given a Proxy whose traps throw are refused', () => {
    expect(scenario('sendVariables given a Proxy whose traps throw').sent).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: variables cannot be read (reading it threw Error: trap ownKeys)',
    })
    expect(scenario('sendTools given a Proxy whose traps throw').sent).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: tools cannot be read (reading it threw Error: trap ownKeys)',
    })
  })
  it('a tool object whose forward getter throws is refused naming it', () => {
    expect(scenario('sendTools with a tool object whose forward getter throws').sent).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: tools.t.forward cannot be read (reading it threw Error: forward getter)',
    })
  })
  it('new SESExecutor(options) with a Proxy whose traps throw throws an ExecutorError, not the trap\'s error', () => {
    expect(scenario('new SESExecutor with options that are a Proxy whose traps throw', { executor: false }).made).toEqual({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: maxOperations cannot be read (reading it threw Error: trap get)',
    })
  })
  it('SESExecutor.create() rejects (never throws synchronously) for throwing option, onLog and array-element getters', () => {
    expect(scenario('SESExecutor.create with a throwing option getter', { executor: false }).made).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: timeoutMs cannot be read (reading it threw Error: option getter)',
    })
    expect(scenario('SESExecutor.create with a throwing onLog getter', { executor: false }).made).toMatchObject({
      message: 'Code validation failed:\noptions_valid: onLog cannot be read (reading it threw Symbol(onLog getter))',
    })
    expect(scenario('SESExecutor.create with authorizedImports whose element getter throws', { executor: false }).made).toMatchObject({
      message: 'Code validation failed:\noptions_valid: authorizedImports[0] cannot be read (reading it threw Error: element getter)',
    })
  })
})

describe('class 4: values no list anticipates', () => {
  it('1000 fast-check hostile values (Proxies with throwing traps, errors with throwing getters, throwing conversions, anything) thrown, rejected, returned and resolved: each run ends as documented, Node reports nothing', () => {
    const result = scenario('random hostile values thrown, rejected, returned and resolved (fast-check)') as Result & { samples: number; problems: unknown[] }
    expect(result.problems).toEqual([])
    expect(result.samples).toBe(1000)
  })
})
