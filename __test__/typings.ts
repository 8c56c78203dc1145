// Type-level test of index.d.ts against the spec's contracts (§3.1, §3.2), run by
// `tsc -p __test__/tsconfig.json` in `npm test`. A wrong declaration fails compilation.
import {
  ExecutorError,
  SESExecutor,
  prepareProgram,
  validateCode,
  type CanvasImage,
  type CodeOutput,
  type Diagnostic,
  type ExecutorErrorCode,
  type ExecutorOptions,
  type ExecutorState,
  type ICodeExecutor,
  type LogEntry,
  type PreparedProgram,
  type RunOptions,
  type RunStats,
  type TraceEvent,
  CODE_AGENT_EXAMPLES,
  CODE_AGENT_SYSTEM_PROMPT,
  renderToolsPrompt,
  createRunJavaScriptTool,
  type RunJavaScriptToolResult,
  pauseRun,
  type PausedCall,
} from '../index.js'
import { trace as otelTrace, type Tracer as OtelTracer } from '@opentelemetry/api'

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<T extends true>(): T | undefined {
  return undefined
}

// §3.1 ExecutorState and ExecutorErrorCode are exactly the spec's unions, with what durable
// sessions add (docs/sessions.md): the PAUSED state and ERR_SNAPSHOT_INVALID.
assertType<Equals<ExecutorState, 'NEW' | 'INITIALIZING' | 'READY' | 'RUNNING' | 'PAUSED' | 'DIRTY' | 'DEAD'>>()
assertType<
  Equals<
    ExecutorErrorCode,
    | 'ERR_INVALID_STATE'
    | 'ERR_SES_INIT_FAILED'
    | 'ERR_VALIDATION_FAILED'
    | 'ERR_IMPORT_NOT_ALLOWED'
    | 'ERR_MAX_OPS_EXCEEDED'
    | 'ERR_EXEC_TIMEOUT'
    | 'ERR_RUNTIME_EXCEPTION'
    | 'ERR_TOOL_PROXY_FAIL'
    | 'ERR_CLEANUP_FAILED'
    | 'ERR_SNAPSHOT_INVALID'
  >
>()

// §3.1 ExecutorOptions: every spec field, with the spec's types.
const options: ExecutorOptions = {
  maxOperations: 50000,
  timeoutMs: 10000,
  runConcurrency: 'queue',
  maxQueuedRuns: 0,
  authorizedImports: ['x-ok'],
  maxLogBytes: 262144,
  collectConsoleLevels: ['log', 'info', 'warn', 'error'],
}
assertType<Equals<ExecutorOptions['runConcurrency'], 'reject' | 'queue' | undefined>>()

// §3.1 CodeOutput keeps the snake_case field.
assertType<Equals<CodeOutput['is_final_answer'], boolean>>()
assertType<Equals<CodeOutput['logs'], string>>()
assertType<Equals<CodeOutput['output'], unknown>>()

// §3.1 LogEntry, Diagnostic, PreparedProgram.
assertType<Equals<LogEntry['level'], 'log' | 'info' | 'warn' | 'error'>>()
assertType<Equals<Diagnostic['severity'], 'ERROR' | 'WARNING' | 'INFO'>>()
assertType<Equals<Diagnostic['location'], { line: number; column: number } | undefined>>()
const prepared: PreparedProgram = prepareProgram('1', options)
const diagnostics: Diagnostic[] = validateCode('1', options)
void prepared.transformedCode
void diagnostics

// §3.1 ExecutorError extends Error with the spec's fields.
declare const error: ExecutorError
const asError: Error = error
const code: ExecutorErrorCode = error.code
assertType<Equals<typeof error.severity, 'FATAL' | 'ERROR' | 'WARN'>>()
assertType<Equals<typeof error.retryable, boolean>>()
assertType<Equals<typeof error.logs, string | undefined>>()
void asError
void code

// §3.2 SESExecutor implements ICodeExecutor; create() and state are extras.
async function contract() {
  const executor: ICodeExecutor = new SESExecutor(options)
  await executor.init()
  await executor.sendVariables({ a: 1 })
  await executor.sendTools({ add: (x: unknown, y: unknown) => Number(x) + Number(y) })
  const result: CodeOutput = await executor.run('1')
  await executor.cleanup()
  const created: SESExecutor = await SESExecutor.create()
  const state: ExecutorState = created.state
  return [result, state]
}
void contract

