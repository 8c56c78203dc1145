'use strict'
// OpenTelemetry spans for runs and tool calls (docs/tracing.md "OpenTelemetry"). Each `run()` is a span,
// child of the context active when `run()` was called; each tool call of the run is a child
// span of it, named and attributed per OpenTelemetry's GenAI semantic conventions
// (`execute_tool {gen_ai.tool.name}`). The spans are built from the run's own trace events,
// streamed to a per-run `onEvent` (index.d.ts `TraceEvent`): they carry the engine's times
// (when the sandbox called, when the answer reached it) and the run's figures
// (`ses.operations`, `ses.peak_heap_bytes`), whatever the outcome.
//
// `@opentelemetry/api` is an optional peer dependency: without it, and without a `tracer`
// option, nothing here runs. With it and no SDK registered, a run checks that and goes on
// untraced; a tracer whose spans do not record (sampled out) costs one span per run.

/** The instrumentation scope of the spans. */
const SCOPE = '@smolagents-ts/ses-executor'
const { version } = require('../package.json')

// The API's enum values, fixed by the specification; written out so that a `tracer` option
// works even where `@opentelemetry/api` resolves to another copy than the caller's.
const SPAN_KIND_INTERNAL = 0
const STATUS_ERROR = 2

let api
/** What the global provider delegates to while no SDK is registered (the API's no-op one). */
let noopProvider
/** `@opentelemetry/api`, or `null` when it is not installed. */
function otelApi() {
  if (api === undefined) {
    try {
      api = require('@opentelemetry/api')
      noopProvider = new api.ProxyTracerProvider().getDelegate()
    } catch {
      api = null
    }
  }
  return api
}

/**
 * The executor's own tracer from its options (which the native constructor has checked: `null`,
 * `undefined`, or an object with a `startSpan` function); `undefined` for the global one.
 */
function ownTracer(options) {
  return options?.tracer ?? undefined
}

/**
 * The tracer a run reports to: the executor's own, or the global one once an SDK is registered;
 * `undefined` for none. Looked up per run (an SDK may be registered after the executor was
 * made); while none is, a run costs this check and nothing else.
 */
function tracerOf(own) {
  if (own !== undefined) return own
  const otel = otelApi()
  if (!otel) return undefined
  const provider = otel.trace.getTracerProvider()
  if (typeof provider.getDelegate === 'function' && provider.getDelegate() === noopProvider) return undefined
  return provider.getTracer(SCOPE, version)
}

/**
 * Runs `run.call(executor, code, options)` inside a span of `tracer`, with a child span per tool
 * call. Falls through to the plain run when the span does not record (no SDK registered).
 */
function tracedRun(executor, run, tracer, code, options) {
  // Options the native run() refuses (not an object, an onEvent that is no function) go to it
  // as they are, so that the refusal is the same with and without a tracer.
  const refused =
    (options !== undefined && options !== null && typeof options !== 'object') ||
    (options?.onEvent !== undefined && typeof options.onEvent !== 'function')
  if (refused) return run.call(executor, code, options)
  const otel = otelApi()
  const parent = otel ? otel.context.active() : undefined
  const span = tracer.startSpan('ses_executor.run', { kind: SPAN_KIND_INTERNAL }, parent)
  if (!span.isRecording()) {
    span.end()
    return run.call(executor, code, options)
  }
  const runContext = otel && parent ? otel.trace.setSpan(parent, span) : undefined
  const userOnEvent = options?.onEvent
  const tools = new Map()
  let startTime = Date.now()
  let ended = false

  const end = (endTime) => {
    if (ended) return
    ended = true
    for (const toolSpan of tools.values()) {
      toolSpan.setStatus({ code: STATUS_ERROR, message: 'the run ended before the tool answered' })
      toolSpan.end(endTime)
    }
    tools.clear()
    span.end(endTime)
  }

  const onEvent = (event) => {
    // Spans first: the caller's listener may throw (the executor ignores what it throws).
    try {
      observe(event)
    } finally {
      if (userOnEvent !== undefined) userOnEvent(event)
    }
  }

  const observe = (event) => {
    const time = startTime + event.at
    switch (event.type) {
      case 'run_start':
        startTime = event.time
        span.setAttribute('ses.code_bytes', event.codeBytes)
        break
      case 'tool_call': {
        const attributes = {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': event.tool,
          'gen_ai.tool.call.id': String(event.call),
          'gen_ai.tool.type': 'function',
        }
        if (event.line !== undefined) attributes['code.line.number'] = event.line
        const toolSpan = tracer.startSpan(
          `execute_tool ${event.tool}`,
          { kind: SPAN_KIND_INTERNAL, startTime: time, attributes },
          runContext,
        )
        tools.set(event.call, toolSpan)
        break
      }
      case 'tool_result': {
        const toolSpan = tools.get(event.call)
        if (!toolSpan) break
        tools.delete(event.call)
        if (!event.ok) {
          toolSpan.setAttribute('error.type', event.error.name)
          toolSpan.setStatus({ code: STATUS_ERROR, message: `${event.error.name}: ${event.error.message}` })
        }
        toolSpan.end(time)
        break
      }
      case 'final_answer':
        span.addEvent('final_answer', event.line === undefined ? {} : { 'code.line.number': event.line }, time)
        break
      case 'run_end':
        span.setAttributes({
          'ses.outcome': event.outcome,
          'ses.operations': event.operations,
          'ses.peak_heap_bytes': event.peakHeapBytes,
          'ses.tool_calls': event.toolCalls,
        })
        if (event.error) {
          span.setAttribute('error.type', event.error.code)
          span.setStatus({ code: STATUS_ERROR, message: event.error.message })
        }
        end(time)
        break
      default:
        break
    }
  }

  let running
  try {
    running = run.call(executor, code, { ...options, onEvent })
  } catch (error) {
    fail(span, error)
    end()
    throw error
  }
  return running.then(
    (output) => {
      end()
      return output
    },
    (error) => {
      // Refused before the executor took the run up (no run_end): the span says why.
      if (!ended) fail(span, error)
      end()
      throw error
    },
  )
}

function fail(span, error) {
  const code = error?.code
  if (typeof code === 'string') span.setAttribute('error.type', code)
  span.setStatus({ code: STATUS_ERROR, message: error?.message === undefined ? String(error) : String(error.message) })
}

/**
 * Runs `fn(span)` inside a span named `name` of `tracer`, child of the active context, with that
 * span active (so that a run traced inside it becomes its child); ends the span when `fn`'s
 * promise settles, with an error status when it rejects. A span that does not record costs
 * nothing more: `fn` gets `undefined` then.
 */
async function tracedSection(tracer, name, attributes, fn) {
  const otel = otelApi()
  const parent = otel ? otel.context.active() : undefined
  const span = tracer.startSpan(name, { kind: SPAN_KIND_INTERNAL, attributes }, parent)
  if (!span.isRecording()) {
    span.end()
    return fn(undefined)
  }
  try {
    const inside = () => fn(span)
    return await (otel && parent ? otel.context.with(otel.trace.setSpan(parent, span), inside) : inside())
  } catch (error) {
    fail(span, error)
    throw error
  } finally {
    span.end()
  }
}

module.exports = { ownTracer, tracerOf, tracedRun, tracedSection }
