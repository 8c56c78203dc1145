// node:vm: a separate realm (global object and intrinsics) in Node's own heap, run on Node's
// thread. Node documents that it is not a security mechanism.
import { format } from 'node:util'
import vm from 'node:vm'

export const peer = {
  id: 'node-vm',
  name: 'node:vm',
  language: 'js',
  isolation: 'separate realm, same heap, same thread',
  mainThread: true,
  isolating: false,
}

export const unsupported = {
  W13: 'runs guest code on Node’s thread, so a spinning guest blocks the host: no probe can run beside it',
  W11: 'W11 and W12 compare executors that each keep a heap of their own (isolated-vm isolates and quickjs-emscripten contexts are the peers)',
  W12: 'W11 and W12 compare executors that each keep a heap of their own (isolated-vm isolates and quickjs-emscripten contexts are the peers)',
}

export function version() {
  return process.version
}

export async function setup() {}

export async function create({ tools, timeoutMs }) {
  const logs = []
  let answer
  const context = vm.createContext({
    ...Object.fromEntries(Object.entries(tools).map(([k, t]) => [k, t.fn])),
    console: {
      log: (...args) => logs.push(format(...args)),
      info: (...args) => logs.push(format(...args)),
    },
    final_answer: (value) => {
      answer = value
    },
  })
  // `timeout` starts a watchdog thread per call; it only matters where a run must be
  // stopped, so it is given when the caller asks for a short deadline (W8).
  const options = timeoutMs < 60_000 ? { timeout: timeoutMs } : {}
  return {
    async run(source, kind) {
      const value = vm.runInContext(source, context, options)
      return kind === 'async' ? await value : value
    },
    async agentStep(variables, code) {
      for (const [k, v] of Object.entries(variables)) context[k] = structuredClone(v)
      logs.length = 0
      answer = undefined
      await vm.runInContext(`(async () => {${code}})()`, context, options)
      return { answer, logs: logs.join('\n') }
    },
    async dispose() {},
  }
}

export function isTimeout(error) {
  return error?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
}
