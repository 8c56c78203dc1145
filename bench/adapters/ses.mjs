// Endo SES: `lockdown()` hardens the realm once, then each executor is a Compartment: its own
// global object, sharing the frozen intrinsics, in Node's heap and on Node's thread.
import { createRequire } from 'node:module'
import { format } from 'node:util'

const require = createRequire(import.meta.url)

export const peer = {
  id: 'ses',
  name: 'ses (Endo Compartment)',
  language: 'js',
  isolation: 'separate global object, shared frozen intrinsics, same heap, same thread',
  mainThread: true,
  isolating: false,
}

export const unsupported = {
  W13: 'runs guest code on Node’s thread, so a spinning guest blocks the host: no probe can run beside it',
  W8: 'a Compartment cannot stop synchronous code: while (true) {} would hang the host',
  W11: 'W11 and W12 compare executors that each keep a heap of their own (isolated-vm isolates and quickjs-emscripten contexts are the peers)',
  W12: 'W11 and W12 compare executors that each keep a heap of their own (isolated-vm isolates and quickjs-emscripten contexts are the peers)',
}

export function version() {
  return require('ses/package.json').version
}

export async function setup() {
  await import('ses')
  globalThis.lockdown()
}

export async function create({ tools }) {
  const logs = []
  let answer
  const endowments = {
    ...Object.fromEntries(Object.entries(tools).map(([k, t]) => [k, t.fn])),
    console: {
      log: (...args) => logs.push(format(...args)),
      info: (...args) => logs.push(format(...args)),
    },
    final_answer: (value) => {
      answer = value
    },
    // A Compartment's own Date cannot tell the time (SES tames it); W6's spin needs a clock.
    Date: { now: () => Date.now() },
  }
  const compartment = new globalThis.Compartment({
    globals: globalThis.harden(endowments),
    __options__: true,
  })
  return {
    async run(source, kind) {
      const value = compartment.evaluate(source)
      return kind === 'async' ? await value : value
    },
    async agentStep(variables, code) {
      for (const [k, v] of Object.entries(variables)) {
        compartment.globalThis[k] = globalThis.harden(structuredClone(v))
      }
      logs.length = 0
      answer = undefined
      await compartment.evaluate(`(async () => {${code}})()`)
      return { answer, logs: logs.join('\n') }
    },
    async dispose() {},
  }
}

export function isTimeout() {
  return false
}
