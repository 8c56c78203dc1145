// Soak and leak test (docs/performance.md "Soak and leak"): `npm run soak`.
//
// Phase 0: memory given back. After a warm-up burst, SOAK_MASS (3 000) executors are created at
// once (each sends tools and runs once), then all cleaned up and collected; then as many again,
// cleaned up again. It prints RSS at the start, with the executors live, a few seconds after each
// mass cleanup, and with the re-created ones live, and fails if a mass cleanup keeps more than
// SOAK_MAX_KEPT_SHARE (0.05) of what the live executors took above the start, or the re-created
// executors take more than SOAK_MAX_REUSE_RATIO (1.05) times what the first ones did (reuse must
// not grow).
//
// Phase 1: SOAK_CYCLES (10 000) full lifecycles, new SESExecutor → init → sendTools → run →
// cleanup. Phase 2: SOAK_RUNS (100 000) runs on one executor, each calling a sync and an async
// tool. For each phase it prints RSS, thread count (/proc/self/status Threads, and how many of
// them are engine threads, named `ses-executor`), open fds (/proc/self/fd) and
// process.getActiveResourcesInfo() at the start, after a warm-up (5 %), at each tenth and at the
// end. It fails (exit 1) if RSS grew more than SOAK_MAX_GROWTH_MIB (32) past the warm-up or more
// than SOAK_MAX_LATE_GROWTH_MIB (8) over the second half (a leak grows linearly; allocator and
// heap warm-up levels off), or engine threads, fds or active resources did not return to where
// they started. (Total threads may rise by the tokio runtime's own: its workers start with the
// first executor, and the blocking threads that join engine threads idle for 10 s before they
// exit.) Phase 3 (runs stuck in built-ins): SOAK_STUCK (100) executors, each timed out inside a built-in that
// once ignored the deadline (an array method on a huge array-like, a sort, BigInt printing,
// replaceAll), then cleaned up. After each phase it measures the CPU the process uses over a
// quiet second (process.cpuUsage()) and fails if it is SOAK_MAX_QUIET_CPU_MS (100) or more: after
// cleanup() no thread of ours may use CPU. The whole script stops itself after
// SOAK_MAX_SECONDS (1200).
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'

const { SESExecutor, enginePoolStats } = createRequire(import.meta.url)('../../index.js')

const MASS = Number(process.env.SOAK_MASS ?? 3_000)
// Measured 0.8-0.9 %; 12-14 % while each executor's promise watcher outlived it in V8 (README
// "Soak and leak").
const MAX_KEPT_SHARE = Number(process.env.SOAK_MAX_KEPT_SHARE ?? 0.05)
const MAX_REUSE_RATIO = Number(process.env.SOAK_MAX_REUSE_RATIO ?? 1.05)
const CYCLES = Number(process.env.SOAK_CYCLES ?? 10_000)
const RUNS = Number(process.env.SOAK_RUNS ?? 100_000)
const MAX_GROWTH_MIB = Number(process.env.SOAK_MAX_GROWTH_MIB ?? 32)
const MAX_LATE_GROWTH_MIB = Number(process.env.SOAK_MAX_LATE_GROWTH_MIB ?? 8)
const MAX_SECONDS = Number(process.env.SOAK_MAX_SECONDS ?? 1200)
const STUCK = Number(process.env.SOAK_STUCK ?? 100)
const MAX_QUIET_CPU_MS = Number(process.env.SOAK_MAX_QUIET_CPU_MS ?? 100)
const WARM_UP = 0.05

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (npm run soak does)')
  process.exit(2)
}

const started = Date.now()
const deadline = setTimeout(() => {
  console.error(`soak: stopped after SOAK_MAX_SECONDS=${MAX_SECONDS}`)
  process.exit(3)
}, MAX_SECONDS * 1000)
deadline.unref()

const settle = () => new Promise((resolve) => setTimeout(resolve, 50))

/** Collects garbage and reads the figures the report prints. */
async function sample(label, done) {
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await settle()
  }
  const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1])
  const engines = readdirSync('/proc/self/task').filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'ses-executor'
    } catch {
      return false
    }
  }).length
  const resources = process.getActiveResourcesInfo().filter((name) => name !== 'Timeout')
  return {
    label,
    done,
    rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
    threads,
    engines,
    fds: readdirSync('/proc/self/fd').length,
    resources: resources.sort().join(',') || '-',
    seconds: +((Date.now() - started) / 1000).toFixed(1),
  }
}

