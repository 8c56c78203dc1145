// `createRunJavaScriptTool`, an executor offered to a model as the
// function-calling tool `run_javascript`. The definition is checked against JSON Schema (ajv,
// strict mode), and the tool is driven by a scripted tool-calling loop as a model API drives it:
// arguments arrive as JSON text, results go back as the tool message's JSON content.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import Ajv from 'ajv'
import { describe, expect, it } from 'vitest'

import { createRunJavaScriptTool, executorsCleanedAfterEach } from './helpers'
import { decodePng } from './png'

const executor = executorsCleanedAfterEach({ timeoutMs: 5000 })

/** The tool-definition shape of OpenAI's Chat Completions API. */
const OPENAI_FUNCTION_TOOL = {
  type: 'object',
  required: ['type', 'function'],
  additionalProperties: false,
  properties: {
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'description', 'parameters'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        description: { type: 'string', minLength: 1 },
        parameters: {
          type: 'object',
          required: ['type', 'properties'],
          properties: { type: { const: 'object' }, properties: { type: 'object' } },
        },
      },
    },
  },
}

type Message =
  | { role: 'user' | 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }
interface ToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/**
 * A tool-calling loop against a scripted model: each turn the model sees the transcript and
 * answers with tool calls or a final text, as a chat-completions API would.
 */
async function converse(
  tool: ReturnType<typeof createRunJavaScriptTool>,
  model: (transcript: Message[]) => { content: string; tool_calls?: ToolCall[] },
) {
  const transcript: Message[] = [{ role: 'user', content: 'Summarise the sales figures.' }]
  for (let turn = 0; turn < 10; turn++) {
    const reply = model(transcript)
    transcript.push({ role: 'assistant', ...reply })
    if (!reply.tool_calls?.length) return transcript
    for (const call of reply.tool_calls) {
      expect(call.function.name).toBe(tool.definition.function.name)
      const result = await tool.execute(call.function.arguments)
      transcript.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) })
    }
  }
  throw new Error('the model never stopped calling tools')
}

const call = (id: string, args: unknown): ToolCall => ({
  id,
  type: 'function',
  function: { name: 'run_javascript', arguments: JSON.stringify(args) },
})

describe('run_javascript tool definition', () => {
  it('is an OpenAI function tool whose parameters are a valid JSON Schema for { code, input }', async () => {
    const { definition } = createRunJavaScriptTool(await executor())
    const ajv = new Ajv({ strict: true, allErrors: true })
    expect(ajv.validate(OPENAI_FUNCTION_TOOL, definition), ajv.errorsText()).toBe(true)
    expect(definition.function.name).toBe('run_javascript')
    // Compiling in strict mode fails on any unknown keyword or malformed schema.
    expect(ajv.validateSchema(definition.function.parameters), ajv.errorsText()).toBe(true)
    const validate = ajv.compile(definition.function.parameters)
    expect(validate({ code: '1 + 1' })).toBe(true)
    expect(validate({ code: 'input.n', input: { n: [1, 'two', null] } })).toBe(true)
    expect(validate({})).toBe(false)
    expect(validate({ code: 42 })).toBe(false)
    expect(validate({ code: '1', extra: true })).toBe(false)
  })

  it('describes the sandbox rules, the canvas and PNG images, input, and timers as configured', async () => {
    const ex = await executor()
    const plain = createRunJavaScriptTool(ex).definition.function.description
    for (const phrase of ['getCanvas(width, height)', 'PNG', 'no require', '`input`', 'State persists', 'There are no timers']) {
      expect(plain).toContain(phrase)
    }
    const withTimers = createRunJavaScriptTool(ex, { timers: true, tools: ['search'] }).definition.function.description
    expect(withTimers).toContain('setTimeout/setInterval')
    expect(withTimers).toContain('search')
    expect(createRunJavaScriptTool(ex, { name: 'js', description: 'Mine.' }).definition.function).toMatchObject({
      name: 'js',
      description: 'Mine.',
    })
  })

  it('refuses a malformed executor or options with a TypeError', async () => {
    expect(() => createRunJavaScriptTool({} as never)).toThrow(TypeError)
    const ex = await executor()
    expect(() => createRunJavaScriptTool(ex, { name: 'has space' })).toThrow(TypeError)
    expect(() => createRunJavaScriptTool(ex, { tools: [1] as never })).toThrow(TypeError)
  })
})

