// `codeAgentSetup` gives smolagents-ts's CodeAgent an executor that already has
// the tools (CodeAgent itself only ever calls sendTools({}, pythonToolsMap)) and the §14 prompt
// with JavaScript signatures. The whole CodeAgent loop runs in readme.test.ts (swap-in); this
// file pins each part.
import Handlebars from 'handlebars'
import { describe, expect, it } from 'vitest'

import { CODE_AGENT_SYSTEM_PROMPT, ExecutorError, SESExecutor, codeAgentSetup, renderToolsPrompt } from './helpers'
import { ActionStep, BaseModel, CodeAgent, type ChatMessage, type ContentPart } from './stand-ins/smolagents-ts/index.js'

const lookupPrice = {
  name: 'lookup_price',
  description: 'The unit price of an item, in {{currency}}.',
  inputs: { item: { type: 'string', description: 'The item.' } },
  output_type: 'number',
  async forward({ item }: Record<string, unknown>) {
    return ({ apple: 0.5 } as Record<string, number>)[item as string]
  },
}

/** What smolagents-ts's CodeAgent does with `prompt_templates.system_prompt` (its variables). */
function renderAsCodeAgent(template: string, tags: [string, string]) {
  return Handlebars.compile(template, { noEscape: true, strict: false })({
    tools_prompt: 'def lookup_price(item: str) -> float: ...',
    managed_agents_prompt: '',
    has_managed_agents: false,
    authorized_imports: '["collections", "math"]',
    custom_instructions: 'Answer in euros.',
    code_block_opening_tag: tags[0],
    code_block_closing_tag: tags[1],
  })
}

