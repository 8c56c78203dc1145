// Instruction counts of this package's workloads, for comparing two builds on a busy machine
// where timings drift (CONTRIBUTING: speed claims rest on counts or same-run ratios).
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node bench/instructions.mjs <addon.node> <workload> <iterations>
//
// runs W2, W3, W4, W5 or W9 (bench/workloads.mjs) `iterations` times on one executor after one
// warm-up run. `<addon.node>` may be `entry`: the package's JS entry (index.js), whose
// SESExecutor adds the `tracer` option to the native class. Valgrind's summary line ("Collected : N") counts every thread; the cost of one
// iteration is (count at k iterations - count at 0) / k, which removes Node's start-up and the
// executor's creation. `--w5 N` sets W5's loop bound (default 300000: the full bound takes
// minutes under valgrind and says nothing more).
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'

import { W9_JS, W9_VARIABLES, guest, makeTools } from './workloads.mjs'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { w5: { type: 'string', default: '300000' } },
})
const [addon, workload, count = '1'] = positionals
if (!addon || !workload) {
  console.error('usage: node bench/instructions.mjs <addon.node> <W2|W3|W4|W5|W9> <iterations> [--w5 N]')
  process.exit(2)
}
const { SESExecutor } = createRequire(import.meta.url)(addon === 'entry' ? '../index.js' : addon)
const sources = guest(Number(values.w5))
const tools = Object.fromEntries(Object.entries(makeTools()).map(([name, tool]) => [name, tool.fn]))

const executor = await SESExecutor.create({ maxOperations: 2 ** 40, timeoutMs: 600_000 })
await executor.sendTools(tools)

async function once() {
  if (workload === 'W9') {
    await executor.sendVariables(W9_VARIABLES)
    return (await executor.run(W9_JS)).output
  }
  const { kind, js } = sources[workload]
  return (await executor.run(kind === 'async' ? `return await ${js}` : js)).output
}

await once()
for (let i = 0; i < Number(count); i++) await once()
await executor.cleanup()
