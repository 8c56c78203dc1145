// OpenTelemetry spans, checked with the SDK's in-memory exporter. Each run is a
// span and each tool call a child span, with the GenAI semantic-convention attributes and the
// executor's own (`ses.*`). The global tracer has its own file (otel-global.test.ts): it is
// process-wide state.
import { context, trace, SpanStatusCode } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { SESExecutor, codeAgentSetup, rejectionOf } from './helpers'
import type { TraceEvent } from '../index'

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const tracer = provider.getTracer('otel.test')
const contextManager = new AsyncLocalStorageContextManager()

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable())
})
afterAll(() => {
  context.disable()
})

const live: Array<InstanceType<typeof SESExecutor>> = []
async function executor(options?: ConstructorParameters<typeof SESExecutor>[0]) {
  const created = await SESExecutor.create({ tracer, ...options })
  live.push(created)
  await created.sendTools({
    add: (a: number, b: number) => a + b,
    fetchPage: async (url: string) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return `<html>${url}</html>`
    },
    broken: async () => {
      throw new RangeError('no such page')
    },
  })
  return created
}
afterEach(async () => {
  for (const created of live.splice(0)) {
    if (created.state === 'READY' || created.state === 'DIRTY') await created.cleanup()
  }
  exporter.reset()
})

const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const millis = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6

