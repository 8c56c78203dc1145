// Without a `tracer` option, runs report to the global tracer of
// `@opentelemetry/api` once an SDK is registered (process-wide state, hence a file of its own).
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, expect, it } from 'vitest'

import { SESExecutor } from './helpers'

afterAll(() => {
  trace.disable()
})

it('uses the global tracer once an SDK is registered, with the package as instrumentation scope', async () => {
  const ex = await SESExecutor.create()
  try {
    await ex.sendTools({ add: (a: number, b: number) => a + b })
    await ex.run('add(1, 2)')

    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    // The same executor: the global tracer is looked up per run.
    await ex.run('add(3, 4)')
    const spans = exporter.getFinishedSpans()
    expect(spans.map((span) => span.name).sort()).toEqual(['execute_tool add', 'ses_executor.run'])
    for (const span of spans) expect(span.instrumentationScope.name).toBe('@smolagents-ts/ses-executor')
  } finally {
    await ex.cleanup()
  }
})
