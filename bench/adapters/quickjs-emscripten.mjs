// quickjs-emscripten: QuickJS compiled to WebAssembly. Each executor is a QuickJS runtime
// (its own heap and limits) inside the one WASM module instance, run on Node's thread. Host
// async functions use the library's documented promise plumbing (`newPromise` + settled →
// `executePendingJobs`), which keeps the fast synchronous build of the module.
import { createRequire } from 'node:module'
import { format } from 'node:util'

const require = createRequire(import.meta.url)

export const peer = {
  id: 'quickjs-emscripten',
  name: 'quickjs-emscripten (WASM QuickJS)',
  language: 'js',
  isolation: 'separate QuickJS runtime (own heap) in a shared WASM memory, same thread',
  mainThread: true,
  isolating: true,
}

export const unsupported = {
  W13: 'runs guest code on Node’s thread, so a spinning guest blocks the host: no probe can run beside it',
}

let QuickJS
let shouldInterruptAfterDeadline

export function version() {
  return require('quickjs-emscripten/package.json').version
}

export async function setup() {
  const lib = await import('quickjs-emscripten')
  shouldInterruptAfterDeadline = lib.shouldInterruptAfterDeadline
  QuickJS = await lib.getQuickJS()
}

/** A guest copy of a host value (the plain data the workloads exchange). */
function toHandle(vm, value) {
  switch (typeof value) {
    case 'number':
      return vm.newNumber(value)
    case 'string':
      return vm.newString(value)
    case 'boolean':
      return value ? vm.true : vm.false
    case 'undefined':
      return vm.undefined
    default:
      break
  }
  if (value === null) return vm.null
  const handle = Array.isArray(value) ? vm.newArray() : vm.newObject()
  for (const [k, v] of Object.entries(value)) {
    const child = toHandle(vm, v)
    vm.setProp(handle, Array.isArray(value) ? Number(k) : k, child)
    child.dispose()
  }
  return handle
}

export async function create({ tools, timeoutMs }) {
  const runtime = QuickJS.newRuntime()
  runtime.setMemoryLimit(256 * 1024 * 1024)
  const vm = runtime.newContext()
  const logs = []
  let answer
  const define = (name, fn) => {
    const handle = vm.newFunction(name, (...args) => {
      const result = fn(...args.map((h) => vm.dump(h)))
      if (!(result instanceof Promise)) return toHandle(vm, result)
      const deferred = vm.newPromise()
      result.then(
        (value) => {
          const h = toHandle(vm, value)
          deferred.resolve(h)
          h.dispose()
        },
        (error) => {
          const h = vm.newError(String(error?.message ?? error))
          deferred.reject(h)
          h.dispose()
        },
      )
      deferred.settled.then(() => runtime.executePendingJobs())
      return deferred.handle
    })
    vm.setProp(vm.global, name, handle)
    handle.dispose()
  }
  for (const [name, tool] of Object.entries(tools)) define(name, tool.fn)
  const log = (...args) => {
    logs.push(format(...args))
  }
  define('final_answer', (value) => {
    answer = value
  })
  const consoleHandle = vm.newObject()
  for (const level of ['log', 'info']) {
    const fn = vm.newFunction(level, (...args) => {
      log(...args.map((h) => vm.dump(h)))
    })
    vm.setProp(consoleHandle, level, fn)
    fn.dispose()
  }
  vm.setProp(vm.global, 'console', consoleHandle)
  consoleHandle.dispose()

  const evaluate = async (source, kind) => {
    runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + timeoutMs))
    const handle = vm.unwrapResult(vm.evalCode(source))
    if (kind !== 'async') {
      const value = vm.dump(handle)
      handle.dispose()
      return value
    }
    const settled = vm.resolvePromise(handle)
    handle.dispose()
    runtime.executePendingJobs()
    const result = vm.unwrapResult(await settled)
    const value = vm.dump(result)
    result.dispose()
    return value
  }
  return {
    run: evaluate,
    async agentStep(variables, code) {
      for (const [k, v] of Object.entries(variables)) {
        const h = toHandle(vm, v)
        vm.setProp(vm.global, k, h)
        h.dispose()
      }
      logs.length = 0
      answer = undefined
      await evaluate(`(async () => {${code}})()`, 'async')
      return { answer, logs: logs.join('\n') }
    },
    async dispose() {
      vm.dispose()
      runtime.dispose()
    },
  }
}

export function isTimeout(error) {
  return /interrupted/i.test(String(error?.message))
}
