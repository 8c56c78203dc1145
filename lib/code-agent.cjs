'use strict'
// `codeAgentSetup`: what smolagents-ts's `CodeAgent` needs to run JavaScript through an
// SESExecutor, in one call (README "In smolagents-ts, in place of the Pyodide executor").
//
// CodeAgent never hands JavaScript tools to its executor: each step it calls
// `sendVariables(state)` and `sendTools({}, pythonToolsMap)` (tool name → Python source), and it
// renders `{{{tools_prompt}}}` as Python `def`s, `final_answer` included. So the executor gets
// the tool objects here, once (`sendTools` merges, and CodeAgent's empty record adds nothing),
// and the §14 system prompt arrives with the tools' JavaScript signatures already in place.

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
  const { binding, SESExecutor } = require('./executor.cjs')
  const { renderToolsPrompt, CODE_AGENT_SYSTEM_PROMPT } = binding
  const tools = toolRecord(options.tools ?? [])
  const executorOptions = options.executorOptions ?? {}
  const codeBlockTags = fences(options.codeBlockTags ?? DEFAULT_CODE_BLOCK_TAGS)

  // The prompt first: a tool the prompt cannot show (a name that is no identifier) fails here,
  // before an engine thread exists.
  const toolsPrompt = renderToolsPrompt({ ...tools, final_answer: FINAL_ANSWER })
  const systemPrompt = fillPlaceholders(CODE_AGENT_SYSTEM_PROMPT, {
    '{{{tools_prompt}}}': toolsPrompt,
    '{{authorized_imports}}': importsLine(executorOptions.authorizedImports ?? []),
  })

  // A conversation continued from a snapshot (in this process or another) takes its session
  // back; the tools, which do not travel, are sent again.
  const executor =
    options.snapshot === undefined
      ? await SESExecutor.create(executorOptions)
      : await SESExecutor.restore(options.snapshot, executorOptions)
  try {
    await executor.sendTools(tools)
  } catch (error) {
    await executor.cleanup()
    throw error
  }
  return { executor, prompt_templates: { system_prompt: systemPrompt }, code_block_tags: [...codeBlockTags] }
}

/** `tools` as `sendTools` takes them: CodeAgent's array of tool objects is keyed by `name`. */
function toolRecord(tools) {
  let record
  if (Array.isArray(tools)) {
    record = {}
    for (const tool of tools) {
      const name = tool?.name
      if (typeof name !== 'string' || name === '') {
        throw new TypeError('codeAgentSetup: every tool in the tools array needs a string name')
      }
      if (Object.hasOwn(record, name)) throw new TypeError(`codeAgentSetup: two tools are named ${name}`)
      record[name] = tool
    }
  } else if (tools !== null && typeof tools === 'object') {
    record = { ...tools }
  } else {
    throw new TypeError('codeAgentSetup: tools must be an array of tool objects or an object of tools')
  }
  if (Object.hasOwn(record, 'final_answer')) {
    // The sandbox's final_answer ends the run (spec §5.4); a tool of that name would never be
    // called, so its behaviour (a check, a format) would be lost without a word.
    throw new TypeError(
      'codeAgentSetup: final_answer is built into the executor (it ends the run); pass no tool of that name',
    )
  }
  return record
}

function fences(tags) {
  if (!Array.isArray(tags) || tags.length !== 2 || !tags.every((tag) => typeof tag === 'string' && tag !== '')) {
    throw new TypeError('codeAgentSetup: codeBlockTags must be two non-empty strings, [opening, closing]')
  }
  return tags
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
