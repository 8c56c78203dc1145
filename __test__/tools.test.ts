// Spec §7.4 (tool invocation), §5.2 (endowments), CF-07; docs/contract.md "Tools", "Tool failures".
import { afterEach, describe, expect, it } from 'vitest'

import { contractOf, rejectionOf, SESExecutor } from './helpers'

const live: InstanceType<typeof SESExecutor>[] = []
async function executorWith(tools: Record<string, unknown>, options = {}) {
  const executor = await SESExecutor.create({ timeoutMs: 5000, ...options })
  live.push(executor)
  await executor.sendTools(tools as Parameters<typeof executor.sendTools>[0])
  return executor
}
afterEach(async () => {
  for (const executor of live.splice(0)) if (executor.state === 'READY' || executor.state === 'DIRTY') await executor.cleanup()
})

describe('sync and async tools (§7.4)', () => {
  it('a tool returning a plain value gives that value synchronously', async () => {
    const executor = await executorWith({ add: (a: number, b: number) => a + b })
    expect((await executor.run('const n = add(1, 2); [n, typeof n]')).output).toEqual([3, 'number'])
  })

  it('a tool returning a promise gives a promise, and await works on both forms', async () => {
    const executor = await executorWith({
      add: (a: number, b: number) => a + b,
      readTool: async (path: string) => `content:${path}`,
    })
    const code = 'const p = readTool("a"); [p instanceof Promise, await p, await add(2, 2)]'
    expect((await executor.run(code)).output).toEqual([true, 'content:a', 4])
  })

  it('several calls are in flight at once (Promise.all overlaps them)', async () => {
    let inFlight = 0
    let peak = 0
    const slow = async (x: number) => {
      inFlight++
      peak = Math.max(peak, inFlight)
      await new Promise((resolve) => setTimeout(resolve, 30))
      inFlight--
      return x * 2
    }
    const executor = await executorWith({ slow })
    expect((await executor.run('await Promise.all([slow(1), slow(2), slow(3)])')).output).toEqual([2, 4, 6])
    expect(peak).toBe(3)
  })

  it('tools receive copies of their arguments and the sandbox receives copies of results', async () => {
    const seen: unknown[] = []
    const shared = { count: 1 }
    const executor = await executorWith({
      inspectArg: (value: unknown) => {
        seen.push(value)
        return shared
      },
    })
    const code = 'const arg = { list: [1, 2] }; const back = inspectArg(arg); back.count = 99; arg.list.push(3); back'
    expect((await executor.run(code)).output).toEqual({ count: 99 })
    expect(shared).toEqual({ count: 1 })
    expect(seen).toEqual([{ list: [1, 2] }])
  })
})

