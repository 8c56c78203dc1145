// Security suite, denial of service: every limit of the host bridge ends a
// hostile run with its own structured error, in the state §7.5/§7.6 give it, and the host goes
// on. Memory bombs run with a generous timeout so that the heap limit, not the clock, ends them
// even on a loaded machine; timeouts use code that allocates nothing.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { afterAll, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from '../helpers'
import { type AttackCase, Canary, expectUsable, runCase } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())

const OUT_OF_MEMORY = /InternalError: out of memory \(the executor's heap limit, memoryLimitBytes, was reached\)/
const memoryBomb = { memoryLimitBytes: 32 * 1024 * 1024, maxOperations: 1e12, timeoutMs: 60_000 }

const tools = (calls: unknown[][]) => ({
  add: (a: number, b: number) => a + b,
  later: async (x: number) => x,
  never: () => {
    calls.push([])
    return new Promise(() => {})
  },
  echo: (x: unknown) => x,
})

const loopsAndClocks: AttackCase[] = [
  {
    name: 'while (true) {} — spec CF-09',
    code: 'while (true) {}',
    options: { maxOperations: 1000 },
    expected: { code: 'ERR_MAX_OPS_EXCEEDED', state: 'READY', details: { maxOperations: 1000 } },
  },
  {
    // Found while profiling the guard: inside `with`, the injected guard call
    // resolved through the Proxy, which answered with a no-op. Regression for
    // `with_statement_forbidden`.
    name: 'loop guard replaced through a with-statement Proxy — original',
    code: "with (new Proxy({}, { has: (t, k) => k === '__smol' + '_guard', get: () => () => {} })) { var n = 0; while (n < 100000) n++ } n",
    options: { maxOperations: 1000 },
    expected: {
      code: 'ERR_VALIDATION_FAILED',
      state: 'READY',
      message: /with_statement_forbidden/,
    },
  },
  {
    name: 'loop guard error swallowed by try/catch in an outer loop — original',
    code: 'for (;;) { try { for (;;) {} } catch (e) {} }',
    options: { maxOperations: 1000 },
    expected: { code: 'ERR_MAX_OPS_EXCEEDED', state: 'READY', details: { maxOperations: 1000 } },
  },
  {
    name: 'an infinite loop hidden in a generator consumed by spread — original',
    code: 'function* g() { let i = 0; while (true) yield i++ } [...g()].length',
    options: { maxOperations: 1000 },
    expected: { code: 'ERR_MAX_OPS_EXCEEDED', state: 'READY', details: { maxOperations: 1000 } },
  },
  {
    name: 'CPU loop with an unreachable operation budget ends at timeoutMs — spec §7.5',
    code: 'while (true) {}',
    options: { maxOperations: 1e15, timeoutMs: 100 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 100 } },
  },
  {
    name: 'exponential recursion with try/catch (no loop to guard) — original',
    code: 'function f(n) { try { f(n + 1) } catch { f(n + 1) } } f(0)',
    options: { timeoutMs: 200 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 200 } },
  },
  {
    name: 'catastrophic regex /(a+)+$/ — ReDoS (OWASP), original',
    code: `/(a+)+$/.test('a'.repeat(40) + '!')`,
    options: { timeoutMs: 200 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 200 } },
  },
  {
    name: 'catastrophic regex with a backreference in String.prototype.replace — ReDoS, original',
    code: `'x'.repeat(5000).replace(/(x+x+)+y\\1/g, '')`,
    options: { timeoutMs: 200 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 200 } },
  },
  {
    name: 'an endless microtask chain (no loop, no await) — original',
    code: `function loop() { Promise.resolve().then(loop) } loop(); 'returned'`,
    options: { timeoutMs: 200 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 200 } },
  },
  {
    name: 'an infinite iterator without a loop in user code, spread into an array — original',
    code: `const it = { [Symbol.iterator]() { return { next: () => ({ done: false, value: 1 }) } } }; [...it].length`,
    options: memoryBomb,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'DIRTY', message: OUT_OF_MEMORY, details: { limit: 'memoryLimitBytes' } },
  },
  {
    name: 'runaway recursion hits maxStackBytes and the executor stays READY — original (QuickJS stack exhaustion)',
    code: 'function down(n) { return down(n + 1) + 1 } down(0)',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', details: { limit: 'maxStackBytes' } },
  },
  {
    name: 'Error.prepareStackTrace calling itself through new Error().stack — original',
    code: 'Error.prepareStackTrace = () => new Error().stack; [new Error().stack]',
    expected: { output: [undefined] },
  },
  {
    name: 'JSON.parse of a million nested arrays — original',
    code: `JSON.parse('['.repeat(1e6))`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', details: { limit: 'maxStackBytes' } },
  },
]

