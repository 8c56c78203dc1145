// Option values (all but maxStackBytes' stack sizing, in limits.test.ts): no option value crashes the process
// or is accepted wrongly. Every numeric option against 0, 1, -1, a fraction, NaN, ±Infinity,
// 2^53, a numeric string, an object whose valueOf throws, a BigInt, a boolean and null; an
// options object whose getters throw. Each value is either refused with ERR_VALIDATION_FAILED
// naming the option and its rule, or accepted and the executor built with it runs code.
import { describe, expect, it } from 'vitest'

import { ExecutorError, SESExecutor, thrownBy, validateCode } from '../helpers'

/** The values every numeric option is tried with. */
const VALUES: [string, unknown][] = [
  ['0', 0],
  ['1', 1],
  ['-1', -1],
  ['1.5', 1.5],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['2^53', 2 ** 53],
  ['"10"', '10'],
  ['an object whose valueOf throws', { valueOf: () => { throw new Error('valueOf') } }],
  ['10n', 10n],
  ['true', true],
  ['null', null],
]

/** Each numeric option: its rule, the smallest value it takes, and a run that shows it works. */
const OPTIONS: Record<string, { rule: string; min: number; check?: (executor: InstanceType<typeof SESExecutor>) => Promise<void> }> = {
  maxOperations: { rule: 'max_operations_valid', min: 1 },
  timeoutMs: { rule: 'timeout_valid', min: 1 },
  maxQueuedRuns: { rule: 'options_valid', min: 0 },
  maxLogBytes: { rule: 'options_valid', min: 1024 },
  memoryLimitBytes: { rule: 'options_valid', min: 65536 },
  maxStackBytes: { rule: 'options_valid', min: 16384 },
  maxValueBytes: { rule: 'options_valid', min: 1024 },
}

/** Whether `value` is a whole number the option takes (at least `min`, at most 2^53 - 1). */
function accepted(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min
}

function message(option: string, value: unknown, min: number): string {
  if (typeof value !== 'number') return `${option} must be a number`
  const shown = Number.isNaN(value) ? 'NaN' : value === Infinity ? 'Infinity' : value === -Infinity ? '-Infinity' : String(value)
  return `${option} must be an integer >= ${min}, got ${shown}`
}

describe('class 2: every numeric option against every kind of value', () => {
  for (const [option, { rule, min }] of Object.entries(OPTIONS)) {
    for (const [name, value] of VALUES) {
      if (accepted(value, min)) {
        it(`${option}: ${name} is accepted, and an executor with it runs code`, async () => {
          const executor = await SESExecutor.create({ [option]: value, timeoutMs: option === 'timeoutMs' ? (value as number) : 10_000 })
          const outcome = await executor.run('[1, 2, 3].length').then(
            (result) => result.output,
            (error: InstanceType<typeof ExecutorError>) => error.code,
          )
          // maxOperations: 1 leaves room for no loop at all; timeoutMs: 1 may pass before code runs.
          expect([3, 'ERR_EXEC_TIMEOUT']).toContain(outcome)
          expect(['READY', 'DIRTY']).toContain(executor.state)
          await executor.cleanup()
          expect(executor.state).toBe('DEAD')
        })
      } else {
        const expectedRule = typeof value === 'number' ? rule : 'options_valid'
        it(`${option}: ${name} is refused by ${expectedRule}, naming the option`, async () => {
          const error = thrownBy(() => new SESExecutor({ [option]: value }))
          expect(error.code).toBe('ERR_VALIDATION_FAILED')
          const errors = error.details.diagnostics.filter((d: { severity: string }) => d.severity === 'ERROR')
          expect(errors.map((d: { rule: string; message: string }) => [d.rule, d.message])).toEqual([
            [expectedRule, message(option, value, min)],
          ])
          // The same from create() (a rejection, never a synchronous throw) and validateCode().
          const created = await SESExecutor.create({ [option]: value }).then(
            () => 'created',
            (rejected: InstanceType<typeof ExecutorError>) => rejected.code,
          )
          expect(created).toBe('ERR_VALIDATION_FAILED')
          expect(validateCode('1', { [option]: value } as never).filter((d) => d.severity === 'ERROR').map((d) => d.rule)).toEqual([expectedRule])
        })
      }
    }
  }
})

