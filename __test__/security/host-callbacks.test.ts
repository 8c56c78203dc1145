// Host callbacks and the tracer are read defensively: everything the host hands the package —
// onEvent listeners, tracers, their spans, what is registered with the OpenTelemetry API, run
// options seen through the tracing layer, the options and tool objects codeAgentSetup,
// createRunJavaScriptTool and renderToolsPrompt read, the executor a run_javascript tool wraps
// and the arguments of its calls — goes through one guarded path (src/node/guarded.rs in the
// addon, lib/guarded.cjs in the JavaScript layer), each read once. Whatever they throw (from a
// getter, from every Proxy trap), return (the wrong type, a rejected or never-settling
// promise) or call back into (the executor's own methods): `run()` resolves with a CodeOutput
// or rejects with an ExecutorError, never throws; Node reports nothing uncaught or unhandled;
// the functions that throw throw their documented TypeError.
//
// The cases run in a child process (`fixtures/hostile-callbacks.cjs`) that listens for
// 'uncaughtException' and 'unhandledRejection' itself.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

import { beforeAll, describe, expect, it } from 'vitest'

type Outcome = { output?: unknown; logs?: string; code?: string; message?: string; details?: Record<string, unknown>; threw?: string; type?: string; sync?: boolean; value?: any }
type Result = Record<string, any> & { run?: Outcome; made?: Outcome; state?: string; works?: boolean; cleanedUp?: boolean; fired: unknown[] }

const FIXTURE = fileURLToPath(new URL('../fixtures/hostile-callbacks.cjs', import.meta.url))
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

const RUN = { output: 3, logs: '' }
const EVENTS = ['run_start', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'run_end']
const SPANS = ['execute_tool add', 'execute_tool later', 'ses_executor.run']
const HOSTILE = ['an Error', 'a Symbol', 'a BigInt', 'a Proxy whose traps throw']

describe('host callbacks and the tracer are read defensively: onEvent', () => {
  for (const value of HOSTILE) {
    it(`an async onEvent rejecting with ${value} at every event leaves no unhandled rejection`, () => {
      expect(scenario(`an async executor-level onEvent rejects with ${value}`).run).toEqual(RUN)
    })
    it(`a run-level onEvent throwing ${value} changes nothing`, () => {
      expect(scenario(`a run-level onEvent throws ${value}`).run).toEqual(RUN)
    })
    it(`an executor-level onEvent throwing ${value} keeps neither the run's onEvent nor the tracer from an event`, () => {
      const result = scenario(`an executor-level onEvent that throws ${value}: the run-level onEvent and the tracer hear every event`)
      expect([result.run, result.heard, result.spans]).toEqual([RUN, EVENTS, SPANS])
    })
  }
  it('an onEvent returning a promise that never settles holds nothing up', () => {
    expect(scenario('an onEvent that returns a promise that never settles').run).toEqual(RUN)
  })
  it('each listener gets its own event object: one that mutates it changes nothing for the next', () => {
    const result = scenario('an onEvent that mutates its event: the next listener gets its own')
    expect([result.run, result.heard]).toEqual([RUN, EVENTS])
  })
})

describe('host callbacks and the tracer are read defensively: tracers and spans', () => {
  const tracers = [
    'whose startSpan throws an Error',
    'whose startSpan throws a Symbol',
    'whose startSpan returns undefined',
    'whose startSpan returns a number',
    'whose startSpan returns a Proxy whose traps throw',
    'whose startSpan returns a revoked Proxy',
    'whose startSpan returns a rejected promise',
    "whose span's end throws",
    "whose span's isRecording throws",
    'whose span methods all throw a Symbol',
    'whose span methods all reject',
    'whose span getters throw after isRecording',
    'whose tool spans cannot be made',
  ]
  for (const tracer of tracers) {
    it(`a tracer ${tracer}: run() resolves with the output (and rejects with the run's own error), never throws`, () => {
      const result = scenario(`a tracer ${tracer}`)
      expect(result.run).toEqual(RUN)
      expect(result.failing).toBe('ERR_RUNTIME_EXCEPTION')
    })
  }
  it('the tracer option and its startSpan are each read once (a second read would get no tracer)', () => {
    const result = scenario('the tracer option and its startSpan are each read once')
    expect(result.runs).toEqual([RUN, { output: 1, logs: '' }])
    expect(result.reads).toEqual({ tracer: 1, startSpan: 1 })
    expect(result.spans).toEqual([...SPANS, 'ses_executor.run'].sort())
  })
  it('a registered provider whose getTracer throws, or whose tracer has no startSpan: runs go on untraced', () => {
    expect(scenario('a registered provider whose getTracer throws').run).toEqual(RUN)
    expect(scenario('a registered provider whose tracer has no startSpan').run).toEqual(RUN)
  })
  it('a registered context manager whose active() throws: the run goes on (its span starts from the root context)', () => {
    // The SDK's own span processor asks the context manager too, so what it exports is its
    // business; the run's outcome is not.
    expect(scenario('a registered context manager whose active() throws').run).toEqual(RUN)
  })
})

