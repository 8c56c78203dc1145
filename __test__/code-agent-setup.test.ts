// `codeAgentSetup` gives smolagents-ts's CodeAgent an executor that already has
// the tools (CodeAgent itself only ever calls sendTools({}, pythonToolsMap)) and the §14 prompt
// with JavaScript signatures. The whole CodeAgent loop runs in readme.test.ts (swap-in); this
// file pins each part.
import Handlebars from 'handlebars'
import { describe, expect, it } from 'vitest'

import { CODE_AGENT_SYSTEM_PROMPT, ExecutorError, codeAgentSetup, renderToolsPrompt } from './helpers'

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
    expect(prompt).toContain('You may import only from: any module the runtime registers.')
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
