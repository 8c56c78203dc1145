// A first run: state that persists between runs, console output, final_answer, and a
// structured error. Run it with `node examples/quickstart.mjs` after `npm install`.
import { ExecutorError, SESExecutor } from '@smolagents-ts/ses-executor'

const executor = await SESExecutor.create({ maxOperations: 10_000, timeoutMs: 2_000 })
// The spec's fields of a result; `logEntries` and `stats` are there too (README, Observability).
const show = ({ output, logs, is_final_answer }) => ({ output, logs, is_final_answer })

const step1 = await executor.run(`
  const prices: number[] = [3, 4.5, 12];
  const total = prices.reduce((sum, p) => sum + p, 0);
  console.log("items:", prices.length, { total });
  total
`)
console.log('step 1 ->', show(step1))

const step2 = await executor.run(`final_answer(\`The total is \${total}\`)`)
console.log('step 2 ->', show(step2), 'in', step2.stats.wallTimeMs.toFixed(2), 'ms')

try {
  await executor.run('while (true) {}')
} catch (error) {
  if (!(error instanceof ExecutorError)) throw error
  console.log('step 3 ->', error.code, '-', error.message)
}

await executor.cleanup()