describe('host callbacks and the tracer are read defensively: run options through the tracing layer', () => {
  it('an inherited or non-enumerable input reaches the run as it does without a tracer', () => {
    expect(scenario('with a tracer, an inherited input is the run input').run).toEqual({ output: 42, logs: '' })
    expect(scenario('with a tracer, a non-enumerable input is the run input').run).toEqual({ output: 8, logs: '' })
  })
  it('an inherited signal already aborted keeps the run from starting; the span records why', () => {
    const result = scenario('with a tracer, an inherited signal already aborted keeps the run from starting')
    expect(result.run).toMatchObject({ code: 'ERR_EXEC_TIMEOUT', details: { reason: 'aborted', started: false } })
    expect(result.spans).toEqual(['ses_executor.run'])
  })
  it('each run option is read once', () => {
    const result = scenario('with a tracer, run options whose getters count their reads are read once each')
    expect(result.run).toEqual({ output: 1, logs: '' })
    expect(result.reads).toEqual({ input: 1, signal: 1, trace: 1, onEvent: 1 })
  })
  it('run options that are a Proxy whose traps throw reject with ERR_VALIDATION_FAILED, never throw', () => {
    const result = scenario('with a tracer, run options that are a Proxy whose traps throw reject, never throw')
    expect(result.run).toMatchObject({ code: 'ERR_VALIDATION_FAILED' })
    expect(result.run!.sync).toBeUndefined()
  })
})

describe('host callbacks and the tracer are read defensively: re-entry', () => {
  it('onEvent calling cleanup() and run() on its own executor: both refused while it runs, the run unharmed', () => {
    const result = scenario('onEvent calls cleanup() and run() on its executor at every event')
    expect(result.run).toEqual(RUN)
    expect(result.calls).toHaveLength(2 * EVENTS.length)
    for (const [, , code] of result.calls) expect(code).toBe('ERR_INVALID_STATE')
  })
  it('a tool calling cleanup() and run() on its own executor: both refused, the tool answers', () => {
    const result = scenario('a tool calls cleanup() and run() on its executor')
    expect([result.run, result.calls]).toEqual([{ output: 'back', logs: '' }, ['ERR_INVALID_STATE', 'ERR_INVALID_STATE']])
  })
  it('onLog calling cleanup() on its own executor is refused; the run is unharmed', () => {
    const result = scenario('onLog calls cleanup() on its executor')
    expect([result.run, result.calls]).toEqual([{ output: 5, logs: 'a' }, ['ERR_INVALID_STATE']])
  })
  it("a tracer's startSpan starting a run on the executor it traces: each run settles with a CodeOutput or an ExecutorError", () => {
    const result = scenario("a tracer's startSpan runs code on the executor it traces")
    expect(result.inner).toEqual({ output: 'inner', logs: '' })
    expect(result.run).toMatchObject({ code: 'ERR_INVALID_STATE' })
  })
  it("a span's end cleaning up the executor it traces (at the run's end, while it runs) is refused; the output is delivered", () => {
    const result = scenario("a span's end cleans up the executor it traces")
    expect([result.run, result.ended, result.stateAfterEnds]).toEqual([RUN, ['ERR_INVALID_STATE'], 'READY'])
  })
})

describe('host callbacks and the tracer are read defensively: object modules', () => {
  it('an object module whose export getter throws, or modules that are a throwing Proxy, refuse create() with ERR_VALIDATION_FAILED', () => {
    expect(scenario('an object module whose export getter throws a Symbol', { executor: false }).made).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: modules.geo.distance cannot be read (reading it threw Symbol(export getter))',
    })
    expect(scenario('modules that are a Proxy whose traps throw', { executor: false }).made).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
    })
  })
  it('module functions that throw or reject with hostile values are tool failures; one that re-enters its executor is refused', () => {
    const result = scenario('object module functions that throw, reject and re-enter their executor')
    expect([result.sync, result.later]).toEqual(['ERR_TOOL_PROXY_FAIL', 'ERR_TOOL_PROXY_FAIL'])
    expect(result.reenter).toEqual({ output: 'back', logs: '' })
    expect(result.calls).toEqual(['ERR_INVALID_STATE'])
  })
})

