'use strict'
// The exported SESExecutor: the native class (binding.js) with the one option that lives in
// JavaScript, `tracer` (OpenTelemetry, lib/tracing.cjs). A subclass rather than a wrapper, so
// that `instanceof`, the prototype's methods and `Symbol.asyncDispose` stay the native ones;
// an executor without a tracer, where `@opentelemetry/api` is not installed, runs exactly the
// native `run()`.
const { loadBinding } = require('./load-binding.cjs')
const { ownTracer, tracerOf, tracedRun } = require('./tracing.cjs')

const binding = loadBinding()
const Native = binding.SESExecutor

class SESExecutor extends Native {
  /** The executor's own tracer (`options.tracer`), or `undefined` for the global one. */
  #tracer

  constructor(options) {
    super(options)
    this.#tracer = ownTracer(options)
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

  run(code, options) {
    const tracer = tracerOf(this.#tracer)
    if (tracer === undefined) return super.run(code, options)
    return tracedRun(this, super.run, tracer, code, options)
  }
}

module.exports = { binding, SESExecutor }
