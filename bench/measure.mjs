// Timing, statistics and noise for one peer's child process.
import { readFileSync } from 'node:fs'
import { Bench } from 'tinybench'

/**
 * CPU time in clock ticks: every core's busy and total time (/proc/stat) and this process's own
 * (/proc/self/stat, all its threads). Their difference over a workload is what other processes
 * used meanwhile: the noise. Linux only; elsewhere noise is not reported.
 */
export function cpuTicks() {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu.map(Number)
    const busy = user + nice + system + irq + softirq + steal
    // The command name in parentheses may contain spaces: fields are counted after it.
    const self = readFileSync('/proc/self/stat', 'utf8')
    const fields = self.slice(self.lastIndexOf(')') + 2).split(' ')
    const own = Number(fields[11]) + Number(fields[12])
    return { busy, total: busy + idle + iowait, own }
  } catch {
    return null
  }
}

/** The share (0..100 %) of the whole machine's CPU time that other processes used. */
export function otherCpuPercent(before, after) {
  if (!before || !after || after.total === before.total) return null
  const others = after.busy - before.busy - (after.own - before.own)
  return Math.max(0, (100 * others) / (after.total - before.total))
}

/** Median and 95th percentile of `values` (any order), nearest-rank. */
export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]
  return { median: rank(0.5), p95: rank(0.95), samples: sorted.length }
}

/**
 * Times `fn` with tinybench: a calibration call (also a warm-up) sizes the sample count to the
 * time budget within [minSamples, maxSamples]; tinybench then warms up and records each call.
 * `scale` converts a call's milliseconds to the workload's unit (e.g. µs per tool call).
 */
export async function timeTask(name, fn, { budgetMs, minSamples, maxSamples, scale, hooks = {} }) {
  await hooks.beforeEach?.()
  const start = performance.now()
  await fn()
  const once = Math.max(performance.now() - start, 0.001)
  await hooks.afterEach?.()
  const iterations = Math.round(Math.min(maxSamples, Math.max(minSamples, budgetMs / once)))
  const bench = new Bench({
    name,
    time: 0,
    iterations,
    warmupTime: 0,
    warmupIterations: Math.min(5, Math.ceil(iterations / 4)),
    retainSamples: true,
    throws: true,
  })
  // `async: true`: tinybench must await each call (a plain arrow returning a Promise would
  // otherwise be taken for a sync task).
  bench.add(name, fn, { ...hooks, async: true })
  await bench.run()
  const { latency } = bench.tasks[0].result
  return summarize([...latency.samples].map((ms) => ms * scale))
}

/** This process's resident set in MiB. */
export function rssMiB() {
  return process.memoryUsage().rss / 2 ** 20
}

/** This process's OS threads (/proc/self/status), or null where that cannot be read. */
export function osThreads() {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1])
  } catch {
    return null
  }
}