// §10.2 extensions: optional-in-spirit fields of CodeOutput, onLog, AbortSignal, disposal.
assertType<Equals<CodeOutput['logEntries'], LogEntry[]>>()
// §8.3: a run's WARNING and INFO diagnostics reach the caller, typed as validateCode's.
assertType<Equals<CodeOutput['diagnostics'], Diagnostic[]>>()
assertType<Equals<LogEntry['ts'], string>>()
assertType<Equals<RunStats['peakHeapBytes'], number>>()
assertType<Equals<RunOptions['signal'], AbortSignal | undefined>>()
const streaming: ExecutorOptions = { onLog: (entry: LogEntry) => void entry.message }
void streaming
async function extensions() {
  await using executor = await SESExecutor.create()
  const output = await executor.run('1', { signal: AbortSignal.timeout(1000) })
  const stats: RunStats = output.stats
  return stats.wallTimeMs
}
void extensions

// Canvases drawn during a run come back as PNG images.
assertType<Equals<CodeOutput['images'], CanvasImage[]>>()
assertType<Equals<CanvasImage['mimeType'], 'image/png'>>()
assertType<Equals<CanvasImage['data'], Uint8Array>>()
assertType<Equals<ExecutorOptions['maxCanvasSize'], number | undefined>>()

// The trace of a run, streamed events, and OpenTelemetry's own Tracer as `tracer`.
assertType<Equals<CodeOutput['trace'], TraceEvent[] | undefined>>()
assertType<Equals<ExecutorError['trace'], TraceEvent[] | undefined>>()
assertType<Equals<RunOptions['trace'], boolean | undefined>>()
const otelTracer: OtelTracer = otelTrace.getTracer('typings')
const traced: ExecutorOptions = {
  trace: true,
  maxTraceBytes: 65536,
  tracer: otelTracer,
  onEvent: (event: TraceEvent) => {
    if (event.type === 'tool_call') void event.args
    if (event.type === 'run_end' && event.error) void (event.error.code satisfies ExecutorErrorCode)
  },
}
void traced

// §14: the prompt template, its examples, and tool signatures.
const prompt: string = CODE_AGENT_SYSTEM_PROMPT
const [first]: readonly [string, string, string, string] = CODE_AGENT_EXAMPLES
const signatures: string = renderToolsPrompt({ add: (a: number, b: number) => a + b })
void [prompt, first, signatures]

// Run input, timers, and the run_javascript tool.
assertType<Equals<RunOptions['input'], unknown>>()
assertType<Equals<ExecutorOptions['timers'], boolean | undefined>>()
assertType<Equals<RunStats['timersCancelled'], number | undefined>>()
async function runJavaScriptTool() {
  await using executor = await SESExecutor.create({ timers: true })
  await executor.run('input.n', { input: { n: 1 } })
  const tool = createRunJavaScriptTool(executor, { timers: true, tools: ['search'], imageDir: '/tmp' })
  const name: string = tool.definition.function.name
  const result: RunJavaScriptToolResult = await tool.execute('{"code":"1"}')
  if (result.ok) {
    const images: string[] = result.images.map((image) => ('dataUrl' in image ? image.dataUrl : image.path))
    return [name, images, result.logs]
  }
  const code: ExecutorErrorCode = result.error.code
  return [name, code, result.error.details]
}
void runJavaScriptTool

// Durable sessions (docs/sessions.md): snapshot, restore, pauseRun, resume, paused.
{
  const executor = new SESExecutor()
  assertType<Equals<ReturnType<typeof executor.snapshot>, Promise<Uint8Array>>>()
  assertType<Equals<ReturnType<typeof executor.resume>, Promise<CodeOutput>>>()
  assertType<Equals<typeof executor.paused, PausedCall | undefined>>()
  assertType<Equals<Awaited<ReturnType<typeof SESExecutor.restore>>, SESExecutor>>()
  assertType<Equals<CodeOutput['paused'], PausedCall | undefined>>()
  assertType<Equals<PausedCall['tool'], string>>()
  const asked: ReturnType<typeof pauseRun> = pauseRun({ amount: 1225 })
  void asked
  const keyed: ExecutorOptions = { snapshotKey: 'sixteen bytes at least' }
  void keyed
}
