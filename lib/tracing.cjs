'use strict'
// OpenTelemetry spans for runs and tool calls (docs/tracing.md "OpenTelemetry"). Each `run()`
// is a span, child of the context active when `run()` was called; each tool call of the run is
// a child span of it, named and attributed per OpenTelemetry's GenAI semantic conventions
// (`execute_tool {gen_ai.tool.name}`). The spans are built from the run's own trace events,
// which the addon streams to a listener of this module's (run()'s third argument, apart from
// the caller's own `onEvent` listeners): they carry the engine's times (when the sandbox called,
// when the answer reached it) and the run's figures (`ses.operations`, `ses.peak_heap_bytes`),
// whatever the outcome. A tool span's call id is the run span's id and the call's number,
// unique in the trace; its description is the tool object's; its arguments and result are
// recorded only on request (`captureToolContent`), as the conventions ask of what may hold user
// data.
//
// The tracer, its spans, the context manager and whatever SDK is registered are host code:
// everything here reaches them through `guarded.cjs`. A tracer that throws, a span that is not
// one or whose methods throw, a context that cannot be read: the run goes on, untraced or with
// the spans that could be made, and resolves or rejects exactly as it would without a tracer.
// The run's options are never read here; the addon reads them, once.
//
// `@opentelemetry/api` is an optional peer dependency: without it, and without a `tracer`
// option, nothing here runs. With it and no SDK registered, a run checks that and goes on
// untraced; a tracer whose spans do not record (sampled out) costs one span per run.
const guarded = require('./guarded.cjs')

const { apply } = Reflect
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
 * A tracer as runs use it: the object and its `startSpan`, read once (by the addon's option
 * reader for the `tracer` option, here for the global one).
 * @typedef {{ tracer: object, startSpan: Function }} Tracer
 */

/**
 * The tracer a run reports to: the executor's own (`own`), or the global one once an SDK is
 * registered; `undefined` for none. Looked up per run (an SDK may be registered after the
 * executor was made); while none is, a run costs this check and nothing else. Never throws: a
 * registered provider that throws, or gives no tracer, means no tracer.
 * @param {Tracer | undefined} own
 * @returns {Tracer | undefined}
 */
function tracerOf(own) {
  if (own !== undefined) return own
  const otel = otelApi()
  if (!otel) return undefined
  // Every run of every executor without a tracer comes here: one try, no allocation, until an
  // SDK is registered. What is registered is host code: each property read once, each value
  // it returns made quiet (a rejected promise is handled), anything thrown means no tracer.
  try {
    const provider = otel.trace.getTracerProvider()
    const getDelegate = provider.getDelegate
    if (typeof getDelegate === 'function') {
      const delegate = apply(getDelegate, provider, [])
      if (delegate === noopProvider) return undefined
      guarded.quiet(delegate)
    }
    const tracer = guarded.callMethod(provider, 'getTracer', [SCOPE, version])
    if (tracer === null || typeof tracer !== 'object') return undefined
    const startSpan = guarded.read(tracer, 'startSpan')
    return startSpan.ok && typeof startSpan.value === 'function' ? { tracer, startSpan: startSpan.value } : undefined
  } catch {
    return undefined
  }
}

/** The environment variable OpenTelemetry's GenAI instrumentations read for content capture. */
const CAPTURE_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'

/**
 * Whether tool spans record arguments and results: the executor's `captureToolContent` option
 * as the addon read it (a boolean, or `undefined` when left out), else the environment
 * variable's `true` (or `span_only`, `span_and_event`, its values where the conventions' newer
 * modes apply).
 */
function capturesToolContent(own) {
  if (typeof own === 'boolean') return own
  const fromEnvironment = String(process.env[CAPTURE_ENV] ?? '').toLowerCase()
  return ['true', 'span_only', 'span_and_event'].includes(fromEnvironment)
}

/**
 * A value of the trace (a copy of what crossed, made by the addon) as the JSON text a span
 * attribute holds: what JSON has no form for becomes a string (`12n`) or a plain structure
 * (Map → `[key, value]` pairs, Set → array); a value JSON cannot write at all is left out.
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
 * A span as this module uses it: each method of the host's span read at most once, each call
 * guarded (what it throws, or a promise it rejects, is dropped).
 */
class GuardedSpan {
  #span
  #methods = new Map()

  constructor(span) {
    this.#span = span
  }

  /** The span itself, for `trace.setSpan`. */
  get raw() {
    return this.#span
  }

