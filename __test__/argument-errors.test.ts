// Argument validation of every export goes through one path with the documented error types:
// a function that throws throws a TypeError for an argument of the wrong type (or one whose
// getter throws) and a RangeError for a number out of range (index.d.ts, docs/api.md "API"); the
// executor's methods reject with an ExecutorError; validateCode and prepareProgram answer with
// diagnostics. No argument reaches napi's own conversions, whose failures are plain Errors
// (`setEngineThreads('2')` threw `Error: Failed to convert napi value String into rust type
// f64`). The table covers every export: one added without a row fails the first test.
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import {
  ExecutorError,
  SESExecutor,
  codeAgentSetup,
  createRunJavaScriptTool,
  enginePoolStats,
  executorsCleanedAfterEach,
  prepareProgram,
  renderToolsPrompt,
  setEngineThreads,
  validateCode,
} from './helpers'

const require = createRequire(import.meta.url)
const executor = executorsCleanedAfterEach()
const size = enginePoolStats().size
afterAll(() => setEngineThreads(size))

/** The error `call` threw (synchronously), or what its promise rejected with. */
async function errorOf(call: () => unknown): Promise<unknown> {
  let result
  try {
    result = call()
  } catch (error) {
    return error
  }
  try {
    await result
  } catch (error) {
    return { rejected: error }
  }
  throw new Error('expected a throw or a rejection')
}

const throwingGetter = (key: string) =>
  Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw Symbol(`${key} getter`)
    },
  })

