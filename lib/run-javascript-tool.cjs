'use strict'
// `createRunJavaScriptTool`: an SESExecutor offered to a model as a function-calling tool
// (docs/tools.md "A function-calling tool: run_javascript"). The definition is the OpenAI Chat
// Completions shape (`{ type: 'function', function: { name, description, parameters } }`),
// which most tool-calling APIs accept or map one to one; `execute(args)` takes the call's
// arguments (the object, or the JSON text a model API hands over) and always resolves with a
// JSON-safe result, failures included, so the result can go back to the model as it is.
const { writeFile } = require('node:fs/promises')
const path = require('node:path')

const guarded = require('./guarded.cjs')
const { contentFormat, imagesMessage } = require('./image-content.cjs')

const { apply } = Reflect

const DEFAULT_NAME = 'run_javascript'

/** OpenAI's rule for function names. */
const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** JSON Schema of the call's arguments. */
function parametersSchema() {
  return {
    type: 'object',
    properties: {
      code: {
        type: 'string',
        description:
          'JavaScript to run. The value of the last expression statement (or of a top-level `return`) is the result; top-level `await` works.',
      },
      input: {
        description:
          'Optional data for this call, any JSON value: the code reads it as the global `input` (a copy, for this call only).',
      },
    },
    required: ['code'],
    additionalProperties: false,
  }
}

/** The description that tells the model the sandbox's rules. */
function describe({ timers, tools }) {
  const lines = [
    'Runs JavaScript in an isolated sandbox and returns its result, console output and any images drawn.',
    'Rules of the sandbox:',
    '- Standard JavaScript only (QuickJS): no Node.js or browser APIs — no require, process, fetch, DOM, file system or network. eval and the Function constructor are unavailable.',
    '- The value of the last expression statement (or of a top-level `return`) is the result; top-level `await` works, and a returned Promise is awaited. Results must be plain data (objects, arrays, strings, numbers, Map, Set, Date…), not functions.',
    '- console.log/info/warn/error output comes back as `logs`.',
    '- State persists between calls: top-level let/const/class/var/function declarations stay defined for later calls.',
    '- The `input` argument, when given, is the global `input` during that call only (a copy).',
    '- Drawing: `getCanvas(width, height)` returns a canvas with the standard Canvas 2D API (`canvas.getContext("2d")`: fillRect, paths, arc, gradients, fillText, transforms, getImageData, drawImage…). Every canvas drawn during a call is returned as a PNG image.',
    timers
      ? '- setTimeout/setInterval/clearTimeout/clearInterval are available; timers still pending when the result is ready are cancelled, so await what you wait for.'
      : '- There are no timers (setTimeout, setInterval).',
    '- Each call has a time limit and a loop-iteration limit; `final_answer(value)` ends the call with `value` as the final answer.',
  ]
  if (tools.length > 0) {
    lines.push(`- These host functions are available as globals: ${tools.join(', ')}.`)
  }
  return lines.join('\n')
}

/** How many characters of JSON an output may take in a result unless `maxOutputBytes` says otherwise. */
const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024

/** Thrown inside `toJsonSafe` when the output passes its budget. */
const TOO_LARGE = Symbol('output too large')

/**
 * A copy of `value` that JSON can carry without loss of meaning: `undefined` becomes `null`
 * in arrays and is left out of objects (as JSON.stringify does); what JSON has no form for
 * becomes a string (`123n`, `NaN`, `Infinity`, an ISO date) or a plain structure (Map → array
 * of [key, value], Set → array, typed arrays → arrays of numbers, Error → { name, message });
 * a value met again inside itself becomes `"[Circular]"`.
 *
 * JSON has no shared references: a value referenced twice is written twice, so a copy can be
 * exponentially larger than the value that crossed from the sandbox (1 MiB referenced 1,024
 * times). Every part written is charged to `budget` (the characters of its JSON text, escapes
 * aside, and at least one per value, so the work is counted too), and the copy stops with
 * `TOO_LARGE` as soon as the budget is spent. Objects are made with `Object.fromEntries`,
 * which defines each key: an own `"__proto__"` key stays a key, never the copy's prototype.
 *
 * `value` is what the addon made of the sandbox's output: plain data, with no getters.
 */
