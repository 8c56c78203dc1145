// Security suite, bad input: every public method given the wrong types, code that is
// empty, huge, binary or ill-formed UTF-16, options out of range, exotic variables, and calls in
// every state that does not allow them. Each must fail with its exact ExecutorError (or
// diagnostic) and leave the executor in a known state that still works.
import { afterAll, afterEach, describe, expect, it } from 'vitest'

import { contractOf, ExecutorError, SESExecutor, prepareProgram, rejectionOf, thrownBy, validateCode } from '../helpers'
import { Canary, type Executor, expectUsable, hostTick } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())
afterEach(async () => {
  canary.expectUntouched()
  // The host's event loop still turns.
  await hostTick()
})

const NOT_A_STRING = { rule: 'code_non_empty', severity: 'ERROR', message: 'code must be a string' }

async function ready(): Promise<Executor> {
  return SESExecutor.create({ timeoutMs: 5_000 })
}

/** `promise` rejects with `code`; the executor is then in `state` and still usable. */
async function expectRefused(executor: Executor, promise: Promise<unknown>, code: string, state: 'READY' | 'DIRTY' = 'READY') {
  const error = await rejectionOf(promise)
  expect(error).toBeInstanceOf(ExecutorError)
  expect([error.code, executor.state]).toEqual([code, state])
  await expectUsable(executor, state)
  await executor.cleanup()
  return error
}

describe('bad input: run() with code that is not a string — original', () => {
  const values: [string, unknown][] = [
    ['a number', 123],
    ['undefined', undefined],
    ['null', null],
    ['an object', { toString: () => '1' }],
    ['an array', ['1 + 1']],
    ['a symbol', Symbol('code')],
    ['a BigInt', 1n],
  ]
  for (const [name, value] of values) {
    it(`run(${name}) is ERR_VALIDATION_FAILED (code_non_empty), nothing runs`, async () => {
      const executor = await ready()
      const error = await expectRefused(executor, executor.run(value as string), 'ERR_VALIDATION_FAILED')
      expect(error.details.diagnostics).toEqual([NOT_A_STRING])
    })
  }

  it('validateCode() and prepareProgram() report code that is not a string as a diagnostic, not a napi error — original (regression)', () => {
    expect(validateCode(123 as unknown as string)).toEqual([NOT_A_STRING])
    expect(validateCode(null as unknown as string, { maxOperations: 0 }).map((d) => d.rule)).toEqual([
      'max_operations_valid',
      'code_non_empty',
    ])
    expect(prepareProgram(undefined as unknown as string)).toEqual({
      originalCode: '',
      transformedCode: '',
      diagnostics: [NOT_A_STRING],
    })
  })
})