function errorOfSync(call: () => unknown): unknown {
  try {
    call()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('argument errors go through one path with the documented types', () => {
  it('every export of the package has a row below', () => {
    const covered = [
      'SESExecutor',
      'SesExecutor',
      'ExecutorError',
      'validateCode',
      'prepareProgram',
      'renderToolsPrompt',
      'setEngineThreads',
      'enginePoolStats',
      'CODE_AGENT_SYSTEM_PROMPT',
      'CODE_AGENT_EXAMPLES',
      'codeAgentSetup',
      'createRunJavaScriptTool',
      'SessionPool',
      'MemoryStore',
      'FileStore',
      'SessionError',
      'pauseRun',
      'PauseRequest',
      // The platform the binding was loaded for: a string, no function.
      '__napiBindingTarget',
    ]
    expect(Object.keys(require('../index.js')).sort()).toEqual(covered.sort())
  })

  it('setEngineThreads: a TypeError for anything but a number, unconverted; a RangeError for a number that is not an integer from 1 to 1024', async () => {
    for (const value of ['2', null, 2n, undefined, {}, true, Symbol('2')]) {
      const error = await errorOf(() => setEngineThreads(value as never))
      expect(error, String(value)).toBeInstanceOf(TypeError)
      expect((error as Error).message).toBe('threads must be a number')
    }
    for (const value of [0, -1, 1.5, NaN, Infinity, 1025, 2 ** 53]) {
      const error = await errorOf(() => setEngineThreads(value))
      expect(error, String(value)).toBeInstanceOf(RangeError)
      expect((error as Error).message).toBe('threads must be an integer from 1 to 1024')
    }
    expect(enginePoolStats().size).toBe(size)
    setEngineThreads(size)
  })

  it('enginePoolStats takes no argument and ignores any', () => {
    expect(enginePoolStats(5 as never).size).toBe(size)
  })

  it('renderToolsPrompt: a TypeError for every malformed tool list, tool or name', async () => {
    const cases: [unknown, string][] = [
      [5, 'tools must be an object of tools or an array of tool objects'],
      [undefined, 'tools must be an object of tools or an array of tool objects'],
      [[{ name: 'has space', forward() {} }], 'tool name "has space" is not a JavaScript identifier'],
      [[{ forward() {} }], 'a tool in an array must have a string name'],
      [{ t: 5 }, 'tools.t must be a function or a tool object'],
      [{ t: { forward() {}, inputs: { 'a-b': { type: 'string' } } } }, 'input of t "a-b" is not a JavaScript identifier'],
      [[throwingGetter('name')], 'tools[0].name cannot be read (reading it threw Symbol(name getter))'],
    ]
    for (const [tools, message] of cases) {
      const error = await errorOf(() => renderToolsPrompt(tools as never))
      expect(error, message).toBeInstanceOf(TypeError)
      expect((error as Error).message).toBe(message)
    }
  })

  it('validateCode and prepareProgram answer a bad code or options argument with diagnostics, never a throw', () => {
    expect(validateCode(5 as never)).toEqual([{ message: 'code must be a string', rule: 'code_non_empty', severity: 'ERROR' }])
    expect(validateCode('1', 5 as never)[0]).toMatchObject({ rule: 'options_valid', severity: 'ERROR' })
    expect(prepareProgram(null as never).diagnostics[0]).toMatchObject({ rule: 'code_non_empty' })
    expect(prepareProgram('1', throwingGetter('timeoutMs') as never).diagnostics[0]).toMatchObject({ rule: 'options_valid' })
  })

  it('SESExecutor: the constructor throws an ExecutorError for bad options and a TypeError without new; create() rejects', async () => {
    expect(await errorOf(() => new SESExecutor(5 as never))).toBeInstanceOf(ExecutorError)
    expect(await errorOf(() => (SESExecutor as unknown as () => unknown)())).toBeInstanceOf(TypeError)
    const rejected = (await errorOf(() => SESExecutor.create(throwingGetter('timers') as never))) as { rejected: unknown }
    expect(rejected.rejected).toBeInstanceOf(ExecutorError)
  })

  it("the executor's methods reject with an ExecutorError for bad arguments, never throw", async () => {
    const ex = await executor()
    for (const call of [
      () => ex.sendVariables(5 as never),
      () => ex.sendTools(5 as never),
      () => ex.sendTools({ t: 5 } as never),
      () => ex.run(5 as never),
      () => ex.run('1', 5 as never),
      () => ex.run('1', { signal: 5 } as never),
      () => ex.run('1', { onEvent: 5 } as never),
      () => ex.run('1', throwingGetter('input') as never),
    ]) {
      const error = (await errorOf(call)) as { rejected: unknown }
      expect(error.rejected).toBeInstanceOf(ExecutorError)
      expect((error.rejected as InstanceType<typeof ExecutorError>).code).toBe('ERR_VALIDATION_FAILED')
    }
  })

  it('ExecutorError can be made with a message alone, as its typings (an Error subclass) allow', () => {
    const error = new ExecutorError('by hand')
    expect(error).toBeInstanceOf(Error)
    expect([error.name, error.message, error.code]).toEqual(['ExecutorError', 'by hand', undefined])
  })

  it('codeAgentSetup rejects with a TypeError for malformed options, tools or tags, and an ExecutorError for executorOptions', async () => {
    const cases = [
      5,
      { tools: 5 },
      { tools: [{ description: 'no name' }] },
      { tools: [{ name: 'final_answer', forward() {} }] },
      { codeBlockTags: ['```'] },
      { codeBlockTags: 'js' },
      throwingGetter('codeBlockTags'),
    ]
    for (const [index, options] of cases.entries()) {
      const error = (await errorOf(() => codeAgentSetup(options as never))) as { rejected: unknown }
      expect(error.rejected, `case ${index}`).toBeInstanceOf(TypeError)
    }
    const invalid = (await errorOf(() => codeAgentSetup({ executorOptions: { timeoutMs: -1 } }))) as { rejected: unknown }
    expect(invalid.rejected).toBeInstanceOf(ExecutorError)
  })

  it('createRunJavaScriptTool throws a TypeError for a malformed executor or option, a RangeError for maxOutputBytes out of range', async () => {
    const ex = await executor()
    const typeErrors: [unknown, unknown][] = [
      [null, undefined],
      [{}, undefined],
      [ex, 5],
      [ex, { name: 'has space' }],
      [ex, { tools: [1] }],
      [ex, { tools: 'search' }],
      [ex, { imageDir: 5 }],
      [ex, { description: 5 }],
      [ex, { timers: 'yes' }],
      [ex, { maxOutputBytes: '1024' }],
      [ex, throwingGetter('imageDir')],
    ]
    for (const [index, [target, options]] of typeErrors.entries()) {
      expect(await errorOf(() => createRunJavaScriptTool(target as never, options as never)), `case ${index}`).toBeInstanceOf(TypeError)
    }
    for (const maxOutputBytes of [0, -1, 1.5, NaN, Infinity]) {
      expect(await errorOf(() => createRunJavaScriptTool(ex, { maxOutputBytes }))).toBeInstanceOf(RangeError)
    }
  })

  it('SessionPool, MemoryStore and FileStore throw a TypeError for malformed options (a getter that throws included); the pool rejects a bad id', async () => {
    const { SessionPool, MemoryStore, FileStore, SessionError } = require('../index.js')
    const store = new MemoryStore()
    for (const options of [undefined, null, 3, {}, { maxLive: 0, store }, { maxLive: 1, store: {} }, { maxLive: 2, store, spare: 2 }, throwingGetter('maxLive'), { maxLive: 1, store: throwingGetter('get') }, { maxLive: 1, store, executorOptions: throwingGetter('timeoutMs') }]) {
      const error = await errorOf(() => new SessionPool(options))
      expect(error, String(options)).toBeInstanceOf(TypeError)
    }
    expect(((await errorOf(() => new SessionPool(throwingGetter('maxLive')))) as Error).message).toBe('SessionPool options.maxLive cannot be read (reading it threw Symbol(maxLive getter))')
    for (const options of [null, 3, { compress: 'yes' }, throwingGetter('compress')]) expect(await errorOf(() => new MemoryStore(options))).toBeInstanceOf(TypeError)
    const dir = mkdtempSync(path.join(tmpdir(), 'ses-args-'))
    for (const [directory, options] of [[undefined, {}], ['', {}], [dir, null], [dir, { fsync: 1 }], [dir, throwingGetter('fsync')]]) {
      expect(await errorOf(() => new FileStore(directory, options))).toBeInstanceOf(TypeError)
    }
    const pool = new SessionPool({ maxLive: 1, store })
    for (const id of [undefined, '', 3, 'x'.repeat(1025)]) expect(((await errorOf(() => pool.run(id, '1'))) as { rejected: unknown }).rejected).toBeInstanceOf(TypeError)
    await pool.close()
    expect(new SessionError('ERR_SESSION_STORE', 'm')).toMatchObject({ name: 'SessionError', code: 'ERR_SESSION_STORE', message: 'm' })
  })

  it("run_javascript's execute answers arguments it cannot use as ERR_VALIDATION_FAILED data", async () => {
    const tool = createRunJavaScriptTool(await executor())
    for (const args of [5, null, [], '[]', { code: 5 }, throwingGetter('code')]) {
      expect(await tool.execute(args as never)).toMatchObject({ ok: false, error: { code: 'ERR_VALIDATION_FAILED' } })
    }
  })

  it('pauseRun takes any value that crosses (or none), and throws an ExecutorError naming a reason that cannot; PauseRequest is made only by pauseRun', () => {
    const { pauseRun, PauseRequest, ExecutorError } = require('../index.js')
    for (const reason of [undefined, null, 'approve?', 42, { nested: [1] }]) {
      expect(pauseRun(reason)).toBeInstanceOf(PauseRequest)
    }
    expect(pauseRun()).toBeInstanceOf(PauseRequest)
    for (const reason of [Symbol('s'), () => 1]) {
      const error = errorOfSync(() => pauseRun(reason))
      expect(error).toBeInstanceOf(ExecutorError)
      expect((error as { code: string }).code).toBe('ERR_VALIDATION_FAILED')
      expect((error as Error).message).toContain('pauseRun(reason)')
    }
    expect(() => new PauseRequest()).toThrow(Error)
  })

  it('createWorkspaceTools (workspace-tools entry) rejects a root that is not a directory path with a TypeError', async () => {
    const { createWorkspaceTools } = await import('../lib/workspace-tools.mjs')
    const error = (await errorOf(() => createWorkspaceTools(5 as never))) as { rejected: unknown }
    expect(error.rejected).toBeInstanceOf(TypeError)
    await expect(createWorkspaceTools(mkdtempSync(path.join(tmpdir(), 'ws-')))).resolves.toBeTypeOf('object')
  })
})
