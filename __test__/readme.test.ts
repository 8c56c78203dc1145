// Every code block of README.md, CONTRIBUTING.md and docs/ either runs here as written, in a
// plain Node process of a scratch project that installs this checkout under the package's name,
// with its output checked, or says why it cannot (`<!-- not-run: reason -->` above it). A block
// with neither fails the test, so no example can rot unnoticed.
import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

import ts from 'typescript'
import { describe, expect, it } from 'vitest'

import { type CodeBlock, codeBlocks, docPages, root } from './markdown'

/** Languages whose blocks are programs: each must run here or say why not. */
const PROGRAMS = new Set(['js', 'javascript', 'mjs', 'cjs', 'ts', 'typescript', 'sh', 'bash', 'shell', 'console'])

/** What each block marked `<!-- test: name -->` prints, line by line. */
const EXPECTED: Record<string, string[]> = {
  quickstart: ['7.5 items: 2 { total: 7.5 }', 'The total is 7.5 true', 'ERR_MAX_OPS_EXCEEDED'],
  'swap-in': ['12 apples cost 6 EUR'],
  'ts-swap-in': ['12 apples cost 6 EUR'],
  'step-images': ['I drew and saw 1 red square'],
  'cli-stdin': ['42', "output: 'done'", 'is_final_answer: true'],
  'tools-and-variables': ['3 | first | second | 5 hits for population of Lyon | What is 6 × 7?'],
  'run-input': ['2 undefined'],
  timers: ['true 3'],
  'run-javascript': ['I see 1 chart of 5 bars, 200 by 100.'],
  canvas: ['640 400 data:image/png;base64,'],
  trace: ['run_start tool_call tool_result final_answer run_end'],
  opentelemetry: ['execute_tool search, ses_executor.run'],
  'transformed-code': ['const total = prices.reduce(add, 0);', 'while (more()) step();', 'return __smol_result(total);'],
  imports: ['3'],
  'session-pool': ['ana: 2 visits 2 1 2'],
  'readme-serving': ['10 1'],
  sessions: ['Lyon: 10 °C | Oslo: 20 °C | 2 2'],
  'pause-resume': ['approve [ 1225 ] 3 1225 EUR needs a manager', 'PAUSED 1225 EUR needs a manager', 'ordered for 1225'],
  'snapshot-refused': ['ERR_SNAPSHOT_INVALID truncated, ERR_SNAPSHOT_INVALID hmac, ERR_SNAPSHOT_INVALID hmac', '100'],
}

/**
 * The model of `smolagents-ts/models` that the README's swap-in (JavaScript, and TypeScript in
 * docs/codeagent.md) talks to, put in place of the stand-in's (__test__/stand-ins/smolagents-ts):
 * it checks what the system prompt shows it, answers as a chat model does (a `ChatMessage`), and
 * its second step relies on the first step's state. Its first reply puts the code on the line
 * after the fence, as models do.
 */
const SWAP_IN_MODELS = `
const FENCE = String.fromCharCode(96).repeat(3)
export class BaseModel {
  parse_tool_calls(message) {
    return message
  }
}
export class OpenAIModel extends BaseModel {
  async generate(messages) {
    const prompt = messages[0].content
    const shows = ['async function lookup_price(item) {}', 'function final_answer(answer) {}', 'Nothing may be imported', "start with '" + FENCE + "js'"]
    for (const shown of shows) if (!prompt.includes(shown)) throw new Error('the system prompt does not show ' + shown + ':\\n' + prompt)
    if (prompt.includes('def ') || /\\{\\{|\\}\\}/.test(prompt)) throw new Error('a Python signature or a placeholder reached the prompt')
    const code = messages.length === 2
      ? 'const unit = await lookup_price("apple");\\nconsole.log(unit);'
      : 'final_answer("12 apples cost " + 12 * unit + " EUR");'
    return { role: 'assistant', content: 'Thought: one step at a time.\\n' + FENCE + 'js\\n' + code + '\\n' + FENCE }
  }
}
`

/**
 * Stand-ins for the `openai` package's chat completions, by the test name of the block that
 * uses them: each answers as a model would and checks what the block sends it.
 */