describe('bad input: code that is empty, huge, binary or ill-formed — original', () => {
  it('empty and whitespace-only code is ERR_VALIDATION_FAILED (code_non_empty)', async () => {
    const executor = await ready()
    for (const code of ['', ' \n\t\r\n ']) {
      const error = await rejectionOf(executor.run(code))
      expect([error.code, error.details.diagnostics[0].rule]).toEqual(['ERR_VALIDATION_FAILED', 'code_non_empty'])
    }
    await expectRefused(executor, executor.run(''), 'ERR_VALIDATION_FAILED')
  })

  it('10 MB of code is ERR_VALIDATION_FAILED (code_size_valid) without being parsed', async () => {
    const executor = await ready()
    const error = await expectRefused(executor, executor.run('x;'.repeat(5 * 1024 * 1024)), 'ERR_VALIDATION_FAILED')
    expect(error.details.diagnostics).toEqual([
      expect.objectContaining({ rule: 'code_size_valid', message: 'Code is 10485760 bytes, more than the 131072 bytes one run accepts' }),
    ])
  })

  it('every byte value 0–255 as code is a syntax error with a code frame', async () => {
    const executor = await ready()
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('latin1')
    const error = await expectRefused(executor, executor.run(binary), 'ERR_VALIDATION_FAILED')
    expect(error.details.diagnostics[0]).toMatchObject({ rule: 'syntax_valid', message: 'Invalid Character `\u0000`', location: { line: 1, column: 1 } })
  })

  it('raw NUL characters in a directive, a template and a regexp run — original (regression)', async () => {
    const executor = await ready()
    expect((await executor.run("'a\u0000b'")).output).toBe('a\u0000b')
    expect((await executor.run('[`x\u0000y`, /\u0000/.test("\\0")]')).output).toEqual(['x\u0000y', true])
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('raw lone surrogates in the code become U+FFFD (code crosses as UTF-8)', async () => {
    const executor = await ready()
    expect((await executor.run("'\uD800' + '\uDC00x'")).output).toBe('\uFFFD\uFFFDx')
    await executor.cleanup()
  })

  it('a lone surrogate built by the code crosses back as U+FFFD (strings cross as UTF-8; docs/security.md "Security")', async () => {
    const executor = await ready()
    expect((await executor.run("['\\uD800', '\\uDFFFa', '\\uD83D\\uDE00']")).output).toEqual(['\uFFFD', '\uFFFDa', '😀'])
    await executor.cleanup()
  })

  it('deeply nested source (60 000 parentheses) is parsed on a deep stack and runs — original (QuickJS stack exhaustion)', async () => {
    const executor = await ready()
    const code = `${'('.repeat(60_000)}1${')'.repeat(60_000)}`
    expect((await executor.run(code)).output).toBe(1)
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })
})

describe('bad input: invalid options — original', () => {
  const rules: Record<string, string> = {
    maxOperations: 'max_operations_valid',
    timeoutMs: 'timeout_valid',
    memoryLimitBytes: 'options_valid',
    maxStackBytes: 'options_valid',
    maxLogBytes: 'options_valid',
    maxQueuedRuns: 'options_valid',
  }
  const bad: [string, unknown][] = [
    ['0', 0],
    ['-1', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a numeric string', '10'],
    ['a fraction', 1.5],
  ]
  for (const [option, numberRule] of Object.entries(rules)) {
    for (const [name, value] of bad) {
      // A value of the wrong type is options_valid's, whatever the option (docs/api.md "Options").
      const rule = typeof value === 'number' ? numberRule : 'options_valid'
      if (option === 'maxQueuedRuns' && value === 0) continue
      it(`${option}: ${name} is refused by ${rule}`, () => {
        const error = thrownBy(() => new SESExecutor({ [option]: value }))
        expect(error.code).toBe('ERR_VALIDATION_FAILED')
        const errors = (diagnostics: { rule: string; severity: string }[]) =>
          diagnostics.filter((d) => d.severity === 'ERROR').map((d) => d.rule)
        expect(errors(error.details.diagnostics)).toEqual([rule])
        expect(errors(validateCode('1', { [option]: value }))).toEqual([rule])
      })
    }
  }

  it('maxQueuedRuns: 0 is allowed (queues nothing), and maxLogBytes: 1024 is the smallest budget (spec §3.3)', async () => {
    const executor = await SESExecutor.create({ maxLogBytes: 1024, maxQueuedRuns: 0 })
    expect(contractOf(await executor.run('console.log("x".repeat(2000)); 1'))).toEqual({
      output: 1,
      logs: `${'x'.repeat(1024)}...[TRUNCATED]`,
      is_final_answer: false,
    })
    await executor.cleanup()
  })

  const others: [string, unknown, RegExp][] = [
    ['options as a string', 'fast', /options must be an object/],
    ['runConcurrency "parallel"', { runConcurrency: 'parallel' }, /runConcurrency must be "reject" or "queue", got "parallel"/],
    ['authorizedImports holding an empty name', { authorizedImports: [''] }, /authorizedImports must hold non-empty module names/],
    ['authorizedImports as a string', { authorizedImports: 'fs' }, /authorizedImports must be an array of strings/],
    ['collectConsoleLevels holding "debug"', { collectConsoleLevels: ['debug'] }, /collectConsoleLevels holds "debug"/],
  ]
  for (const [name, options, message] of others) {
    it(`${name} is refused by options_valid`, () => {
      const error = thrownBy(() => new SESExecutor(options as never))
      expect(error.code).toBe('ERR_VALIDATION_FAILED')
      expect(error.details.diagnostics[0].rule).toBe('options_valid')
      expect(error.message).toMatch(message)
    })
  }
})

describe('bad input: sendVariables() and sendTools() — original', () => {
  for (const [name, value] of [['null', null], ['a number', 5], ['an array', [1]], ['a string', 'x'], ['undefined', undefined]] as const) {
    it(`sendVariables(${name}) is ERR_VALIDATION_FAILED`, async () => {
      const executor = await ready()
      const error = await expectRefused(executor, executor.sendVariables(value as never), 'ERR_VALIDATION_FAILED')
      expect(error.message).toMatch(/variables must be an object/)
    })
    it(`sendTools(${name}) is ERR_VALIDATION_FAILED`, async () => {
      const executor = await ready()
      const error = await expectRefused(executor, executor.sendTools(value as never), 'ERR_VALIDATION_FAILED')
      expect(error.message).toMatch(/tools must be an object/)
    })
  }

  const reserved: [string, string][] = [
    ['final_answer', "the name 'final_answer' is provided by the executor"],
    ['console', "the name 'console' is provided by the executor"],
    ['__smol_guard', "the name '__smol_guard' uses the executor's internal prefix"],
    ['', "the name '' is empty"],
  ]
  for (const [name, message] of reserved) {
    it(`a tool named '${name}' is refused`, async () => {
      const executor = await ready()
      const error = await expectRefused(executor, executor.sendTools({ [name]: () => canary.secret }), 'ERR_VALIDATION_FAILED')
      expect(error.message).toBe(`Code validation failed: ${message}`)
    })
  }

  it('tools that are not functions or tool objects are refused with their path', async () => {
    const executor = await ready()
    for (const tool of [1, 'str', { forward: 1 }, null]) {
      const error = await rejectionOf(executor.sendTools({ t: tool as never }))
      expect([error.code, error.message]).toEqual([
        'ERR_VALIDATION_FAILED',
        'Code validation failed:\noptions_valid: tools.t must be a function or a tool object with a forward() method',
      ])
    }
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('variables: cyclic values keep their shape', async () => {
    const executor = await ready()
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = cyclic
    await executor.sendVariables({ cyclic })
    expect((await executor.run('[cyclic.self === cyclic, cyclic.self.self.a]')).output).toEqual([true, 1])
    await executor.cleanup()
  })

  it('variables: a throwing getter, a WeakMap, a symbol and a nested function are refused with their path', async () => {
    const executor = await ready()
    const cases: [Record<string, unknown>, string][] = [
      [{ g: { get x() { throw new Error('getter') } } }, 'variables.g.x is unreadable (reading it threw Error: getter)'],
      [{ w: new WeakMap() }, 'variables.w is a WeakMap'],
      [{ s: Symbol('s') }, 'variables.s is a symbol'],
      [{ cfg: { hooks: [{ onDone() {} }] } }, 'variables.cfg.hooks[0].onDone is a function'],
    ]
    for (const [variables, message] of cases) {
      const error = await rejectionOf(executor.sendVariables(variables))
      expect(error.code).toBe('ERR_VALIDATION_FAILED')
      expect(error.message).toBe(`Code validation failed:\noptions_valid: ${message}, which cannot be copied (values cross as structured clones)`)
    }
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('variables: class instances with private fields, BigInts and a host Proxy arrive as plain copies', async () => {
    const executor = await ready()
    class Account {
      #secret = canary.secret
      owner = 'ada'
      get secret() {
        return this.#secret
      }
    }
    const proxy = new Proxy({ a: 1 }, {})
    await executor.sendVariables({ account: new Account(), big: 2n ** 100n, proxy })
    expect((await executor.run('[account, Object.getPrototypeOf(account) === Object.prototype, big + 1n, proxy]')).output).toEqual([
      { owner: 'ada' },
      true,
      2n ** 100n + 1n,
      { a: 1 },
    ])
    await executor.cleanup()
  })

  it('variables named final_answer or with the internal prefix are refused', async () => {
    const executor = await ready()
    expect((await rejectionOf(executor.sendVariables({ final_answer: 1 }))).details).toEqual({ name: 'final_answer' })
    expect((await rejectionOf(executor.sendVariables({ __smol_guard: 1 }))).details).toEqual({ name: '__smol_guard' })
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })
})

describe('bad input: calls in every state that does not allow them — spec §4.2/§4.3', () => {
  type Method = 'init' | 'run' | 'sendVariables' | 'sendTools' | 'cleanup'
  const call = (executor: Executor, method: Method) =>
    method === 'run'
      ? executor.run('1')
      : method === 'sendVariables'
        ? executor.sendVariables({ v: 1 })
        : method === 'sendTools'
          ? executor.sendTools({ t: () => 1 })
          : executor[method]()

  /** Brings an executor into `state`; `finish` ends whatever keeps it there. */
  async function inState(state: string): Promise<{ executor: Executor; finish: () => Promise<void> }> {
    if (state === 'NEW') return { executor: new SESExecutor(), finish: async () => {} }
    if (state === 'INITIALIZING') {
      const executor = new SESExecutor()
      const init = executor.init()
      return { executor, finish: () => init.then(() => executor.cleanup()) }
    }
    const executor = await SESExecutor.create({ timeoutMs: 300, maxOperations: 1e12 })
    if (state === 'RUNNING') {
      let release: () => void = () => {}
      await executor.sendTools({ wait: () => new Promise<void>((resolve) => (release = resolve)) })
      const run = executor.run('await wait(); "done"')
      await new Promise((resolve) => setTimeout(resolve, 20))
      return {
        executor,
        finish: async () => {
          release()
          expect((await run).output).toBe('done')
          await executor.cleanup()
        },
      }
    }
    if (state === 'DIRTY') await rejectionOf(executor.run('for (;;) {}'))
    if (state === 'DEAD') await executor.cleanup()
    return { executor, finish: async () => (executor.state === 'DIRTY' ? executor.cleanup() : undefined) }
  }

  const refused: [string, Method[]][] = [
    ['NEW', ['run', 'sendVariables', 'sendTools', 'cleanup']],
    ['INITIALIZING', ['init', 'run', 'sendVariables', 'sendTools', 'cleanup']],
    ['RUNNING', ['init', 'run', 'sendVariables', 'sendTools', 'cleanup']],
    ['DIRTY', ['init', 'run', 'sendVariables', 'sendTools']],
    ['DEAD', ['run', 'sendVariables', 'sendTools']],
  ]
  for (const [state, methods] of refused) {
    for (const method of methods) {
      it(`${method}() in ${state} is ERR_INVALID_STATE and changes nothing`, async () => {
        const { executor, finish } = await inState(state)
        expect(executor.state).toBe(state)
        const refusal = call(executor, method)
        // Checked before the refusal settles: an INITIALIZING executor becomes READY soon after.
        expect(executor.state).toBe(state)
        const error = await rejectionOf(refusal)
        expect([error.code, error.details]).toEqual(['ERR_INVALID_STATE', { state, method }])
        expect(error.message).toBe(`Invalid executor state: ${state} (cannot call ${method}() in this state)`)
        if (state !== 'INITIALIZING') expect(executor.state).toBe(state)
        await finish()
      })
    }
  }

  it('cleanup() during a run is refused; the run completes and cleanup() works afterwards — original', async () => {
    const { executor, finish } = await inState('RUNNING')
    expect((await rejectionOf(executor.cleanup())).code).toBe('ERR_INVALID_STATE')
    await finish()
    expect(executor.state).toBe('DEAD')
  })
})