describe('run_javascript in a tool-calling loop', () => {
  it('runs calls with input, keeps state across calls, returns images as data URLs and errors as data', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const sales = [
      { region: 'north', total: 120 },
      { region: 'south', total: 80 },
    ]
    const seen: unknown[] = []
    const transcript = await converse(tool, (messages) => {
      const last = messages[messages.length - 1]
      if (last.role === 'tool') seen.push(JSON.parse(last.content))
      switch (seen.length) {
        case 0:
          return {
            content: '',
            tool_calls: [
              call('c1', {
                code: `
                  const totals = input.map((r) => r.total)
                  const canvas = getCanvas(40, 20)
                  const g = canvas.getContext('2d')
                  g.fillStyle = 'rgb(0, 0, 255)'
                  g.fillRect(0, 0, 40, 20)
                  console.log('rows', input.length)
                  totals.reduce((a, b) => a + b, 0)
                `,
                input: sales,
              }),
            ],
          }
        case 1:
          // State from the first call; this call has no input.
          return { content: '', tool_calls: [call('c2', { code: 'const mean = totals[0] / 0; [typeof input, totals, mean]' })] }
        case 2:
          return { content: '', tool_calls: [call('c3', { code: 'const rows = null\nrows.length' })] }
        default:
          return { content: `Total ${(seen[0] as { output: number }).output}.` }
      }
    })

    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant'])
    expect(transcript[transcript.length - 1].content).toBe('Total 200.')
    const [first, second, third] = seen as any[]
    expect(first).toMatchObject({ ok: true, output: 200, logs: 'rows 2', is_final_answer: false })
    expect(first.images).toHaveLength(1)
    const image = first.images[0]
    expect(image).toMatchObject({ mimeType: 'image/png', width: 40, height: 20 })
    expect(image.dataUrl).toMatch(/^data:image\/png;base64,/)
    const png = decodePng(Buffer.from(image.dataUrl.split(',')[1], 'base64'))
    expect([png.width, png.height, png.at(20, 10)]).toEqual([40, 20, [0, 0, 255, 255]])

    expect(second).toEqual({ ok: true, output: ['undefined', [120, 80], 'Infinity'], logs: '', is_final_answer: false, images: [] })

    expect(third.ok).toBe(false)
    expect(third.error).toMatchObject({ code: 'ERR_RUNTIME_EXCEPTION', retryable: true, details: { line: 2, sourceLine: 'rows.length' } })
    expect(third.error.message).toContain('null')
  })

  it('gives final_answer through is_final_answer', async () => {
    const tool = createRunJavaScriptTool(await executor())
    expect(await tool.execute({ code: 'final_answer({ done: input })', input: 7 })).toEqual({
      ok: true,
      output: { done: 7 },
      logs: '',
      is_final_answer: true,
      images: [],
    })
  })

  it('makes every output JSON-safe without losing what JSON cannot say', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const result = await tool.execute({
      code: `
        const loop = { name: 'loop' }; loop.self = loop;
        ({ big: 12n, nan: NaN, inf: -Infinity, gone: undefined, list: [undefined, 1],
           when: new Date(0), map: new Map([['a', 1]]), set: new Set([2]), bytes: new Uint8Array([1, 2]),
           error: new RangeError('r'), loop })
      `,
    })
    expect(result.ok).toBe(true)
    expect(JSON.parse(JSON.stringify(result))).toEqual(result)
    expect((result as { output: unknown }).output).toEqual({
      big: '12n',
      nan: 'NaN',
      inf: '-Infinity',
      list: [null, 1],
      when: '1970-01-01T00:00:00.000Z',
      map: [['a', 1]],
      set: [2],
      bytes: [1, 2],
      error: { name: 'RangeError', message: 'r' },
      loop: { name: 'loop', self: '[Circular]' },
    })
  })

  it('answers malformed arguments and refused runs with errors as data, never a rejection', async () => {
    const tool = createRunJavaScriptTool(await executor({ timeoutMs: 300, maxOperations: 1e12 }))
    const notJson = await tool.execute('{"code": ')
    expect(notJson).toMatchObject({ ok: false, error: { code: 'ERR_VALIDATION_FAILED' } })
    expect((notJson as { error: { message: string } }).error.message).toContain('not valid JSON')
    expect(await tool.execute({ code: 7 } as never)).toMatchObject({ ok: false, error: { code: 'ERR_VALIDATION_FAILED' } })
    const invalid = await tool.execute({ code: 'with (x) {}' })
    expect(invalid).toMatchObject({ ok: false, error: { code: 'ERR_VALIDATION_FAILED' } })
    expect((invalid as any).error.details.diagnostics[0].rule).toBe('with_statement_forbidden')
    const timedOut = await tool.execute({ code: 'console.log("before"); while (true) {}' })
    expect(timedOut).toMatchObject({ ok: false, error: { code: 'ERR_EXEC_TIMEOUT' }, logs: 'before' })
    expect(JSON.parse(JSON.stringify(timedOut))).toEqual(timedOut)
  })

  it('writes images to imageDir and returns their paths when asked', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'run-js-images-'))
    const tool = createRunJavaScriptTool(await executor(), { imageDir: dir })
    const result = (await tool.execute({ code: "getCanvas(3, 2).getContext('2d').fillRect(0, 0, 1, 1)" })) as any
    expect(result.images).toHaveLength(1)
    expect(path.dirname(result.images[0].path)).toBe(dir)
    expect(decodePng(readFileSync(result.images[0].path))).toMatchObject({ width: 3, height: 2 })
  })
})

