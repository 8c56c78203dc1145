// This package: each executor is a QuickJS runtime + context of its own, run on a shared pool of
// engine threads.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

export const peer = {
  id: 'ses-executor',
  name: 'this package (SESExecutor)',
  language: 'js',
  isolation: 'separate heap (own QuickJS runtime), pool of engine threads',
  mainThread: false,
  isolating: true,
}

let SESExecutor
let SessionPool
let MemoryStore

export function version() {
  return require('../../package.json').version
}

export async function setup() {
  ;({ SESExecutor, SessionPool, MemoryStore } = require('../../index.js'))
}

export async function create({ tools, timeoutMs }) {
  // maxOperations far above any workload: W5 and W6 loop millions of times, and W8 must
  // be stopped by the deadline, not the loop guard.
  const executor = await SESExecutor.create(options(timeoutMs))
  return wrap(executor, tools)
}

function options(timeoutMs) {
  return { maxOperations: 2 ** 40, timeoutMs }
}

/**
 * W14: durable sessions. `snapshot()` of an executor made by `create`, and `restore(bytes)`,
 * which gives an executor like `create`'s with the snapshot's session (the tools sent again).
 */
export const sessions = {
  snapshot: (executor) => executor.snapshot(),
  async restore(bytes, { tools, timeoutMs }) {
    return wrap(await SESExecutor.restore(bytes, options(timeoutMs)), tools)
  },
}

async function wrap(executor, tools) {
  await executor.sendTools(Object.fromEntries(Object.entries(tools).map(([k, t]) => [k, t.fn])))
  return {
    snapshot: () => executor.snapshot(),
    async run(source, kind) {
      // Agent code has top-level await; `return await` hands back the async sources' value.
      const result = await executor.run(kind === 'async' ? `return await ${source}` : source)
      return result.output
    },
    async agentStep(variables, code) {
      await executor.sendVariables(variables)
      const result = await executor.run(code)
      return { answer: result.is_final_answer ? result.output : undefined, logs: result.logs }
    },
    async spin(until) {
      // Computes until the wall-clock time `until` (ms since the epoch); the CPU time it got is what
      // the engine counted.
      const result = await executor.run(`while (Date.now() < ${until}) {}`)
      return { cpuMs: result.stats.cpuTimeMs }
    },
    dispose: () => executor.cleanup(),
  }
}

/**
 * W15: a session pool over an in-memory store, whose steps are W9's (`sendVariables` + `run`)
 * on the session named.
 */
export async function sessionPool({ tools, timeoutMs, maxLive, spare }) {
  const store = new MemoryStore({ compress: true })
  const pool = new SessionPool({
    maxLive,
    spare,
    store,
    tools: Object.fromEntries(Object.entries(tools).map(([k, t]) => [k, t.fn])),
    executorOptions: { maxOperations: 2 ** 40, timeoutMs },
  })
  return {
    async agentStep(sessionId, variables, code) {
      await pool.sendVariables(sessionId, variables)
      const result = await pool.run(sessionId, code)
      return { answer: result.is_final_answer ? result.output : undefined, logs: result.logs }
    },
    isLive: (sessionId) => pool.isLive(sessionId),
    stats: () => pool.stats(),
    storeSize: () => store.size,
    dispose: () => pool.close(),
  }
}

export function isTimeout(error) {
  return error?.code === 'ERR_EXEC_TIMEOUT'
}