function toJsonSafe(value, budget) {
  let left = budget
  const seen = new Set()
  const charge = (count) => {
    left -= count
    if (left < 0) throw TOO_LARGE
  }
  // A typed array's elements take at least a digit and a comma each: one that cannot fit is
  // refused before any element is written.
  const fits = (count) => {
    if (count > left) throw TOO_LARGE
  }
  const walk = (value) => {
    switch (typeof value) {
      case 'undefined':
        charge(5)
        return null
      case 'bigint': {
        const text = `${value}n`
        charge(text.length + 3)
        return text
      }
      case 'number': {
        const text = String(value)
        charge(text.length + 1)
        return Number.isFinite(value) ? value : text
      }
      case 'string':
        charge(value.length + 3)
        return value
      case 'boolean':
        charge(6)
        return value
      case 'object':
        break
      default: {
        const text = String(value)
        charge(text.length + 3)
        return text
      }
    }
    if (value === null) {
      charge(5)
      return null
    }
    if (seen.has(value)) {
      charge(13)
      return '[Circular]'
    }
    charge(2)
    seen.add(value)
    try {
      if (Array.isArray(value)) return value.map(walk)
      if (ArrayBuffer.isView(value)) {
        const length = value instanceof DataView ? value.byteLength : value.length
        fits(2 * length)
        return Array.from(value instanceof DataView ? new Uint8Array(value.buffer, value.byteOffset, length) : value, walk)
      }
      if (value instanceof ArrayBuffer) {
        fits(2 * value.byteLength)
        return Array.from(new Uint8Array(value), walk)
      }
      if (value instanceof Date) {
        charge(26)
        return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()
      }
      if (value instanceof RegExp) return walk(String(value))
      if (value instanceof Error) {
        charge(17)
        return { name: walk(value.name), message: walk(value.message) }
      }
      if (value instanceof Map) return Array.from(value, ([k, v]) => [walk(k), walk(v)])
      if (value instanceof Set) return Array.from(value, walk)
      const entries = []
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined) continue
        charge(key.length + 4)
        entries.push([key, walk(item)])
      }
      return Object.fromEntries(entries)
    } finally {
      seen.delete(value)
    }
  }
  return walk(value)
}

/** `toJsonSafe(value, budget)`, or `undefined` when it does not fit. */
function jsonSafeWithin(value, budget) {
  try {
    return { fits: true, value: toJsonSafe(value, budget) }
  } catch (error) {
    if (error === TOO_LARGE) return { fits: false }
    throw error
  }
}

/** The call's arguments, from the object or the JSON text a model API hands over, each read once. */
function readArguments(args) {
  let parsed = args
  if (typeof args === 'string') {
    try {
      parsed = JSON.parse(args)
    } catch (error) {
      return { refused: `the arguments are not valid JSON (${error.message})` }
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { refused: 'the arguments must be an object with a string `code`' }
  }
  const code = guarded.read(parsed, 'code')
  if (!code.ok) return { refused: `the arguments cannot be read (reading code threw ${guarded.describe(code.thrown)})` }
  if (typeof code.value !== 'string') return { refused: '`code` must be a string of JavaScript' }
  let hasInput
  try {
    hasInput = Object.hasOwn(parsed, 'input')
  } catch (thrown) {
    return { refused: `the arguments cannot be read (looking for input threw ${guarded.describe(thrown)})` }
  }
  const input = hasInput ? guarded.read(parsed, 'input') : { ok: true, value: undefined }
  if (!input.ok) return { refused: `the arguments cannot be read (reading input threw ${guarded.describe(input.thrown)})` }
  return { code: code.value, hasInput, input: input.value }
}

/** An `ExecutorError` as data; anything else is not the model's doing and is thrown. */
function errorResult(error, budget) {
  const field = (key) => guarded.read(error, key)
  const code = field('code')
  if (!code.ok || typeof code.value !== 'string' || !code.value.startsWith('ERR_')) throw error
  const message = field('message')
  const retryable = field('retryable')
  const details = field('details')
  const logs = field('logs')
  const safeDetails = jsonSafeWithin(details.ok && details.value != null ? details.value : {}, budget)
  return {
    ok: false,
    error: {
      code: code.value,
      message: message.ok && typeof message.value === 'string' ? message.value : '',
      retryable: retryable.ok && retryable.value === true,
      details: safeDetails.fits ? safeDetails.value : {},
    },
    logs: logs.ok && typeof logs.value === 'string' ? logs.value : '',
  }
}

/** The failure of a run whose output does not fit in `max` characters of JSON. */
function outputTooLarge(max, logs) {
  return {
    ok: false,
    error: {
      code: 'ERR_RUNTIME_EXCEPTION',
      message: `Runtime exception: RangeError: the output is more than maxOutputBytes (${max}) as JSON; return a smaller value (a summary, a slice, a count)`,
      retryable: true,
      details: { limit: 'maxOutputBytes', max },
    },
    logs,
  }
}

/**
 * The options, each read once: a `TypeError` for one of the wrong type, or whose getter
 * throws.
 */
function readOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('createRunJavaScriptTool(executor, options): options must be an object')
  }
  const given = (key) => guarded.readOrThrow(options, key, 'createRunJavaScriptTool: options')
  const name = given('name') ?? DEFAULT_NAME
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError('createRunJavaScriptTool: name must be 1-64 letters, digits, _ or -')
  }
  const tools = guarded.arrayItems(given('tools') ?? [], 'createRunJavaScriptTool: options.tools')
  if (tools === undefined || tools.some((tool) => typeof tool !== 'string')) {
    throw new TypeError('createRunJavaScriptTool: tools must be an array of tool names')
  }
  const imageDir = given('imageDir')
  if (imageDir !== undefined && typeof imageDir !== 'string') {
    throw new TypeError('createRunJavaScriptTool: imageDir must be a directory path')
  }
  const timers = given('timers')
  if (timers !== undefined && typeof timers !== 'boolean') {
    throw new TypeError('createRunJavaScriptTool: timers must be a boolean')
  }
  const description = given('description') ?? describe({ timers: timers === true, tools })
  if (typeof description !== 'string') throw new TypeError('createRunJavaScriptTool: description must be a string')
  const maxOutputBytes = given('maxOutputBytes') ?? DEFAULT_MAX_OUTPUT_BYTES
  if (typeof maxOutputBytes !== 'number') {
    throw new TypeError('createRunJavaScriptTool: maxOutputBytes must be a number')
  }
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1) {
    throw new RangeError('createRunJavaScriptTool: maxOutputBytes must be a whole number from 1 to 2^53 - 1')
  }
  return { name, imageDir, description, maxOutputBytes }
}

