// Spec §8.3 (WARNING and INFO diagnostics reach the caller) and §8.2's "Depends" rows of
// `retryable`; and endowments that a top-level binding of an earlier run would hide.
import { afterEach, describe, expect, it } from 'vitest'

import { rejectionOf, SESExecutor } from './helpers'

const executors: Array<InstanceType<typeof SESExecutor>> = []
async function fresh(options = {}) {
  const executor = await SESExecutor.create(options)
  executors.push(executor)
  return executor
}
afterEach(async () => {
  await Promise.all(executors.splice(0).map((executor) => executor.cleanup()))
})

describe('§8.3: diagnostics of a run reach the caller', () => {
  it('a WARNING of the code comes back with a successful run', async () => {
    const executor = await fresh()
    const result = await executor.run('let r; try { process.env } catch { r = "no process" } r')
    expect(result.output).toBe('no process')
    expect(result.diagnostics.map((d) => [d.rule, d.severity])).toEqual([['forbidden_global_access', 'WARNING']])
    expect(result.diagnostics[0].location).toEqual({ line: 1, column: 14 })
  })

  it('an INFO about the options comes back with every run', async () => {
    const executor = await fresh({ maxLogBytes: 100 })
    const result = await executor.run('1')
    expect(result.diagnostics.map((d) => [d.rule, d.severity])).toEqual([['log_budget_too_small', 'INFO']])
  })

  it('a run with nothing to note has no diagnostics', async () => {
    const executor = await fresh()
    expect((await executor.run('1 + 1')).diagnostics).toEqual([])
  })

  it('a run that fails carries its warnings in details.diagnostics', async () => {
    const executor = await fresh()
    const error = await rejectionOf(executor.run('require("fs")'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect((error.details.diagnostics as Array<{ rule: string }>).map((d) => d.rule)).toEqual(['forbidden_global_access'])
  })
})

describe('§8.2: retryable follows the Depends rows', () => {
  it('a runtime exception of the code is retryable', async () => {
    const executor = await fresh()
    const error = await rejectionOf(executor.run('null.x'))
    expect([error.code, error.retryable]).toEqual(['ERR_RUNTIME_EXCEPTION', true])
  })

  it('a tool failure is retryable unless the tool’s error says retryable: false', async () => {
    const executor = await fresh()
    await executor.sendTools({
      flaky: () => {
        throw new Error('busy, try later')
      },
      denied: async () => {
        throw Object.assign(new Error('not allowed'), { retryable: false })
      },
    })
    const flaky = await rejectionOf(executor.run('flaky()'))
    expect([flaky.code, flaky.retryable]).toEqual(['ERR_TOOL_PROXY_FAIL', true])
    const denied = await rejectionOf(executor.run('await denied()'))
    expect([denied.code, denied.retryable]).toEqual(['ERR_TOOL_PROXY_FAIL', false])
  })

  it('a tool result the sandbox cannot receive is the host’s fault, not retryable', async () => {
    const executor = await fresh()
    await executor.sendTools({ gives: () => () => 'a function' })
    const error = await rejectionOf(executor.run('gives()'))
    expect([error.code, error.retryable]).toEqual(['ERR_TOOL_PROXY_FAIL', false])
  })
})

describe('tools and variables a top-level binding would hide', () => {
  it('sendTools and sendVariables refuse a name an earlier run declared with let, const or class', async () => {
    const executor = await fresh()
    await executor.run('let search = "mine"; const state = 1; class Helper {}')
    const tool = await rejectionOf(executor.sendTools({ search: () => 'tool' }))
    expect(tool.code).toBe('ERR_VALIDATION_FAILED')
    expect(tool.message).toMatch(/declared 'search' with let, const or class/)
    const variable = await rejectionOf(executor.sendVariables({ state: 2 }))
    expect(variable.message).toMatch(/variable 'state' cannot be set/)
    expect((await executor.run('[search, state]')).output).toEqual(['mine', 1])
  })
})
