// Nothing is lost silently. An output, a final answer, a tool's argument or
// result, a variable or a log crosses whole, or the run (or the call) fails with an error that
// names the limit and the size. Before: a 100 MiB string output arrived as "", a tool got "" for
// a 100 MiB argument, and arrays past the copy limits arrived as their inspect strings.
import { describe, expect, it } from 'vitest'

import { ExecutorError, SESExecutor, rejectionOf } from '../helpers'
import { expectUsable } from './harness'

const MiB = 1024 * 1024
const DEFAULT_MAX_VALUE_BYTES = 64 * MiB

async function executor(options: Record<string, unknown> = {}) {
  return SESExecutor.create({ timeoutMs: 60_000, maxOperations: 1e7, ...options })
}

describe('class 5: values past maxValueBytes fail, naming the limit and the size', () => {
  it('a 100 MiB string output is ERR_RUNTIME_EXCEPTION with details.limit maxValueBytes (it used to arrive as "")', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run("'x'.repeat(100 * 1024 * 1024)"))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details).toMatchObject({ limit: 'maxValueBytes', max: DEFAULT_MAX_VALUE_BYTES, size: 100 * MiB + 8, line: 1 })
    expect(error.message).toBe(
      `Runtime exception: RangeError: output is at least ${100 * MiB + 8} bytes, more than maxValueBytes (${DEFAULT_MAX_VALUE_BYTES}) allows for one value (line 1: 'x'.repeat(100 * 1024 * 1024))`,
    )
    await expectUsable(ex, 'READY')
    await ex.cleanup()
  })

  it('with maxValueBytes raised, the same 100 MiB string crosses whole under the default 256 MiB heap', async () => {
    const ex = await executor({ maxValueBytes: 128 * MiB })
    const { output } = await ex.run("'x'.repeat(100 * 1024 * 1024)")
    expect(typeof output).toBe('string')
    expect((output as string).length).toBe(100 * MiB)
    expect(/^x+$/.test(output as string)).toBe(true)
    await ex.cleanup()
  })

  it('a string of 16-bit characters filling most of a 64 MiB heap crosses whole', async () => {
    const ex = await executor({ memoryLimitBytes: 64 * MiB, maxValueBytes: 128 * MiB })
    const { output } = await ex.run("'é€'.repeat(12 * 1024 * 1024)")
    expect((output as string).length).toBe(24 * MiB)
    expect((output as string).slice(0, 4)).toBe('é€é€')
    await ex.cleanup()
  })

  it('a final answer past the limit throws a catchable RangeError; uncaught, the run fails naming it', async () => {
    const ex = await executor({ maxValueBytes: MiB })
    const error = await rejectionOf(ex.run("final_answer('y'.repeat(2 * 1024 * 1024))"))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details).toMatchObject({ limit: 'maxValueBytes', max: MiB, size: 2 * MiB + 8 })
    expect(error.message).toMatch(/^Runtime exception: RangeError: final_answer\(value\) is at least 2097160 bytes, more than maxValueBytes \(1048576\)/)
    const recovered = await ex.run(`
      let answer;
      try { final_answer('y'.repeat(2 * 1024 * 1024)) } catch (e) { answer = e instanceof RangeError && e.message }
      final_answer('smaller: ' + answer.slice(0, 39))`)
    expect([recovered.is_final_answer, recovered.output]).toEqual([true, 'smaller: final_answer(value) is at least 2097160'])
    await ex.cleanup()
  })

  it('the limit counts every copy of a shared string: Array(1000).fill(a 1 MiB string) is refused, not copied to 1 GiB', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run("Array(1000).fill('s'.repeat(1024 * 1024))"))
    expect(error.details).toMatchObject({ limit: 'maxValueBytes', max: DEFAULT_MAX_VALUE_BYTES })
    expect(error.message).toMatch(/^Runtime exception: RangeError: output\[\d+\] is at least \d+ bytes/)
    expect(error.details.size as number).toBeLessThan(DEFAULT_MAX_VALUE_BYTES + 2 * MiB)
    await ex.cleanup()
  })

  it('a tool argument past the limit fails the call with ERR_TOOL_PROXY_FAIL naming it; the tool is never called with less', async () => {
    const ex = await executor({ maxValueBytes: MiB })
    const lengths: number[] = []
    await ex.sendTools({ take: (text: string) => lengths.push(text.length) })
    const error = await rejectionOf(ex.run("take('a'.repeat(2 * 1024 * 1024))"))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.message).toBe(
      'Tool execution failed: take: RangeError: take argument 0 is at least 2097160 bytes, more than maxValueBytes (1048576) allows for one value',
    )
    expect(lengths).toEqual([])
    // Under the limit it arrives whole (it used to arrive as "" near the heap limit).
    await ex.run("take('a'.repeat(1024 * 1024 - 100))")
    expect(lengths).toEqual([MiB - 100])
    await ex.cleanup()
  })

  it('a tool argument that fills most of the heap arrives whole (it used to arrive as "")', async () => {
    const ex = await executor({ maxValueBytes: 128 * MiB })
    const lengths: number[] = []
    await ex.sendTools({ take: (text: string) => lengths.push(text.length) })
    await ex.run("take('a'.repeat(100 * 1024 * 1024))")
    expect(lengths).toEqual([100 * MiB])
    await ex.cleanup()
  })

  it('a tool result past the limit (sync or async) is ERR_TOOL_PROXY_FAIL naming it', async () => {
    const ex = await executor({ maxValueBytes: MiB })
    await ex.sendTools({ big: () => 'r'.repeat(2 * MiB), later: async () => ({ list: Array(300_000).fill(1) }) })
    expect((await rejectionOf(ex.run('big().length'))).message).toBe(
      'Tool execution failed: big: RangeError: the result of big is at least 2097160 bytes, more than maxValueBytes (1048576) allows for one value',
    )
    expect((await rejectionOf(ex.run('(await later()).list.length'))).message).toMatch(
      /^Tool execution failed: later: RangeError: the result of the tool\.list\[\d+\] is at least \d+ bytes, more than maxValueBytes \(1048576\)/,
    )
    await expectUsable(ex, 'READY')
    await ex.cleanup()
  })

  it('a variable past the limit is refused with details.limit, size and path', async () => {
    const ex = await executor({ maxValueBytes: MiB })
    const error = await rejectionOf(ex.sendVariables({ doc: { text: 'v'.repeat(2 * MiB) } }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.details).toMatchObject({ limit: 'maxValueBytes', max: MiB, path: 'variables.doc.text' })
    expect(error.message).toBe(
      'Code validation failed:\noptions_valid: variables.doc.text is at least 2097168 bytes, more than maxValueBytes (1048576) allows for one value',
    )
    await ex.cleanup()
  })
})