describe('codeAgentSetup', () => {
  it('returns an executor that already has the tools, and keeps them through CodeAgent\'s sendTools({}, pythonToolsMap)', async () => {
    const { executor } = await codeAgentSetup({ tools: [lookupPrice], executorOptions: { maxOperations: 1000 } })
    try {
      expect(executor.state).toBe('READY')
      for (const step of [1, 2]) {
        await executor.sendVariables({ step })
        await (executor.sendTools as (...args: unknown[]) => Promise<void>)({}, { read_file: 'def read_file(path): ...' })
        const out = await executor.run('const price = await lookup_price("apple"); [step, price * 12]')
        expect(out.output).toEqual([step, 6])
      }
      const error = await executor.run('while (true) {}').catch((e: unknown) => e)
      expect((error as InstanceType<typeof ExecutorError>).code).toBe('ERR_MAX_OPS_EXCEEDED')
    } finally {
      await executor.cleanup()
    }
  })

  it('writes the tools\' and final_answer\'s JavaScript signatures into the §14 prompt, which CodeAgent\'s Handlebars leaves as written', async () => {
    const { executor, prompt_templates, code_block_tags } = await codeAgentSetup({
      tools: { lookup_price: lookupPrice, now: () => Date.now() },
      executorOptions: { authorizedImports: ['lodash'] },
    })
    await executor.cleanup()
    expect(code_block_tags).toEqual(['```js', '```'])
    const signatures = renderToolsPrompt({ lookup_price: lookupPrice, now: () => Date.now() })
    const prompt = renderAsCodeAgent(prompt_templates.system_prompt, code_block_tags)
    expect(prompt).toContain(signatures)
    expect(prompt).toContain(' * The unit price of an item, in {{currency}}.')
    expect(prompt).toContain('async function lookup_price(item) {}')
    expect(prompt).toMatch(/ \* @param \{any\} answer - The final answer to the task\.\n \* @returns \{never\}\n \*\/\nfunction final_answer\(answer\) \{\}/)
    expect(prompt).toContain('You may import only from: ["lodash"].')
    expect(prompt).toContain("The code block must start with '```js' and end with '```'.")
    expect(prompt).toContain('Answer in euros.')
    expect(prompt).not.toContain('def lookup_price')
    expect(prompt).not.toContain('collections')
    // Everything else is §14.2 as written.
    const rest = CODE_AGENT_SYSTEM_PROMPT.split('{{{tools_prompt}}}')[0]
    expect(prompt_templates.system_prompt.startsWith(rest)).toBe(true)
  })

  it('takes other fences, and "*" imports as CodeAgent words them', async () => {
    const { executor, prompt_templates, code_block_tags } = await codeAgentSetup({
      codeBlockTags: ['<code>', '</code>'],
      executorOptions: { authorizedImports: ['*'] },
    })
    await executor.cleanup()
    expect(code_block_tags).toEqual(['<code>', '</code>'])
    const prompt = renderAsCodeAgent(prompt_templates.system_prompt, code_block_tags)
    expect(prompt).toContain("The code block must start with '<code>' and end with '</code>'.")
    expect(prompt).toContain('You may import any module the runtime registers.')
  })

  it('refuses what CodeAgent could not use, before any executor exists', async () => {
    const refusals: Array<[unknown, RegExp]> = [
      [{ tools: [{ ...lookupPrice, name: 'final_answer' }] }, /final_answer is built into the executor/],
      [{ tools: [{ description: 'no name', forward() {} }] }, /needs a string name/],
      [{ tools: [lookupPrice, lookupPrice] }, /two tools are named lookup_price/],
      [{ tools: 'lookup_price' }, /tools must be an array of tool objects or an object of tools/],
      [{ codeBlockTags: ['```js'] }, /codeBlockTags must be two non-empty strings/],
      [{ tools: [{ ...lookupPrice, name: 'lookup-price' }] }, /is not a JavaScript identifier/],
      [null, /options must be an object/],
    ]
    for (const [options, message] of refusals) {
      await expect(codeAgentSetup(options as Parameters<typeof codeAgentSetup>[0])).rejects.toThrow(message)
    }
  })

  it('rejects invalid executor options with the executor\'s own ExecutorError', async () => {
    const error = await codeAgentSetup({ executorOptions: { timeoutMs: 0 } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ExecutorError)
    expect((error as InstanceType<typeof ExecutorError>).code).toBe('ERR_VALIDATION_FAILED')
  })

  it('rejects a tool name the sandbox reserves, as sendTools does', async () => {
    const error = await codeAgentSetup({ tools: { console: () => 1 } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ExecutorError)
  })
})

const FENCE = '`'.repeat(3)

/** A model that answers with `replies` in turn and keeps each request's messages. */
class ScriptedModel extends BaseModel {
  requests: ChatMessage[][] = []
  constructor(private readonly replies: string[]) {
    super()
  }
  async generate(messages: ChatMessage[]): Promise<ChatMessage> {
    this.requests.push(messages)
    return { role: 'assistant', content: this.replies[this.requests.length - 1] ?? this.replies.at(-1) ?? '' }
  }
}

/** Runs a one-step agent whose reply is `reply`; what CodeAgent throws (the run must fail). */
async function failedStep(reply: string, options: Parameters<typeof codeAgentSetup>[0] = {}) {
  const setup = await codeAgentSetup(options)
  const agent = new CodeAgent({ model: new ScriptedModel([reply]), tools: [], ...setup })
  try {
    await agent.run('Fail.')
  } catch (error) {
    return error as Error
  } finally {
    await agent.cleanup()
  }
  throw new Error('the step did not fail')
}

describe('a CodeAgent step\'s error', () => {
  it('names the model\'s own line, CodeAgent passing the code from right after the fence', async () => {
    const error = await failedStep(`Thought: read a missing property.\n${FENCE}js\nconst ok = { a: 1 };\nconst bad = ok.missing.deeper;\n${FENCE}`)
    expect(error.name).toBe('AgentExecutionError')
    expect(error.message).toMatch(/^Runtime exception: TypeError: cannot read property 'deeper' of undefined \(line 2: const bad = ok\.missing\.deeper;\)$/)
  })

  it('names the model\'s line whatever line breaks the model wrote, and after blank lines', async () => {
    for (const [reply, line] of [
      [`${FENCE}js\r\nconst a = 1;\r\nnull.x;\r\n${FENCE}`, 2],
      [`${FENCE}js\n\n\nnull.x;\n${FENCE}`, 3],
      [`${FENCE}js null.x; ${FENCE}`, 1],
      [`${FENCE}js\n    const a = 1;\n    null.x;\n${FENCE}`, 2],
    ] as const) {
      const error = await failedStep(reply)
      expect(error.message, JSON.stringify(reply)).toContain(`(line ${line}: null.x;)`)
    }
  })

  it('reports validation errors at the model\'s line too', async () => {
    const error = await failedStep(`${FENCE}js\nconst a = 1;\nconst = 2;\n${FENCE}`)
    expect(error.message).toMatch(/^Code validation failed:\n2:7 syntax_valid/)
  })

  it('comes from an executor that counts lines from the first character for everyone else', async () => {
    const { executor } = await codeAgentSetup()
    const plain = await SESExecutorFor(async (other) => {
      const mine = await executor.run('\nnull.x').catch((e: InstanceType<typeof ExecutorError>) => e.details.line)
      const theirs = await other.run('\nnull.x').catch((e: InstanceType<typeof ExecutorError>) => e.details.line)
      return [mine, theirs]
    })
    await executor.cleanup()
    // Only the one line break that ends the fence's line is dropped, and only by this executor.
    expect(plain).toEqual([1, 2])
  })
})

/** Runs `use` with a plain SESExecutor, cleaned up after. */
async function SESExecutorFor<T>(use: (executor: InstanceType<typeof SESExecutor>) => Promise<T>): Promise<T> {
  const executor = await SESExecutor.create()
  try {
    return await use(executor)
  } finally {
    await executor.cleanup()
  }
}

/** The image parts of the user messages of `messages`. */
function imageParts(messages: ChatMessage[]): ContentPart[] {
  return messages.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.filter((part) => part.type === 'image') : []))
}

