'use strict'
// The exported SESExecutor: the native class (binding.js) with the one option that lives in
// JavaScript, `tracer` (OpenTelemetry, lib/tracing.cjs). A subclass rather than a wrapper, so
// that `instanceof`, the prototype's methods and `Symbol.asyncDispose` stay the native ones;
// an executor without a tracer, where `@opentelemetry/api` is not installed, runs exactly the
// native `run()`.
//
// The options are read once, by the addon, which hands back what this layer needs of them (the
// native constructor's second argument): the tracer with its `startSpan`, the authorized
// imports (for codeAgentSetup's prompt) and `captureToolContent` (for the tool spans).
const { loadBinding } = require('./load-binding.cjs')
const guarded = require('./guarded.cjs')
const { capturesToolContent, tracerOf, tracedRun } = require('./tracing.cjs')

const binding = loadBinding()
const Native = binding.SESExecutor

/** Each executor's `authorizedImports`, as its options were read. */
const imports = new WeakMap()

class SESExecutor extends Native {
  /** The executor's own tracer (`options.tracer`, with its `startSpan`), or `undefined` for the global one. */
  #tracer
  /** What tool spans say of the tools: their descriptions, and whether to record content. */
  #tools

  constructor(options) {
    let read
    super(options, (tracer, startSpan, authorizedImports, captureToolContent) => {
      read = { tracer: tracer === undefined ? undefined : { tracer, startSpan }, authorizedImports, captureToolContent }
    })
    this.#tracer = read?.tracer
    imports.set(this, read?.authorizedImports ?? [])
    const descriptions = new Map()
    this.#tools = {
      description: (name) => descriptions.get(name),
      descriptions,
      captureContent: capturesToolContent(read?.captureToolContent),
    }
  }

  /**
   * The native `sendTools`, given a copy of the record that this reads first (each entry once),
   * taking each tool object's `description` for the tool spans (lib/tracing.cjs). What is no
   * record (not an object, an array) goes to the native method as it is, which refuses it
   * without reading it; what throws as it is read is refused by the native method from the
   * copy (see `describedTools`); a description that cannot be read (a getter that throws) is
   * left out of the spans, which never change what the executor accepts.
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
      return tracedRun(this, super.run, tracer, code, options, this.#tools)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/**
 * A plain copy of a `sendTools` record, each entry read once, and each entry's description;
 * `undefined` for what is no such record (the native method refuses it). What throws as it is
 * read is thrown again, the same value, from the copy's own keys or entry, so that the native
 * method refuses the copy exactly as it would the record, without reading the record again.
 */
function describedTools(tools) {
  if (tools === null || typeof tools !== 'object' || Array.isArray(tools)) return undefined
  // No prototype, so that a tool named `__proto__` is an entry like any other.
  const record = Object.create(null)
  const descriptions = []
  let names
  try {
    names = Object.keys(tools)
  } catch (thrown) {
    return {
      record: new Proxy(record, {
        ownKeys() {
          throw thrown
        },
      }),
      descriptions,
    }
  }
  for (const name of names) {
    const entry = guarded.read(tools, name)
    if (!entry.ok) {
      Object.defineProperty(record, name, {
        enumerable: true,
        get() {
          throw entry.thrown
        },
      })
      break
    }
    record[name] = entry.value
    descriptions.push([name, descriptionOf(entry.value)])
  }
  return { record, descriptions }
}

/** A tool object's `description` when it is a non-empty string, read once. */
function descriptionOf(tool) {
  if (tool === null || typeof tool !== 'object') return undefined
  const description = guarded.read(tool, 'description')
  return description.ok && typeof description.value === 'string' && description.value !== '' ? description.value : undefined
}

/** The `authorizedImports` `executor` was made with. */
function authorizedImportsOf(executor) {
  return imports.get(executor) ?? []
}

module.exports = { binding, SESExecutor, authorizedImportsOf }