function createRunJavaScriptTool(executor, options = {}) {
  const run = executor !== null && typeof executor === 'object' ? guarded.readOrThrow(executor, 'run', 'createRunJavaScriptTool: executor') : undefined
  if (typeof run !== 'function') {
    throw new TypeError('createRunJavaScriptTool(executor): executor must be an SESExecutor')
  }
  const { name, imageDir, description, maxOutputBytes } = readOptions(options)

  const definition = {
    type: 'function',
    function: { name, description, parameters: parametersSchema() },
  }
  let written = 0

  async function images(list) {
    const out = []
    for (const image of list) {
      const { mimeType, width, height, data } = image
      if (imageDir === undefined) {
        out.push({ mimeType, width, height, dataUrl: `data:${mimeType};base64,${Buffer.from(data).toString('base64')}` })
      } else {
        written += 1
        const file = path.join(imageDir, `${name}-${process.pid}-${Date.now()}-${written}.png`)
        await writeFile(file, data)
        out.push({ mimeType, width, height, path: file })
      }
    }
    return out
  }

  async function execute(args) {
    const read = readArguments(args)
    if (read.refused !== undefined) {
      return {
        ok: false,
        error: { code: 'ERR_VALIDATION_FAILED', message: `${name}: ${read.refused}`, retryable: true, details: {} },
        logs: '',
      }
    }
    let result
    try {
      result = await apply(run, executor, [read.code, read.hasInput ? { input: read.input } : undefined])
    } catch (error) {
      return errorResult(error, maxOutputBytes)
    }
    const output = jsonSafeWithin(result.output, maxOutputBytes)
    if (!output.fits) return outputTooLarge(maxOutputBytes, result.logs)
    return {
      ok: true,
      output: output.value,
      logs: result.logs,
      is_final_answer: result.is_final_answer,
      images: await images(result.images ?? []),
    }
  }

  return { definition, execute, toMessages: (toolCallId, result, messageOptions) => toMessages(name, toolCallId, result, messageOptions) }
}

/**
 * The messages that answer one call with `result` (what `execute` resolved with): the tool
 * message, whose text is the result as JSON with each image's bytes left out (`{ mimeType,
 * width, height, image: n }`: the n-th image below), then, when the code drew, a user message
 * that shows the images as image content parts (chat APIs take images only there). Images
 * written to `imageDir` stay files, named in the text.
 */
function toMessages(name, toolCallId, result, options = {}) {
  const where = `${name}.toMessages`
  if (typeof toolCallId !== 'string') throw new TypeError(`${where}: toolCallId must be the call's id, a string`)
  if (result === null || typeof result !== 'object') throw new TypeError(`${where}: result must be what execute resolved with`)
  if (options === null || typeof options !== 'object') throw new TypeError(`${where}: options must be an object`)
  const format = contentFormat(guarded.readOrThrow(options, 'format', `${where}: options`), where)
  // The result is read once, as a copy: what follows reads only the copy.
  const read = guarded.copyData(result, `${where}: result`)
  const urls = []
  if (Array.isArray(read.images)) {
    read.images = read.images.map((image) => {
      if (image === null || typeof image !== 'object' || typeof image.dataUrl !== 'string') return image
      urls.push(image.dataUrl)
      const { dataUrl: _bytes, ...described } = image
      return { ...described, image: urls.length }
    })
  }
  const content = JSON.stringify(read)
  const reply =
    format === 'smolagents'
      ? { role: 'tool', content, tool_call_id: toolCallId, name }
      : { role: 'tool', tool_call_id: toolCallId, content }
  if (urls.length === 0) return [reply]
  const shown =
    urls.length === 1
      ? `The image drawn by the ${name} call ${toolCallId}:`
      : `The ${urls.length} images drawn by the ${name} call ${toolCallId}, in order:`
  return [reply, imagesMessage(shown, urls, format)]
}

module.exports = { createRunJavaScriptTool, toJsonSafe, errorResult }
