// Spec §6 (validation and instrumentation), §8.3, Appendix B: every rule through validateCode,
// prepareProgram's output, and attempts to get around the loop guard.
import { describe, expect, it } from 'vitest'

import { SESExecutor, prepareProgram, rejectionOf, validateCode } from './helpers'

const rules = (code: string, options = {}) => validateCode(code, options).map((d) => `${d.severity} ${d.rule}`)

describe('Appendix B rules through validateCode', () => {
  it('code_non_empty: empty or blank code is an ERROR; any statement passes', () => {
    expect(rules('')).toEqual(['ERROR code_non_empty'])
    expect(rules(' \n\t ')).toEqual(['ERROR code_non_empty'])
    expect(rules(';')).toEqual([])
  })

  it('syntax_valid: every error oxc reports, at the user’s line and column, with a code frame', () => {
    const [diagnostic] = validateCode('const ok = 1;\nconst broken = ;')
    expect(diagnostic).toEqual({
      rule: 'syntax_valid',
      severity: 'ERROR',
      message: 'Unexpected token',
      location: { line: 2, column: 16 },
      codeFrame: '2 | const broken = ;\n  |                ^',
    })
    expect(rules('let a = 1; let a = 2;')).toEqual(['ERROR syntax_valid'])
  })

  it('syntax_valid: columns count UTF-16 units after non-ASCII text, and CRLF ends one line', () => {
    expect(validateCode('const s = "é😀"; const t = ;')[0].location).toEqual({ line: 1, column: 28 })
    expect(validateCode('a\r\nb\r\nconst = ;')[0].location).toEqual({ line: 3, column: 7 })
  })

  it('max_operations_valid and timeout_valid: invalid option values are ERRORs', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(rules('1', { maxOperations: bad })).toEqual(['ERROR max_operations_valid'])
      expect(rules('1', { timeoutMs: bad })).toEqual(['ERROR timeout_valid'])
    }
    expect(rules('1', { maxOperations: 1, timeoutMs: 1 })).toEqual([])
  })

  it('log_budget_too_small: a valid budget below the recommended 16 KiB is an INFO, not blocking; below 1024 it is refused (§3.3)', () => {
    expect(rules('1', { maxLogBytes: 1024 })).toEqual(['INFO log_budget_too_small'])
    expect(rules('1', { maxLogBytes: 16383 })).toEqual(['INFO log_budget_too_small'])
    expect(rules('1', { maxLogBytes: 16384 })).toEqual([])
    expect(rules('1', { maxLogBytes: 100 })).toEqual(['ERROR options_valid'])
  })

  it('import_allowed: only authorized literal names; "*" allows any; template literals count as literals', () => {
    expect(rules('await import("fs")', { authorizedImports: ['x-ok'] })).toEqual(['ERROR import_allowed'])
    expect(validateCode('await import("fs")', { authorizedImports: ['x-ok'] })[0].message).toBe(
      "Import not allowed: 'fs'. Allowed: x-ok",
    )
    expect(validateCode('await import("fs")')[0].message).toBe("Import not allowed: 'fs'. Allowed: none")
    expect(rules('await import(`x-ok`)', { authorizedImports: ['x-ok'] })).toEqual([])
    expect(rules('async function f() { return import("deep") }', { authorizedImports: [] })).toEqual(['ERROR import_allowed'])
    expect(rules('await import(name)', { authorizedImports: ['x-ok'] })).toEqual(['ERROR import_allowed'])
    expect(rules('await import(name)', { authorizedImports: ['*'] })).toEqual([])
  })

  it('static_import_in_script_mode: import and export are ERRORs even for authorized modules', () => {
    expect(rules('import fs from "node:fs";', { authorizedImports: ['node:fs'] })).toEqual(['ERROR static_import_in_script_mode'])
    expect(rules('import "x";\nexport const a = 1;')).toEqual([
      'ERROR static_import_in_script_mode',
      'ERROR static_import_in_script_mode',
    ])
  })

  it('forbidden_global_access: free references only, as a WARNING', () => {
    expect(rules('process.exit(1)')).toEqual(['WARNING forbidden_global_access'])
    expect(rules('require("fs"); Buffer.from("x"); fetch("u"); setTimeout(() => {}, 1)')).toEqual(Array(4).fill('WARNING forbidden_global_access'))
    // Not a free reference: an object key, a property, a local declaration, a parameter.
    expect(rules('const o = { process: 1 }; o.process')).toEqual([])
    expect(rules('const require = (x) => x; require("fs")')).toEqual([])
    expect(rules('function get(fetch) { return fetch() }')).toEqual([])
  })

  it('reserved_identifier: any name with the executor’s internal prefix is an ERROR', () => {
    expect(rules('let __smol_x = 1')).toEqual(['ERROR reserved_identifier'])
    expect(rules('__smol_guard = () => {}')).toEqual(['ERROR reserved_identifier'])
    expect(rules('o.__smol_guard')).toEqual([])
  })

  it('tool_name_shadowing: declaring or assigning a tool or final_answer at the top level is an ERROR naming it', () => {
    const options = { toolNames: ['web_search'] }
    const [diagnostic] = validateCode('const web_search = "mine"', options)
    expect(diagnostic.rule).toBe('tool_name_shadowing')
    expect(diagnostic.message).toBe("'web_search' is a tool: declaring or assigning it would replace the tool")
    expect(rules('const { web_search } = obj', options)).toEqual(['ERROR tool_name_shadowing'])
    expect(rules('web_search = null', options)).toEqual(['ERROR tool_name_shadowing'])
    expect(rules('final_answer = () => 1')).toEqual(['ERROR tool_name_shadowing'])
    expect(rules('function f(web_search) { return web_search }', options)).toEqual([])
  })

  it('run() refuses a tool’s name the same way, with the tools it has', async () => {
    const executor = await SESExecutor.create()
    await executor.sendTools({ web_search: () => 'results' })
    const error = await rejectionOf(executor.run('const web_search = 1'))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toContain("1:7 tool_name_shadowing: 'web_search' is a tool")
    await executor.cleanup()
  })

  it('a WARNING does not block the run', async () => {
    const executor = await SESExecutor.create()
    expect((await executor.run('typeof process === "undefined" ? "no process" : process')).output).toBe('no process')
    await executor.cleanup()
  })
})

