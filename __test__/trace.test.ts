// The execution trace of a run (`CodeOutput.trace`, `ExecutorError.trace`), its
// budget (`maxTraceBytes`), and `onEvent`, which streams the same events as they happen.
import { describe, expect, it } from 'vitest'

import { SESExecutor, executorsCleanedAfterEach, rejectionOf } from './helpers'
import type { TraceEvent } from '../index'

const executor = executorsCleanedAfterEach()

type Of<T extends TraceEvent['type']> = Extract<TraceEvent, { type: T }>
const ofType = <T extends TraceEvent['type']>(events: TraceEvent[], type: T) =>
  events.filter((event): event is Of<T> => event.type === type)

const AGENT_STEP = [
  'console.log("searching")',
  'const hits = search("lyon", { limit: 2 })',
  'const page = await fetchPage(hits[0])',
  'try { broken() } catch {}',
  'final_answer(page.length)',
].join('\n')

async function agentExecutor(options?: ConstructorParameters<typeof SESExecutor>[0]) {
  const ex = await executor({ trace: true, ...options })
  await ex.sendTools({
    search: (query: string, { limit }: { limit: number }) => Array.from({ length: limit }, (_, i) => `${query}-${i}`),
    fetchPage: async (url: string) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return `<html>${url}</html>`
    },
    broken: () => {
      throw new RangeError('no such page')
    },
  })
  return ex
}

describe('CodeOutput.trace (the context graph of one run)', () => {
  it('records the run, each tool call with copied arguments and its result, console entries, final_answer, in order', async () => {
    const ex = await agentExecutor()
    const before = Date.now()
    const out = await ex.run(AGENT_STEP)
    const after = Date.now()
    const trace = out.trace!
    expect(trace.map((event) => event.type)).toEqual([
      'run_start',
      'console',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'final_answer',
      'run_end',
    ])
    const [start] = ofType(trace, 'run_start')
    // When an engine thread took the run up, counted from its call like the other events.
    expect(start.at).toBeGreaterThanOrEqual(0)
    expect(start.at).toBeLessThanOrEqual(trace[1].at)
    expect(start.codeBytes).toBe(Buffer.byteLength(AGENT_STEP))
    expect(start.time).toBeGreaterThanOrEqual(before - 1)
    expect(start.time).toBeLessThanOrEqual(after + 1)

    const calls = ofType(trace, 'tool_call')
    expect(calls.map(({ call, tool, args, line }) => ({ call, tool, args, line }))).toEqual([
      { call: 0, tool: 'search', args: ['lyon', { limit: 2 }], line: 2 },
      { call: 1, tool: 'fetchPage', args: ['lyon-0'], line: 3 },
      { call: 2, tool: 'broken', args: [], line: 4 },
    ])
    const results = ofType(trace, 'tool_result')
    expect(results.map(({ call, tool, async, ok, result, error }) => ({ call, tool, async, ok, result, error }))).toEqual([
      { call: 0, tool: 'search', async: false, ok: true, result: ['lyon-0', 'lyon-1'], error: undefined },
      { call: 1, tool: 'fetchPage', async: true, ok: true, result: '<html>lyon-0</html>', error: undefined },
      { call: 2, tool: 'broken', async: false, ok: false, result: undefined, error: { name: 'RangeError', message: 'no such page' } },
    ])
    // The async call took the tool's 20 ms; its result arrives that much after its call.
    expect(results[1].durationMs).toBeGreaterThanOrEqual(15)
    expect(results[1].at - calls[1].at).toBeGreaterThanOrEqual(results[1].durationMs - 0.01)

    const [console] = ofType(trace, 'console')
    expect(console).toMatchObject({ level: 'log', entry: 0 })
    expect(out.logEntries[console.entry].message).toBe('searching')
    expect(ofType(trace, 'final_answer')[0].line).toBe(5)

    const [end] = ofType(trace, 'run_end')
    expect(end).toMatchObject({ outcome: 'final_answer', toolCalls: 3, droppedEvents: 0 })
    expect(end.error).toBeUndefined()
    expect(end.peakHeapBytes).toBe(out.stats.peakHeapBytes)
    expect(end.operations).toBe(out.stats.operations)

    const times = trace.map((event) => event.at)
    expect(times).toEqual([...times].sort((a, b) => a - b))
    expect(end.at).toBeLessThanOrEqual(out.stats.wallTimeMs + 0.01)
  })

  it('keeps copies: structured-clone values, untouched by what the tool later does to its arguments', async () => {
    const ex = await executor({ trace: true })
    await ex.sendTools({
      mutate: (record: { tags: string[] }) => {
        record.tags.push('changed by the tool')
        return new Map([['when', new Date(0)]])
      },
    })
    const out = await ex.run('const shared = ["a"]; mutate({ tags: shared, again: shared, big: 2n ** 70n })')
    const [call] = ofType(out.trace!, 'tool_call')
    const [arg] = call.args as Array<{ tags: string[]; again: string[]; big: bigint }>
    expect(arg.tags).toEqual(['a'])
    expect(arg.again).toBe(arg.tags)
    expect(arg.big).toBe(2n ** 70n)
    const [result] = ofType(out.trace!, 'tool_result')
    expect(result.result).toEqual(new Map([['when', new Date(0)]]))
  })

  it('counts loop operations in run_end and says "completed" for a run without final_answer', async () => {
    const ex = await executor({ trace: true })
    const out = await ex.run('let s = 0; for (let i = 0; i < 100; i++) s += i; s')
    const [end] = ofType(out.trace!, 'run_end')
    expect(end.outcome).toBe('completed')
    expect(end.operations).toBe(100)
  })

  it('a tool call whose argument cannot be copied is traced with the refusal', async () => {
    const ex = await executor({ trace: true })
    await ex.sendTools({ take: () => 1 })
    const out = await ex.run('let message; try { take(1, () => 2) } catch (e) { message = e.message }; message')
    const [call] = ofType(out.trace!, 'tool_call')
    const [result] = ofType(out.trace!, 'tool_result')
    expect(call).toMatchObject({ tool: 'take', args: [1] })
    expect(result).toMatchObject({ tool: 'take', ok: false })
    expect(result.error!.message).toBe(out.output)
  })

  it('shows the normalised arguments a smolagents tool object receives, however the code called it', async () => {
    const ex = await executor({ trace: true })
    const seen: unknown[] = []
    await ex.sendTools({
      visit: {
        name: 'visit',
        description: 'Visits a page',
        inputs: { url: { type: 'string', description: 'where' }, depth: { type: 'number', description: 'how deep' } },
        output_type: 'string',
        forward: (args: { url: string; depth: number }) => {
          seen.push(args)
          return args.url
        },
      },
    })
    const out = await ex.run('visit("a.html", 2)\nvisit({ url: "b.html", depth: 1 })')
    expect(ofType(out.trace!, 'tool_call').map((call) => call.args)).toEqual([[{ url: 'a.html', depth: 2 }], [{ url: 'b.html', depth: 1 }]])
    expect(ofType(out.trace!, 'tool_call').map((call) => call.args![0])).toEqual(seen)
  })

  it('traces the functions of object modules as tools named module#export', async () => {
    const ex = await executor({ trace: true, authorizedImports: ['math'], modules: { math: { double: (x: number) => x * 2 } } })
    const out = await ex.run('const { double } = await import("math")\ndouble(4)')
    expect(out.output).toBe(8)
    expect(ofType(out.trace!, 'tool_call')).toMatchObject([{ tool: 'math#double', args: [4], line: 2 }])
    expect(ofType(out.trace!, 'tool_result')).toMatchObject([{ tool: 'math#double', ok: true, result: 8 }])
  })

  it('is absent unless asked for, per executor or per run', async () => {
    const plain = await executor()
    expect((await plain.run('1')).trace).toBeUndefined()
    expect((await plain.run('1', { trace: true })).trace!.map((event) => event.type)).toEqual(['run_start', 'run_end'])
    const traced = await executor({ trace: true })
    expect((await traced.run('1', { trace: false })).trace).toBeUndefined()
  })
})