const memoryAndSize: AttackCase[] = [
  {
    name: 'string doubling until the engine refuses — original',
    code: `let s = 'x'; for (;;) s += s`,
    options: { ...memoryBomb, memoryLimitBytes: 256 * 1024 * 1024 },
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /InternalError: string too long/ },
  },
  {
    name: 'an array of strings grown past memoryLimitBytes — original',
    code: 'const keep = []; for (;;) keep.push("x".repeat(1e5) + keep.length)',
    options: memoryBomb,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'DIRTY', message: OUT_OF_MEMORY, details: { limit: 'memoryLimitBytes' } },
  },
  {
    name: 'typed-array bomb: a 1 GiB Float64Array — original',
    code: 'new Float64Array(2 ** 27)',
    options: memoryBomb,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'DIRTY', message: OUT_OF_MEMORY, details: { limit: 'memoryLimitBytes' } },
  },
  {
    name: 'typed-array bomb: an ArrayBuffer past the engine’s maximum length — original',
    code: 'new ArrayBuffer(2 ** 31)',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /RangeError: invalid array buffer length/ },
  },
  {
    name: 'typed-array bomb: many small typed arrays — original',
    code: 'const a = []; for (;;) a.push(new Uint8Array(65536))',
    options: memoryBomb,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'DIRTY', message: OUT_OF_MEMORY, details: { limit: 'memoryLimitBytes' } },
  },
  {
    name: 'an output array of length 2^32 - 1 fails the run, naming the copy limit (nothing is lost silently) — original',
    code: 'const a = []; a.length = 2 ** 32 - 1; a',
    expected: {
      code: 'ERR_RUNTIME_EXCEPTION',
      state: 'READY',
      details: { limit: 'maxArrayLength', size: 4294967295, max: 16777216 },
      message: /^Runtime exception: RangeError: output is an array of 4294967295 elements, more than the 16777216 a copy takes \(maxArrayLength\)/,
    },
  },
  {
    name: 'an output nested 100 000 levels deep fails the run at 1000 levels, naming the limit — original',
    code: 'let o = {}; for (let i = 0; i < 1e5; i++) o = { o }; o',
    options: { maxOperations: 1e6 },
    expected: {
      code: 'ERR_RUNTIME_EXCEPTION',
      state: 'READY',
      details: { limit: 'maxCopyDepth', size: 1001, max: 1000 },
      message: /^Runtime exception: RangeError: output(\.o){1000} is nested more than 1000 levels deep/,
    },
  },
  {
    name: 'a tool argument nested 2000 levels deep is refused — original',
    code: 'let o = {}; for (let i = 0; i < 2000; i++) o = { o }; echo(o)',
    tools,
    expected: { code: 'ERR_TOOL_PROXY_FAIL', state: 'READY', details: { tool: 'echo' }, message: /^Tool execution failed: echo: RangeError: echo argument 0(\.o){1000} is nested more than 1000 levels deep, more than a copy takes \(maxCopyDepth\)/ },
  },
]

