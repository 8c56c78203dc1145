// W6's measure, shared by the workload (child.mjs) and the machine's floor (floors.mjs), so that
// both read Node's event-loop lag the same way.
import { Worker } from 'node:worker_threads'

/**
 * Runs `spin()` (a promise that settles when the guest's spin ends) while Node's thread runs a
 * 1 ms interval; the largest gap between consecutive ticks that overlaps the spin, in ms.
 */
export async function longestTickGap(spin) {
  const ticks = []
  const timer = setInterval(() => ticks.push(performance.now()), 1)
  await new Promise((resolve) => setTimeout(resolve, 30))
  const start = performance.now()
  await spin()
  const end = performance.now()
  await new Promise((resolve) => setTimeout(resolve, 30))
  clearInterval(timer)
  let worst = 0
  for (let k = 1; k < ticks.length; k++) {
    if (ticks[k] > start && ticks[k - 1] < end) worst = Math.max(worst, ticks[k] - ticks[k - 1])
  }
  return worst
}

/**
 * A worker thread that spins for `ms` on request, as W6's guest does, with no sandbox: what any
 * design that runs guest code off Node's thread leaves of Node's lag on this machine. W6
 * measures it beside each peer's spin, in the same process and alternating with it, since on
 * these virtual machines the floor moves by several milliseconds within minutes.
 */
export function spinningWorker() {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads')
     parentPort.on('message', (ms) => {
       const end = Date.now() + ms
       let n = 0
       while (Date.now() < end) n++
       parentPort.postMessage(n)
     })`,
    { eval: true },
  )
  return {
    spin: (ms) =>
      new Promise((resolve) => {
        worker.once('message', resolve)
        worker.postMessage(ms)
      }),
    terminate: () => worker.terminate(),
  }
}
