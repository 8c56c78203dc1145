'use strict'
// The exported SESExecutor: the native class (binding.js) with the one option that lives in
// JavaScript, `tracer` (OpenTelemetry, lib/tracing.cjs). A subclass rather than a wrapper, so
// that `instanceof`, the prototype's methods and `Symbol.asyncDispose` stay the native ones;
// an executor without a tracer, where `@opentelemetry/api` is not installed, runs exactly the
// native `run()`.
//
// The options are read once, by the addon, which hands back what this layer needs of them (the
// native constructor's second argument): the tracer with its `startSpan`, and the authorized
// imports (for codeAgentSetup's prompt).
const { loadBinding } = require('./load-binding.cjs')
const { tracerOf, tracedRun } = require('./tracing.cjs')

const binding = loadBinding()
const Native = binding.SESExecutor

/** Each executor's `authorizedImports`, as its options were read. */
const imports = new WeakMap()

class SESExecutor extends Native {
  /** The executor's own tracer (`options.tracer`, with its `startSpan`), or `undefined` for the global one. */
  #tracer

  constructor(options) {
    let read
    super(options, (tracer, startSpan, authorizedImports) => {
      read = { tracer: tracer === undefined ? undefined : { tracer, startSpan }, authorizedImports }
    })
    this.#tracer = read?.tracer
    imports.set(this, read?.authorizedImports ?? [])
  }

  /** Creates an executor and `init()`s it. */
  static async create(options) {
    const executor = new this(options)
    await executor.init()
    return executor
  }

  /** Makes an executor and gives it the session of `snapshot` (`executor.restore(snapshot)`). */
  static async restore(snapshot, options) {
    const executor = new this(options)
    await executor.restore(snapshot)
    return executor
  }

  // Resolves with a CodeOutput or rejects with an ExecutorError, whatever the tracer does.
  run(code, options) {
    try {
      const tracer = tracerOf(this.#tracer)
      if (tracer === undefined) return super.run(code, options)
      return tracedRun(this, super.run, tracer, code, options)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/** The `authorizedImports` `executor` was made with. */
function authorizedImportsOf(executor) {
  return imports.get(executor) ?? []
}

module.exports = { binding, SESExecutor, authorizedImportsOf }