  #call(name, args) {
    let method = this.#methods.get(name)
    if (method === undefined) {
      const read = guarded.read(this.#span, name)
      method = read.ok && typeof read.value === 'function' ? read.value : null
      this.#methods.set(name, method)
    }
    if (method === null) return undefined
    const result = guarded.call(method, this.#span, args)
    return result.ok ? result.value : undefined
  }

  /** The span's id (`spanContext().spanId`), or `undefined`. */
  spanId() {
    const context = this.#call('spanContext', [])
    if (context === null || typeof context !== 'object') return undefined
    const id = guarded.read(context, 'spanId')
    return id.ok && typeof id.value === 'string' && id.value !== '' ? id.value : undefined
  }
  isRecording() {
    return this.#call('isRecording', []) === true
  }
  setAttribute(key, value) {
    this.#call('setAttribute', [key, value])
  }
  setAttributes(attributes) {
    this.#call('setAttributes', [attributes])
  }
  addEvent(name, attributes, time) {
    this.#call('addEvent', [name, attributes, time])
  }
  setStatus(status) {
    this.#call('setStatus', [status])
  }
  end(time) {
    this.#call('end', time === undefined ? [] : [time])
  }
}

/** A span of `tracer`, or `undefined` when `startSpan` threw or gave no object. */
function startSpan({ tracer, startSpan: start }, name, options, context) {
  const made = guarded.call(start, tracer, [name, options, context])
  if (!made.ok || made.value === null || typeof made.value !== 'object') return undefined
  return new GuardedSpan(made.value)
}

/**
 * Runs `run.call(executor, code, options, listener)` (the addon's `run`) inside a span of
 * `tracer`, with a child span per tool call. Falls through to the plain run when no span can be
 * made or it does not record (no SDK registered, sampled out). `tools.description(name)` is a
 * tool's description, if it has one; `tools.captureContent` says whether tool spans record
 * arguments and results.
 * @param {Tracer} tracer
 */
function tracedRun(executor, run, tracer, code, options, tools = { description: () => undefined, captureContent: false }) {
  const otel = otelApi()
  // A context manager whose active() throws: the root context, which the SDK takes as given.
  const parent = otel ? guarded.attempt(() => otel.context.active(), otel.ROOT_CONTEXT) : undefined
  const span = startSpan(tracer, 'ses_executor.run', { kind: SPAN_KIND_INTERNAL }, parent)
  if (span === undefined) return run.call(executor, code, options)
  if (!span.isRecording()) {
    span.end()
    return run.call(executor, code, options)
  }
  const runContext =
    otel && parent !== undefined ? guarded.attempt(() => otel.trace.setSpan(parent, span.raw), undefined) : undefined
  // Unique in the trace: a tracer of one's own whose spans have no id gets a random one.
  const runSpanId = span.spanId() ?? randomUUID()
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

  // The addon's events are its own plain objects (index.d.ts `TraceEvent`).
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
        const toolSpan = startSpan(
          tracer,
          `execute_tool ${event.tool}`,
          { kind: SPAN_KIND_INTERNAL, startTime: time, attributes },
          runContext,
        )
        if (toolSpan !== undefined) toolSpans.set(event.call, toolSpan)
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
    running = run.call(executor, code, options, observe)
  } catch (error) {
    fail(span, error)
    end()
    return Promise.reject(error)
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

/** Marks `span` as failed by `error` (the run's `ExecutorError`). */
function fail(span, error) {
  const code = guarded.read(error, 'code')
  if (code.ok && typeof code.value === 'string') span.setAttribute('error.type', code.value)
  const message = guarded.read(error, 'message')
  span.setStatus({
    code: STATUS_ERROR,
    message: message.ok && typeof message.value === 'string' ? message.value : guarded.describe(error),
  })
}

/**
 * The tracer of `options.tracer` (options the pool copied once): the object and its
 * `startSpan`, read here once through the guarded path; `undefined` for none, or for one that
 * is not a tracer (the executors the pool makes refuse it with `options_valid`).
 * @returns {Tracer | undefined}
 */
function ownTracer(options) {
  const tracer = options?.tracer
  if (tracer === undefined || tracer === null || typeof tracer !== 'object') return undefined
  const startSpan = guarded.read(tracer, 'startSpan')
  return startSpan.ok && typeof startSpan.value === 'function' ? { tracer, startSpan: startSpan.value } : undefined
}

/**
 * Runs `fn(span)` inside a span named `name` of `tracer`, child of the active context, with that
 * span active (so that a run traced inside it becomes its child); ends the span when `fn`'s
 * promise settles, with an error status when it rejects. A span that cannot be made or does not
 * record costs nothing more: `fn` gets `undefined` then. The span is host code, reached only
 * through `GuardedSpan`: what it throws never changes `fn`'s outcome.
 * @param {Tracer} tracer
 */
async function tracedSection(tracer, name, attributes, fn) {
  const otel = otelApi()
  const parent = otel ? guarded.attempt(() => otel.context.active(), otel.ROOT_CONTEXT) : undefined
  const span = startSpan(tracer, name, { kind: SPAN_KIND_INTERNAL, attributes }, parent)
  if (span === undefined) return fn(undefined)
  if (!span.isRecording()) {
    span.end()
    return fn(undefined)
  }
  const inner =
    otel && parent !== undefined ? guarded.attempt(() => otel.trace.setSpan(parent, span.raw), undefined) : undefined
  try {
    // `fn` runs once: inside the span's context, or (a context manager that throws before
    // calling it) outside it.
    let entered = false
    const inside = () => {
      entered = true
      return fn(span)
    }
    let result
    if (inner !== undefined) {
      try {
        result = otel.context.with(inner, inside)
      } catch (error) {
        if (entered) throw error
      }
    }
    if (!entered) result = inside()
    return await result
  } catch (error) {
    fail(span, error)
    throw error
  } finally {
    span.end()
  }
}

module.exports = { capturesToolContent, ownTracer, tracerOf, tracedRun, tracedSection }