describe('run_javascript results as messages', () => {
  const draw = "for (const [w, h] of [[3, 2], [5, 4]]) getCanvas(w, h).getContext('2d').fillRect(0, 0, 1, 1); 'two'"

  it('answers a call with the tool message, then the images as OpenAI image parts in a user message', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const result = await tool.execute({ code: draw })
    const [answer, shown, ...rest] = tool.toMessages('call_7', result)
    expect(rest).toEqual([])
    expect(answer).toMatchObject({ role: 'tool', tool_call_id: 'call_7' })
    expect(answer!.content).not.toContain('base64')
    expect(JSON.parse(answer!.content as string)).toEqual({
      ok: true,
      output: 'two',
      logs: '',
      is_final_answer: false,
      images: [
        { mimeType: 'image/png', width: 3, height: 2, image: 1 },
        { mimeType: 'image/png', width: 5, height: 4, image: 2 },
      ],
    })
    expect(shown!.role).toBe('user')
    const [text, ...images] = shown!.content as Array<Record<string, any>>
    expect(text).toEqual({ type: 'text', text: 'The 2 images drawn by the run_javascript call call_7, in order:' })
    expect(images.map((part) => part.type)).toEqual(['image_url', 'image_url'])
    const sizes = images.map((part) => decodePng(Buffer.from(part.image_url.url.split(',')[1], 'base64')))
    expect(sizes.map(({ width, height }) => [width, height])).toEqual([[3, 2], [5, 4]])
  })

  it('gives smolagents-ts messages and image parts with format "smolagents"', async () => {
    const tool = createRunJavaScriptTool(await executor(), { name: 'js' })
    const result = await tool.execute({ code: "getCanvas(2, 2).getContext('2d').fillRect(0, 0, 1, 1); 'one'" })
    const [answer, shown] = tool.toMessages('c1', result, { format: 'smolagents' })
    expect(answer).toMatchObject({ role: 'tool', tool_call_id: 'c1', name: 'js' })
    expect(shown!.content).toEqual([
      { type: 'text', text: 'The image drawn by the js call c1:' },
      { type: 'image', image: expect.stringMatching(/^data:image\/png;base64,/) },
    ])
  })

  it('is the tool message alone when nothing was drawn, for failures, and for images in imageDir', async () => {
    const tool = createRunJavaScriptTool(await executor())
    expect(tool.toMessages('a', await tool.execute({ code: '1 + 1' }))).toHaveLength(1)
    const failed = tool.toMessages('b', await tool.execute({ code: 'null.x' }))
    expect(failed).toHaveLength(1)
    expect(JSON.parse(failed[0]!.content as string).error.details.errorName).toBe('TypeError')
    const dir = mkdtempSync(path.join(tmpdir(), 'run-js-messages-'))
    const files = createRunJavaScriptTool(await executor(), { imageDir: dir })
    const written = files.toMessages('c', await files.execute({ code: "getCanvas(2, 2).getContext('2d').fillRect(0, 0, 1, 1)" }))
    expect(written).toHaveLength(1)
    expect(JSON.parse(written[0]!.content as string).images[0].path.startsWith(dir)).toBe(true)
  })

  it('refuses malformed arguments with a TypeError', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const result = await tool.execute({ code: '1' })
    expect(() => tool.toMessages(7 as unknown as string, result)).toThrow(TypeError)
    expect(() => tool.toMessages('a', null as never)).toThrow(TypeError)
    expect(() => tool.toMessages('a', result, { format: 'anthropic' as never })).toThrow(/format must be "chat-completions" or "smolagents"/)
  })

  it('reads the result and the options once, and names what throws as it is read', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const result = await tool.execute({ code: "getCanvas(2, 2).getContext('2d').fillRect(0, 0, 1, 1); 'one'" })
    const reads: string[] = []
    const counted = new Proxy(result, {
      get(target, key, receiver) {
        reads.push(String(key))
        return Reflect.get(target, key, receiver)
      },
    })
    const options = {
      get format() {
        reads.push('format')
        return 'smolagents' as const
      },
    }
    const [reply, shown] = tool.toMessages('c', counted, options)
    expect(reads.filter((key) => key === 'images')).toHaveLength(1)
    expect(reads.filter((key) => key === 'format')).toHaveLength(1)
    expect(JSON.parse(reply!.content as string).images).toEqual([{ mimeType: 'image/png', width: 2, height: 2, image: 1 }])
    expect((shown!.content as Array<{ type: string }>).map((part) => part.type)).toEqual(['text', 'image'])
    const throwing = Object.defineProperty({ ...result }, 'images', {
      enumerable: true,
      get() {
        throw new Error('no')
      },
    })
    expect(() => tool.toMessages('c', throwing)).toThrow(/run_javascript\.toMessages: result\.images cannot be read \(reading it threw Error: no\)/)
    expect(() =>
      tool.toMessages('c', result, {
        get format(): never {
          throw new Error('no')
        },
      }),
    ).toThrow(/options\.format cannot be read/)
  })
})