describe('prepareProgram (§6.1)', () => {
  it('returns the original, the readable transformed script, and the diagnostics', () => {
    const prepared = prepareProgram('const x = 1;\nwhile (x < 0) {}\nx + 1')
    expect(prepared.originalCode).toBe('const x = 1;\nwhile (x < 0) {}\nx + 1')
    expect(prepared.transformedCode).toBe(
      'const x = 1;\nwhile (x < 0) {}\nreturn __smol_result(x + 1);\n',
    )
    expect(prepared.diagnostics).toEqual([])
  })

  it('returns no transformed code when an ERROR blocks the run, and keeps warnings otherwise', () => {
    expect(prepareProgram('const = ;').transformedCode).toBe('')
    const warned = prepareProgram('process')
    expect(warned.transformedCode).toContain('return __smol_result(process)')
    expect(warned.diagnostics.map((d) => d.rule)).toEqual(['forbidden_global_access'])
  })
})

describe('the loop guard cannot be bypassed (§6.4)', () => {
  const attempts: Array<[string, string]> = [
    ['reassigning the guard by a computed name', 'try { globalThis["__smol_" + "guard"] = () => {} } catch {}\nwhile (true) {}'],
    ['deleting the guard', 'try { delete globalThis["__smol_" + "guard"] } catch {}\nwhile (true) {}'],
    ['redefining the guard', 'try { Object.defineProperty(globalThis, "__smol_" + "guard", { value() {} }) } catch {}\nwhile (true) {}'],
    ['patching Function.prototype.call/apply', 'Function.prototype.call = Function.prototype.apply = () => {};\nfor (;;) {}'],
    ['catching the overflow and looping on', 'for (;;) { try { for (;;) {} } catch (e) {} }'],
    ['catching around the loop and going on', 'try { while (true) {} } catch {}\nlet n = 0; while (true) n++'],
    ['a loop in a generator', 'function* g() { while (true) yield 1 }\nfor (const x of g()) {}'],
    ['a loop in an async function', 'async function spin() { while (true) { await null } }\nawait spin()'],
    ['a loop in a class static block', 'class C { static { while (true) {} } }'],
    ['a loop in a default parameter', 'function f(a = (() => { while (true) {} })()) {}\nf()'],
    ['a loop in a getter', 'const o = { get x() { for (;;) {} } };\no.x'],
    ['a labelled loop with continue', 'outer: while (true) { continue outer }'],
    ['a loop in a callback of a built-in', '[1, 2, 3].forEach(() => { do {} while (true) })'],
  ]
  for (const [name, code] of attempts) {
    it(`${name}: still ERR_MAX_OPS_EXCEEDED`, async () => {
      const executor = await SESExecutor.create({ maxOperations: 1000, timeoutMs: 5000 })
      const error = await rejectionOf(executor.run(code))
      expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
      await executor.cleanup()
    })
  }

  const refused: Array<[string, string]> = [
    ['eval', 'eval("while (true) {}")'],
    ['indirect eval', '(0, eval)("while (true) {}")'],
    ['the Function constructor', 'Function("while (true) {}")()'],
    ['new AsyncFunction', 'new (Object.getPrototypeOf(async function () {}).constructor)("while (true) {}")()'],
    ['a function’s constructor', '(() => {}).constructor("while (true) {}")()'],
  ]
  for (const [name, code] of refused) {
    it(`${name}: refused with an EvalError telling the model to write the code directly`, async () => {
      const executor = await SESExecutor.create({ maxOperations: 1000 })
      const error = await rejectionOf(executor.run(code))
      expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
      expect(error.message).toContain('EvalError: eval() and the Function constructors are not available in this sandbox')
      await executor.cleanup()
    })
  }

  it('the count is not reset by catching the error: the run stops for good', async () => {
    const executor = await SESExecutor.create({ maxOperations: 100 })
    const error = await rejectionOf(executor.run('let caught = 0;\nfor (let k = 0; k < 5; k++) { try { for (;;) {} } catch { caught++ } }\nconsole.log(caught)'))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    expect(error.logs).toBe('')
    await executor.cleanup()
  })
})

