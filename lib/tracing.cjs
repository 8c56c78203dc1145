'use strict'
// OpenTelemetry spans for runs and tool calls (docs/tracing.md "OpenTelemetry"). Each `run()` is a span,
// child of the context active when `run()` was called; each tool call of the run is a child
// span of it, named and attributed per OpenTelemetry's GenAI semantic conventions
// (`execute_tool {gen_ai.tool.name}`). The spans are built from the run's own trace events,
// streamed to a per-run `onEvent` (index.d.ts `TraceEvent`): they carry the engine's times
// (when the sandbox called, when the answer reached it) and the run's figures
// (`ses.operations`, `ses.peak_heap_bytes`), whatever the outcome. A tool span's call id is the
// run span's id and the call's number, unique in the trace; its description is the tool
// object's; its arguments and result are recorded only on request (`captureToolContent`), as
// the conventions ask of what may hold user data.
//
// `@opentelemetry/api` is an optional peer dependency: without it, and without a `tracer`
// option, nothing here runs. With it and no SDK registered, a run checks that and goes on
// untraced; a tracer whose spans do not record (sampled out) costs one span per run.

const { randomUUID } = require('node:crypto')

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

/** The environment variable OpenTelemetry's GenAI instrumentations read for content capture. */
const CAPTURE_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'

/**
 * Whether tool spans record arguments and results: the executor's `captureToolContent` option
 * (which the native constructor has checked to be a boolean or absent), else the environment
 * variable's `true` (or `span_only`, `span_and_event`, its values where the conventions' newer
 * modes apply).
 */
function capturesToolContent(options) {
  let own
  try {
    own = options?.captureToolContent
  } catch {
    // Read after the native constructor accepted it: a getter that throws now records nothing.
    return false
  }
  if (typeof own === 'boolean') return own
  if (own !== undefined) return false
  const fromEnvironment = String(process.env[CAPTURE_ENV] ?? '').toLowerCase()
  return ['true', 'span_only', 'span_and_event'].includes(fromEnvironment)
}

/**
 * A value of the trace (a copy of what crossed) as the JSON text a span attribute holds: what
 * JSON has no form for becomes a string (`12n`) or a plain structure (Map → `[key, value]`
 * pairs, Set → array); a value JSON cannot write at all is left out.
 */
function contentJson(value) {
  try {
    return JSON.stringify(value, (_key, item) => {
      if (typeof item === 'bigint') return `${item}n`
      if (item instanceof Map) return [...item]
      if (item instanceof Set) return [...item]
      return item
    })
  } catch {
    return undefined
  }
}

/**
 * Runs `run.call(executor, code, options)` inside a span of `tracer`, with a child span per tool
 * call. Falls through to the plain run when the span does not record (no SDK registered).
 * `tools.description(name)` is a tool's description, if it has one; `tools.captureContent`
 * says whether tool spans record arguments and results.
 */
function tracedRun(executor, run, tracer, code, options, tools = { description: () => undefined, captureContent: false }) {
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
  const runSpanId = spanIdOf(span)
  const userOnEvent = options?.onEvent
  const toolSpans = new Map()
  let startTime = Date.now()
  let ended = false

  const end = (endTime) => {
    if (ended) return
    ended = true
    for (const toolSpan of toolSpans.values()) {
      toolSpan.setStatus({ code: STATUS_ERROR, message: 'the run ended before the tool answered' })
      toolSpan.end(endTime)
    }
    toolSpans.clear()
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
          'gen_ai.tool.call.id': `${runSpanId}-${event.call}`,
          'gen_ai.tool.type': 'function',
        }
        const description = tools.description(event.tool)
        if (description !== undefined) attributes['gen_ai.tool.description'] = description
        if (tools.captureContent && event.args !== undefined) {
          const args = contentJson(event.args)
          if (args !== undefined) attributes['gen_ai.tool.call.arguments'] = args
        }
        if (event.line !== undefined) attributes['code.line.number'] = event.line
        const toolSpan = tracer.startSpan(
          `execute_tool ${event.tool}`,
          { kind: SPAN_KIND_INTERNAL, startTime: time, attributes },
          runContext,
        )
        toolSpans.set(event.call, toolSpan)
        break
      }
      case 'tool_result': {
        const toolSpan = toolSpans.get(event.call)
        if (!toolSpan) break
        toolSpans.delete(event.call)
        if (event.ok && tools.captureContent && Object.hasOwn(event, 'result')) {
          const result = contentJson(event.result)
          if (result !== undefined) toolSpan.setAttribute('gen_ai.tool.call.result', result)
        }
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

/**
 * The span's id, which makes its tool calls' ids unique in the trace; a random one for a span of
 * a tracer of one's own that has no `spanContext()`.
 */
function spanIdOf(span) {
  const id = typeof span.spanContext === 'function' ? span.spanContext()?.spanId : undefined
  return typeof id === 'string' && id !== '' ? id : randomUUID()
}

function fail(span, error) {
  const code = error?.code
  if (typeof code === 'string') span.setAttribute('error.type', code)
  span.setStatus({ code: STATUS_ERROR, message: error?.message === undefined ? String(error) : String(error.message) })
}

module.exports = { capturesToolContent, ownTracer, tracerOf, tracedRun }
