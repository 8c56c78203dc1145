'use strict'
// `codeAgentSetup`: what smolagents-ts's `CodeAgent` needs to run JavaScript through an
// SESExecutor, in one call (docs/codeagent.md).
//
// CodeAgent never hands JavaScript tools to its executor: each step it calls
// `sendVariables(state)` and `sendTools({}, pythonToolsMap)` (tool name → Python source), and it
// renders `{{{tools_prompt}}}` as Python `def`s, `final_answer` included. So the executor gets
// the tool objects here, once (`sendTools` merges, and CodeAgent's empty record adds nothing),
// and the §14 system prompt arrives with the tools' JavaScript signatures already in place.

const { apply } = Reflect
const guarded = require('./guarded.cjs')

/** Markdown fences: what models write around JavaScript unprompted. */
const DEFAULT_CODE_BLOCK_TAGS = ['```js', '```']

/** The executor's own `final_answer` (§5.4), as the prompt shows it. */
const FINAL_ANSWER = {
  description:
    'Ends the task with its final answer: the run stops at this call, and `answer` is what the agent returns.',
  inputs: { answer: { type: 'any', description: 'The final answer to the task.' } },
  output_type: 'never',
}

async function codeAgentSetup(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('codeAgentSetup(options): options must be an object')
  const { binding, SESExecutor, authorizedImportsOf } = require('./executor.cjs')
  const { renderToolsPrompt, CODE_AGENT_SYSTEM_PROMPT } = binding
  // Each option, each tool and each of a tool object's properties is read once, here.
  const given = (key) => guarded.readOrThrow(options, key, 'codeAgentSetup: options')
  const tools = toolRecords(given('tools') ?? [])
  const executorOptions = given('executorOptions')
  const codeBlockTags = fences(given('codeBlockTags') ?? DEFAULT_CODE_BLOCK_TAGS)
  const snapshot = given('snapshot')

  // No engine thread until init(): a tool the prompt cannot show (a name that is no
  // identifier) fails before one exists.
  const executor = new SESExecutor(executorOptions)
  const toolsPrompt = renderToolsPrompt({ ...tools.prompt, final_answer: FINAL_ANSWER })
  const systemPrompt = fillPlaceholders(CODE_AGENT_SYSTEM_PROMPT, {
    '{{{tools_prompt}}}': toolsPrompt,
    '{{authorized_imports}}': importsLine(authorizedImportsOf(executor)),
  })

  // A conversation continued from a snapshot (in this process or another) takes its session
  // back; the tools, which do not travel, are sent again.
  if (snapshot === undefined) await executor.init()
  else await executor.restore(snapshot)
  try {
    await executor.sendTools(tools.executor)
  } catch (error) {
    await executor.cleanup()
    throw error
  }
  return { executor, prompt_templates: { system_prompt: systemPrompt }, code_block_tags: codeBlockTags }
}

/**
 * `tools` as `renderToolsPrompt` and `sendTools` take them, each read once: CodeAgent's array
 * of tool objects is keyed by `name`. A tool object becomes two plain records made of what was
 * read — its description for the prompt, and for the executor its `inputs` with `forward`
 * called on the tool object itself — so that neither reads the host's object again.
 */
function toolRecords(tools) {
  const prompt = {}
  const executor = {}
  const add = (name, tool, what) => {
    if (Object.hasOwn(prompt, name)) throw new TypeError(`codeAgentSetup: two tools are named ${name}`)
    const [forPrompt, forExecutor] = typeof tool === 'function' ? [tool, tool] : toolObject(tool, what)
    Object.defineProperty(prompt, name, { value: forPrompt, enumerable: true, writable: true, configurable: true })
    Object.defineProperty(executor, name, { value: forExecutor, enumerable: true, writable: true, configurable: true })
  }
  const items = guarded.arrayItems(tools, 'codeAgentSetup: tools')
  if (items !== undefined) {
    items.forEach((tool, index) => {
      const what = `codeAgentSetup: tools[${index}]`
      const name = tool !== null && (typeof tool === 'object' || typeof tool === 'function') ? guarded.readOrThrow(tool, 'name', what) : undefined
      if (typeof name !== 'string' || name === '') {
        throw new TypeError('codeAgentSetup: every tool in the tools array needs a string name')
      }
      add(name, tool, what)
    })
  } else if (tools !== null && typeof tools === 'object') {
    for (const name of guarded.ownKeys(tools, 'codeAgentSetup: tools')) {
      add(name, guarded.readOrThrow(tools, name, 'codeAgentSetup: tools'), `codeAgentSetup: tools.${name}`)
    }
  } else {
    throw new TypeError('codeAgentSetup: tools must be an array of tool objects or an object of tools')
  }
  if (Object.hasOwn(prompt, 'final_answer')) {
    // The sandbox's final_answer ends the run (spec §5.4); a tool of that name would never be
    // called, so its behaviour (a check, a format) would be lost without a word.
    throw new TypeError(
      'codeAgentSetup: final_answer is built into the executor (it ends the run); pass no tool of that name',
    )
  }
  return { prompt, executor }
}

/**
 * A smolagents tool object, read once: its record for the prompt, and for the executor. What is
 * not an object goes on as it is, for renderToolsPrompt and sendTools to refuse.
 */
function toolObject(tool, what) {
  if (tool === null || typeof tool !== 'object') return [tool, tool]
  const field = (key) => guarded.readOrThrow(tool, key, what)
  const description = field('description')
  const inputs = guarded.copyData(field('inputs'), `${what}.inputs`)
  const outputType = field('output_type')
  const forward = field('forward')
  const bound =
    typeof forward === 'function'
      ? function forwardToTool(args) {
          return apply(forward, tool, [args])
        }
      : forward
  return [
    { description, inputs, output_type: outputType, forward },
    { inputs, forward: bound },
  ]
}

/** `[opening, closing]`, each read once. */
function fences(tags) {
  const items = guarded.arrayItems(tags, 'codeAgentSetup: codeBlockTags')
  if (items === undefined || items.length !== 2 || !items.every((tag) => typeof tag === 'string' && tag !== '')) {
    throw new TypeError('codeAgentSetup: codeBlockTags must be two non-empty strings, [opening, closing]')
  }
  return items
}

/**
 * What the prompt's import rule says; CodeAgent formats its own list the same way (a JSON array,
 * or a sentence for "*").
 */
function importsLine(authorizedImports) {
  if (authorizedImports.includes('*')) return 'any module the runtime registers'
  return JSON.stringify(authorizedImports)
}

/**
 * Replaces our placeholders with text that CodeAgent will pass through Handlebars once more
 * (smolagents-ts renders the whole system prompt): every `{{` in the text is escaped (`\{{`), so
 * a tool description cannot reach CodeAgent's template variables.
 */
function fillPlaceholders(template, values) {
  let filled = template
  for (const [placeholder, text] of Object.entries(values)) {
    if (!filled.includes(placeholder)) throw new Error(`CODE_AGENT_SYSTEM_PROMPT has no ${placeholder}`)
    filled = filled.split(placeholder).join(text.replaceAll('{{', '\\{{'))
  }
  return filled
}

module.exports = { codeAgentSetup }
