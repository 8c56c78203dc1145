// Spec §14 (Appendix D): the JavaScript CodeAgent system prompt, its examples, and the tool
// signatures rendered for `{{{tools_prompt}}}`.
import Handlebars from 'handlebars'
import { describe, expect, it } from 'vitest'

import { CODE_AGENT_EXAMPLES, CODE_AGENT_SYSTEM_PROMPT, renderToolsPrompt, validateCode } from './helpers'

describe('§14.2 / §14.3 templates', () => {
  it('the system prompt carries the Thought/Code/Observation loop and the ten rules of §14.2', () => {
    expect(CODE_AGENT_SYSTEM_PROMPT).toMatch(/^You are an expert assistant who can solve any task using JavaScript code blobs\./)
    const rules = [...CODE_AGENT_SYSTEM_PROMPT.matchAll(/^(\d+)\. /gm)].map((match) => Number(match[1]))
    expect(rules).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(CODE_AGENT_SYSTEM_PROMPT).toContain('To finish, you MUST call final_answer(value).')
    expect(CODE_AGENT_SYSTEM_PROMPT).toContain('Tool calls may be synchronous or asynchronous. If unsure, use await')
    expect(CODE_AGENT_SYSTEM_PROMPT.trimEnd().endsWith('Now Begin!')).toBe(true)
  })

  it('the examples are §14.3\'s A to D, in order', () => {
    expect(CODE_AGENT_EXAMPLES.map((example) => example.split('\n')[0])).toEqual([
      'Task: "Generate an image of the oldest person in this document."',
      'Task: "What is the result of: 5 + 3 + 1294.678?"',
      'Task: Answer French question in variable `question` for image variable `image`.',
      'Task: "Which city has higher population: Guangzhou or Shanghai?"',
    ])
  })

  it('renders with Handlebars (as smolagents-ts does) and leaves no placeholder behind', () => {
    const render = (template: string, customInstructions?: string) =>
      Handlebars.compile(template, { noEscape: true })({
        code_block_opening_tag: '<code>',
        code_block_closing_tag: '</code>',
        tools_prompt: renderToolsPrompt({ web_search: async (q: string) => q }),
        authorized_imports: '["lodash"]',
        custom_instructions: customInstructions,
      })
    const rendered = render(CODE_AGENT_SYSTEM_PROMPT, 'Answer in French.')
    expect(rendered).not.toMatch(/\{\{|\}\}/)
    expect(rendered).toContain("The code block must start with '<code>' and end with '</code>'.")
    expect(rendered).toContain('async function web_search(...args) {}')
    expect(rendered).toContain('You may import only from: ["lodash"].')
    expect(rendered).toContain('Answer in French.')
    expect(render(CODE_AGENT_SYSTEM_PROMPT)).not.toContain('Answer in French.')
    for (const example of CODE_AGENT_EXAMPLES) expect(render(example)).not.toMatch(/\{\{|\}\}/)
  })

  it('the templates are frozen', () => {
    expect(Object.isFrozen(CODE_AGENT_EXAMPLES)).toBe(true)
    expect(CODE_AGENT_EXAMPLES).toHaveLength(4)
  })

  it('the code of every example is valid for the validator', () => {
    for (const example of CODE_AGENT_EXAMPLES) {
      const blocks = [...example.matchAll(/\{\{code_block_opening_tag\}\}\n([\s\S]*?)\{\{code_block_closing_tag\}\}/g)]
      expect(blocks.length).toBeGreaterThan(0)
      for (const [, code] of blocks) {
        const errors = validateCode(code, { toolNames: [] }).filter((d) => d.severity === 'ERROR')
        expect(errors).toEqual([])
      }
    }
  })
})

describe('renderToolsPrompt', () => {
  const webSearch = {
    name: 'web_search',
    description: 'Performs a web search and returns the top results.',
    inputs: {
      query: { type: 'string', description: 'The search query.' },
      limit: { type: 'integer', description: 'How many results.', nullable: true, default: 5 },
    },
    output_type: 'string',
    async forward({ query }: { query: string }) {
      return query
    },
  }

  it('renders a smolagents tool object as an async function with JSDoc', () => {
    expect(renderToolsPrompt({ web_search: webSearch })).toBe(
      [
        '/**',
        ' * Performs a web search and returns the top results.',
        ' *',
        ' * @param {string} query - The search query.',
        ' * @param {number | null} [limit=5] - How many results.',
        ' * @returns {Promise<string>}',
        ' */',
        'async function web_search(query, limit) {}',
      ].join('\n'),
    )
  })

  it('keeps inputs in declared order, sync tools sync, and names tools by their key', () => {
    const rendered = renderToolsPrompt({
      calc: {
        description: 'Evaluates.',
        inputs: { b: { type: 'number' }, a: { type: ['string', 'null'] } },
        output_type: 'object',
        forward: () => ({}),
      },
    })
    expect(rendered).toContain('function calc(b, a) {}')
    expect(rendered).not.toContain('async')
    expect(rendered).toContain('@param {string | null} a')
    expect(rendered).toContain('@returns {object}')
  })

  it('accepts an array of tool objects named by their name, and plain functions', () => {
    const rendered = renderToolsPrompt([webSearch, { ...webSearch, name: 'other', forward: () => 1 }])
    expect(rendered.split('\n\n')).toHaveLength(2)
    expect(rendered).toContain('async function web_search(query, limit) {}')
    expect(rendered).toContain('function other(query, limit) {}')
    expect(renderToolsPrompt({ now: () => Date.now() })).toBe('/**\n * @returns {unknown}\n */\nfunction now(...args) {}')
  })

  it('what it renders parses as JavaScript', () => {
    const rendered = renderToolsPrompt({ web_search: webSearch, f: () => 1 })
    expect(validateCode(rendered).filter((d) => d.severity === 'ERROR')).toEqual([])
  })

  it('refuses names that are not identifiers, and non-tools', () => {
    expect(() => renderToolsPrompt({ 'my-tool': () => 1 })).toThrow(/not a JavaScript identifier/)
    expect(() => renderToolsPrompt({ t: { ...webSearch, inputs: { 'bad name': { type: 'string' } } } })).toThrow(/not a JavaScript identifier/)
    expect(() => renderToolsPrompt({ t: 42 } as never)).toThrow(/must be a function or a tool object/)
    expect(() => renderToolsPrompt('tools' as never)).toThrow(/tools must be/)
    expect(() => renderToolsPrompt([{ forward: () => 1 }] as never)).toThrow(/string name/)
  })
})