describe('sendTools merge semantics', () => {
  it('merges with earlier tools, and the same name replaces the earlier function', async () => {
    const executor = await executorWith({ a: () => 'a1', b: () => 'b1' })
    await executor.sendTools({ a: () => 'a2', c: () => 'c1' })
    expect((await executor.run('[a(), b(), c()]')).output).toEqual(['a2', 'b1', 'c1'])
  })

  it('ignores extra arguments (smolagents-ts calls sendTools({}, pythonToolsMap))', async () => {
    const executor = await SESExecutor.create()
    live.push(executor)
    await (executor.sendTools as (...args: unknown[]) => Promise<void>)({ one: () => 1 }, { python: 'map' })
    expect((await executor.run('one()')).output).toBe(1)
  })

  it('refuses names the executor keeps for itself', async () => {
    const executor = await SESExecutor.create()
    live.push(executor)
    for (const name of ['final_answer', 'console', '__smol_guard']) {
      const error = await rejectionOf(executor.sendTools({ [name]: () => 1 }))
      expect(error.code).toBe('ERR_VALIDATION_FAILED')
      expect(error.details.name).toBe(name)
    }
  })

  it('refuses a value that is neither a function nor a tool object', async () => {
    const executor = await SESExecutor.create()
    live.push(executor)
    const error = await rejectionOf(executor.sendTools({ nope: 42 as unknown as () => unknown }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.message).toContain('tools.nope must be a function or a tool object')
  })
})

describe('smolagents tool objects { name, inputs, forward(args) }', () => {
  const searchTool = {
    name: 'search',
    description: 'Searches',
    inputs: { query: { type: 'string' }, limit: { type: 'number', nullable: true } },
    output_type: 'string',
    calls: [] as unknown[],
    forward(args: { query: string; limit?: number }) {
      this.calls.push(args)
      return `${args.query}:${args.limit ?? 'all'}`
    },
  }

  it('t({ path, limit }) and t(path, limit) both reach forward({ … }) in inputs order', async () => {
    searchTool.calls = []
    const executor = await executorWith({ search: searchTool })
    const { output } = await executor.run('[search({ query: "a", limit: 2 }), search("b", 3), search("c")]')
    expect(output).toEqual(['a:2', 'b:3', 'c:all'])
    expect(searchTool.calls).toEqual([{ query: 'a', limit: 2 }, { query: 'b', limit: 3 }, { query: 'c' }])
  })

  it('forward runs with the tool object as this, and async forward gives a promise', async () => {
    const asyncTool = {
      prefix: 'got',
      inputs: { x: { type: 'number' } },
      async forward({ x }: { x: number }) {
        return `${this.prefix} ${x}`
      },
    }
    const executor = await executorWith({ asyncTool })
    expect((await executor.run('await asyncTool(5)')).output).toBe('got 5')
  })
})

describe('tools and globals cannot be replaced or re-wired (§5.2, §9.2)', () => {
  it('tools, final_answer and console are non-writable, non-configurable, frozen', async () => {
    const executor = await executorWith({ add: (a: number, b: number) => a + b })
    // Writes go through globalThis: validation already refuses `add = …` (tool_name_shadowing),
    // and this checks the runtime's own defence.
    const code = `
      const report = {};
      for (const name of ["add", "final_answer", "console"]) {
        const d = Object.getOwnPropertyDescriptor(globalThis, name);
        report[name] = [d.writable, d.configurable, Object.isFrozen(globalThis[name])];
      }
      try { globalThis.add = () => 0 } catch {}
      try { delete globalThis.add } catch {}
      try { Object.defineProperty(globalThis, "add", { value: () => 0 }) } catch {}
      try { add.apply = () => 0 } catch {}
      try { globalThis.final_answer = () => {} } catch {}
      report.stillWorks = add(2, 3);
      report`
    expect((await executor.run(code)).output).toEqual({
      add: [false, false, true],
      final_answer: [false, false, true],
      console: [false, false, true],
      stillWorks: 5,
    })
  })

  it('variables are ordinary writable globals holding copies', async () => {
    const executor = await SESExecutor.create()
    live.push(executor)
    const state = { counter: 1, nested: { list: [1] } }
    await executor.sendVariables(state)
    const { output } = await executor.run('counter += 1; nested.list.push(2); [counter, nested.list]')
    expect(output).toEqual([2, [1, 2]])
    expect(state).toEqual({ counter: 1, nested: { list: [1] } })
  })

  it('sendVariables replaces earlier values of the same name', async () => {
    const executor = await SESExecutor.create()
    live.push(executor)
    await executor.sendVariables({ a: 1, b: 2 })
    await executor.sendVariables({ a: 10 })
    expect((await executor.run('[a, b]')).output).toEqual([10, 2])
  })

  it('a variable may not take a tool’s name', async () => {
    const executor = await executorWith({ tool: () => 1 })
    const error = await rejectionOf(executor.sendVariables({ tool: 5 }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
  })
})

describe('error mapping (§7.4): ERR_TOOL_PROXY_FAIL vs ERR_RUNTIME_EXCEPTION', () => {
  it('CF-07 a throwing tool: await boomTool() fails with ERR_TOOL_PROXY_FAIL and state back to READY', async () => {
    const executor = await executorWith({
      boomTool: () => {
        throw new Error('boom')
      },
    })
    const error = await rejectionOf(executor.run('await boomTool()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(executor.state).toBe('READY')
  })

  it('CF-07 a rejecting tool: await boomTool() fails with ERR_TOOL_PROXY_FAIL and state back to READY', async () => {
    const executor = await executorWith({ boomTool: async () => Promise.reject(new Error('boom')) })
    const error = await rejectionOf(executor.run('await boomTool()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(executor.state).toBe('READY')
  })

  it('carries details.tool, the tool’s message and the calling line', async () => {
    const executor = await executorWith({
      readFile: () => {
        throw new RangeError('ENOENT: no such file')
      },
    })
    const error = await rejectionOf(executor.run('console.log("start");\nconst text = readFile("x");'))
    expect(error.message).toBe('Tool execution failed: readFile: RangeError: ENOENT: no such file')
    expect(error.details).toMatchObject({ tool: 'readFile', line: 2, sourceLine: 'const text = readFile("x");' })
    expect(error.logs).toBe('start')
    expect(error.retryable).toBe(true)
  })

  it('an error whose name is empty is described as an Error, in the sandbox and in the failure', async () => {
    const nameless = () => {
      const error = new Error('no such file')
      error.name = ''
      throw error
    }
    const executor = await executorWith({ nameless })
    expect((await executor.run('let caught; try { nameless() } catch (e) { caught = [e.name, e.message] }; caught')).output).toEqual(['Error', 'no such file'])
    const error = await rejectionOf(executor.run('nameless()'))
    expect(error.message).toBe('Tool execution failed: nameless: Error: no such file')
  })

  it('a rejection with a non-Error value is a tool failure carrying its string form', async () => {
    const executor = await executorWith({ refuse: () => Promise.reject('no way') })
    const error = await rejectionOf(executor.run('await refuse()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.message).toBe('Tool execution failed: refuse: Error: no way')
  })

  it('inside the sandbox the failure is a catchable Error with the tool’s name and message, without the host stack', async () => {
    const executor = await executorWith({
      boom: () => {
        throw new TypeError('kaput')
      },
    })
    const code = 'let e; try { boom() } catch (caught) { e = caught } [e instanceof Error, e.name, e.message, String(e.stack).includes("tools.test")]'
    expect((await executor.run(code)).output).toEqual([true, 'TypeError', 'kaput', false])
  })

  it('a tool failure caught by user code does not fail the run', async () => {
    const executor = await executorWith({ flaky: async () => Promise.reject(new Error('try later')) })
    const code = 'let result; try { result = await flaky() } catch (e) { result = "recovered from " + e.message } result'
    expect(contractOf(await executor.run(code))).toEqual({ output: 'recovered from try later', logs: '', is_final_answer: false })
  })

  it('an error after the tool returned is ERR_RUNTIME_EXCEPTION', async () => {
    const executor = await executorWith({ get: () => ({ items: [] }) })
    const error = await rejectionOf(executor.run('const r = get(); r.items[0].name'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
  })

  it('a function returned by a tool cannot cross: ERR_TOOL_PROXY_FAIL', async () => {
    const executor = await executorWith({ leak: () => () => process.exit(1) })
    const error = await rejectionOf(executor.run('leak()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.message).toContain('a function')
  })
})
