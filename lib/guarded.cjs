'use strict'
// The one way the package's JavaScript touches what host code hands it (the options of
// codeAgentSetup and createRunJavaScriptTool, tool objects, the executor a tool wraps, tracers,
// spans, the OpenTelemetry API and what is registered with it): the counterpart of the addon's
// src/node/guarded.rs. Every read or call that can run host code (a getter, a Proxy trap, the
// function itself) gives its value or what it threw, and never throws; a promise it returns has
// its rejection handled, so that Node never reports it as unhandled. A thrown value is described
// only by `describe`, which cannot throw.
//
// The built-ins used here are taken as they were when the package was loaded.

const { apply } = Reflect
const { isNativeError, isPromise } = require('node:util').types

const then = Promise.prototype.then
const toText = String
const ignore = () => {}

/** The outcome of an operation that may run host code: `{ ok: true, value }` or `{ ok: false, thrown }`. */
const ok = (value) => ({ ok: true, value })
const failed = (thrown) => ({ ok: false, thrown })

/** `object[key]`, which may run a getter or a Proxy trap. */
function read(object, key) {
  try {
    return ok(object[key])
  } catch (thrown) {
    return failed(thrown)
  }
}

/** `function.apply(self, args)`; a promise it returns has its rejection handled. */
function call(fn, self, args) {
  try {
    const value = apply(fn, self, args)
    quiet(value)
    return ok(value)
  } catch (thrown) {
    return failed(thrown)
  }
}

/** `method` of `object`, called on it with `args`, when it is a function; what it gives, or `undefined`. */
function callMethod(object, method, args) {
  const fn = read(object, method)
  if (!fn.ok || typeof fn.value !== 'function') return undefined
  const result = call(fn.value, object, args)
  return result.ok ? result.value : undefined
}

/** `work()`'s value, or `fallback` if it threw. */
function attempt(work, fallback) {
  try {
    return work()
  } catch {
    return fallback
  }
}

/** Marks a native promise's rejection as handled (through `Promise.prototype.then` as it was). */
function quiet(value) {
  if (!isPromise(value)) return
  try {
    apply(then, value, [undefined, ignore])
  } catch {
    // A promise whose `constructor` getter throws cannot be chained; nothing else can be done.
  }
}

const NO_TEXT = 'a value that has no string form'

/**
 * One line for a thrown value, as Node prints an uncaught exception: `Name: message` for an
 * error, the string form of anything else; never throws.
 */
function describe(value) {
  try {
    switch (typeof value) {
      case 'string':
        return value
      case 'bigint':
        return `${toText(value)}n`
      case 'object':
      case 'function':
        break
      default:
        return toText(value)
    }
    if (value === null) return 'null'
    if (isNativeError(value)) {
      const name = read(value, 'name')
      const message = read(value, 'message')
      const shownName = name.ok && typeof name.value === 'string' && name.value !== '' ? name.value : 'Error'
      if (!message.ok) return `${shownName}: (reading its message threw)`
      return typeof message.value === 'string' && message.value !== '' ? `${shownName}: ${message.value}` : shownName
    }
    return toText(value)
  } catch {
    return NO_TEXT
  }
}

/** A `TypeError` saying that `what` threw as it was read. */
function unreadable(what, thrown) {
  return new TypeError(`${what} cannot be read (reading it threw ${describe(thrown)})`)
}

/** `object[key]`, or a thrown `TypeError` naming `what` if reading it threw. */
function readOrThrow(object, key, what) {
  const result = read(object, key)
  if (!result.ok) throw unreadable(typeof key === 'number' ? `${what}[${key}]` : `${what}.${toText(key)}`, result.thrown)
  return result.value
}

/**
 * The items of an array as one copy, each element read once: `undefined` when `value` is not
 * an array. Reading `length` and the elements (not iterating) runs no iterator of the host's.
 */
function arrayItems(value, what) {
  if (!Array.isArray(value)) return undefined
  const length = readOrThrow(value, 'length', what)
  const items = []
  for (let index = 0; index < length; index++) items.push(readOrThrow(value, index, what))
  return items
}

/** The own enumerable string keys of an object (`Object.keys`), or a thrown `TypeError` naming `what`. */
function ownKeys(object, what) {
  try {
    return Object.keys(object)
  } catch (thrown) {
    throw unreadable(what, thrown)
  }
}

/** How deep `copyData` copies; deeper parts are kept as they are. */
const COPY_DEPTH = 16

/**
 * A copy of plain data (what a tool's `inputs` holds), each property read once: arrays and
 * objects are copied (own enumerable string keys, defined rather than assigned, so that a
 * `"__proto__"` key stays a key), anything else is kept as it is. A `TypeError` naming the
 * part that threw as it was read.
 */
function copyData(value, what, depth = 0) {
  if (value === null || typeof value !== 'object' || depth >= COPY_DEPTH) return value
  const items = arrayItems(value, what)
  if (items !== undefined) return items.map((item, index) => copyData(item, `${what}[${index}]`, depth + 1))
  const copy = {}
  for (const key of ownKeys(value, what)) {
    const part = readOrThrow(value, key, what)
    Object.defineProperty(copy, key, {
      value: copyData(part, `${what}.${key}`, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return copy
}

module.exports = { read, call, callMethod, attempt, quiet, describe, readOrThrow, arrayItems, ownKeys, copyData }