describe('ExecutorError.trace: failed runs end with their error code', () => {
  it('CF-07 a tool failure: the failed call, then run_end with ERR_TOOL_PROXY_FAIL', async () => {
    const ex = await agentExecutor()
    const error = await rejectionOf(ex.run('broken()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    const trace = error.trace!
    expect(trace.map((event) => event.type)).toEqual(['run_start', 'tool_call', 'tool_result', 'run_end'])
    expect(ofType(trace, 'run_end')[0]).toMatchObject({
      outcome: 'error',
      error: { code: 'ERR_TOOL_PROXY_FAIL', message: error.message },
      toolCalls: 1,
    })
  })

  it('a timeout, waiting on a tool that never answers: the pending call has no result', async () => {
    const ex = await executor({ trace: true, timeoutMs: 100 })
    await ex.sendTools({ never: () => new Promise(() => {}) })
    const error = await rejectionOf(ex.run('await never()'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.trace!.map((event) => event.type)).toEqual(['run_start', 'tool_call', 'run_end'])
    const [end] = ofType(error.trace!, 'run_end')
    expect(end.error!.code).toBe('ERR_EXEC_TIMEOUT')
    expect(end.at).toBeGreaterThanOrEqual(99)
  })

  it('CF-02 code refused by validation: run_start and run_end with ERR_VALIDATION_FAILED', async () => {
    const ex = await executor({ trace: true })
    const error = await rejectionOf(ex.run('let x = ;'))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.trace!.map((event) => event.type)).toEqual(['run_start', 'run_end'])
    expect(ofType(error.trace!, 'run_end')[0].error!.code).toBe('ERR_VALIDATION_FAILED')
  })

  it('a runtime exception after console output: the console event precedes run_end', async () => {
    const ex = await executor({ trace: true })
    const error = await rejectionOf(ex.run('console.warn("about to fail")\nnull.x'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.trace!.map((event) => event.type)).toEqual(['run_start', 'console', 'run_end'])
  })

  it('has no trace when the run never reached the executor (ERR_INVALID_STATE)', async () => {
    const ex = new SESExecutor({ trace: true })
    const error = await rejectionOf(ex.run('1'))
    expect(error.code).toBe('ERR_INVALID_STATE')
    expect(error.trace).toBeUndefined()
  })
})

describe('maxTraceBytes: a bounded trace, truncated as documented', () => {
  it('leaves out values that do not fit (truncated: true), then drops events and counts them; run_end is always kept', async () => {
    const ex = await executor({ trace: true, maxTraceBytes: 2048 })
    await ex.sendTools({ echo: (value: unknown) => value })
    const out = await ex.run('echo("x".repeat(4000)); for (let i = 0; i < 40; i++) echo(i); final_answer("done")')
    const trace = out.trace!
    const [first, firstResult] = [ofType(trace, 'tool_call')[0], ofType(trace, 'tool_result')[0]]
    expect(first).toMatchObject({ call: 0, truncated: true })
    expect(first.args).toBeUndefined()
    expect(firstResult).toMatchObject({ call: 0, ok: true, truncated: true })
    expect(ofType(trace, 'tool_call')[1]).toMatchObject({ call: 1, args: [0] })
    const [end] = ofType(trace, 'run_end')
    expect(trace.at(-1)).toBe(end)
    expect(end.outcome).toBe('final_answer')
    expect(end.toolCalls).toBe(41)
    expect(end.droppedEvents).toBeGreaterThan(0)
    // Everything the sandbox did is either kept or counted.
    const kept = trace.length - 2 // run_start, run_end
    expect(kept + end.droppedEvents).toBe(41 * 2 + 1)
  })

  it('refuses a budget below 1024 bytes and a trace option that is not a boolean', async () => {
    expect(() => new SESExecutor({ maxTraceBytes: 100 })).toThrow(/maxTraceBytes must be an integer >= 1024/)
    expect(() => new SESExecutor({ trace: 'yes' } as never)).toThrow(/trace/)
    const ex = await executor()
    const error = await rejectionOf(ex.run('1', { trace: 1 } as never))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(ex.state).toBe('READY')
  })
})

describe('onEvent streams the same events as they happen', () => {
  it('delivers each event before the run settles, while the run still waits for a tool', async () => {
    const seen: TraceEvent[] = []
    let seenWhileWaiting: string[] = []
    const ex = await executor({ trace: true, onEvent: (event: TraceEvent) => seen.push(event) })
    await ex.sendTools({
      wait: () =>
        new Promise((resolve) =>
          setTimeout(() => {
            seenWhileWaiting = seen.map((event) => event.type)
            resolve('ok')
          }, 30),
        ),
    })
    const out = await ex.run('console.log("before"); await wait(); final_answer(1)')
    expect(seenWhileWaiting).toEqual(['run_start', 'console', 'tool_call'])
    expect(seen).toEqual(out.trace)
  })

  it('streams without recording: CodeOutput.trace stays absent', async () => {
    const seen: string[] = []
    const ex = await executor({ onEvent: (event: TraceEvent) => seen.push(event.type) })
    const out = await ex.run('1 + 1')
    expect(out.trace).toBeUndefined()
    expect(seen).toEqual(['run_start', 'run_end'])
  })

  it("calls the executor's and the run's own listener, for that run only", async () => {
    const executorSeen: string[] = []
    const runSeen: string[] = []
    const ex = await executor({ onEvent: (event: TraceEvent) => executorSeen.push(event.type) })
    await ex.run('1', { onEvent: (event: TraceEvent) => runSeen.push(event.type) })
    await ex.run('2')
    expect(runSeen).toEqual(['run_start', 'run_end'])
    expect(executorSeen).toEqual(['run_start', 'run_end', 'run_start', 'run_end'])
  })

  it('ignores what onEvent throws: the run and its trace are unaffected', async () => {
    const ex = await executor({
      trace: true,
      onEvent: () => {
        throw new Error('listener broke')
      },
    })
    const out = await ex.run('console.log("x"); 42')
    expect(out.output).toBe(42)
    expect(out.trace!.map((event) => event.type)).toEqual(['run_start', 'console', 'run_end'])
  })

  it('refuses an onEvent that is not a function', async () => {
    expect(() => new SESExecutor({ onEvent: 'nope' } as never)).toThrow(/onEvent must be a function/)
    const ex = await executor()
    const error = await rejectionOf(ex.run('1', { onEvent: 42 } as never))
    expect(error.message).toMatch(/onEvent must be a function/)
  })

  it('streams the runs of a queue in order, each from run_start to run_end', async () => {
    const seen: string[] = []
    const ex = await executor({
      runConcurrency: 'queue',
      maxQueuedRuns: 2,
      onEvent: (event: TraceEvent) => seen.push(event.type === 'run_start' ? `start ${event.codeBytes}` : event.type),
    })
    await Promise.all([ex.run('1'), ex.run('22'), ex.run('333')])
    expect(seen).toEqual(['start 1', 'run_end', 'start 2', 'run_end', 'start 3', 'run_end'])
  })
})