describe('host callbacks and the tracer are read defensively: what codeAgentSetup, createRunJavaScriptTool and renderToolsPrompt read', () => {
  const typeError = (message: string) => ({ threw: `TypeError: ${message}`, type: 'TypeError' })
  it('codeAgentSetup rejects with a TypeError naming what threw', () => {
    expect(scenario('codeAgentSetup with options whose tools getter throws a Symbol', { executor: false }).made).toEqual(
      typeError('codeAgentSetup: options.tools cannot be read (reading it threw Symbol(tools getter))'),
    )
    expect(scenario('codeAgentSetup with a tool that is a Proxy whose traps throw', { executor: false }).made).toEqual(
      typeError('codeAgentSetup: tools[0].name cannot be read (reading it threw Error: trap get)'),
    )
    expect(scenario('codeAgentSetup with a tool whose inputs getter throws', { executor: false }).made).toEqual(
      typeError('codeAgentSetup: tools[0].inputs cannot be read (reading it threw Error: inputs getter)'),
    )
    expect(scenario('codeAgentSetup with a tools array that is a Proxy whose get trap throws', { executor: false }).made).toEqual(
      typeError('codeAgentSetup: tools.length cannot be read (reading it threw Error: array get)'),
    )
    expect(scenario('codeAgentSetup with executorOptions whose getter throws', { executor: false }).made).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'Code validation failed:\noptions_valid: timeoutMs cannot be read (reading it threw Error: timeoutMs getter)',
    })
  })
  it('codeAgentSetup reads each option, each tool and each property of a tool object once', () => {
    const result = scenario('codeAgentSetup reads each option, tool and tool property once')
    expect(result.run).toEqual({ output: 'k!', logs: '' })
    expect([result.promptShowsTool, result.promptShowsImports]).toEqual([true, true])
    for (const [key, count] of Object.entries(result.reads)) expect([key, count]).toEqual([key, 1])
    expect(Object.keys(result.reads)).toEqual(
      expect.arrayContaining(['options.tools', 'tool.name', 'tool.description', 'tool.inputs', 'tool.output_type', 'tool.forward', 'executorOptions.authorizedImports']),
    )
  })
  it("a tool object's forward still runs on the tool object itself", () => {
    expect(scenario('a tool object whose forward uses this keeps its this through codeAgentSetup').run).toEqual({ output: '>k', logs: '' })
  })
  it('createRunJavaScriptTool throws a TypeError naming what threw, and reads the executor once', () => {
    expect(scenario('createRunJavaScriptTool with options whose name getter throws a Symbol').made).toEqual({
      ...typeError('createRunJavaScriptTool: options.name cannot be read (reading it threw Symbol(name getter))'),
      sync: true,
    })
    expect(scenario('createRunJavaScriptTool with an executor whose run getter throws', { executor: false }).made).toEqual({
      ...typeError('createRunJavaScriptTool: executor.run cannot be read (reading it threw Error: run getter)'),
      sync: true,
    })
    expect(scenario('createRunJavaScriptTool reads the executor once: a run replaced later is not called').called).toMatchObject({
      ok: true,
      output: 42,
    })
  })
  it('run_javascript arguments whose getters or traps throw are ERR_VALIDATION_FAILED as data, never a rejection', () => {
    const result = scenario('run_javascript called with arguments whose getters throw')
    expect(result.code.error).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'run_javascript: the arguments cannot be read (reading code threw Symbol(code getter))',
    })
    expect(result.input.error).toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: 'run_javascript: the arguments cannot be read (reading input threw Error: input getter)',
    })
    expect(result.proxy.error).toMatchObject({ code: 'ERR_VALIDATION_FAILED' })
  })
  it('renderToolsPrompt throws a TypeError naming what threw; a default with no JSON form shows as null', () => {
    const result = scenario('renderToolsPrompt with hostile tool objects', { executor: false })
    expect(result.proxy).toEqual({ ...typeError('tools.t.constructor cannot be read (reading it threw Error: trap get)'), sync: true })
    expect(result.description).toEqual({
      ...typeError('tools[0].description cannot be read (reading it threw Symbol(description))'),
      sync: true,
    })
    expect(result.inputs).toEqual({ ...typeError('tools.t.inputs cannot be read (reading it threw Error: ownKeys)'), sync: true })
    expect(result.default.value).toContain('[key=null]')
    expect(result.records).toEqual({ ...typeError('tools cannot be read (reading it threw Error: record ownKeys)'), sync: true })
  })
})