/** Code that draws one 2 × 2 canvas (a canvas nothing was drawn on is no image). */
const DRAW = "getCanvas(2, 2).getContext('2d').fillRect(0, 0, 1, 1)"

describe('stepImages', () => {
  const draw = `Thought: draw two.\n${FENCE}js\nfor (const size of [8, 16]) getCanvas(size, size).getContext("2d").fillRect(0, 0, 4, 4);\n"drawn"\n${FENCE}`
  const look = `Thought: nothing to draw.\n${FENCE}js\nconsole.log("looked")\n${FENCE}`
  const answer = `Thought: done.\n${FENCE}js\nfinal_answer("seen")\n${FENCE}`

  it('shows the model the canvases a step drew, as image parts in a user message after that step', async () => {
    const setup = await codeAgentSetup({ stepImages: true })
    expect(setup.step_callbacks).toHaveLength(1)
    const model = new ScriptedModel([draw, look, answer])
    const agent = new CodeAgent({ model, tools: [], ...setup })
    try {
      expect(await agent.run('Draw.')).toBe('seen')
    } finally {
      await agent.cleanup()
    }
    const [, second, third] = model.requests
    const parts = imageParts(second!)
    expect(parts).toHaveLength(2)
    for (const part of parts) expect(part).toMatchObject({ type: 'image', image: expect.stringMatching(/^data:image\/png;base64,iVBORw0KGgo/) })
    // PNG sizes in the header say which canvas is which: in the order drawn.
    const widths = parts.map((part) => Buffer.from(String((part as { image: string }).image).split(',')[1]!, 'base64').readUInt32BE(16))
    expect(widths).toEqual([8, 16])
    const last = second!.at(-1)!
    expect(last.role).toBe('user')
    expect((last.content as ContentPart[])[0]).toEqual({ type: 'text', text: 'The 2 images the code of this step drew, in order:' })
    expect(second!.at(-2)).toMatchObject({ role: 'assistant', content: expect.stringContaining('Observation:') })
    // The step that drew nothing adds none; the first step's stay where they were.
    expect(imageParts(third!)).toHaveLength(2)
  })

  it('leaves a summary as text, and is off unless asked for', async () => {
    const setup = await codeAgentSetup({ stepImages: true })
    await setup.executor.run(DRAW)
    const step = new ActionStep(1)
    step.observations = 'Execution logs:\n'
    await setup.step_callbacks![0]!(step)
    expect(step.to_messages(true).every((m) => typeof m.content === 'string')).toBe(true)
    expect(imageParts(step.to_messages())).toHaveLength(1)
    await setup.executor.cleanup()
    const plain = await codeAgentSetup()
    await plain.executor.cleanup()
    expect('step_callbacks' in plain).toBe(false)
    await expect(codeAgentSetup({ stepImages: 'yes' as unknown as boolean })).rejects.toThrow(/stepImages must be a boolean/)
  })

  it('attaches nothing to a step whose run failed, or to what is no action step', async () => {
    const setup = await codeAgentSetup({ stepImages: true })
    await setup.executor.run(DRAW)
    await setup.executor.run(`${DRAW}; null.x`).catch(() => undefined)
    const step = new ActionStep(1)
    step.observations = ''
    const [attach] = setup.step_callbacks!
    await attach!(step)
    expect(imageParts(step.to_messages())).toHaveLength(0)
    await setup.executor.run(DRAW)
    await attach!({ to_messages: () => [] })
    await attach!(step)
    expect(imageParts(step.to_messages())).toHaveLength(0)
    // A step that cannot take them (frozen) is left as it is; the callback does not throw.
    await setup.executor.run(DRAW)
    const frozen = Object.freeze(Object.assign(new ActionStep(2), { observations: '' }))
    await attach!(frozen)
    expect(imageParts(frozen.to_messages())).toHaveLength(0)
    await setup.executor.cleanup()
  })

  it('reads the step once, and a step whose getters or traps throw is left as it is', async () => {
    const setup = await codeAgentSetup({ stepImages: true })
    const [attach] = setup.step_callbacks!
    // A getter that throws on its second read: read once, the images are attached.
    await setup.executor.run(DRAW)
    const step = Object.assign(new ActionStep(1), { observations: '' })
    const render = step.to_messages
    let reads = 0
    Object.defineProperty(step, 'to_messages', {
      configurable: true,
      get() {
        reads += 1
        if (reads > 1) throw new Error('read again')
        return render
      },
    })
    await attach!(step)
    expect(reads).toBe(1)
    expect(imageParts(step.to_messages())).toHaveLength(1)
    // A getter that throws, and a Proxy whose `has` trap throws: nothing attached, nothing thrown.
    await setup.executor.run(DRAW)
    const unreadable = Object.defineProperty(Object.assign(new ActionStep(2), { observations: '' }), 'to_messages', {
      get() {
        throw new Error('no')
      },
    })
    expect(() => attach!(unreadable)).not.toThrow()
    await setup.executor.run(DRAW)
    const trapped = new Proxy(Object.assign(new ActionStep(3), { observations: '' }), {
      has() {
        throw new Error('no')
      },
    })
    expect(() => attach!(trapped)).not.toThrow()
    expect(imageParts(trapped.to_messages())).toHaveLength(0)
    await setup.executor.cleanup()
  })
})

describe('the import rule of the prompt', () => {
  it('says that nothing may be imported when nothing may', async () => {
    const { executor, prompt_templates } = await codeAgentSetup()
    await executor.cleanup()
    expect(prompt_templates.system_prompt).toContain('Nothing may be imported: no module is available to import.')
    expect(prompt_templates.system_prompt).not.toContain('[]')
  })
})

