// Every code block of README.md, CONTRIBUTING.md and docs/ either runs here as written, in a
// plain Node process of a scratch project that installs this checkout under the package's name,
// with its output checked, or says why it cannot (`<!-- not-run: reason -->` above it). A block
// with neither fails the test, so no example can rot unnoticed.
import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

import { describe, expect, it } from 'vitest'

import { type CodeBlock, codeBlocks, docPages, root } from './markdown'

/** Languages whose blocks are programs: each must run here or say why not. */
const PROGRAMS = new Set(['js', 'javascript', 'mjs', 'cjs', 'ts', 'typescript', 'sh', 'bash', 'shell', 'console'])

/** What each block marked `<!-- test: name -->` prints, line by line. */
const EXPECTED: Record<string, string[]> = {
  quickstart: ['7.5 items: 2 { total: 7.5 }', 'The total is 7.5 true', 'ERR_MAX_OPS_EXCEEDED'],
  'swap-in': ['12 apples cost 6 EUR'],
  'cli-stdin': ['42', "output: 'done'", 'is_final_answer: true'],
  'tools-and-variables': ['3 | first | second | 5 hits for population of Lyon | What is 6 × 7?'],
  'run-input': ['2 undefined'],
  timers: ['true 3'],
  'run-javascript': ['{"ok":true,"output":385,"logs":"","is_final_answer":false,"images":[]}'],
  canvas: ['640 400 data:image/png;base64,'],
  trace: ['run_start tool_call tool_result final_answer run_end'],
  opentelemetry: ['execute_tool search, ses_executor.run'],
  'transformed-code': ['const total = prices.reduce(add, 0);', 'while (more()) step();', 'return __smol_result(total);'],
  imports: ['3'],
  'session-pool': ['ana: 2 visits 2 1 2'],
  'readme-serving': ['10 1'],
}

/**
 * A stand-in for smolagents-ts (which the project's registry does not carry) that drives the
 * executor the way smolagents-ts's `CodeAgent` does (src/agents/code-agent.ts): it adds its own
 * `final_answer` tool, renders `prompt_templates.system_prompt` with Handlebars and its template
 * variables (`tools_prompt` as Python `def`s, its Python default imports), parses the code between
 * `code_block_tags`, and per step calls `sendVariables(state)`, then `sendTools({}, pythonToolsMap)`
 * (never a JavaScript tool), then `run(code)`, and never `init()`; its `cleanup()` cleans the
 * executor up. The model is scripted: it checks what the system prompt shows it, and its second
 * step relies on the first step's state.
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
  async cleanup() {
    await this.executor.cleanup()
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

/**
 * A stand-in for the `openai` package's chat completions: the model answers the first request
 * with a `run_javascript` call, after checking that the request offers the tool as defined.
 */
const OPENAI = {
  'package.json': JSON.stringify({ name: 'openai', type: 'module', exports: { '.': './index.js' } }),
  'index.js': `
export default class OpenAI {
  constructor() {
    this.chat = { completions: { create: async ({ model, messages, tools }) => {
      const [tool] = tools
      if (typeof model !== 'string' || tool?.type !== 'function' || tool.function.name !== 'run_javascript') {
        throw new Error('the request does not offer run_javascript: ' + JSON.stringify(tools))
      }
      if (tool.function.parameters?.required?.[0] !== 'code') throw new Error('run_javascript takes no code')
      const code = 'Array.from({ length: 10 }, (_, i) => (i + 1) ** 2).reduce((a, b) => a + b)'
      const call = { id: 'call_1', type: 'function', function: { name: 'run_javascript', arguments: JSON.stringify({ code }) } }
      return { choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] } }] }
    } } }
  }
}
`,
}

function pathToHandlebars() {
  return path.join(root, 'node_modules', 'handlebars', 'lib', 'index.js').replaceAll('\\', '/')
}

/**
 * A scratch project whose node_modules links this checkout under the package's name (with its
 * `ses-exec` command), the stand-ins, and the OpenTelemetry packages this checkout has.
 */
async function scratchProject() {
  const directory = await mkdtemp(path.join(tmpdir(), 'ses-docs-'))
  const modules = path.join(directory, 'node_modules')
  await mkdir(path.join(modules, '@smolagents-ts'), { recursive: true })
  await mkdir(path.join(modules, '.bin'))
  await symlink(root, path.join(modules, '@smolagents-ts', 'ses-executor'), 'dir')
  await symlink(path.join(root, 'node_modules', '@opentelemetry'), path.join(modules, '@opentelemetry'), 'dir')
  const bin = path.join(modules, '.bin', 'ses-exec')
  await symlink(path.join(root, 'bin', 'ses-exec.mjs'), bin)
  await chmod(path.join(root, 'bin', 'ses-exec.mjs'), 0o755)
  for (const [name, files] of Object.entries({ 'smolagents-ts': STAND_IN, openai: OPENAI })) {
    await mkdir(path.join(modules, name))
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(modules, name, file), text)
  }
  return directory
}

/** Runs a block as its language says, in a fresh scratch project; its standard output. */
async function runBlock(block: CodeBlock): Promise<string> {
  const directory = await scratchProject()
  const run = promisify(execFile)
  if (['sh', 'bash', 'shell'].includes(block.lang)) {
    const env = { ...process.env, PATH: `${path.join(directory, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` }
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block.code], { cwd: directory, env })
    return stdout
  }
  if (['js', 'javascript', 'mjs'].includes(block.lang)) {
    const file = path.join(directory, 'snippet.mjs')
    await writeFile(file, block.code)
    const { stdout } = await run(process.execPath, [file], { cwd: directory })
    return stdout
  }
  throw new Error(`${block.page}:${block.line}: no way to run a ${block.lang} block here; mark it not-run with a reason`)
}

const blocks = docPages().flatMap((page) => codeBlocks(page))
const tested = blocks.flatMap((block) => {
  const name = /^(?:readme-)?test:\s*(\S+)$/.exec(block.marker ?? '')?.[1]
  return name ? [{ name, block }] : []
})

describe('the code blocks of README.md and docs/', () => {
  it('every block names its language, and every program runs here or says why it cannot', () => {
    const unmarked = blocks.flatMap((block) => {
      const where = `${block.page}:${block.line}`
      if (block.lang === '') return [`${where}: a block without a language (write text for plain text)`]
      if (!PROGRAMS.has(block.lang)) return []
      const marker = block.marker ?? ''
      if (/^(?:readme-)?test:\s*\S+$/.test(marker)) return []
      if (/^not-run:\s*\S.{9,}$/.test(marker)) return []
      return [`${where}: a ${block.lang} block neither marked <!-- test: name --> nor <!-- not-run: reason -->`]
    })
    expect(unmarked).toEqual([])
  })

  it('every test name is marked once and has its expected output here', () => {
    const names = tested.map(({ name }) => name)
    expect(new Set(names).size).toBe(names.length)
    expect([...names].sort()).toEqual(Object.keys(EXPECTED).sort())
  })

  for (const { name, block } of tested) {
    it(`${name} (${block.page}:${block.line}) runs and prints what it says`, async () => {
      const stdout = await runBlock(block)
      expect(stdout.trim().split('\n')).toEqual(EXPECTED[name])
    })
  }
})
