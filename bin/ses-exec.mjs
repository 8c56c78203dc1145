#!/usr/bin/env node
// ses-exec: runs JavaScript (or TypeScript) in a fresh SESExecutor sandbox, from a file, from
// standard input, or line by line in a REPL whose state persists between lines.
import { realpathSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import readline from 'node:readline'
import { pathToFileURL } from 'node:url'
import { inspect, parseArgs } from 'node:util'

import { ExecutorError, SESExecutor } from '../index.mjs'
import { createWorkspaceTools } from '../lib/workspace-tools.mjs'

/** Exit codes: what the caller can tell apart without parsing output. */
export const EXIT = { ok: 0, runtime: 1, validation: 2, usage: 64 }

const VALIDATION_CODES = new Set(['ERR_VALIDATION_FAILED', 'ERR_IMPORT_NOT_ALLOWED'])

const USAGE = `Usage: ses-exec [options] [FILE | -]

Runs FILE (or standard input for "-") in a fresh sandboxed executor and prints its logs,
output and is_final_answer. Without FILE, opens a REPL whose state persists between lines.

Options (every ExecutorOptions field but the callbacks onLog and onEvent, and the tracer
and its captureToolContent):
  --max-operations N          loop iterations a run may make (default 50000)
  --timeout-ms N              wall-clock budget of a run in ms (default 10000)
  --run-concurrency MODE      "reject" or "queue" (default reject)
  --max-queued-runs N         queue capacity with --run-concurrency queue (default 0)
  --authorized-imports A,B    module names import() may load (default none)
  --max-log-bytes N           budget of a run's logs (default 262144)
  --collect-console-levels L  comma-separated levels to collect (default log,info,warn,error)
  --memory-limit-bytes N      heap limit of the sandbox (default 268435456)
  --max-stack-bytes N         stack limit of the sandbox (default 1048576)
  --max-value-bytes N         largest value that may cross between host and sandbox
                              (default 67108864)
  --max-canvas-size N         largest width or height of a sandbox canvas (default 8192)
  --max-trace-bytes N         budget of a run's trace (default 1048576)
  --timers                    give the sandbox setTimeout, setInterval, clearTimeout and
                              clearInterval
  --module NAME=FILE          registers FILE's source as module NAME (repeatable; the name
                              must also be in --authorized-imports)
Host tools:
  --tools MODULE              load tools from a Node module: its default export (an object of
                              functions or smolagents tool objects), or its named exports
  --workspace DIR             expose read_file, write_file, edit_file, list_dir and grep,
                              confined to DIR
Output:
  --json                      print the result (or error) as one JSON object (image data
                              as base64)
  --images DIR                write each canvas a run draws to DIR as a PNG file
  --trace                     print each run's trace to standard error as it happens (run
                              start and end, tool calls with arguments and results,
                              final_answer, console entries); with --json, the result (or
                              error) object carries the events as "trace"
  -h, --help                  show this help
  -v, --version               show the package version

Exit codes: 0 success, 1 runtime error (timeouts, limits, exceptions, tool failures),
2 validation error (the code was refused before running), 64 usage error.`

class UsageError extends Error {}

const OPTION_SPEC = {
  'max-operations': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'run-concurrency': { type: 'string' },
  'max-queued-runs': { type: 'string' },
  'authorized-imports': { type: 'string' },
  'max-log-bytes': { type: 'string' },
  'collect-console-levels': { type: 'string' },
  'memory-limit-bytes': { type: 'string' },
  'max-stack-bytes': { type: 'string' },
  'max-value-bytes': { type: 'string' },
  'max-canvas-size': { type: 'string' },
  'max-trace-bytes': { type: 'string' },
  timers: { type: 'boolean' },
  images: { type: 'string' },
  module: { type: 'string', multiple: true },
  tools: { type: 'string' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  trace: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
}

const NUMERIC = {
  'max-operations': 'maxOperations',
  'timeout-ms': 'timeoutMs',
  'max-queued-runs': 'maxQueuedRuns',
  'max-log-bytes': 'maxLogBytes',
  'memory-limit-bytes': 'memoryLimitBytes',
  'max-stack-bytes': 'maxStackBytes',
  'max-value-bytes': 'maxValueBytes',
  'max-canvas-size': 'maxCanvasSize',
  'max-trace-bytes': 'maxTraceBytes',
}

/** `ExecutorOptions` from the flags; the executor itself checks the values (§3.3). */
async function executorOptions(values) {
  const options = {}
  for (const [flag, key] of Object.entries(NUMERIC)) {
    if (values[flag] === undefined) continue
    const number = Number(values[flag])
    if (values[flag].trim() === '' || Number.isNaN(number)) {
      throw new UsageError(`--${flag} needs a number, got ${JSON.stringify(values[flag])}`)
    }
    options[key] = number
  }
  if (values['run-concurrency'] !== undefined) options.runConcurrency = values['run-concurrency']
  if (values.timers) options.timers = true
  const list = (text) => text.split(',').map((item) => item.trim()).filter(Boolean)
  if (values['authorized-imports'] !== undefined) options.authorizedImports = list(values['authorized-imports'])
  if (values['collect-console-levels'] !== undefined) options.collectConsoleLevels = list(values['collect-console-levels'])
  if (values.module) {
    options.modules = {}
    for (const entry of values.module) {
      const at = entry.indexOf('=')
      if (at <= 0) throw new UsageError(`--module needs NAME=FILE, got ${JSON.stringify(entry)}`)
      options.modules[entry.slice(0, at)] = await readFile(entry.slice(at + 1), 'utf8')
    }
  }
  return options
}

/** Host tools from `--tools` and `--workspace`. */
async function hostTools(values) {
  const tools = {}
  if (values.tools !== undefined) {
    const loaded = await import(pathToFileURL(path.resolve(values.tools)).href)
    const exported = loaded.default && typeof loaded.default === 'object' ? loaded.default : loaded
    for (const [name, tool] of Object.entries(exported)) {
      if (name === 'default') continue
      if (typeof tool === 'function' || (tool && typeof tool.forward === 'function')) tools[name] = tool
    }
    if (Object.keys(tools).length === 0) {
      throw new UsageError(`${values.tools} exports no functions or tool objects`)
    }
  }
  if (values.workspace !== undefined) Object.assign(tools, await createWorkspaceTools(values.workspace))
  return tools
}

/** The error as text: code and message, then the user's line with a caret, or fix hints. */
export function describeError(error, source) {
  const lines = [`${error.code}: ${error.message}`]
  const { line, column, diagnostics } = error.details ?? {}
  if (typeof line === 'number' && typeof column === 'number') {
    const text = source?.split(/\r?\n/)[line - 1]
    lines.push(`  at line ${line}, column ${column}`)
    if (text !== undefined) lines.push(`  ${text}`, `  ${' '.repeat(Math.max(column - 1, 0))}^`)
  } else if (Array.isArray(diagnostics)) {
    // The message already lists each blocking diagnostic with its code frame (§6.1).
    for (const diagnostic of diagnostics) {
      if (diagnostic.fix) lines.push(`  fix (${diagnostic.rule}): ${diagnostic.fix}`)
    }
  }
  return lines.join('\n')
}

function exitCodeOf(error) {
  return VALIDATION_CODES.has(error.code) ? EXIT.validation : EXIT.runtime
}

/**
 * JSON text of a result; BigInts (which JSON lacks) become decimal strings, and byte arrays
 * (`images[].data`) base64.
 */
const toJson = (value) =>
  JSON.stringify(value, (_key, item) => {
    if (typeof item === 'bigint') return item.toString()
    if (item instanceof Uint8Array) return Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('base64')
    return item
  })

/**
 * Writes the images of a result to `dir` as `<prefix>-<n>.png` and returns the paths (none
 * without `--images`).
 */
async function saveImages(dir, images, prefix) {
  if (dir === undefined || images.length === 0) return []
  await mkdir(dir, { recursive: true })
  return Promise.all(
    images.map(async (image, index) => {
      const file = path.join(dir, `${prefix}-${index + 1}.png`)
      await writeFile(file, image.data)
      return file
    }),
  )
}

function errorJson(error) {
  return { error: { code: error.code, message: error.message, severity: error.severity, retryable: error.retryable, details: error.details, logs: error.logs, trace: error.trace } }
}

/** A value of a trace event on one line, kept short. */
const brief = (value) => {
  const text = inspect(value, { depth: 2, breakLength: Infinity, maxArrayLength: 10, maxStringLength: 80 })
  return text.length > 160 ? `${text.slice(0, 159)}…` : text
}

const where = (event) => (event.line === undefined ? '' : ` (line ${event.line})`)

/** One trace event (TraceEvent, index.d.ts) as one line of text, for `--trace`. */
export function describeEvent(event) {
  const at = `[${event.at.toFixed(2).padStart(8)} ms]`
  switch (event.type) {
    case 'run_start':
      return `${at} run_start ${event.codeBytes} bytes of code`
    case 'tool_call': {
      const args = event.args === undefined ? '(arguments left out: trace budget)' : `(${event.args.map(brief).join(', ')})`
      return `${at} tool_call #${event.call} ${event.tool}${args}${where(event)}`
    }
    case 'tool_result': {
      const how = `${event.async ? 'async' : 'sync'}, ${event.durationMs.toFixed(2)} ms`
      if (!event.ok) return `${at} tool_result #${event.call} ${event.tool} threw ${event.error.name}: ${event.error.message} (${how})`
      const result = event.truncated ? '(result left out: trace budget)' : brief(event.result)
      return `${at} tool_result #${event.call} ${event.tool} -> ${result} (${how})`
    }
    case 'console':
      return `${at} console.${event.level} (entry ${event.entry})`
    case 'final_answer':
      return `${at} final_answer${where(event)}`
    case 'run_end': {
      const outcome = event.error ? `error ${event.error.code}: ${event.error.message}` : event.outcome
      const dropped = event.droppedEvents > 0 ? `, ${event.droppedEvents} events dropped` : ''
      return `${at} run_end ${outcome} (${event.toolCalls} tool calls, ${event.operations} operations, peak heap ${event.peakHeapBytes} bytes${dropped})`
    }
    default:
      return `${at} ${event.type}`
  }
}

/** Runs one program and prints its result; returns the exit code. */
async function runOnce(executor, source, json, out, imagesDir) {
  try {
    const result = await executor.run(source)
    const saved = await saveImages(imagesDir, result.images, 'image')
    if (json) {
      out.write(`${toJson(result)}\n`)
    } else {
      out.write(`output: ${inspect(result.output, { depth: 6 })}\n`)
      out.write(`is_final_answer: ${result.is_final_answer}\n`)
      for (const [index, image] of result.images.entries()) {
        out.write(`image ${index + 1}: ${image.width}×${image.height} PNG${saved[index] ? ` -> ${saved[index]}` : ''}\n`)
      }
    }
    return EXIT.ok
  } catch (error) {
    if (!(error instanceof ExecutorError)) throw error
    if (json) out.write(`${toJson(errorJson(error))}\n`)
    else process.stderr.write(`${describeError(error, source)}\n`)
    return exitCodeOf(error)
  }
}

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/** Whether a validation failure only says the input stopped early (the REPL then reads on). */
function incomplete(error) {
  return error.code === 'ERR_VALIDATION_FAILED' &&
    (error.details?.diagnostics ?? []).some((d) => d.rule === 'syntax_valid' && /EOF|end of (file|input)|Unterminated/i.test(d.message))
}

/**
 * The REPL: one line (or, while the code is incomplete, several) per run, in one executor, so
 * declarations persist between lines. Lines are read one after another even when standard input
 * is a pipe; prompts are shown only on a terminal.
 */
async function startRepl(create, json, out, imagesDir) {
  let executor = await create()
  const terminal = Boolean(process.stdin.isTTY)
  const lines = readline.createInterface({ input: process.stdin, output: terminal ? out : undefined, terminal })
  const prompt = (text) => {
    if (!terminal) return
    lines.setPrompt(text)
    lines.prompt()
  }
  let pending = ''
  let runs = 0
  prompt('ses> ')
  for await (const line of lines) {
    if (pending === '' && line.trim() === '.exit') break
    if (pending === '' && line.trim() === '') {
      prompt('ses> ')
      continue
    }
    pending = pending === '' ? line : `${pending}\n${line}`
    try {
      const result = await executor.run(pending)
      runs += 1
      const saved = await saveImages(imagesDir, result.images, `run${runs}`)
      for (const file of json ? [] : saved) out.write(`(image written to ${file})\n`)
      if (json) out.write(`${toJson(result)}\n`)
      else out.write(`${result.is_final_answer ? '(final answer) ' : ''}${inspect(result.output, { colors: terminal, depth: 6 })}\n`)
    } catch (error) {
      if (!(error instanceof ExecutorError)) throw error
      if (incomplete(error)) {
        prompt('... ')
        continue
      }
      out.write(`${json ? toJson(errorJson(error)) : describeError(error, pending)}\n`)
      if (executor.state === 'DIRTY') {
        out.write('the sandbox is DIRTY after that error; starting a fresh one (earlier state is gone)\n')
        await executor.cleanup()
        executor = await create()
      }
    }
    pending = ''
    prompt('ses> ')
  }
  lines.close()
  await executor.cleanup()
}

/** The CLI. Returns the exit code. */
export async function main(argv, { stdout = process.stdout } = {}) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: OPTION_SPEC, allowPositionals: true, strict: true })
  } catch (error) {
    process.stderr.write(`ses-exec: ${error.message}\n\n${USAGE}\n`)
    return EXIT.usage
  }
  const { values, positionals } = parsed
  if (values.help) {
    stdout.write(`${USAGE}\n`)
    return EXIT.ok
  }
  if (values.version) {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
    stdout.write(`${pkg.version}\n`)
    return EXIT.ok
  }
  if (positionals.length > 1) {
    process.stderr.write(`ses-exec: one FILE at most, got ${positionals.length}\n\n${USAGE}\n`)
    return EXIT.usage
  }
  let options
  let tools
  try {
    options = await executorOptions(values)
    tools = await hostTools(values)
  } catch (error) {
    if (!(error instanceof UsageError) && !(error?.code === 'ENOENT')) throw error
    process.stderr.write(`ses-exec: ${error.message}\n`)
    return EXIT.usage
  }
  // Logs are printed as they are written, so a long run shows its progress (§10.2 onLog).
  const onLog = values.json ? undefined : (entry) => {
    (entry.level === 'warn' || entry.level === 'error' ? process.stderr : stdout).write(`${entry.message}\n`)
  }
  // --trace: events as they happen (human output), or recorded in the JSON result.
  const onEvent = values.trace && !values.json ? (event) => process.stderr.write(`${describeEvent(event)}\n`) : undefined
  const trace = Boolean(values.trace && values.json)
  const create = async () => {
    const executor = await SESExecutor.create({ ...options, onLog, onEvent, trace })
    if (Object.keys(tools).length > 0) await executor.sendTools(tools)
    return executor
  }
  let executor
  try {
    if (positionals.length === 0) {
      await startRepl(create, values.json, stdout, values.images)
      return EXIT.ok
    }
    const [file] = positionals
    let source
    try {
      source = file === '-' ? await readStdin() : await readFile(file, 'utf8')
    } catch (error) {
      process.stderr.write(`ses-exec: cannot read ${file}: ${error.message}\n`)
      return EXIT.usage
    }
    executor = await create()
    return await runOnce(executor, source, values.json, stdout, values.images)
  } catch (error) {
    if (!(error instanceof ExecutorError)) throw error
    // The options themselves were refused.
    process.stderr.write(`${describeError(error)}\n`)
    return EXIT.usage
  } finally {
    await executor?.cleanup()
  }
}

/** Whether this file is the program Node was started with (directly or through npm's bin link). */
function isMain() {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href
  } catch {
    return false
  }
}

if (isMain()) process.exitCode = await main(process.argv.slice(2))
