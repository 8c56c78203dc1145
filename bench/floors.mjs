// What this machine gives any design that runs guest code off Node's thread, measured with
// Node's own primitives and no sandbox at all (a target that is not met needs the measured
// reason it cannot go lower). `npm run bench` runs it in a child process of its own,
// after the peers, and renders it beside W3, W4 and W6.
//
//   node bench/floors.mjs <out.json> [--quick]
//
// - spin: a worker thread spins for W6's time (`while (Date.now() < end)`, as W6's guest does)
//   while Node's thread runs a 1 ms interval; the largest gap between ticks that overlaps the
//   spin, W6's own method. Nothing shares Node's thread, so what remains is the machine's
//   scheduling of Node's thread (on these virtual machines, several milliseconds).
// - sync call: a worker asks Node's event loop for `x + 1` and blocks until the answer (a
//   message to Node's thread, `Atomics.wait` for the reply), W4's shape.
// - async call: the same, the worker awaiting the answer as a message (W3's shape).
import { writeFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'

import { longestTickGap, spinningWorker } from './lag.mjs'
import { W3_CALLS, W4_CALLS, W6_SPIN_MS } from './workloads.mjs'

const [out] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const quick = process.argv.includes('--quick')
const SAMPLES = quick ? 2 : 7

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const flag = new Int32Array(workerData, 0, 1)
const answer = new Float64Array(workerData, 8, 1)
let pending
parentPort.on('message', async (message) => {
  if (message.reply !== undefined) return pending(message.reply)
  const { kind, calls } = message
  let x = 0
  const start = performance.now()
  for (let i = 0; i < calls; i++) {
    if (kind === 'sync') {
      Atomics.store(flag, 0, 0)
      parentPort.postMessage({ call: x })
      Atomics.wait(flag, 0, 0)
      x = answer[0]
    } else {
      x = await new Promise((resolve) => {
        pending = resolve
        parentPort.postMessage({ call: x })
      })
    }
  }
  parentPort.postMessage({ done: ((performance.now() - start) * 1000) / calls, x })
})
`

const shared = new SharedArrayBuffer(16)
const flag = new Int32Array(shared, 0, 1)
const answer = new Float64Array(shared, 8, 1)
const worker = new Worker(WORKER, { eval: true, workerData: shared })
let mode
let finished
worker.on('message', (message) => {
  if (message.done !== undefined) return finished(message)
  if (mode === 'sync') {
    answer[0] = message.call + 1
    Atomics.store(flag, 0, 1)
    Atomics.notify(flag, 0)
  } else {
    worker.postMessage({ reply: message.call + 1 })
  }
})

/** Runs one task in the worker; resolves with its `done` message. */
function task(message) {
  mode = message.kind
  return new Promise((resolve) => {
    finished = resolve
    worker.postMessage(message)
  })
}

async function callTime(kind, calls) {
  const { done, x } = await task({ kind, calls })
  if (x !== calls) throw new Error(`${kind} calls: expected ${calls}, got ${x}`)
  return done
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const spin = []
const sync = []
const asynchronous = []
await callTime('sync', 1_000)
await callTime('async', 1_000)
const spinner = spinningWorker()
for (let i = 0; i < SAMPLES; i++) {
  spin.push(await longestTickGap(() => spinner.spin(W6_SPIN_MS)))
  sync.push(await callTime('sync', quick ? 1_000 : W4_CALLS))
  asynchronous.push(await callTime('async', quick ? 100 : W3_CALLS))
}
await worker.terminate()
await spinner.terminate()
const floors = {
  spinGapMs: median(spin),
  syncCallUs: median(sync),
  asyncCallUs: median(asynchronous),
  samples: SAMPLES,
}
writeFileSync(out, JSON.stringify(floors, null, 2))
console.log(
  `floors: spin gap ${floors.spinGapMs.toFixed(2)} ms, sync call ${floors.syncCallUs.toFixed(2)} µs, ` +
    `async call ${floors.asyncCallUs.toFixed(2)} µs (medians of ${SAMPLES})`,
)