describe('class 5: the copy limits fail the run instead of describing the value', () => {
  it('an output array longer than 2^24 fails naming maxArrayLength (it used to arrive as "[ <16777217 empty items> ]")', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('const a = []; a.length = 2 ** 24 + 1; a'))
    expect(error.details).toMatchObject({ limit: 'maxArrayLength', size: 2 ** 24 + 1, max: 2 ** 24 })
    await ex.cleanup()
  })

  it('an output array with more than 2^20 holes fails naming maxArrayHoles', async () => {
    const ex = await executor()
    const error = await rejectionOf(ex.run('const a = [1]; a[2_000_000] = 2; ({ a })'))
    expect(error.details).toMatchObject({ limit: 'maxArrayHoles', max: 2 ** 20 })
    expect(error.message).toMatch(/^Runtime exception: RangeError: output\.a is an array with more than 1048576 holes/)
    await ex.cleanup()
  })

  it('an output nested deeper than 1000 levels fails naming maxCopyDepth; 1000 levels cross whole', async () => {
    const ex = await executor()
    const deep = await ex.run('let o = null; for (let i = 0; i < 1000; i++) o = [o]; o')
    let levels = 0
    for (let o = deep.output as unknown[] | null; Array.isArray(o); o = o[0] as unknown[] | null) levels++
    expect(levels).toBe(1000)
    const error = await rejectionOf(ex.run('let p = null; for (let i = 0; i < 1001; i++) p = [p]; p'))
    expect(error.details).toMatchObject({ limit: 'maxCopyDepth', max: 1000, size: 1001 })
    await ex.cleanup()
  })

  it('a dense array of 3 million numbers, under every limit, crosses whole', async () => {
    const ex = await executor()
    const { output } = await ex.run('Array.from({ length: 3e6 }, (_, i) => i)')
    expect((output as number[]).length).toBe(3e6)
    expect((output as number[])[2_999_999]).toBe(2_999_999)
    await ex.cleanup()
  })
})

describe('class 5: logs are whole or visibly cut', () => {
  it('a log line that fills most of the heap is kept whole within maxLogBytes (it used to be "")', async () => {
    // The logs count against memoryLimitBytes too: the line and its copy in the logs fit in 128 MiB.
    const ex = await executor({ memoryLimitBytes: 128 * MiB, maxLogBytes: 64 * MiB })
    const { logs, logEntries } = await ex.run("console.log('L'.repeat(40 * 1024 * 1024)); 1")
    expect(logs.length).toBe(40 * MiB)
    expect(logEntries).toHaveLength(1)
    await ex.cleanup()
  })

  it('a log line the memory limit has no room to copy is cut and marked, not dropped', async () => {
    const ex = await executor({ memoryLimitBytes: 64 * MiB, maxLogBytes: 64 * MiB })
    const { logs, logEntries, stats } = await ex.run("console.log('L'.repeat(40 * 1024 * 1024)); 1")
    expect(logs.endsWith('...[TRUNCATED]')).toBe(true)
    expect(logs.length).toBeGreaterThan(MiB)
    expect(logs.length).toBeLessThan(40 * MiB)
    expect(logEntries).toHaveLength(1)
    expect(stats.peakHeapBytes).toBeLessThanOrEqual(64 * MiB)
    await ex.cleanup()
  })

  it('past maxLogBytes the cut is marked, never silent', async () => {
    const ex = await executor({ maxLogBytes: 1024 })
    const { logs } = await ex.run("console.log('m'.repeat(5000)); 1")
    expect(logs).toBe(`${'m'.repeat(1024)}...[TRUNCATED]`)
    await ex.cleanup()
  })
})

describe('class 5: errors stay ExecutorErrors', () => {
  it('every failure above is an ExecutorError instance', async () => {
    const ex = await executor({ maxValueBytes: 1024 })
    const error = await ex.run("'z'.repeat(2000)").catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ExecutorError)
    await ex.cleanup()
  })
})
