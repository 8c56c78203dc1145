// isolated-vm: each executor is a V8 isolate (its own heap) with one context; code runs on the
// isolate's own thread when called through the async API, as here.
import { createRequire } from 'node:module'
import { format } from 'node:util'

const require = createRequire(import.meta.url)

export const peer = {
  id: 'isolated-vm',
  name: 'isolated-vm (V8 isolate)',
  language: 'js',
  isolation: 'separate V8 isolate (own heap), own thread',
  mainThread: false,
  isolating: true,
  // An isolate takes over a MiB (W7): W11 stops at a thousand, which still shows the slope.
  w11Executors: 1_000,
}

let ivm

export function version() {
  return require('isolated-vm/package.json').version
}

export async function setup() {
  try {
    ivm = require('isolated-vm')
  } catch (error) {
    throw new Error(
      `${error.message.split('\n')[0]} (bench/install.mjs, npm run bench's first step, builds it from source: ` +
        'it needs a C++ toolchain and the Node headers; 5.0.4 is the release that builds on Node 20)',
    )
  }
}

async function bind(context, name, fn, { async }) {
  const apply = async
    ? `$0.apply(undefined, args, { arguments: { copy: true }, result: { promise: true, copy: true } })`
    : `$0.applySync(undefined, args, { arguments: { copy: true }, result: { copy: true } })`
  await context.evalClosure(`globalThis[${JSON.stringify(name)}] = (...args) => ${apply}`, [fn], {
    arguments: { reference: true },
  })
}

export async function create({ tools, timeoutMs }) {
  const isolate = new ivm.Isolate({ memoryLimit: 256 })
  const context = await isolate.createContext()
  const logs = []
  let answer
  for (const [name, tool] of Object.entries(tools)) await bind(context, name, tool.fn, tool)
  const log = (...args) => {
    logs.push(format(...args))
  }
  await bind(context, '__log', log, { async: false })
  await bind(context, 'final_answer', (value) => (answer = value), { async: false })
  await context.eval('globalThis.console = { log: __log, info: __log }')
  return {
    async run(source, kind) {
      return context.eval(source, { timeout: timeoutMs, promise: kind === 'async', copy: true })
    },
    async agentStep(variables, code) {
      for (const [k, v] of Object.entries(variables)) {
        await context.global.set(k, new ivm.ExternalCopy(v).copyInto())
      }
      logs.length = 0
      answer = undefined
      await context.eval(`(async () => {${code}})()`, { timeout: timeoutMs, promise: true })
      return { answer, logs: logs.join('\n') }
    },
    async spin(until) {
      // Computes until the wall-clock time `until` (ms since the epoch) on the isolate's thread; the
      // CPU time it got is V8's count.
      const before = isolate.cpuTime
      await context.eval(`while (Date.now() < ${until}) {}`, { timeout: timeoutMs })
      return { cpuMs: Number(isolate.cpuTime - before) / 1e6 }
    },
    async dispose() {
      context.release()
      isolate.dispose()
    },
  }
}

export function isTimeout(error) {
  return /timed out/i.test(String(error?.message))
}

