// Spec §4 (lifecycle and state machine), §9.1, CF-01.
import { afterEach, describe, expect, it } from 'vitest'

import { contractOf, ExecutorError, rejectionOf, SESExecutor } from './helpers'

const live: InstanceType<typeof SESExecutor>[] = []
function track(executor: InstanceType<typeof SESExecutor>) {
  live.push(executor)
  return executor
}
afterEach(async () => {
  for (const executor of live.splice(0)) {
    if (executor.state === 'READY' || executor.state === 'DIRTY') await executor.cleanup()
  }
})

/** An executor whose runs time out quickly on a CPU loop (the interrupt deadline). */
async function dirtyExecutor() {
  const executor = track(new SESExecutor({ timeoutMs: 50, maxOperations: 1e12 }))
  await executor.init()
  const error = await rejectionOf(executor.run('while (true) {}'))
  expect(error.code).toBe('ERR_EXEC_TIMEOUT')
  return executor
}

describe('CF-01 lifecycle loop NEW -> init -> READY -> cleanup -> DEAD -> init -> READY', () => {
  it('CF-01 passes with the exact assertions of §9.8', async () => {
    const executor = track(new SESExecutor())
    expect(executor.state).toBe('NEW')
    await executor.init()
    expect(executor.state).toBe('READY')
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
    await executor.init()
    expect(executor.state).toBe('READY')
  })
})

describe('§4.2 transitions, row by row', () => {
  it('NEW --init() begin--> INITIALIZING --success--> READY', async () => {
    const executor = track(new SESExecutor())
    const init = executor.init()
    expect(executor.state).toBe('INITIALIZING')
    await init
    expect(executor.state).toBe('READY')
  })

  it('DEAD --init() begin--> INITIALIZING, rebuilt from nothing', async () => {
    const executor = track(await SESExecutor.create())
    await executor.run('var leftover = 1; globalThis.mark = 2')
    await executor.cleanup()
    const init = executor.init()
    expect(executor.state).toBe('INITIALIZING')
    await init
    const { output } = await executor.run('[typeof leftover, typeof mark]')
    expect(output).toEqual(['undefined', 'undefined'])
  })

  it('INITIALIZING --fail--> DEAD with ERR_SES_INIT_FAILED', async () => {
    // 64 KiB cannot hold a QuickJS context, so building the sandbox fails.
    const executor = track(new SESExecutor({ memoryLimitBytes: 65536 }))
    const error = await rejectionOf(executor.init())
    expect(error.code).toBe('ERR_SES_INIT_FAILED')
    expect(error.severity).toBe('FATAL')
    expect(error.retryable).toBe(false)
    expect(executor.state).toBe('DEAD')
  })

  it('READY --init()--> READY (no-op, idempotent)', async () => {
    const executor = track(await SESExecutor.create())
    await executor.run('var kept = 7')
    await executor.init()
    expect(executor.state).toBe('READY')
    expect((await executor.run('kept')).output).toBe(7)
  })

  it('READY --run() start--> RUNNING --success--> READY', async () => {
    const executor = track(await SESExecutor.create())
    const run = executor.run('1 + 1')
    expect(executor.state).toBe('RUNNING')
    expect((await run).output).toBe(2)
    expect(executor.state).toBe('READY')
  })

  it('RUNNING --recoverable failure--> READY', async () => {
    const executor = track(await SESExecutor.create())
    const run = executor.run('throw new Error("boom")')
    expect(executor.state).toBe('RUNNING')
    expect((await rejectionOf(run)).code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(executor.state).toBe('READY')
  })

  it('RUNNING --timeout--> DIRTY', async () => {
    const executor = await dirtyExecutor()
    expect(executor.state).toBe('DIRTY')
  })

  it('DIRTY --cleanup()--> DEAD, and init() then recovers', async () => {
    const executor = await dirtyExecutor()
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
    await executor.init()
    const result = await executor.run('final_answer("ok")')
    expect(contractOf(result)).toEqual({ output: 'ok', logs: '', is_final_answer: true })
  })

  it('READY --cleanup()--> DEAD', async () => {
    const executor = track(await SESExecutor.create())
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
  })

  it('DEAD --cleanup()--> DEAD (no-op, idempotent)', async () => {
    const executor = track(await SESExecutor.create())
    await executor.cleanup()
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
  })
})

describe('illegal calls throw ERR_INVALID_STATE naming the state', () => {
  async function expectInvalid(promise: Promise<unknown>, state: string, method: string) {
    expectInvalidError(await rejectionOf(promise), state, method)
  }
  function expectInvalidError(error: InstanceType<typeof ExecutorError>, state: string, method: string) {
    expect(error).toBeInstanceOf(ExecutorError)
    expect(error.code).toBe('ERR_INVALID_STATE')
    expect(error.message).toBe(`Invalid executor state: ${state} (cannot call ${method}() in this state)`)
    expect(error.details).toEqual({ state, method })
    expect(error.retryable).toBe(false)
  }

  it('run() and cleanup() on NEW', async () => {
    const executor = track(new SESExecutor())
    await expectInvalid(executor.run('1'), 'NEW', 'run')
    await expectInvalid(executor.cleanup(), 'NEW', 'cleanup')
    expect(executor.state).toBe('NEW')
  })

  it('init(), run() and cleanup() while INITIALIZING', async () => {
    const executor = track(new SESExecutor())
    const init = executor.init()
    // Handlers are attached at once: the calls are refused before anything is awaited.
    const [init_, run_, cleanup_] = await Promise.all(
      [executor.init(), executor.run('1'), executor.cleanup()].map(rejectionOf),
    )
    expectInvalidError(init_, 'INITIALIZING', 'init')
    expectInvalidError(run_, 'INITIALIZING', 'run')
    expectInvalidError(cleanup_, 'INITIALIZING', 'cleanup')
    await init
    expect(executor.state).toBe('READY')
  })

  it('init(), run() and cleanup() while RUNNING', async () => {
    const executor = track(await SESExecutor.create())
    const run = executor.run('let s = 0; for (let i = 0; i < 20000; i++) s += i; s')
    // Handlers are attached at once: the calls are refused before anything is awaited.
    const [init_, run_, cleanup_] = await Promise.all(
      [executor.init(), executor.run('1'), executor.cleanup()].map(rejectionOf),
    )
    expectInvalidError(init_, 'RUNNING', 'init')
    expectInvalidError(run_, 'RUNNING', 'run')
    expectInvalidError(cleanup_, 'RUNNING', 'cleanup')
    expect((await run).output).toBe(199990000)
  })

  it('init() and run() on DIRTY', async () => {
    const executor = await dirtyExecutor()
    await expectInvalid(executor.init(), 'DIRTY', 'init')
    await expectInvalid(executor.run('1'), 'DIRTY', 'run')
    expect(executor.state).toBe('DIRTY')
  })

  it('run() on DEAD', async () => {
    const executor = track(await SESExecutor.create())
    await executor.cleanup()
    await expectInvalid(executor.run('1'), 'DEAD', 'run')
  })
})

describe('SESExecutor.create()', () => {
  it('returns an executor that is already READY (CodeAgent never calls init())', async () => {
    const executor = track(await SESExecutor.create({ maxOperations: 10 }))
    expect(executor).toBeInstanceOf(SESExecutor)
    expect(executor.state).toBe('READY')
    expect((await executor.run('"ready"')).output).toBe('ready')
  })

  it('rejects with the options error when an option is invalid', async () => {
    const error = await rejectionOf(SESExecutor.create({ timeoutMs: 0 }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
  })
})
