// `run(code, { input })` binds a copy of `input` as the global `input` for that
// run only (docs/tools.md "Run input").
import { describe, expect, it } from 'vitest'

import { executorsCleanedAfterEach, rejectionOf } from './helpers'

const executor = executorsCleanedAfterEach({ timeoutMs: 5000 })

describe('run input', () => {
  it('is a structured-clone copy bound as `input` for its run only', async () => {
    const ex = await executor()
    const input = { rows: [1, 2], when: new Date(0), tags: new Set(['a']), big: 10n }
    const result = await ex.run(
      'input.rows.push(3); [input.rows.length, input.when.getTime(), input.tags.has("a"), input.big + 1n]',
      { input },
    )
    expect(result.output).toEqual([3, 0, true, 11n])
    // The caller's value is untouched; the next run has no input.
    expect(input.rows).toEqual([1, 2])
    expect((await ex.run('typeof input')).output).toBe('undefined')
    const error = await rejectionOf(ex.run('input'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.message).toContain('input')
  })

  it('stays bound across awaits of its run, and a present `undefined` is still a binding', async () => {
    const ex = await executor()
    expect((await ex.run('await null; await Promise.resolve(); input.n * 2', { input: { n: 21 } })).output).toBe(42)
    expect((await ex.run('[typeof input, "input" in globalThis]', { input: undefined })).output).toEqual(['undefined', true])
  })

  it('refuses a value that cannot be copied, naming the path, before any code runs', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('globalThis.ran = true', { input: { ok: 1, callback: () => 1 } }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.details.path).toBe('input.callback')
    expect((await ex.run('typeof ran')).output).toBe('undefined')
    expect(ex.state).toBe('READY')
  })

  it('refuses to bind over a name the sandbox already holds', async () => {
    const ex = await executor()
    await ex.run('const input = "mine"')
    const error = await rejectionOf(ex.run('1', { input: 2 }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toContain("declared 'input' with let, const or class")
    expect((await ex.run('input')).output).toBe('mine')

    const other = await executor()
    await other.sendVariables({ input: 'variable' })
    expect((await rejectionOf(other.run('1', { input: 2 }))).message).toContain("already has a global named 'input'")
    expect((await other.run('input')).output).toBe('variable')
  })
})
