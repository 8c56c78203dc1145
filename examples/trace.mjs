// What one agent step did, call by call: the run's trace (docs/tracing.md "Tracing: what a run did").
// Events stream to `onEvent` while the step runs; `output.trace` holds them all at the end.
// Run it with `node examples/trace.mjs` after `npm install`.
import { SESExecutor } from '@smolagents-ts/ses-executor'

const executor = await SESExecutor.create({
  trace: true,
  onEvent: (event) => console.log(`  live: ${event.type.padEnd(12)} +${event.at.toFixed(2)} ms`),
})
await executor.sendTools({
  search: (query, { limit }) => Array.from({ length: limit }, (_, i) => `https://example.com/${query}/${i}`),
  fetchPage: async (url) => {
    await new Promise((resolve) => setTimeout(resolve, 25))
    return `<title>${url}</title>`
  },
  translate: () => {
    throw new Error('translation service unavailable')
  },
})

const { output, trace } = await executor.run(`
const urls = search("lyon", { limit: 2 })
console.log("found", urls.length)
const page = await fetchPage(urls[0])
let title
try { title = translate(page) } catch { title = page }
final_answer(title)
`)

console.log('output:', output)
for (const event of trace) {
  const at = `+${event.at.toFixed(2).padStart(6)} ms`
  if (event.type === 'tool_call') console.log(at, `call #${event.call} ${event.tool}(${JSON.stringify(event.args).slice(1, -1)}) at line ${event.line}`)
  else if (event.type === 'tool_result') console.log(at, `  #${event.call} ${event.ok ? `-> ${JSON.stringify(event.result)}` : `threw ${event.error.message}`} in ${event.durationMs.toFixed(2)} ms${event.async ? ' (async)' : ''}`)
  else if (event.type === 'run_end') console.log(at, `run_end: ${event.outcome}, ${event.toolCalls} tool calls, peak heap ${event.peakHeapBytes} bytes`)
  else console.log(at, event.type)
}
await executor.cleanup()
