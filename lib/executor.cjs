'use strict'
// The exported SESExecutor: the native class (binding.js) with the one option that lives in
// JavaScript, `tracer` (OpenTelemetry, lib/tracing.cjs). A subclass rather than a wrapper, so
// that `instanceof`, the prototype's methods and `Symbol.asyncDispose` stay the native ones;
// an executor without a tracer, where `@opentelemetry/api` is not installed, runs exactly the
// native `run()`.
const { loadBinding } = require('./load-binding.cjs')
const { capturesToolContent, ownTracer, tracerOf, tracedRun } = require('./tracing.cjs')

const binding = loadBinding()
const Native = binding.SESExecutor

class SESExecutor extends Native {
  /** The executor's own tracer (`options.tracer`), or `undefined` for the global one. */
  #tracer
  /** What tool spans say of the tools: their descriptions, and whether to record content. */
  #tools

  constructor(options) {
    super(options)
    this.#tracer = ownTracer(options)
    const descriptions = new Map()
    this.#tools = {
      descriptions,
      description: (name) => descriptions.get(name),
      captureContent: capturesToolContent(options),
    }
  }

  /**
   * The native `sendTools`, given a copy of the record that this reads first (each entry once),
   * taking each tool object's `description` for the tool spans (lib/tracing.cjs). A record
   * that cannot be read so goes to the native method as it is, which refuses it with its own
   * error; a description that cannot be read (a getter that throws) is left out of the spans,
   * which never change what the executor accepts.
   */
  sendTools(tools, ...rest) {
    const read = describedTools(tools)
    if (read === undefined) return super.sendTools(tools, ...rest)
    return super.sendTools(read.record, ...rest).then((sent) => {
      for (const [name, description] of read.descriptions) {
        if (description === undefined) this.#tools.descriptions.delete(name)
        else this.#tools.descriptions.set(name, description)
      }
      return sent
    })
  }

  /** Creates an executor and `init()`s it. */
  static async create(options) {
    const executor = new this(options)
    await executor.init()
    return executor
  }

  run(code, options) {
    const tracer = tracerOf(this.#tracer)
    if (tracer === undefined) return super.run(code, options)
    return tracedRun(this, super.run, tracer, code, options, this.#tools)
  }
}

/** A plain copy of a `sendTools` record and each entry's description; `undefined` if unreadable. */
function describedTools(tools) {
  if (tools === null || typeof tools !== 'object') return undefined
  // No prototype, so that a tool named `__proto__` is an entry like any other.
  const record = Object.create(null)
  const descriptions = []
  try {
    if (Array.isArray(tools)) return undefined
    for (const name of Object.keys(tools)) {
      const tool = tools[name]
      record[name] = tool
      descriptions.push([name, descriptionOf(tool)])
    }
  } catch {
    return undefined
  }
  return { record, descriptions }
}

/** A tool object's `description` when it is a non-empty string, read once. */
function descriptionOf(tool) {
  if (tool === null || typeof tool !== 'object') return undefined
  try {
    const description = tool.description
    return typeof description === 'string' && description !== '' ? description : undefined
  } catch {
    return undefined
  }
}

module.exports = { binding, SESExecutor }
