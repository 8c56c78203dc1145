// One peer's run of W1..W13, in a process of its own (started by run.mjs with --expose-gc):
//   node --expose-gc bench/child.mjs <peer> <out.json> [--quick] [--workloads=W11] [--except=W11]
// `--workloads` runs only those workloads, `--except` all but those (run.mjs gives W11 a process
// of its own).
// Writes { peer, version, setupMs, workloads: { W1: {median, p95, unit, noise, …}, … } } or
// { skipped: reason } when the peer cannot be loaded here.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { longestTickGap, spinningWorker } from './lag.mjs'
import { cpuTicks, osThreads, otherCpuPercent, rssMiB, summarize, timeTask } from './measure.mjs'
import {
  W6_REPEATS,
  W6_SPIN_MS,
  W11_EXECUTORS,
  W11_SETTLE_MS,
  W12_EXECUTORS,
  W13_MANY_SPINNERS,
  W13_PROBE_EVERY_MS,
  W13_PROBE_FOR_MS,
  W13_SPINNERS_PER_CORE,
  W15_MAX_LIVE,
  W15_SAMPLES,
  W15_SESSIONS,
  W15_SPARE,
  W3_CALLS,
  W4_CALLS,
  W8_TIMEOUT_MS,
  W9_ANSWER,
  W9_JS,
  W9_PY,
  W9_VARIABLES,
  W14_HELPER,
  W14_STEPS,
  guest,
  makeTools,
} from './workloads.mjs'

const [peerId, outPath, ...flags] = process.argv.slice(2)
const quick = flags.includes('--quick')
const listed = (name) => flags.find((flag) => flag.startsWith(`--${name}=`))?.slice(name.length + 3).split(',')
const only = listed('workloads')
const except = listed('except') ?? []
const adapter = await import(`./adapters/${peerId}.mjs`)
const { peer } = adapter
const unsupported = { ...adapter.unsupported }
if (typeof adapter.sessionPool !== 'function') {
  unsupported.W15 ??= 'no snapshot and restore of an executor in another one: a session cannot be hibernated'
}
const NO_DEADLINE = 60_000
const GUEST = quick ? guest(100_000) : guest()
/**
 * Peers whose executor takes seconds to create (Pyodide loads a whole Python runtime) get
 * fewer samples of W1/W7/W10, and under --quick no W7/W10 at all.
 */
const heavy = Boolean(peer.heavy)

/** Sample budgets: the full run aims for stable medians, --quick only proves every path works. */
const BUDGET = quick
  ? { budgetMs: 0, minSamples: 2, maxSamples: 2, repeats: 1 }
  : { budgetMs: 2_000, minSamples: 8, maxSamples: 20_000, repeats: 5 }

const log = (...args) => console.error(`[${peer.id}]`, ...args)
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function gc() {
  // Several passes: what one pass's finalizers release is collected by the next.
  for (let i = 0; i < 3; i++) globalThis.gc?.()
}

function source(workload) {
  return peer.language === 'py' ? GUEST[workload].py : GUEST[workload].js
}