const toolsAndPromises: AttackCase[] = [
  {
    name: 'a tool that never settles ends at timeoutMs — spec CF-10',
    code: 'await never()',
    tools,
    options: { timeoutMs: 200 },
    expected: { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY', details: { timeoutMs: 200 } },
    after: (calls) => expect(calls.length).toBe(1),
  },
  {
    name: 'a flood of 20 000 synchronous tool calls — original',
    code: 'let s = 0; for (let i = 0; i < 20000; i++) s += add(i, 1); s',
    tools,
    options: { maxOperations: 1e6, timeoutMs: 60_000 },
    expected: { output: 200_010_000 },
  },
  {
    name: 'a flood of 10 000 overlapping async tool calls — original',
    code: 'const all = await Promise.all(Array.from({ length: 10000 }, (_, i) => later(i))); all.reduce((s, n) => s + n, 0)',
    tools,
    options: { timeoutMs: 60_000 },
    expected: { output: 49_995_000 },
  },
  {
    name: 'thousands of never-settling tool calls left pending when the run returns — original',
    code: `Array.from({ length: 3000 }, () => never()); 'fired'`,
    tools,
    expected: { output: 'fired' },
    after: (calls) => expect(calls.length).toBe(3000),
  },
  {
    name: 'a hundred thousand pending sandbox promises — original',
    code: `for (let i = 0; i < 1e5; i++) new Promise(() => {}); 'made'`,
    options: { maxOperations: 1e6 },
    expected: { output: 'made' },
  },
  {
    name: 'awaiting a promise nothing can settle fails at once, not at the deadline — original',
    code: 'await new Promise(() => {})',
    options: { timeoutMs: 60_000 },
    expected: {
      code: 'ERR_RUNTIME_EXCEPTION',
      state: 'READY',
      message: /the code awaits a promise that can never settle/,
    },
  },
]

describe('denial of service: loops, the clock and the stack', () => {
  for (const attack of loopsAndClocks) it(attack.name, () => runCase(canary, attack))
})

describe('denial of service: memory, sizes and nesting', () => {
  for (const attack of memoryAndSize) it(attack.name, () => runCase(canary, attack))

  it('huge logs are cut at maxLogBytes with one truncation marker — original', async () => {
    const executor = await SESExecutor.create({ maxLogBytes: 1024, maxOperations: 1e6, timeoutMs: 60_000 })
    const result = await executor.run(`for (let i = 0; i < 1e5; i++) console.log('x'.repeat(100)); 'done'`)
    expect(result.output).toBe('done')
    expect(result.logs).toMatch(/^(x{100}\n){10}x{14}\.\.\.\[TRUNCATED\]$/)
    await expectUsable(executor, 'READY')
    await executor.cleanup()
    canary.expectUntouched()
  })

  it('a 50 MB log line is cut at the default maxLogBytes — original', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 60_000 })
    const result = await executor.run(`console.log('y'.repeat(5e7)); 'done'`)
    expect(result.logs).toBe(`${'y'.repeat(262_144)}...[TRUNCATED]`)
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('an error with a 10 MB message fails the run with that message — original', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 60_000 })
    const error = await rejectionOf(executor.run(`throw new Error('x'.repeat(1e7))`))
    expect([error.code, executor.state]).toEqual(['ERR_RUNTIME_EXCEPTION', 'READY'])
    expect(error.message).toBe(`Runtime exception: Error: ${'x'.repeat(1e7)} (line 1: throw new Error('x'.repeat(1e7)))`)
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('canvas states, paths and strokes stay inside memoryLimitBytes, in the process’s RSS', () => {
    // Saved states copy the dash list and the font; a path and what drawing it makes (tiny-skia's
    // edge list, a stroke's outline) live outside QuickJS's heap: 200 saves of a 1,000,000-entry
    // dash list took the process from 46 to 858 MiB under a 64 MiB limit. In a process of its
    // own, so that its RSS is this run's.
    const limit = 64 * 1024 * 1024
    const code = `
      const g = getCanvas(100, 100).getContext('2d')
      const attempt = (f) => { try { f() } catch (e) { return e.limit ?? e.name } }
      const refused = [attempt(() => g.setLineDash(new Array(1e6).fill(1)))]
      g.setLineDash(new Array(1024).fill(1))
      g.font = '10px ' + 'a'.repeat(1000)
      refused.push(attempt(() => { for (let i = 0; i < 4096; i++) g.save() }))
      g.lineWidth = 40; g.lineJoin = 'round'
      refused.push(attempt(() => { for (let i = 0; i < 1 << 20; i++) g.lineTo(i % 100, (i * 7) % 100); g.fill() }))
      refused`
    const fixture = fileURLToPath(new URL('../fixtures/rss-under-limit.cjs', import.meta.url))
    const child = spawnSync(process.execPath, [fixture, code, String(limit)], { encoding: 'utf8', timeout: 120_000 })
    expect(child.status, child.stderr).toBe(0)
    const measured = JSON.parse(child.stdout.trim().split('\n').pop()!)
    // The dash list is capped; 4096 saves of the longest dash list and font fit in 64 MiB; the
    // fill's edge list for a million points does not.
    expect(measured.output).toEqual(['RangeError', null, 'memoryLimitBytes'])
    expect(measured.peakHeapBytes).toBeLessThanOrEqual(limit)
    expect(measured.rssGrowth).toBeLessThan(2 * limit)
  })

  it('canvas surfaces, image data, PNG encoding and trace volume are refused at memoryLimitBytes, in the process’s RSS', () => {
    // Each holds memory outside QuickJS's heap (or makes QuickJS hold it): each ends with the
    // memory limit's error, or drops what does not fit, with the account and the process's growth
    // bounded by the limit. In a process of its own each, so that its RSS is this run's.
    const limit = 16 * 1024 * 1024
    const noise = (canvases: number) => `
      for (let k = 0; k < ${canvases}; k++) {
        const g = getCanvas(1024, 1024).getContext('2d')
        const d = g.createImageData(1024, 1024), words = new Uint32Array(d.data.buffer)
        let x = k + 1; for (let i = 0; i < words.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; words[i] = x }
        g.putImageData(d, 0, 0)
      }`
    const fixture = fileURLToPath(new URL('../fixtures/rss-under-limit.cjs', import.meta.url))
    const measure = (code: string, more: object = {}) => {
      const child = spawnSync(process.execPath, [fixture, code, String(limit), JSON.stringify(more)], { encoding: 'utf8', timeout: 120_000 })
      expect(child.status, child.stderr).toBe(0)
      const measured = JSON.parse(child.stdout.trim().split('\n').pop()!)
      expect(measured.peakHeapBytes, code).toBeLessThanOrEqual(limit)
      expect(measured.rssGrowth, code).toBeLessThan(3 * limit)
      return measured
    }
    const refused = { code: 'ERR_RUNTIME_EXCEPTION', limit: 'memoryLimitBytes' }
    expect(measure('const keep = []; for (;;) keep.push(getCanvas(1024, 1024))')).toMatchObject(refused)
    expect(measure(`const g = getCanvas(1024, 1024).getContext('2d'), keep = []; for (;;) keep.push(g.getImageData(0, 0, 1024, 1024))`)).toMatchObject(
      refused,
    )
    // Two canvases of noise fit (8 MiB, and 4 MiB of image data to fill each); their PNGs, as
    // large as their pixels, do not.
    const images = measure(noise(2))
    expect(images).toMatchObject(refused)
    expect(images.message).toContain('PNG')
    // 64 MiB of tool arguments for the trace, under a trace budget far above the limit: what does
    // not fit in the account is dropped, and the run succeeds.
    const trace = measure(`const arg = 'y'.repeat(1 << 20); for (let i = 0; i < 64; i++) echo(arg); 'done'`, { maxTraceBytes: 1 << 30 })
    expect(trace.output).toBe('done')
    expect(trace.droppedEvents).toBeGreaterThan(0)
  })

  it('an 8 MiB string output crosses whole — original', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 60_000 })
    const { output } = await executor.run(`'z'.repeat(8 * 1024 * 1024)`)
    expect(typeof output === 'string' && output.length).toBe(8 * 1024 * 1024)
    expect(/^z+$/.test(output as string)).toBe(true)
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('a 16 MiB typed-array output crosses as a copy — original', async () => {
    const executor = await SESExecutor.create({ timeoutMs: 60_000 })
    const { output } = await executor.run('const a = new Uint8Array(16 * 1024 * 1024); a[a.length - 1] = 7; a')
    expect(output).toBeInstanceOf(Uint8Array)
    const bytes = output as Uint8Array
    expect([bytes.length, bytes[0], bytes[bytes.length - 1]]).toEqual([16 * 1024 * 1024, 0, 7])
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })
})

describe('denial of service: tools and promises', () => {
  for (const attack of toolsAndPromises) it(attack.name, () => runCase(canary, attack))
})
