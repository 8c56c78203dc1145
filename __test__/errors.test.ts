// Spec §8 (error model), §9.3 / §9.5, CF-08, CF-09; docs/contract.md "Errors".
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ExecutorError, SESExecutor, rejectionOf, thrownBy } from './helpers'

let executor: InstanceType<typeof SESExecutor>
beforeAll(async () => {
  executor = await SESExecutor.create({ maxOperations: 1000 })
})
afterAll(async () => {
  await executor.cleanup()
})

describe('CF-08 non-tool runtime exception maps to ERR_RUNTIME_EXCEPTION', () => {
  it('CF-08 throw new Error("x"): ERR_RUNTIME_EXCEPTION and state back to READY', async () => {
    const error = await rejectionOf(executor.run('throw new Error("x")'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(executor.state).toBe('READY')
  })

  it('CF-08 undefined variable access: ERR_RUNTIME_EXCEPTION and state back to READY', async () => {
    const error = await rejectionOf(executor.run('notDefinedAnywhere + 1'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(executor.state).toBe('READY')
  })
})

describe('the thrown value\'s type as data (details.errorName)', () => {
  it('names the class of a thrown error, as the message starts with it', async () => {
    for (const [code, name] of [
      ['notDefinedAnywhere + 1', 'ReferenceError'],
      ['null.x', 'TypeError'],
      ['new Array(-1)', 'RangeError'],
      ['throw new SyntaxError("s")', 'SyntaxError'],
      ['eval("1")', 'EvalError'],
      ['throw new URIError("u")', 'URIError'],
      ['throw new AggregateError([], "a")', 'AggregateError'],
      ['class QuotaError extends Error { name = "QuotaError" }\nthrow new QuotaError("over")', 'QuotaError'],
      ['class Plain extends Error {}\nthrow new Plain("p")', 'Error'],
      ['await Promise.reject(new TypeError("later"))', 'TypeError'],
    ]) {
      const error = await rejectionOf(executor.run(code))
      expect(error.code, code).toBe('ERR_RUNTIME_EXCEPTION')
      expect(error.details.errorName, code).toBe(name)
      expect(error.message, code).toMatch(new RegExp(`^Runtime exception: ${name}\\b`))
    }
  })

  it('is absent when what was thrown is no error', async () => {
    for (const code of ['throw "text"', 'throw 42', 'throw { name: "TypeError" }', 'await new Promise(() => {})']) {
      const error = await rejectionOf(executor.run(code))
      expect(error.code, code).toBe('ERR_RUNTIME_EXCEPTION')
      expect(error.details, code).not.toHaveProperty('errorName')
    }
  })
})

describe('CF-09 max operations identified structurally', () => {
  it('CF-09 while(true){} with a small maxOperations fails with code ERR_MAX_OPS_EXCEEDED', async () => {
    const error = await rejectionOf(executor.run('while(true){}'))
    // §9.8: assert the structured code, never a message substring.
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    expect(error).toBeInstanceOf(ExecutorError)
    expect(error.details).toEqual({ maxOperations: 1000 })
    expect(executor.state).toBe('READY')
  })

  it('a try/catch inside the loop cannot swallow the guard', async () => {
    const code = 'let n = 0;\nwhile (true) { try { n++ } catch (e) { console.log("caught", e) } }'
    const error = await rejectionOf(executor.run(code))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    expect(error.logs).toBe('')
  })

  it('catching around the loop does not let the run go on', async () => {
    const code = 'try { for (;;) {} } catch (e) { console.log("recovered") }\n"finished"'
    const error = await rejectionOf(executor.run(code))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    expect(error.logs).toBe('')
  })

  it('counts loop iterations in nested functions and callbacks too', async () => {
    const error = await rejectionOf(executor.run('function spin() { let i = 0; do { i++ } while (i >= 0) }\n[1].forEach(spin)'))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
  })

  it('the count starts again at zero on the next run', async () => {
    const bounded = 'let s = 0; for (let i = 0; i < 900; i++) s++; s'
    expect((await executor.run(bounded)).output).toBe(900)
    expect((await executor.run(bounded)).output).toBe(900)
  })
})

describe('every ExecutorError field (§3.1, §8.1, §8.2)', () => {
  it('a runtime error carries code, severity, retryable, message, details and logs', async () => {
    const error = await rejectionOf(executor.run('console.log("step 1");\nconst o = {};\no.missing()'))
    expect(error).toBeInstanceOf(ExecutorError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('ExecutorError')
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.severity).toBe('ERROR')
    expect(error.retryable).toBe(true)
    expect(error.message).toBe('Runtime exception: TypeError: not a function (line 3: o.missing())')
    expect(error.details).toEqual({ line: 3, column: expect.any(Number), sourceLine: 'o.missing()', errorName: 'TypeError' })
    expect(error.logs).toBe('step 1')
    expect(error.stack).toContain('ExecutorError: Runtime exception')
  })

  it('a validation error lists each error as line:col rule: message with a code frame', async () => {
    const error = await rejectionOf(executor.run('const ok = 1;\nconst broken = ;'))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.severity).toBe('ERROR')
    expect(error.retryable).toBe(true)
    expect(error.message).toBe(
      'Code validation failed:\n2:16 syntax_valid: Unexpected token\n2 | const broken = ;\n  |                ^',
    )
    expect(error.details.diagnostics).toEqual([
      {
        rule: 'syntax_valid',
        severity: 'ERROR',
        message: 'Unexpected token',
        location: { line: 2, column: 16 },
        codeFrame: '2 | const broken = ;\n  |                ^',
      },
    ])
    expect(error.logs).toBeUndefined()
  })

  it('empty code is refused by code_non_empty', async () => {
    const error = await rejectionOf(executor.run('   \n'))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect((error.details.diagnostics as { rule: string }[])[0].rule).toBe('code_non_empty')
  })

  it('code that is not a string is refused the same way', async () => {
    const error = await rejectionOf(executor.run(42 as unknown as string))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
  })

  it('an invalid option throws from the constructor with its rule', () => {
    const error = thrownBy(() => new SESExecutor({ maxOperations: -1 }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.severity).toBe('ERROR')
    expect((error.details.diagnostics as { rule: string }[]).map((d) => d.rule)).toEqual(['max_operations_valid'])
  })

  it('an option of the wrong type names the option', () => {
    const error = thrownBy(() => new SESExecutor({ timeoutMs: '100' as unknown as number }))
    expect(error.message).toBe('Code validation failed:\noptions_valid: timeoutMs must be a number')
  })

  it('timeouts carry ERR_EXEC_TIMEOUT, the limit and the logs so far', async () => {
    const slow = await SESExecutor.create({ timeoutMs: 30, maxOperations: 1e12 })
    const error = await rejectionOf(slow.run('console.log("started"); while (true) {}'))
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(error.message).toBe('Execution timed out after 30ms')
    expect(error.details).toEqual({ timeoutMs: 30, reason: 'timeout' })
    expect(error.logs).toBe('started')
    expect(slow.state).toBe('DIRTY')
    await slow.cleanup()
  })
})

describe('runtime errors name the user’s own line (docs/contract.md "Errors")', () => {
  it('points at the line in the original code, not the rewritten one', async () => {
    const code = ['const items = [1, 2, 3];', 'for (const i of items) {', '  if (i === 2) {', '    i.toFixed.call(null);', '  }', '}'].join('\n')
    const error = await rejectionOf(executor.run(code))
    expect(error.details.line).toBe(4)
    expect(error.details.sourceLine).toBe('i.toFixed.call(null);')
  })

  it('points at the right line in TypeScript input', async () => {
    const code = 'interface A { x: number }\nconst a: A = { x: 1 };\n\nthrow new RangeError("bad " + a.x)'
    const error = await rejectionOf(executor.run(code))
    expect(error.message).toBe('Runtime exception: RangeError: bad 1 (line 4: throw new RangeError("bad " + a.x))')
    expect(error.details.line).toBe(4)
  })

  it('points at the right line after CRLF line ends and non-ASCII text', async () => {
    const error = await rejectionOf(executor.run('const greeting = "héllo 😀";\r\nconst copy = greeting;\r\nnull.boom'))
    expect(error.details.line).toBe(3)
    expect(error.details.sourceLine).toBe('null.boom')
  })

  it('a thrown non-Error value is described like Node does', async () => {
    const error = await rejectionOf(executor.run('throw "plain string"'))
    expect(error.message).toBe("Runtime exception: Uncaught 'plain string'")
  })
})
