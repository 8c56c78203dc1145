// The README's quick start and smolagents-ts swap-in snippet run as written,
// in a plain Node process, so that they cannot rot.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The code block that follows `<!-- readme-test: name -->` in README.md. */
async function snippet(name: string): Promise<string> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8')
  const marker = `<!-- readme-test: ${name} -->\n\`\`\`js\n`
  const start = readme.indexOf(marker)
  expect(start, `README.md has no "${name}" snippet`).toBeGreaterThanOrEqual(0)
  const code = readme.slice(start + marker.length)
  return code.slice(0, code.indexOf('```\n'))
}

/**
 * A stand-in for smolagents-ts (which the project's registry does not carry) that drives the
 * executor the way smolagents-ts's `CodeAgent` does (src/agents/code-agent.ts): it adds its own
 * `final_answer` tool, renders `prompt_templates.system_prompt` with Handlebars and its template
 * variables (`tools_prompt` as Python `def`s, its Python default imports), parses the code between
 * `code_block_tags`, and per step calls `sendVariables(state)`, then `sendTools({}, pythonToolsMap)`
 * (never a JavaScript tool), then `run(code)`, and never `init()`. The model is scripted: it
 * checks what the system prompt shows it, and its second step relies on the first step's state.
 */
const STAND_IN = {
  'package.json': JSON.stringify({
    name: 'smolagents-ts',
    type: 'module',
    exports: { '.': './index.js', './models': './models.js' },
  }),
  'index.js': `
import Handlebars from '${pathToHandlebars()}'
const FINAL_ANSWER = {
  name: 'final_answer', description: 'Provides the final answer to the user.',
  inputs: { answer: { type: 'any', description: 'The final answer' } }, output_type: 'any',
  forward: async ({ answer }) => answer,
}
const pythonSignature = (tool) =>
  'def ' + tool.name + '(' + Object.keys(tool.inputs).join(', ') + ') -> ' + (tool.output_type ?? 'any') + ':\\n    """' + tool.description + '"""'
export class CodeAgent {
  constructor(config) {
    this.model = config.model
    this.tools = new Map(config.tools.map((tool) => [tool.name, tool]))
    if (!this.tools.has('final_answer')) this.tools.set('final_answer', FINAL_ANSWER)
    this.state = new Map()
    this.authorized_imports = config.authorized_imports ?? ['collections', 'datetime', 'itertools', 'math', 'os', 're']
    this.code_block_tags = config.code_block_tags ?? ['<code>', '</code>']
    this.executor = config.executor
    const [open, close] = this.code_block_tags
    this.systemPrompt = Handlebars.compile(config.prompt_templates.system_prompt, { noEscape: true, strict: false })({
      tools_prompt: [...this.tools.values()].map(pythonSignature).join('\\n\\n'),
      managed_agents_prompt: '', has_managed_agents: false,
      authorized_imports: this.authorized_imports.includes('*') ? 'You can import from any package you want.' : JSON.stringify(this.authorized_imports),
      custom_instructions: config.instructions, code_block_opening_tag: open, code_block_closing_tag: close,
    })
  }
  async run(task) {
    const messages = [{ role: 'system', content: this.systemPrompt }, { role: 'user', content: task }]
    for (let step = 0; step < 5; step++) {
      const reply = await this.model.generate(messages)
      const [open, close] = this.code_block_tags
      const code = reply.slice(reply.indexOf(open) + open.length, reply.lastIndexOf(close))
      await this.executor.sendVariables(Object.fromEntries(this.state))
      const pythonToolsMap = {}
      for (const tool of this.tools.values()) if (tool.pythonCode) pythonToolsMap[tool.name] = tool.pythonCode
      await this.executor.sendTools({}, pythonToolsMap)
      const out = await this.executor.run(code)
      if (out.is_final_answer) return out.output
      messages.push({ role: 'assistant', content: reply }, { role: 'user', content: 'Observation: ' + out.logs })
    }
    throw new Error('no final answer')
  }
}
`,
  'models.js': `
const FENCE = String.fromCharCode(96).repeat(3)
export class OpenAIModel {
  async generate(messages) {
    const prompt = messages[0].content
    const shows = ['async function lookup_price(item) {}', 'function final_answer(answer) {}', 'You may import only from: [].', "start with '" + FENCE + "js'"]
    for (const shown of shows) if (!prompt.includes(shown)) throw new Error('the system prompt does not show ' + shown + ':\\n' + prompt)
    if (prompt.includes('def ') || /\\{\\{|\\}\\}/.test(prompt)) throw new Error('a Python signature or a placeholder reached the prompt')
    const code = messages.length === 2
      ? 'const unit = await lookup_price("apple");\\nconsole.log(unit);'
      : 'final_answer("12 apples cost " + 12 * unit + " EUR");'
    return 'Thought: one step at a time.\\n' + FENCE + 'js\\n' + code + '\\n' + FENCE
  }
}
`,
}

function pathToHandlebars() {
  return path.join(root, 'node_modules', 'handlebars', 'lib', 'index.js').replaceAll('\\', '/')
}

/** A scratch project whose node_modules links this checkout under the package's name. */
async function scratchProject() {
  const directory = await mkdtemp(path.join(tmpdir(), 'ses-readme-'))
  await mkdir(path.join(directory, 'node_modules', '@smolagents-ts'), { recursive: true })
  await symlink(root, path.join(directory, 'node_modules', '@smolagents-ts', 'ses-executor'), 'dir')
  return directory
}

async function runModule(directory: string, code: string) {
  const file = path.join(directory, 'snippet.mjs')
  await writeFile(file, code)
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: directory })
  return stdout
}

describe('README.md', () => {
  it('the quick start runs and prints what its comments say', async () => {
    const stdout = await runModule(await scratchProject(), await snippet('quickstart'))
    expect(stdout.trim().split('\n')).toEqual([
      '7.5 items: 2 { total: 7.5 }',
      'The total is 7.5 true',
      'ERR_MAX_OPS_EXCEEDED',
    ])
  })

  it('the smolagents-ts swap-in snippet runs a CodeAgent step to its final answer', async () => {
    const directory = await scratchProject()
    const standIn = path.join(directory, 'node_modules', 'smolagents-ts')
    await mkdir(standIn, { recursive: true })
    for (const [name, text] of Object.entries(STAND_IN)) await writeFile(path.join(standIn, name), text)
    const stdout = await runModule(directory, await snippet('swap-in'))
    expect(stdout.trim()).toBe('12 apples cost 6 EUR')
  })
})
