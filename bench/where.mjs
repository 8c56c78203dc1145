// Where this package's time goes in W6 and W12, by thread, read from the kernel's own
// accounting (`/proc/self/task/*/schedstat`: time on a CPU, time runnable but waiting for one).
// It explains figures of `npm run bench` that a median alone cannot (README, Benchmarks); it is
// not part of the run, and measures only this package (the built addon of this checkout).
//
//   node --expose-gc bench/where.mjs W6 [spins]     (default 9)
//   node --expose-gc bench/where.mjs W12 [rounds]   (default 2)
//
// - W6: for each spin of the guest and of a bare worker (alternating, as the bench does), Node's
//   longest tick gap, and per thread the ms it ran and waited for a core. Who held the core
//   while Node's thread waited, `perf sched record` over this script and `perf sched timehist`
//   tell (the README's Benchmarks section says what they showed).
// - W12: µs of CPU and of waiting per step, by thread name, for W9 on 1,000 executors at once,
//   the same stepping one at a time (in turn), and one executor alone.
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'

import { longestTickGap, spinningWorker } from './lag.mjs'
import { W12_EXECUTORS, W6_SPIN_MS, W9_JS, W9_VARIABLES, guest, makeTools } from './workloads.mjs'

const require = createRequire(import.meta.url)
const { SESExecutor } = require('../index.js')
const [workload = 'W12', count] = process.argv.slice(2)

/** Each thread's run and wait time so far (ns), and its name (Node's own thread: `main`). */
function threads() {
  const out = new Map()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number)
      out.set(tid, { name: Number(tid) === process.pid ? 'main' : name, run, wait })
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out
}

/** Run and wait time per thread name between two readings, divided by `per`, in `unit` ns. */
function between(before, after, per, unit) {
  const byName = {}
  for (const [tid, { name, run, wait }] of after) {
    const earlier = before.get(tid) ?? { run: 0, wait: 0 }
    const sum = (byName[name] ??= { run: 0, wait: 0 })
    sum.run += (run - earlier.run) / unit / per
    sum.wait += (wait - earlier.wait) / unit / per
  }
  return Object.entries(byName)
    .filter(([, { run, wait }]) => run >= 0.05 || wait >= 0.05)
    .map(([name, { run, wait }]) => `${name} ${run.toFixed(1)} ran / ${wait.toFixed(1)} waited`)
    .join(', ')
}

async function w6(spins) {
  const executor = await SESExecutor.create({ maxOperations: 2 ** 40, timeoutMs: 60_000 })
  const floor = spinningWorker()
  await executor.run('1')
  await floor.spin(10)
  const measure = async (label, spin) => {
    const before = threads()
    const gap = await longestTickGap(spin)
    console.log(`${label} gap ${gap.toFixed(2)} ms; ms per thread: ${between(before, threads(), 1, 1e6)}`)
  }
  for (let i = 0; i < spins; i++) {
    await measure('guest ', () => executor.run(guest().W6.js))
    await measure('worker', () => floor.spin(W6_SPIN_MS))
  }
  await floor.terminate()
  await executor.cleanup()
}

async function w12(rounds) {
  const tools = Object.fromEntries(Object.entries(makeTools()).map(([name, tool]) => [name, tool.fn]))
  const step = async (executor) => {
    await executor.sendVariables(W9_VARIABLES)
    const result = await executor.run(W9_JS)
    if (!result.is_final_answer) throw new Error('W9 gave no final answer')
  }
  const executors = []
  for (let i = 0; i < W12_EXECUTORS; i++) {
    const executor = await SESExecutor.create({ maxOperations: 2 ** 40, timeoutMs: 60_000 })
    await executor.sendTools(tools)
    await step(executor)
    executors.push(executor)
  }
  const phase = async (label, steps, body) => {
    const before = threads()
    const start = performance.now()
    await body()
    const micros = ((performance.now() - start) * 1000) / steps
    console.log(`${label} ${micros.toFixed(0)} µs a step; µs per step: ${between(before, threads(), steps, 1e3)}`)
  }
  for (let r = 0; r < rounds; r++) {
    await phase('at once', W12_EXECUTORS, () => Promise.all(executors.map(step)))
    await phase('in turn', W12_EXECUTORS, async () => {
      for (const executor of executors) await step(executor)
    })
    await phase('alone  ', W12_EXECUTORS, async () => {
      for (let i = 0; i < W12_EXECUTORS; i++) await step(executors[0])
    })
  }
  await Promise.all(executors.map((executor) => executor.cleanup()))
}

if (workload === 'W6') await w6(Number(count ?? 9))
else if (workload === 'W12') await w12(Number(count ?? 2))
else throw new Error(`unknown workload ${workload}: W6 or W12`)
