// Type-level test of the session pool, its stores (index.d.ts) and the BullMQ adapter
// (lib/bullmq.d.cts), run by `tsc -p __test__/tsconfig.json` in `npm test`.
import { FileStore, MemoryStore, SessionError, SessionPool, type CodeOutput, type SessionPoolStats, type SessionStore } from '../index.js'
import { RedisStore, SessionQueue, SessionWorker, currentToolCall, type StepOutcome, type ToolCallContext } from '../lib/bullmq.cjs'

async function pooled() {
  const store: SessionStore = Math.random() > 0.5 ? new MemoryStore() : new FileStore('/tmp/sessions', { fsync: false })
  await using pool = new SessionPool({
    maxLive: 10,
    store,
    executorOptions: { timeoutMs: 1000 },
    tools: (sessionId) => ({ whoami: () => sessionId }),
    saveAfter: 'run',
    spare: 1,
  })
  const out: CodeOutput = await pool.run('s', 'whoami()', { input: 1 })
  const resumed: CodeOutput = await pool.resume('s', { error: new Error('no') })
  const generation: number = await pool.withSession('s', async (executor, session) => {
    await executor.run('1')
    return session.save()
  })
  const stats: SessionPoolStats = pool.stats()
  const handle = pool.session('s')
  await handle.sendTools({})
  try {
    await pool.evict('s')
  } catch (error) {
    if (error instanceof SessionError && error.code === 'ERR_SESSION_CONFLICT') void error.storedGeneration
    if (error instanceof SessionError && error.code === 'ERR_SESSION_LOST') void error.expectedGeneration
  }
  return [out, resumed, generation, stats.restoreMs]
}
void pooled

async function queued() {
  const connection = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null }
  const worker = new SessionWorker({
    connection,
    tools: {
      pay: async (amount: number) => {
        const call: ToolCallContext | undefined = currentToolCall()
        return `${call?.idempotencyKey}:${amount}`
      },
    },
    workerOptions: { lockDuration: 5000 },
  })
  const queue = new SessionQueue({ connection })
  const outcome: StepOutcome = await queue.step('s', 'await pay(3)', { stepId: 'one', waitMs: 1000 })
  if (outcome.ok && outcome.paused) await queue.answer('s', outcome.stepId, true)
  if (!outcome.ok) void outcome.error.code
  const store = new RedisStore({ connection, prefix: 'app' })
  const history: Array<{ generation: number; step?: string }> = await store.history('s')
  await Promise.all([worker.close(), queue.close(), store.close()])
  return history
}
void queued
