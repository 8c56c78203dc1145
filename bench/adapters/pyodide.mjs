// smolagents-ts's Pyodide executor: CPython compiled to WebAssembly, one interpreter (its own
// WASM linear memory) per executor, run on Node's thread. It runs the workloads' Python
// equivalents.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

export const peer = {
  id: 'pyodide',
  name: 'Pyodide (smolagents-ts Python executor)',
  language: 'py',
  isolation: 'separate WASM interpreter (own linear memory), same thread',
  mainThread: true,
  // A separate heap, but nothing stops synchronous Python (W8): not as strong as ours.
  isolating: false,
  // Each interpreter loads the whole Python runtime (seconds, tens of MiB): W7 keeps 4 alive,
  // not 200, and W10 stops at 2 (on Node's thread, more cannot run at once anyway).
  heavy: true,
  liveExecutors: 4,
}

export const unsupported = {
  W13: 'runs guest code on Node’s thread, so a spinning guest blocks the host: no probe can run beside it',
  W8: 'no deadline for synchronous Python on Node’s thread (an interrupt buffer needs a worker and SharedArrayBuffer)',
  W11: 'each executor loads a whole Python runtime (tens of MiB, seconds): thousands do not fit',
  W12: 'each executor loads a whole Python runtime (tens of MiB, seconds): thousands do not fit',
}

let loadPyodide

export function version() {
  return require('pyodide/package.json').version
}

export async function setup() {
  ;({ loadPyodide } = require('pyodide'))
  // The first interpreter compiles the WASM module and unpacks the standard library; later
  // ones are what W1 measures.
  await loadPyodide()
}

export async function create({ tools }) {
  const py = await loadPyodide()
  const logs = []
  let answer
  py.setStdout({ batched: (line) => logs.push(line) })
  for (const [name, tool] of Object.entries(tools)) py.globals.set(name, tool.fn)
  py.globals.set('final_answer', (value) => {
    answer = value?.toJs ? value.toJs({ dict_converter: Object.fromEntries }) : value
    value?.destroy?.()
  })
  const output = (value) => {
    if (value?.toJs) {
      const js = value.toJs({ dict_converter: Object.fromEntries })
      value.destroy()
      return js
    }
    return value
  }
  return {
    async run(source, kind) {
      return output(kind === 'async' ? await py.runPythonAsync(source) : py.runPython(source))
    },
    async agentStep(variables, code) {
      for (const [k, v] of Object.entries(variables)) py.globals.set(k, py.toPy(v))
      logs.length = 0
      answer = undefined
      await py.runPythonAsync(code)
      return { answer, logs: logs.join('\n') }
    },
    async dispose() {},
  }
}

export function isTimeout() {
  return false
}