function check(workload, actual, expected) {
  if (actual !== expected) {
    throw new Error(`${workload}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
  }
}

const create = (options = {}) => adapter.create({ tools: makeTools(), timeoutMs: NO_DEADLINE, ...options })

/** One executor serves W2..W6 and W9, as one agent's executor serves its steps. */
let primary
async function primaryExecutor() {
  primary ??= await create()
  return primary
}

/** Runs a guest workload once, checks its value: the timed calls are then known to be right. */
async function runChecked(executor, workload) {
  const value = await executor.run(source(workload), GUEST[workload].kind)
  check(workload, value, GUEST[workload].expect)
}

const workloads = {
  async W1() {
    if (heavy && quick) {
      const start = performance.now()
      await primaryExecutor()
      return { unit: 'µs', ...summarize([(performance.now() - start) * 1_000]) }
    }
    let created = []
    return {
      unit: 'µs',
      ...(await timeTask('W1', async () => created.push(await create()), {
        ...BUDGET,
        ...(heavy ? { minSamples: 2, maxSamples: 2 } : { maxSamples: Math.min(BUDGET.maxSamples, 2_000) }),
        scale: 1_000,
        hooks: {
          afterEach: async () => {
            await Promise.all(created.map((e) => e.dispose()))
            created = []
          },
        },
      })),
    }
  },

  async W2() {
    return timedRun('W2', { unit: 'µs', scale: 1_000 })
  },

  async W3() {
    return timedRun('W3', { unit: 'µs/call', scale: 1_000 / W3_CALLS })
  },

  async W4() {
    return timedRun('W4', { unit: 'µs/call', scale: 1_000 / W4_CALLS })
  },

  async W5() {
    return timedRun('W5', { unit: 'ms', scale: 1, minSamples: quick ? 2 : 5 })
  },

  async W6() {
    // Each spin of the peer's guest alternates with a bare worker's (the machine's floor), in
    // this process: both read the same scheduling of Node's thread.
    const executor = await primaryExecutor()
    const floor = spinningWorker()
    const gaps = []
    const floorGaps = []
    for (let i = 0; i < (quick ? 1 : W6_REPEATS); i++) {
      gaps.push(await longestTickGap(async () => check('W6', await executor.run(source('W6'), 'sync'), true)))
      floorGaps.push(await longestTickGap(() => floor.spin(W6_SPIN_MS)))
    }
    await floor.terminate()
    return { unit: 'ms', ...summarize(gaps), floorMs: summarize(floorGaps).median }
  },

  async W7() {
    // First of all workloads: memory that earlier executors freed would be reused by the
    // allocator and hide part of the cost from RSS. The median is what each live executor adds
    // once one already exists (marginal cost): a warm-up executor, created and run first and
    // kept alive, takes what a peer pays once per process (its threads starting, their
    // allocator arenas, statics made on first use). What that first executor took is reported
    // too (`firstKiB`), so that nothing is hidden. The same for every peer.
    const count = Math.min(peer.liveExecutors ?? 200, quick ? 10 : 200)
    gc()
    const start = process.memoryUsage().rss
    const first = await create()
    await runChecked(first, 'W2')
    gc()
    const before = process.memoryUsage().rss
    const live = []
    for (let i = 0; i < count; i++) {
      const executor = await create()
      await runChecked(executor, 'W2')
      live.push(executor)
    }
    gc()
    const after = process.memoryUsage().rss
    await Promise.all([first, ...live].map((e) => e.dispose()))
    return {
      unit: 'KiB',
      count,
      firstKiB: (before - start) / 1024,
      ...summarize([(after - before) / count / 1024]),
    }
  },

  async W8() {
    const excess = []
    for (let i = 0; i < BUDGET.repeats; i++) {
      const executor = await create({ timeoutMs: W8_TIMEOUT_MS })
      const start = performance.now()
      let error
      try {
        await executor.run(source('W8'), 'sync')
      } catch (e) {
        error = e
      }
      const elapsed = performance.now() - start
      if (!adapter.isTimeout(error)) throw new Error(`W8: expected a timeout, got ${error}`)
      excess.push(elapsed - W8_TIMEOUT_MS)
      await executor.dispose()
    }
    return { unit: 'ms over the deadline', ...summarize(excess) }
  },

  async W9() {
    const executor = await primaryExecutor()
    const code = peer.language === 'py' ? W9_PY : W9_JS
    const first = await executor.agentStep(W9_VARIABLES, code)
    check('W9', first.answer?.answer, W9_ANSWER)
    if (!first.logs.includes('most common words')) throw new Error(`W9: logs missing: ${first.logs}`)
    const result = await timeTask('W9', () => executor.agentStep(W9_VARIABLES, code), {
      ...BUDGET,
      scale: 1_000,
    })
    return { unit: 'µs', ...result }
  },

  async W10() {
    const sizes = [1, 2, 8, 32].filter((n) => n <= (peer.liveExecutors ?? 32) && (!quick || n <= 2))
    const wall = {}
    const executors = []
    for (const n of sizes) {
      while (executors.length < n) {
        const executor = await create()
        await runChecked(executor, 'W2')
        executors.push(executor)
      }
      // The first round warms every executor up; peers on Node's thread take n × W5 a round,
      // so the large sizes get fewer rounds.
      await Promise.all(executors.slice(0, n).map((e) => runChecked(e, 'W5')))
      const times = []
      for (let r = 0; r < (quick || n === 32 ? 1 : n === 8 ? 2 : 3); r++) {
        const start = performance.now()
        await Promise.all(executors.slice(0, n).map((e) => runChecked(e, 'W5')))
        times.push(performance.now() - start)
      }
      wall[n] = summarize(times).median
    }
    await Promise.all(executors.map((e) => e.dispose()))
    // Throughput (runs per second) with n executors, relative to one executor alone.
    const relative = Object.fromEntries(sizes.slice(1).map((n) => [n, (n / wall[n]) * wall[1]]))
    return { unit: '× one executor', relative, wallMs: wall }
  },

  async W11() {
    // Many live executors in one process: memory, OS threads, creation time, every
    // one still able to run, and what is left 15 s after all are disposed. A peer whose
    // instances take megabytes each runs fewer (peer.w11Executors; the count is reported).
    const count = quick ? 20 : Math.min(peer.w11Executors ?? W11_EXECUTORS, W11_EXECUTORS)
    gc()
    const startMiB = rssMiB()
    const startThreads = osThreads()
    let live = []
    const created = performance.now()
    for (let i = 0; i < count; i++) live.push(await create())
    const createMs = performance.now() - created
    const ran = performance.now()
    await Promise.all(live.map((executor) => runChecked(executor, 'W2')))
    const runMs = performance.now() - ran
    gc()
    const liveMiB = rssMiB()
    const threads = osThreads()
    await Promise.all(live.map((executor) => executor.dispose()))
    live = []
    gc()
    await pause(quick ? 1_000 : W11_SETTLE_MS)
    gc()
    return {
      unit: 'MiB',
      count,
      median: liveMiB,
      samples: 1,
      startMiB,
      perExecutorKiB: ((liveMiB - startMiB) * 1024) / count,
      threads,
      addedThreads: threads == null || startThreads == null ? null : threads - startThreads,
      createMs,
      runMs,
      afterCleanupMiB: rssMiB(),
      settleMs: quick ? 1_000 : W11_SETTLE_MS,
    }
  },

  async W14() {
    // Durable sessions: the W9 agent session snapshotted and restored after 20 and 200 steps,
    // and a session a checkpoint cannot hold (the agent defined a function), restored by
    // replaying its journal.
    const code = peer.language === 'py' ? W9_PY : W9_JS
    const steps = quick ? [2, 4] : W14_STEPS
    const made = { executor: await create(), steps: 0 }
    const checkpointed = {}
    for (const target of steps) {
      while (made.steps < target) {
        const result = await made.executor.agentStep(W9_VARIABLES, code)
        check('W14', result.answer?.answer, W9_ANSWER)
        made.steps += 1
      }
      checkpointed[target] = await sessionFigures(made)
    }
    await made.executor.dispose()
    const replayed = { executor: await create(), steps: 0 }
    await replayed.executor.run(W14_HELPER, 'sync')
    while (replayed.steps < steps[0]) {
      await replayed.executor.agentStep(W9_VARIABLES, code)
      replayed.steps += 1
    }
    const journal = await sessionFigures(replayed)
    await replayed.executor.dispose()
    return { unit: 'ms', checkpointed, journal }
  },

  W15: () => w15(),

  async W12() {
    // W9 on many executors at once: throughput relative to one executor running it alone.
    const count = quick ? 4 : Math.min(peer.w12Executors ?? W12_EXECUTORS, W12_EXECUTORS)
    const code = peer.language === 'py' ? W9_PY : W9_JS
    const step = async (executor) => {
      const result = await executor.agentStep(W9_VARIABLES, code)
      check('W12', result.answer?.answer, W9_ANSWER)
    }
    // One executor alone: the median of several blocks of steps, as the executors together
    // are the median of several rounds (one block was at the mercy of one busy moment).
    const single = await create()
    await step(single)
    const steps = quick ? 2 : 30
    const blocks = []
    for (let b = 0; b < (quick ? 1 : 5); b++) {
      const alone = performance.now()
      for (let i = 0; i < steps; i++) await step(single)
      blocks.push((performance.now() - alone) / steps)
    }
    const aloneMs = summarize(blocks).median
    await single.dispose()
    const executors = []
    for (let i = 0; i < count; i++) {
      const executor = await create()
      await step(executor)
      executors.push(executor)
    }
    // Each round at once alternates with the same executors stepping one at a time: what the
    // steps cost without overlap once every executor's heap is cold in the caches (which one
    // executor stepping alone never meets), the other part of the ratio to one executor.
    const rounds = []
    const inTurn = []
    for (let r = 0; r < (quick ? 1 : 5); r++) {
      let start = performance.now()
      for (const executor of executors) await step(executor)
      inTurn.push((performance.now() - start) / count)
      start = performance.now()
      await Promise.all(executors.map(step))
      rounds.push(performance.now() - start)
    }
    // Disposal is not what W12 measures: a peer whose disposal fails after its agent steps
    // (quickjs-emscripten's runtime asserts on objects still alive) still gets its figure.
    const disposal = await Promise.allSettled(executors.map((executor) => executor.dispose()))
    const failed = disposal.find((outcome) => outcome.status === 'rejected')
    if (failed) log('W12: disposing failed:', String(failed.reason).split('\n')[0])
    const wallMs = summarize(rounds).median
    const inTurnMs = summarize(inTurn).median
    // Steps per second with `count` executors at once, relative to one executor's, and to the
    // same executors' one at a time.
    return {
      unit: '× one executor',
      relative: { [count]: (count / wallMs) * aloneMs },
      inTurn: { [count]: (count / wallMs) * inTurnMs },
      wallMs: { 1: aloneMs, [count]: wallMs },
      inTurnStepMs: inTurnMs,
    }
  },

  async W13() {
    // A probe among spinners: K executors compute without pause (for the whole probe window and
    // a little more) while a probe executor runs `1 + 1` every 20 ms; the probe's latency, and
    // the CPU time each spinner got, whose spread says how fairly the threads were shared.
    const cores = os.availableParallelism?.() ?? os.cpus().length
    const counts = quick ? [2] : [W13_SPINNERS_PER_CORE * cores, W13_MANY_SPINNERS]
    const probeFor = quick ? 200 : W13_PROBE_FOR_MS
    // Every spinner computes until the same moment, shortly after the probe's window: the CPU
    // each got is then read over the same time (a spinner that started later, or ran on after
    // the others stopped, would skew the spread otherwise).
    // The probe starts once every spinner has had its first slice (a burst of new runs goes
    // round once, first come, first served among equals), and its window is the steady state.
    const warmUp = quick ? 200 : 1_000
    const spinMs = warmUp + probeFor + 500
    const result = { unit: 'ms', probe: {}, fairness: {}, meanShare: {} }
    for (const count of counts) {
      const spinners = []
      for (let i = 0; i < count; i++) spinners.push(await create({ timeoutMs: spinMs + NO_DEADLINE }))
      const probe = await create()
      check('W13', await probe.run('1 + 1', 'sync'), 2)
      const until = Date.now() + spinMs
      const spinning = spinners.map((spinner) => spinner.spin(until))
      await pause(warmUp)
      const latencies = []
      const end = performance.now() + probeFor
      while (performance.now() < end) {
        const start = performance.now()
        check('W13', await probe.run('1 + 1', 'sync'), 2)
        latencies.push(performance.now() - start)
        await pause(W13_PROBE_EVERY_MS)
      }
      const cpu = (await Promise.all(spinning)).map((spun) => spun.cpuMs)
      const sorted = [...latencies].sort((a, b) => a - b)
      const rank = (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]
      result.probe[count] = { p50: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1], runs: sorted.length }
      result.fairness[count] = Math.max(...cpu) / Math.min(...cpu)
      // Each spinner's share of one core over its spin.
      result.meanShare[count] = cpu.reduce((a, b) => a + b, 0) / cpu.length / spinMs
      await Promise.all([...spinners, probe].map((executor) => executor.dispose()))
      gc()
    }
    return result
  },
}

/**
 * W14's figures for one session: snapshot time and size, restore time (a fresh executor with the
 * session, its tools sent again), and a check that the restored session has the answer.
 */
async function sessionFigures(made) {
  const { sessions } = adapter
  const snapshot = await sessions.snapshot(made.executor)
  const samples = { budgetMs: quick ? 0 : 2_000, minSamples: quick ? 2 : 20, maxSamples: quick ? 2 : 2_000 }
  const snapshotMs = await timeTask('W14 snapshot', () => sessions.snapshot(made.executor), { ...samples, scale: 1 })
  let restored = []
  const restoreMs = await timeTask(
    'W14 restore',
    async () => restored.push(await sessions.restore(snapshot, { tools: makeTools(), timeoutMs: NO_DEADLINE })),
    {
      ...samples,
      scale: 1,
      hooks: {
        afterEach: async () => {
          await Promise.all(restored.map((executor) => executor.dispose()))
          restored = []
        },
      },
    },
  )
  const again = await sessions.restore(snapshot, { tools: makeTools(), timeoutMs: NO_DEADLINE })
  check('W14', await again.run('doubled', 'sync'), W9_ANSWER)
  await again.dispose()
  return { steps: made.steps, bytes: snapshot.length, snapshotMs, restoreMs }
}

/** The value at quantile `q` of `values` (nearest rank). */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/**
 * W15: many sessions, few live executors. Every session runs the W9 step once
 * through a session pool of W15_MAX_LIVE live executors over an in-memory store (eight steps in
 * flight at a time); then RSS with them all held, the store's bytes per session, and steps one
 * at a time on hibernated sessions (the oldest: each restores one, and the pool hibernates the
 * least recently used in the background to keep W15_SPARE places free) against steps on live ones (stepped W15_MAX_LIVE / 4 rounds earlier, still
 * live). A step is W9's `sendVariables` + `run`; a miss's time is split by the pool's own
 * figures (hibernating the other session, reading the store, restoring with tools).
 */
async function w15() {
  const sessions = quick ? 2_000 : W15_SESSIONS
  const maxLive = quick ? 100 : W15_MAX_LIVE
  const samples = quick ? 200 : W15_SAMPLES
  const spare = quick ? 4 : W15_SPARE
  const code = W9_JS
  gc()
  const startMiB = rssMiB()
  const pool = await adapter.sessionPool({ tools: makeTools(), timeoutMs: NO_DEADLINE, maxLive, spare })
  const step = async (id) => {
    const result = await pool.agentStep(id, W9_VARIABLES, code)
    check('W15', result.answer?.answer, W9_ANSWER)
  }
  const filling = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < sessions) await step(`s${next++}`)
    }),
  )
  const fillMs = performance.now() - filling
  gc()
  const heldMiB = rssMiB()
  const size = pool.storeSize()
  const before = pool.stats()
  const hibernated = []
  const live = []
  const touched = []
  for (let i = 0; i < samples; i++) {
    const cold = `s${i}`
    if (pool.isLive(cold)) throw new Error(`W15: session ${cold} is live, expected hibernated`)
    let start = performance.now()
    await step(cold)
    hibernated.push(performance.now() - start)
    touched.push(cold)
    const warm = touched[touched.length - 1 - Math.floor(maxLive / 4)]
    if (warm !== undefined) {
      if (!pool.isLive(warm)) throw new Error(`W15: session ${warm} is hibernated, expected live`)
      start = performance.now()
      await step(warm)
      live.push(performance.now() - start)
    }
  }
  const after = pool.stats()
  gc()
  const endMiB = rssMiB()
  // At rest: the engine hands freed heap pages back to the system once frees pause (within
  // 5 s of the last), so RSS right after the steps still counts what the churn freed.
  await pause(6_000)
  gc()
  const restMiB = rssMiB()
  await pool.dispose()
  const misses = after.misses - before.misses
  const perMiss = (field) => (after[field] - before[field]) / misses
  const hibernatedMedian = quantile(hibernated, 0.5)
  return {
    unit: 'ms',
    median: hibernatedMedian,
    p95: quantile(hibernated, 0.95),
    p99: quantile(hibernated, 0.99),
    samples: hibernated.length,
    live: { median: quantile(live, 0.5), p99: quantile(live, 0.99), samples: live.length },
    sessions,
    maxLive,
    spare,
    startMiB,
    heldMiB,
    endMiB,
    restMiB,
    storeBytesPerSession: size.bytes / size.sessions,
    snapshotBytesPerSession: size.snapshotBytes / size.sessions,
    fillMs,
    // Each miss hibernated one session (snapshot, save, cleanup), read one from the store and
    // restored it (restore, then tools).
    miss: {
      evictMs: perMiss('evictMs'),
      snapshotMs: perMiss('snapshotMs'),
      saveMs: perMiss('saveMs'),
      loadMs: perMiss('loadMs'),
      restoreMs: perMiss('restoreMs'),
      toolsMs: perMiss('toolsMs'),
      count: misses,
    },
    hits: after.hits - before.hits,
  }
}

async function timedRun(workload, { unit, scale, minSamples }) {
  const executor = await primaryExecutor()
  await runChecked(executor, workload)
  const kind = GUEST[workload].kind
  const code = source(workload)
  // W3/W4 are in-guest loops: each sample is one run of the loop, divided by its call count,
  // because a single tool call cannot be timed from the host without the run around it.
  const result = await timeTask(workload, () => executor.run(code, kind), {
    ...BUDGET,
    ...(minSamples ? { minSamples } : {}),
    scale,
  })
  return { unit, ...result }
}

const out = { peer, quick, workloads: {} }
try {
  const start = performance.now()
  await adapter.setup()
  out.setupMs = performance.now() - start
  out.version = adapter.version()
} catch (error) {
  out.skipped = `cannot load ${peer.id} here: ${String(error?.message ?? error).split('\n')[0]}`
  log(out.skipped)
  writeFileSync(outPath, JSON.stringify(out, null, 2))
  process.exit(0)
}

const skipInQuick = heavy && quick ? ['W7', 'W10', 'W11', 'W12', 'W13'] : []
/** W14 for a peer whose adapter has no `sessions` (snapshot and restore of a live executor). */
const NO_SESSIONS = 'no snapshot and restore of a live executor in this adapter'
// W11 and W15 last: thousands of executors created and disposed move the allocator and GC state
// that every other workload would then run in (run.mjs gives each a process of its own).
const ORDER = ['W7', 'W1', 'W2', 'W3', 'W4', 'W5', 'W6', 'W8', 'W9', 'W10', 'W14', 'W12', 'W13', 'W11', 'W15']
for (const name of ORDER.filter((name) => (!only || only.includes(name)) && !except.includes(name))) {
  const workload = workloads[name]
  if (skipInQuick.includes(name)) {
    out.workloads[name] = { unsupported: 'not run with --quick: each executor takes seconds to create' }
    continue
  }
  const reason = unsupported[name] ?? (name === 'W14' && !adapter.sessions ? NO_SESSIONS : undefined)
  if (reason) {
    out.workloads[name] = { unsupported: reason }
    log(`${name}: not measured: ${reason}`)
    continue
  }
  gc()
  const before = cpuTicks()
  const started = performance.now()
  try {
    out.workloads[name] = await workload()
  } catch (error) {
    out.workloads[name] = { error: String(error?.stack ?? error) }
    log(`${name} failed:`, error)
  }
  out.workloads[name].otherCpuPct = otherCpuPercent(before, cpuTicks())
  out.workloads[name].elapsedMs = performance.now() - started
  log(name, JSON.stringify(out.workloads[name]))
}
await primary?.dispose()
writeFileSync(outPath, JSON.stringify(out, null, 2))
// Pending host timers of some peers (e.g. WASM runtimes' finalizers) must not hold the run.
process.exit(0)