/** The CPU time (user + system, ms) the whole process uses over a quiet second. */
async function quietCpuMs() {
  const before = process.cpuUsage()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const { user, system } = process.cpuUsage(before)
  return +((user + system) / 1000).toFixed(1)
}

/**
 * Runs `step(i)` `total` times, sampling at the start, after warm-up, every tenth and the end;
 * `settleMs` before each sample, for steps that free large blocks (memory goes back to the system
 * a second after frees pause, docs/performance.md "Memory": sampled at once, RSS shows what is being freed).
 */
async function phase(name, total, step, settleMs = 0) {
  const settled = async (label, done) => {
    if (settleMs) await new Promise((resolve) => setTimeout(resolve, settleMs))
    return sample(label, done)
  }
  const rows = [await settled('start', 0)]
  const warmUp = Math.max(1, Math.floor(total * WARM_UP))
  const marks = new Set([warmUp, ...Array.from({ length: 10 }, (_, i) => Math.floor(((i + 1) * total) / 10))])
  for (let i = 0; i < total; i++) {
    await step(i)
    if (marks.has(i + 1)) rows.push(await settled(i + 1 === warmUp ? 'warm' : i + 1 === total ? 'end' : 'at', i + 1))
  }
  console.log(`\n${name}`)
  console.table(rows)
  const [start, warm, half, end] = [rows[0], rows[1], rows.find((row) => row.done === Math.floor(total / 2)), rows.at(-1)]
  const growth = end.rssMiB - warm.rssMiB
  const late = end.rssMiB - half.rssMiB
  const problems = []
  if (growth > MAX_GROWTH_MIB) problems.push(`RSS grew ${growth.toFixed(1)} MiB after warm-up (limit ${MAX_GROWTH_MIB})`)
  if (late > MAX_LATE_GROWTH_MIB) problems.push(`RSS grew ${late.toFixed(1)} MiB over the second half (limit ${MAX_LATE_GROWTH_MIB})`)
  if (end.engines > start.engines) problems.push(`engine threads ${start.engines} -> ${end.engines}`)
  if (end.fds > start.fds) problems.push(`fds ${start.fds} -> ${end.fds}`)
  if (end.resources !== start.resources) problems.push(`active resources ${start.resources} -> ${end.resources}`)
  const quiet = await quietCpuMs()
  if (quiet >= MAX_QUIET_CPU_MS) problems.push(`${quiet} ms of CPU over a quiet second after the phase (limit ${MAX_QUIET_CPU_MS})`)
  console.log(
    `${name}: RSS ${start.rssMiB} -> ${warm.rssMiB} (warm) -> ${half.rssMiB} (half) -> ${end.rssMiB} MiB, ` +
      `growth after warm-up ${growth.toFixed(1)} MiB, over the second half ${late.toFixed(1)} MiB; ` +
      `threads ${start.threads} -> ${end.threads} (engine ${start.engines} -> ${end.engines}); ` +
      `fds ${start.fds} -> ${end.fds}; CPU over a quiet second after it ${quiet} ms; ${problems.length ? 'FAIL' : 'ok'}`,
  )
  return problems
}

const tools = { add: (a, b) => a + b, later: async (x) => x }

/**
 * Freed memory goes back to the system a second after cleanup and GC, and what the host side
 * frees later five seconds after that (docs/performance.md "Memory").
 */
const GIVE_BACK_MS = 6_500