describe('run_javascript amplifies nothing and injects nothing', () => {
  it('an output JSON would blow up (a 1 MiB array referenced 1,024 times, a 2^23-leaf DAG) is a structured failure, within a small heap', () => {
    const child = spawnSync(process.execPath, ['--max-old-space-size=256', '--expose-gc', fileURLToPath(new URL('./fixtures/run-js-amplification.cjs', import.meta.url))], {
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const { shared, dag, heapUsed } = JSON.parse(child.stdout)
    const tooLarge = {
      ok: false,
      error: {
        code: 'ERR_RUNTIME_EXCEPTION',
        message:
          'Runtime exception: RangeError: the output is more than maxOutputBytes (1048576) as JSON; return a smaller value (a summary, a slice, a count)',
        retryable: true,
        details: { limit: 'maxOutputBytes', max: 1048576 },
      },
    }
    expect(shared).toEqual(tooLarge)
    expect(dag).toEqual(tooLarge)
    expect(heapUsed).toBeLessThan(64 * 1024 * 1024)
  })

  it('counts the work of shared references, not only their bytes: a DAG whose JSON is over the limit stops there', async () => {
    const tool = createRunJavaScriptTool(await executor(), { maxOutputBytes: 10_000 })
    // 2^12 leaves of `1` are about 16 KB of JSON, from 13 arrays in the sandbox.
    const dag = await tool.execute({ code: 'let node = [1]; for (let i = 0; i < 12; i++) node = [node, node]; node' })
    expect(dag).toMatchObject({ ok: false, error: { code: 'ERR_RUNTIME_EXCEPTION', details: { limit: 'maxOutputBytes', max: 10_000 } } })
    // Under the limit, a shared reference is written out in full each time, as JSON must.
    const fits = await tool.execute({ code: 'const part = { n: 1 }; [part, part]' })
    expect(fits).toMatchObject({ ok: true, output: [{ n: 1 }, { n: 1 }] })
  })

  it('maxOutputBytes is the JSON of the output: a value just under it passes, just over it fails', async () => {
    const tool = createRunJavaScriptTool(await executor(), { maxOutputBytes: 1000 })
    expect(await tool.execute({ code: '"x".repeat(900)' })).toMatchObject({ ok: true })
    expect(await tool.execute({ code: '"x".repeat(1000)' })).toMatchObject({ ok: false, error: { details: { limit: 'maxOutputBytes' } } })
    expect(await tool.execute({ code: 'new Uint8Array(600)' })).toMatchObject({ ok: false })
  })

  it('an own "__proto__" key in the output stays a key: no result object takes its prototype from data', async () => {
    const tool = createRunJavaScriptTool(await executor())
    const result = (await tool.execute({
      code: `const o = JSON.parse('{"__proto__": {"polluted": true}, "list": [{"__proto__": {"deep": 1}}]}');
        [o, new Map([['k', o.list[0]]])]`,
    })) as { ok: true; output: any[] }
    expect(result.ok).toBe(true)
    const [object, map] = result.output
    for (const part of [object, object.list[0], map[0][1]]) {
      expect(Object.getPrototypeOf(part)).toBe(Object.prototype)
      expect(Object.hasOwn(part, '__proto__')).toBe(true)
    }
    expect(object.polluted).toBeUndefined()
    expect(object.list[0].deep).toBeUndefined()
    expect(JSON.parse(JSON.stringify(result.output))).toEqual(JSON.parse('[{"__proto__": {"polluted": true}, "list": [{"__proto__": {"deep": 1}}]}, [["k", {"__proto__": {"deep": 1}}]]]'))
  })
})
