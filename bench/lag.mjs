// W6's measure, shared by the workload (child.mjs) and the machine's floor (floors.mjs), so that
// both read Node's event-loop lag the same way.

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