describe('class 2: limits at the edge of what each option means', () => {
  it('timeoutMs: 2^53 - 1 (the largest accepted) runs code and never overflows the deadline', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 2 ** 53 - 1 })
    expect((await executor.run('let n = 0; for (let i = 0; i < 100; i++) n += i; n')).output).toBe(4950)
    await executor.cleanup()
  })

  it('maxOperations: 2^53 - 1 and maxQueuedRuns: 2^53 - 1 are accepted and behave', async () => {
    const executor = await SESExecutor.create({ maxOperations: 2 ** 53 - 1, runConcurrency: 'queue', maxQueuedRuns: 2 ** 53 - 1 })
    const runs = await Promise.all([executor.run('1'), executor.run('2'), executor.run('3')])
    expect(runs.map((run) => run.output)).toEqual([1, 2, 3])
    await executor.cleanup()
  })

  it('memoryLimitBytes: 65536 (the smallest accepted) fails init() with ERR_SES_INIT_FAILED, never a crash', async () => {
    const executor = new SESExecutor({ memoryLimitBytes: 65536 })
    const error = await executor.init().then(
      () => undefined,
      (rejected: InstanceType<typeof ExecutorError>) => rejected,
    )
    expect(error?.code).toBe('ERR_SES_INIT_FAILED')
    expect(executor.state).toBe('DEAD')
  })

  it('maxLogBytes: 1024 is the smallest budget (spec §3.3), with the INFO log_budget_too_small below 16 KiB', () => {
    expect(thrownBy(() => new SESExecutor({ maxLogBytes: 1023 })).details.diagnostics).toEqual([
      expect.objectContaining({ rule: 'options_valid', message: 'maxLogBytes must be an integer >= 1024, got 1023' }),
    ])
    expect(validateCode('1', { maxLogBytes: 1024 })).toEqual([
      expect.objectContaining({ rule: 'log_budget_too_small', severity: 'INFO', message: 'maxLogBytes is 1024, below the recommended minimum of 16384; logs will be truncated early' }),
    ])
    expect(validateCode('1', { maxLogBytes: 16384 })).toEqual([])
  })

  it('every problem of one options object is reported, not just the first', () => {
    const error = thrownBy(() => new SESExecutor({ maxOperations: 0, timeoutMs: Number.NaN, maxLogBytes: 1, maxValueBytes: 1.5 }))
    expect(error.details.diagnostics.map((d: { rule: string }) => d.rule)).toEqual([
      'max_operations_valid',
      'timeout_valid',
      'options_valid',
      'options_valid',
    ])
  })
})

describe('class 2: an options object whose reads throw', () => {
  it('a getter that throws is refused as options_valid naming the option (not thrown as the getter\'s own error)', async () => {
    const options = { get maxOperations(): number { throw new TypeError('getter') } }
    const error = thrownBy(() => new SESExecutor(options))
    expect([error.code, error.message]).toEqual([
      'ERR_VALIDATION_FAILED',
      'Code validation failed:\noptions_valid: maxOperations cannot be read (reading it threw TypeError: getter)',
    ])
    const rejected = await SESExecutor.create(options).catch((caught: unknown) => caught)
    expect(rejected).toBeInstanceOf(ExecutorError)
    expect(validateCode('1', options as never)).toEqual([
      expect.objectContaining({ rule: 'options_valid', message: 'maxOperations cannot be read (reading it threw TypeError: getter)' }),
    ])
  })

  it('a Proxy whose traps throw is refused the same way, by new, create() and validateCode()', async () => {
    const proxy = new Proxy({}, { get: () => { throw Symbol('trap') } })
    expect(thrownBy(() => new SESExecutor(proxy)).message).toBe(
      'Code validation failed:\noptions_valid: maxOperations cannot be read (reading it threw Symbol(trap))',
    )
    expect(await SESExecutor.create(proxy).catch((caught: InstanceType<typeof ExecutorError>) => caught.code)).toBe('ERR_VALIDATION_FAILED')
    // validateCode reads the options, then toolNames: both reads are refused, both reported.
    expect(validateCode('1', proxy as never).map((d) => [d.rule, d.message])).toEqual([
      ['options_valid', 'maxOperations cannot be read (reading it threw Symbol(trap))'],
      ['options_valid', 'toolNames cannot be read (reading it threw Symbol(trap))'],
    ])
  })

  it('an array option whose element getter throws is refused naming the element', () => {
    const levels = ['log']
    Object.defineProperty(levels, 0, { get: () => { throw new Error('element') } })
    expect(thrownBy(() => new SESExecutor({ collectConsoleLevels: levels as never })).message).toBe(
      'Code validation failed:\noptions_valid: collectConsoleLevels[0] cannot be read (reading it threw Error: element)',
    )
  })
})