describe('spans of a run and its tool calls', () => {
  it('makes each run a span and each tool call a child span with the GenAI attributes', async () => {
    const ex = await executor()
    const code = 'const sum = add(1, 2)\nconst page = await fetchPage("a")\nfinal_answer(page.length + sum)'
    const out = await ex.run(code)
    expect(out.output).toBe(17)

    const [run] = named('ses_executor.run')
    expect(run.attributes).toMatchObject({
      'ses.code_bytes': Buffer.byteLength(code),
      'ses.operations': out.stats.operations,
      'ses.peak_heap_bytes': out.stats.peakHeapBytes,
      'ses.tool_calls': 2,
      'ses.outcome': 'final_answer',
    })
    expect(run.status.code).toBe(SpanStatusCode.UNSET)

    const [add] = named('execute_tool add')
    const [fetchPage] = named('execute_tool fetchPage')
    for (const [span, name, call, line] of [[add, 'add', 0, 1], [fetchPage, 'fetchPage', 1, 2]] as const) {
      expect(parentOf(span)).toBe(run.spanContext().spanId)
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId)
      expect(span.attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': `${run.spanContext().spanId}-${call}`,
        'gen_ai.tool.type': 'function',
        'code.line.number': line,
      })
      expect(span.status.code).toBe(SpanStatusCode.UNSET)
    }
    // The tool spans lie inside the run span, in call order; the async one lasted the tool's 20 ms.
    expect(millis(add.startTime)).toBeGreaterThanOrEqual(millis(run.startTime) - 1)
    expect(millis(fetchPage.startTime)).toBeGreaterThanOrEqual(millis(add.endTime) - 0.01)
    expect(millis(fetchPage.duration)).toBeGreaterThanOrEqual(15)
    expect(millis(fetchPage.endTime)).toBeLessThanOrEqual(millis(run.endTime) + 1)
    expect(run.events.map((event) => event.name)).toEqual(['final_answer'])
  })

  it('gives every tool call of a trace its own id, and each tool span its tool object\'s description', async () => {
    const ex = await executor()
    await ex.sendTools({
      lookup: { description: 'Looks a word up.', inputs: { word: { type: 'string' } }, forward: async ({ word }: { word: string }) => word.length },
      described: Object.assign(() => 1, { description: 'a function: not a tool object' }),
      nameless: { description: '', forward: () => 0 },
      throwing: {
        get description(): string {
          throw new Error('no description')
        },
        forward: () => 2,
      },
    })
    const parent = tracer.startSpan('agent')
    await context.with(trace.setSpan(context.active(), parent), async () => {
      for (let step = 0; step < 3; step++) await ex.run('lookup("a"); add(1, 2); described(); nameless(); throwing()')
    })
    parent.end()
    const tools = exporter.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool'))
    expect(tools).toHaveLength(15)
    const ids = tools.map((span) => span.attributes['gen_ai.tool.call.id'])
    expect(new Set(ids).size).toBe(15)
    expect(new Set(tools.map((span) => span.spanContext().traceId)).size).toBe(1)
    const descriptions = Object.fromEntries(tools.map((span) => [span.attributes['gen_ai.tool.name'], span.attributes['gen_ai.tool.description']]))
    expect(descriptions).toEqual({ lookup: 'Looks a word up.', add: undefined, described: undefined, nameless: undefined, throwing: undefined })
    // A description sent again is replaced, and one sent away removed.
    await ex.sendTools({ lookup: { description: 'Counts letters.', inputs: { word: { type: 'string' } }, forward: ({ word }: { word: string }) => word.length } })
    exporter.reset()
    await ex.run('lookup("ab")')
    expect(named('execute_tool lookup')[0]!.attributes['gen_ai.tool.description']).toBe('Counts letters.')
    await ex.sendTools({ lookup: (word: string) => word.length })
    exporter.reset()
    await ex.run('lookup("ab")')
    expect(named('execute_tool lookup')[0]!.attributes).not.toHaveProperty('gen_ai.tool.description')
  })

  it('reads a tools record and each tool\'s description once; the native sendTools sees the same record', async () => {
    const ex = await executor()
    const reads: string[] = []
    const tool = {
      inputs: {},
      forward: () => 7,
      get description() {
        reads.push('description')
        return 'Seven.'
      },
    }
    const record = new Proxy(
      { seven: tool },
      {
        get(target, key, receiver) {
          reads.push(`get ${String(key)}`)
          return Reflect.get(target, key, receiver)
        },
        ownKeys(target) {
          reads.push('ownKeys')
          return Reflect.ownKeys(target)
        },
      },
    )
    await ex.sendTools(record)
    expect(reads).toEqual(['ownKeys', 'get seven', 'description'])
    expect((await ex.run('seven()')).output).toBe(7)
    expect(named('execute_tool seven')[0]!.attributes['gen_ai.tool.description']).toBe('Seven.')
    // What the native sendTools refuses, it refuses as it would without the copy.
    await expect(ex.sendTools([() => 1] as never)).rejects.toMatchObject({ code: 'ERR_VALIDATION_FAILED' })
    await expect(ex.sendTools({ bad: 42 } as never)).rejects.toMatchObject({ code: 'ERR_VALIDATION_FAILED' })
    expect(named('execute_tool seven')).toHaveLength(1)
    // What throws as it is read is refused as the native method refuses it, read once.
    const boom = new Error('no')
    let gets = 0
    const unreadableEntry = new Proxy({ a: () => 1 }, { get: () => { gets += 1; throw boom } })
    await expect(ex.sendTools(unreadableEntry)).rejects.toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: expect.stringContaining('tools.a cannot be read (reading it threw Error: no)'),
    })
    expect(gets).toBe(1)
    let keys = 0
    const unreadableKeys = new Proxy({}, { ownKeys: () => { keys += 1; throw boom } })
    await expect(ex.sendTools(unreadableKeys)).rejects.toMatchObject({
      code: 'ERR_VALIDATION_FAILED',
      message: expect.stringContaining('tools cannot be read (reading it threw Error: no)'),
    })
    expect(keys).toBe(1)
  })

  it('records tool arguments and results only when asked (captureToolContent, or the GenAI environment variable)', async () => {
    const code = 'add(2, 3); await fetchPage("x"); try { await broken() } catch {}'
    const contentOf = () =>
      exporter
        .getFinishedSpans()
        .filter((span) => span.name.startsWith('execute_tool'))
        .map((span) => [span.attributes['gen_ai.tool.call.arguments'], span.attributes['gen_ai.tool.call.result']])
    await (await executor()).run(code)
    expect(contentOf()).toEqual([[undefined, undefined], [undefined, undefined], [undefined, undefined]])
    exporter.reset()
    await (await executor({ captureToolContent: true })).run(code)
    expect(contentOf()).toEqual([['[2,3]', '5'], ['["x"]', '"<html>x</html>"'], ['[]', undefined]])
    exporter.reset()
    process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = 'true'
    try {
      await (await executor()).run('try { add(1n, 2) } catch {}')
      expect(contentOf()).toEqual([['["1n",2]', undefined]])
      exporter.reset()
      await (await executor({ captureToolContent: false })).run(code)
      expect(contentOf()).toEqual([[undefined, undefined], [undefined, undefined], [undefined, undefined]])
    } finally {
      delete process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
    }
    expect(() => new SESExecutor({ captureToolContent: 'yes' as unknown as boolean })).toThrow(/captureToolContent/)
    // The option is read once, by the addon, with the others: a getter that would throw on a
    // second read is never read again.
    let reads = 0
    const flaky = {
      tracer,
      get captureToolContent() {
        reads += 1
        if (reads > 1) throw new Error('read again')
        return true
      },
    }
    const ex = new SESExecutor(flaky)
    live.push(ex)
    await ex.init()
    await ex.sendTools({ add: (a: number, b: number) => a + b })
    exporter.reset()
    await ex.run('add(1, 2)')
    expect(contentOf()).toEqual([['[1,2]', '3']])
    expect(reads).toBe(1)
  })

  it('marks a failed tool call and a failed run with ERROR status and error.type', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('try { await broken() } catch {}\nawait broken()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    const calls = named('execute_tool broken')
    expect(calls).toHaveLength(2)
    for (const call of calls) {
      expect(call.status).toEqual({ code: SpanStatusCode.ERROR, message: 'RangeError: no such page' })
      expect(call.attributes['error.type']).toBe('RangeError')
    }
    const [run] = named('ses_executor.run')
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: error.message })
    expect(run.attributes).toMatchObject({ 'error.type': 'ERR_TOOL_PROXY_FAIL', 'ses.outcome': 'error', 'ses.tool_calls': 2 })
  })

  it('ends a tool call still pending at a timeout as an error, inside the run span', async () => {
    const ex = await executor({ timeoutMs: 100 })
    await ex.sendTools({ never: () => new Promise(() => {}) })
    const error = await rejectionOf(ex.run('await never()'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    const [run] = named('ses_executor.run')
    const [never] = named('execute_tool never')
    expect(never.status.code).toBe(SpanStatusCode.ERROR)
    expect(parentOf(never)).toBe(run.spanContext().spanId)
    expect(run.attributes['error.type']).toBe('ERR_EXEC_TIMEOUT')
  })

  it('records a run refused before it started (ERR_INVALID_STATE) as a failed span', async () => {
    const ex = new SESExecutor({ tracer })
    const error = await rejectionOf(ex.run('1'))
    expect(error.code).toBe('ERR_INVALID_STATE')
    const [run] = named('ses_executor.run')
    expect(run.status.code).toBe(SpanStatusCode.ERROR)
    expect(run.attributes['error.type']).toBe('ERR_INVALID_STATE')
  })

  it('makes the run span a child of the context active when run() was called', async () => {
    const ex = await executor()
    await tracer.startActiveSpan('agent step', async (step) => {
      await ex.run('add(1, 1)')
      step.end()
    })
    const [step] = named('agent step')
    const [run] = named('ses_executor.run')
    const [add] = named('execute_tool add')
    expect(parentOf(run)).toBe(step.spanContext().spanId)
    expect(parentOf(add)).toBe(run.spanContext().spanId)
    expect(new Set([step, run, add].map((span) => span.spanContext().traceId)).size).toBe(1)
  })

  it("keeps the caller's own onEvent and trace: the spans come on top", async () => {
    const seen: string[] = []
    const ex = await executor({ trace: true })
    const out = await ex.run('add(2, 3)', { onEvent: (event: TraceEvent) => seen.push(event.type) })
    expect(seen).toEqual(['run_start', 'tool_call', 'tool_result', 'run_end'])
    expect(out.trace!.map((event) => event.type)).toEqual(seen)
    expect(named('execute_tool add')).toHaveLength(1)
  })

  it("spans the tool calls of codeAgentSetup's executor", async () => {
    const setup = await codeAgentSetup({
      tools: { twice: { name: 'twice', description: 'Doubles', inputs: { n: { type: 'number', description: 'n' } }, output_type: 'number', forward: ({ n }: { n: number }) => n * 2 } },
      executorOptions: { tracer },
    })
    try {
      expect((await setup.executor.run('twice(4)')).output).toBe(8)
    } finally {
      await setup.executor.cleanup()
    }
    expect(named('execute_tool twice')).toHaveLength(1)
  })

  it('refuses run options the way it does without a tracer (the addon reads them, once), and records the refusal as a failed span', async () => {
    const ex = await executor()
    const untraced = await SESExecutor.create()
    live.push(untraced)
    for (const options of ['fast', { onEvent: 42 }, Object.create({ signal: 7 })]) {
      const error = await rejectionOf(ex.run('1', options as never))
      expect(error.code).toBe('ERR_VALIDATION_FAILED')
      expect(error.message).toBe((await rejectionOf(untraced.run('1', options as never))).message)
    }
    const runs = named('ses_executor.run')
    expect(runs).toHaveLength(3)
    for (const run of runs) {
      expect(run.status.code).toBe(SpanStatusCode.ERROR)
      expect(run.attributes['error.type']).toBe('ERR_VALIDATION_FAILED')
    }
  })

  it('passes inherited and non-enumerable run options through as they are', async () => {
    const ex = await executor()
    const controller = new AbortController()
    controller.abort()
    const inherited = Object.create({ input: 20 })
    expect((await ex.run('input + 1', inherited)).output).toBe(21)
    expect((await ex.run('input', Object.defineProperty({}, 'input', { value: 'hidden' }))).output).toBe('hidden')
    const aborted = await rejectionOf(ex.run('1', Object.create({ signal: controller.signal })))
    expect(aborted.details).toMatchObject({ reason: 'aborted', started: false })
  })

  it('refuses a tracer that is not one, as it refuses any other option', () => {
    expect(() => new SESExecutor({ tracer: {} as never })).toThrow(/tracer must be an OpenTelemetry Tracer/)
    expect(() => new SESExecutor({ tracer: 'otel' as never })).toThrow(/tracer must be an OpenTelemetry Tracer/)
  })
})

describe('without any tracer', () => {
  it('runs untraced: no span, no trace, and the global tracer (no SDK registered) records nothing', async () => {
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false)
    const ex = await SESExecutor.create()
    live.push(ex)
    const out = await ex.run('1 + 1')
    expect(out.output).toBe(2)
    expect(out.trace).toBeUndefined()
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