const OPENAI: Record<string, string> = {
  // The function-calling loop of docs/tools.md: a run_javascript call that draws, then an
  // answer that needs the image to have arrived as an image part, not as text.
  'run-javascript': `
export default class OpenAI {
  constructor() {
    let request = 0
    this.chat = { completions: { create: async ({ model, messages, tools }) => {
      const [tool] = tools
      if (typeof model !== 'string' || tool?.type !== 'function' || tool.function.name !== 'run_javascript') {
        throw new Error('the request does not offer run_javascript: ' + JSON.stringify(tools))
      }
      if (tool.function.parameters?.required?.[0] !== 'code') throw new Error('run_javascript takes no code')
      request += 1
      if (request === 1) {
        const code = 'const squares = [1, 2, 3, 4, 5].map((n) => n * n);\\nconst canvas = getCanvas(200, 100);\\nconst ctx = canvas.getContext("2d");\\nsquares.forEach((s, i) => ctx.fillRect(i * 40, 100 - s * 4, 30, s * 4));\\nsquares'
        const call = { id: 'call_1', type: 'function', function: { name: 'run_javascript', arguments: JSON.stringify({ code }) } }
        return { choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] } }] }
      }
      const answer = messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_1')
      const result = JSON.parse(answer.content)
      if (answer.content.includes('base64')) throw new Error('the image reached the model as text')
      const shown = messages.filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => m.content)
      const images = shown.filter((part) => part.type === 'image_url' && part.image_url.url.startsWith('data:image/png;base64,'))
      const content = 'I see ' + images.length + ' chart of ' + result.output.length + ' bars, ' + result.images[0].width + ' by ' + result.images[0].height + '.'
      return { choices: [{ message: { role: 'assistant', content } }] }
    } } }
  }
}
`,
  // docs/codeagent.md's VisionModel over CodeAgent with stepImages: the first step draws, and
  // the second request must show that step's canvas as an image part.
  'step-images': `
const FENCE = String.fromCharCode(96).repeat(3)
export default class OpenAI {
  constructor() {
    this.chat = { completions: { create: async ({ messages, stop }) => {
      if (!Array.isArray(stop)) throw new Error('the stop sequences did not arrive')
      const parts = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      const images = parts.filter((part) => part.type === 'image_url' && part.image_url.url.startsWith('data:image/png;base64,'))
      const code = images.length === 0
        ? 'const canvas = getCanvas(64, 64);\\nconst ctx = canvas.getContext("2d");\\nctx.fillStyle = "red";\\nctx.fillRect(0, 0, 64, 64);'
        : 'final_answer("I drew and saw " + ' + images.length + ' + " red square")'
      return { choices: [{ message: { role: 'assistant', content: 'Thought: next.\\n' + FENCE + 'js\\n' + code + '\\n' + FENCE } }] }
    } } }
  }
}
`,
}

/** The stand-in for smolagents-ts (see its index.js), and the files that make it a package. */
const STAND_IN = path.join(root, '__test__', 'stand-ins', 'smolagents-ts')

/**
 * A scratch project whose node_modules links this checkout under the package's name (with its
 * `ses-exec` command), the stand-ins (with the block's scripted models), and the packages of
 * this checkout that blocks and stand-ins import (OpenTelemetry, handlebars, Node's types).
 */
async function scratchProject(name: string | undefined) {
  const directory = await mkdtemp(path.join(tmpdir(), 'ses-docs-'))
  const modules = path.join(directory, 'node_modules')
  await mkdir(path.join(modules, '@smolagents-ts'), { recursive: true })
  await mkdir(path.join(modules, '.bin'))
  await symlink(root, path.join(modules, '@smolagents-ts', 'ses-executor'), 'dir')
  for (const linked of ['@opentelemetry', 'handlebars', '@types']) {
    await symlink(path.join(root, 'node_modules', linked), path.join(modules, linked), 'dir')
  }
  const bin = path.join(modules, '.bin', 'ses-exec')
  await symlink(path.join(root, 'bin', 'ses-exec.mjs'), bin)
  await chmod(path.join(root, 'bin', 'ses-exec.mjs'), 0o755)
  const smolagents = path.join(modules, 'smolagents-ts')
  await mkdir(smolagents)
  for (const file of ['package.json', 'index.js', 'index.d.ts', 'models.d.ts']) {
    await symlink(path.join(STAND_IN, file), path.join(smolagents, file))
  }
  await writeFile(path.join(smolagents, 'models.js'), SWAP_IN_MODELS)
  const openai = path.join(modules, 'openai')
  await mkdir(openai)
  await writeFile(path.join(openai, 'package.json'), JSON.stringify({ name: 'openai', type: 'module', exports: { '.': './index.js' } }))
  await writeFile(path.join(openai, 'index.js'), OPENAI[name ?? ''] ?? 'export default class OpenAI {}\n')
  return directory
}

/**
 * Compiles a TypeScript block as a user's strict ES module would be compiled (against the
 * stand-in's declaration of smolagents-ts and this package's own types); its JavaScript. The
 * stand-in's declaration is our own, written from reading smolagents-ts's sources (it
 * publishes no licence, so nothing of it is copied here): it is the "real types" this always-on
 * check has; scripts/check-smolagents-types.mjs holds it against a checkout of smolagents-ts.
 */
async function compiled(directory: string, code: string): Promise<string> {
  const source = path.join(directory, 'snippet.mts')
  await writeFile(source, code)
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    },
    files: ['snippet.mts'],
  }
  await writeFile(path.join(directory, 'tsconfig.json'), JSON.stringify(tsconfig))
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: directory })
  } catch (error) {
    throw new Error(`the block does not compile:\n${(error as { stdout?: string }).stdout ?? error}`)
  }
  return ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
}

/** Runs a block as its language says, in a fresh scratch project; its standard output. */
async function runBlock(block: CodeBlock, name?: string): Promise<string> {
  const directory = await scratchProject(name)
  const run = promisify(execFile)
  if (['sh', 'bash', 'shell'].includes(block.lang)) {
    const env = { ...process.env, PATH: `${path.join(directory, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` }
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block.code], { cwd: directory, env })
    return stdout
  }
  if (['js', 'javascript', 'mjs', 'ts', 'typescript'].includes(block.lang)) {
    const typescript = ['ts', 'typescript'].includes(block.lang)
    const file = path.join(directory, 'snippet.mjs')
    await writeFile(file, typescript ? await compiled(directory, block.code) : block.code)
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
      const stdout = await runBlock(block, name)
      expect(stdout.trim().split('\n')).toEqual(EXPECTED[name])
    })
  }
})