async function massCleanup() {
  const live = async (count = MASS) => {
    const executors = []
    for (let i = 0; i < count; i++) {
      const executor = await SESExecutor.create({ timeoutMs: 10_000 })
      await executor.sendTools(tools)
      const { output } = await executor.run(`add(${i}, 1) + await later(1)`)
      if (output !== i + 2) throw new Error(`executor ${i}: got ${output}`)
      executors.push(executor)
    }
    return executors
  }
  const cleanUp = async (executors) => {
    await Promise.all(executors.map((executor) => executor.cleanup()))
    // What the executors held on Node's side goes once they are garbage-collected.
    executors.length = 0
    for (let i = 0; i < 3; i++) globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, GIVE_BACK_MS))
  }
  // Warm-up, a smaller burst: the code of every path involved is paged in and V8's heap has
  // reached its working size before the start is measured.
  await cleanUp(await live(Math.min(300, MASS)))
  const rows = [await sample('start', 0)]
  const first = await live()
  rows.push(await sample('live', MASS))
  await cleanUp(first)
  rows.push(await sample('cleaned up', 0))
  const second = await live()
  rows.push(await sample('live again', MASS))
  await cleanUp(second)
  rows.push(await sample('cleaned up again', 0))
  const name = `phase 0: ${MASS} executors live at once, cleaned up, re-created, cleaned up`
  console.log(`\n${name}`)
  console.table(rows)
  const [start, firstLive, cleaned, secondLive, cleanedAgain] = rows
  const problems = []
  const held = (row) => row.rssMiB - start.rssMiB
  for (const [after, live] of [[cleaned, firstLive], [cleanedAgain, secondLive]]) {
    if (held(after) > held(live) * MAX_KEPT_SHARE) {
      problems.push(`${after.label}: RSS ${after.rssMiB} MiB keeps ${held(after).toFixed(1)} of the ${held(live).toFixed(1)} MiB the executors took (limit ${MAX_KEPT_SHARE})`)
    }
  }
  if (held(secondLive) > held(firstLive) * MAX_REUSE_RATIO) {
    problems.push(`re-created executors hold ${held(secondLive).toFixed(1)} MiB, the first ones ${held(firstLive).toFixed(1)} MiB`)
  }
  if (enginePoolStats().engines !== 0) problems.push(`${enginePoolStats().engines} runtimes still alive`)
  console.log(
    `${name}: RSS ${start.rssMiB} -> ${firstLive.rssMiB} (live, ${((held(firstLive) * 1024) / MASS).toFixed(1)} KiB each) -> ` +
      `${cleaned.rssMiB} (cleaned up, ${((100 * held(cleaned)) / held(firstLive)).toFixed(1)} % kept) -> ${secondLive.rssMiB} (live again) -> ` +
      `${cleanedAgain.rssMiB} MiB (cleaned up again, ${((100 * held(cleanedAgain)) / held(secondLive)).toFixed(1)} % kept); ` +
      `engine threads ${Math.max(...rows.map((row) => row.engines))} at most; ${problems.length ? 'FAIL' : 'ok'}`,
  )
  return problems
}

const mass = await massCleanup()

const lifecycle = await phase(`phase 1: ${CYCLES} × (new → init → sendTools → run → cleanup)`, CYCLES, async (i) => {
  const executor = new SESExecutor({ timeoutMs: 10_000 })
  await executor.init()
  await executor.sendTools(tools)
  const { output } = await executor.run(`add(${i}, 1) + await later(1)`)
  if (output !== i + 2) throw new Error(`cycle ${i}: got ${output}`)
  await executor.cleanup()
})

const executor = new SESExecutor({ timeoutMs: 10_000 })
await executor.init()
await executor.sendTools(tools)
const runs = await phase(`phase 2: ${RUNS} runs on one executor`, RUNS, async (i) => {
  const { output, logs } = await executor.run(`const r${i % 100} = add(${i}, 1) + await later(1); console.log(r${i % 100}); r${i % 100}`)
  if (output !== i + 2 || logs !== String(i + 2)) throw new Error(`run ${i}: got ${output} / ${logs}`)
})
await executor.cleanup()

const builtIns = [
  'Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)',
  'Array.from({ length: 2 ** 22 }, (_, i) => (i * 7919) % 1000003).sort()',
  '((1n << 1000000n) - 1n).toString()',
  "'x'.repeat(2 ** 24).replaceAll('x', 'yy')",
]
const stuck = await phase(`phase 3: ${STUCK} executors timed out inside a built-in, then cleaned up`, STUCK, async (i) => {
  const executor = new SESExecutor({ timeoutMs: 50, maxOperations: 1e12 })
  await executor.init()
  const code = builtIns[i % builtIns.length]
  const error = await executor.run(code).then(
    () => null,
    (e) => e,
  )
  if (error?.code !== 'ERR_EXEC_TIMEOUT' || error.details.stillRunning) throw new Error(`${code}: ${error?.code} ${error?.message}`)
  await executor.cleanup()
}, 1_500)

const problems = [...mass, ...lifecycle, ...runs, ...stuck]
console.log(`\nsoak: ${((Date.now() - started) / 1000).toFixed(0)} s, node ${process.version}, ${new Date().toISOString()}`)
if (problems.length) {
  console.error(`soak FAILED:\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log('soak passed')
