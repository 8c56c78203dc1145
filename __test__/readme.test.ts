// Issue 7 point 6: the README's quick start and smolagents-ts swap-in snippet run as written,
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
 * executor the way smolagents-ts's CodeAgent does: it renders `prompt_templates.system_prompt`
 * with its template variables, parses the code between `code_block_tags`, and per step calls
 * `sendVariables(state)`, `sendTools(toolMap)` and `run(code)`, never `init()`.
 */
const STAND_IN = {
  'package.json': JSON.stringify({
    name: 'smolagents-ts',
    type: 'module',
    exports: { '.': './index.js', './models': './models.js' },
  }),
  'index.js': `
import { readFileSync } from 'node:fs'
import Handlebars from '${pathToHandlebars()}'
export class CodeAgent {
  constructor(config) {
    this.config = config
    this.executor = config.executor
    this.state = new Map([['task_started', true]])
    const [open, close] = config.code_block_tags ?? ['<code>', '</code>']
    this.tags = [open, close]
    this.systemPrompt = Handlebars.compile(config.prompt_templates.system_prompt, { noEscape: true })({
      tools_prompt: '', managed_agents_prompt: '', has_managed_agents: false,
      authorized_imports: JSON.stringify(config.authorized_imports ?? []),
      custom_instructions: undefined, code_block_opening_tag: open, code_block_closing_tag: close,
    })
    if (/\\{\\{|\\}\\}/.test(this.systemPrompt)) throw new Error('unrendered placeholder in the system prompt')
  }
  async run(task) {
    const messages = [{ role: 'system', content: this.systemPrompt }, { role: 'user', content: task }]
    for (let step = 0; step < 5; step++) {
      const reply = await this.config.model.generate(messages)
      const [open, close] = this.tags
      const code = reply.slice(reply.indexOf(open) + open.length, reply.lastIndexOf(close))
      await this.executor.sendVariables(Object.fromEntries(this.state))
      const toolMap = {}
      for (const tool of this.config.tools) toolMap[tool.name] = async (...args) => tool.forward(args[0])
      await this.executor.sendTools(toolMap)
      const out = await this.executor.run(code)
      if (out.is_final_answer) return out.output
      messages.push({ role: 'assistant', content: reply }, { role: 'user', content: 'Observation: ' + out.logs })
    }
    throw new Error('no final answer')
  }
}
`,
  'models.js': `
export class OpenAIModel {
  async generate(messages) {
    if (!messages[0].content.includes('JavaScript')) throw new Error('not the JavaScript prompt')
    return 'Thought: iterate.\\n\`\`\`js\\nlet a = 0, b = 1;\\nfor (let i = 0; i < 20; i++) [a, b] = [b, a + b];\\nfinal_answer(a);\\n\`\`\`'
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
    expect(stdout.trim()).toBe('6765')
  })
})
