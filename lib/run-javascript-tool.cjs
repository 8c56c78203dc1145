'use strict'
// `createRunJavaScriptTool`: an SESExecutor offered to a model as a function-calling tool
// (docs/tools.md "A function-calling tool: run_javascript"). The definition is the OpenAI Chat
// Completions shape (`{ type: 'function', function: { name, description, parameters } }`),
// which most tool-calling APIs accept or map one to one; `execute(args)` takes the call's
// arguments (the object, or the JSON text a model API hands over) and always resolves with a
// JSON-safe result, failures included, so the result can go back to the model as it is.
const { writeFile } = require('node:fs/promises')
const path = require('node:path')

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

/**
 * A copy of `value` that JSON can carry without loss of meaning: `undefined` becomes `null`
 * in arrays and is left out of objects (as JSON.stringify does); what JSON has no form for
 * becomes a string (`123n`, `NaN`, `Infinity`, an ISO date) or a plain structure (Map → array
 * of [key, value], Set → array, typed arrays → arrays of numbers, Error → { name, message });
 * a value met again inside itself becomes `"[Circular]"`.
 */
function toJsonSafe(value, seen = new Set()) {
  switch (typeof value) {
    case 'undefined':
      return null
    case 'bigint':
      return `${value}n`
    case 'number':
      return Number.isFinite(value) ? value : String(value)
    case 'string':
    case 'boolean':
      return value
    case 'object':
      break
    default:
      return String(value)
  }
  if (value === null) return null
  if (seen.has(value)) return '[Circular]'
  seen.add(value)
  try {
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()
    if (value instanceof RegExp) return String(value)
    if (value instanceof Error) return { name: value.name, message: value.message }
    if (value instanceof Map) return [...value].map(([k, v]) => [toJsonSafe(k, seen), toJsonSafe(v, seen)])
    if (value instanceof Set) return [...value].map((item) => toJsonSafe(item, seen))
    if (ArrayBuffer.isView(value)) return Array.from(value, (item) => toJsonSafe(item, seen))
    if (value instanceof ArrayBuffer) return Array.from(new Uint8Array(value))
    if (Array.isArray(value)) return value.map((item) => toJsonSafe(item, seen))
    const copy = {}
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) copy[key] = toJsonSafe(item, seen)
    }
    return copy
  } finally {
    seen.delete(value)
  }
}

/** The call's arguments, from the object or the JSON text a model API hands over. */
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
  if (typeof parsed.code !== 'string') return { refused: '`code` must be a string of JavaScript' }
  return { code: parsed.code, hasInput: Object.hasOwn(parsed, 'input'), input: parsed.input }
}

/** An `ExecutorError` as data; anything else is not the model's doing and is thrown. */
function errorResult(error) {
  if (error === null || typeof error !== 'object' || typeof error.code !== 'string' || !error.code.startsWith('ERR_')) {
    throw error
  }
  return {
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      retryable: error.retryable === true,
      details: toJsonSafe(error.details ?? {}),
    },
    logs: typeof error.logs === 'string' ? error.logs : '',
  }
}

function createRunJavaScriptTool(executor, options = {}) {
  if (executor === null || typeof executor !== 'object' || typeof executor.run !== 'function') {
    throw new TypeError('createRunJavaScriptTool(executor): executor must be an SESExecutor')
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError('createRunJavaScriptTool(executor, options): options must be an object')
  }
  const name = options.name ?? DEFAULT_NAME
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError('createRunJavaScriptTool: name must be 1-64 letters, digits, _ or -')
  }
  const tools = options.tools ?? []
  if (!Array.isArray(tools) || tools.some((tool) => typeof tool !== 'string')) {
    throw new TypeError('createRunJavaScriptTool: tools must be an array of tool names')
  }
  const imageDir = options.imageDir
  if (imageDir !== undefined && typeof imageDir !== 'string') {
    throw new TypeError('createRunJavaScriptTool: imageDir must be a directory path')
  }
  const description = options.description ?? describe({ timers: options.timers === true, tools })
  if (typeof description !== 'string') throw new TypeError('createRunJavaScriptTool: description must be a string')

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
      result = await executor.run(read.code, read.hasInput ? { input: read.input } : undefined)
    } catch (error) {
      return errorResult(error)
    }
    return {
      ok: true,
      output: toJsonSafe(result.output),
      logs: result.logs,
      is_final_answer: result.is_final_answer,
      images: await images(result.images ?? []),
    }
  }

  return { definition, execute }
}

module.exports = { createRunJavaScriptTool, toJsonSafe, errorResult }