describe('deeply nested code never crashes the host (regression: a stack overflow in oxc)', () => {
  // Before code_size_valid and the deep preparation stack, ~6000 nested parentheses overflowed
  // the native stack of Node's thread inside validateCode and killed the process.
  const patterns: Array<[string, (n: number) => string]> = [
    ['parentheses', (n) => '('.repeat(n) + '1' + ')'.repeat(n)],
    ['blocks', (n) => '{'.repeat(n) + '}'.repeat(n)],
    ['arrays', (n) => '['.repeat(n) + ']'.repeat(n)],
    ['unary operators', (n) => '!'.repeat(n) + '1'],
    ['member chains', (n) => 'a' + '.b'.repeat(n)],
    ['arrow chains', (n) => 'x' + '=>x'.repeat(n)],
    ['nested templates', (n) => '`${'.repeat(n) + '1' + '}`'.repeat(n)],
    ['else-if chains', (n) => 'if (a) {}' + ' else if (a) {}'.repeat(n)],
    ['brace-less if chains', (n) => 'if (a)'.repeat(n) + '1'],
    ['brace-less loops', (n) => 'for (;;)'.repeat(n) + ';'],
    ['nested classes', (n) => 'class A { m() {'.repeat(n) + '} }'.repeat(n)],
  ]
  for (const [name, make] of patterns) {
    it(`${name} as deep as the size limit allows: a structured outcome`, async () => {
      const unit = make(1).length - make(0).length
      const code = make(Math.floor((128 * 1024 - make(0).length) / unit))
      expect(code.length).toBeLessThanOrEqual(128 * 1024)
      expect(Array.isArray(validateCode(code))).toBe(true)
      const executor = await SESExecutor.create()
      const outcome = await executor.run(code).then(
        () => 'ran',
        (error) => error.code,
      )
      expect(['ran', 'ERR_RUNTIME_EXCEPTION', 'ERR_VALIDATION_FAILED', 'ERR_MAX_OPS_EXCEEDED']).toContain(outcome)
      await executor.cleanup()
    })
  }

  it('an error on every character reports a bounded list with windowed code frames', () => {
    // Regression: 65 000 nested duplicate labels gave 65 000 errors, each with a frame of the
    // whole 128 KiB line, and exhausted memory.
    const diagnostics = validateCode('a:'.repeat(65_000) + ';')
    expect(diagnostics).toHaveLength(20)
    for (const diagnostic of diagnostics) expect(diagnostic.codeFrame!.length).toBeLessThan(300)
  })

  it('a repeated finding is reported a bounded number of times', () => {
    const diagnostics = validateCode('process;'.repeat(16_000))
    expect(diagnostics).toHaveLength(100)
    expect(diagnostics[99].location).toEqual({ line: 1, column: 793 })
  })

  it('code_size_valid: code over 128 KiB is refused before parsing', async () => {
    const code = 'x;'.repeat(70_000)
    expect(rules(code)).toEqual(['ERROR code_size_valid'])
    const executor = await SESExecutor.create()
    const error = await rejectionOf(executor.run(code))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toContain('code_size_valid: Code is 140000 bytes')
    await executor.cleanup()
  })
})
