'use strict'
// `codeAgentSetup`: what smolagents-ts's `CodeAgent` needs to run JavaScript through an
// SESExecutor, in one call (README "In smolagents-ts, in place of the Pyodide executor").
//
// CodeAgent never hands JavaScript tools to its executor: each step it calls
// `sendVariables(state)` and `sendTools({}, pythonToolsMap)` (tool name → Python source), and it
// renders `{{{tools_prompt}}}` as Python `def`s, `final_answer` included. So the executor gets
// the tool objects here, once (`sendTools` merges, and CodeAgent's empty record adds nothing),
// and the §14 system prompt arrives with the tools' JavaScript signatures already in place.
//
// CodeAgent hands its executor the text between the fences, from just after the opening one:
// the model's line 1 comes after the line break that ends the fence's line. The executor
// counts lines from the first character it is given (as it must for a file, the CLI or
// `run_javascript`), so the executor made here drops that one line break: a step's error names
// the model's own line. And CodeAgent keeps only a run's logs and output, so the images a run
// drew reach the model only through the step callback made here (`stepImages`).
const { dataUrl, imagesMessage } = require('./image-content.cjs')

/** Markdown fences: what models write around JavaScript unprompted. */
const DEFAULT_CODE_BLOCK_TAGS = ['```js', '```']

/** The executor's own `final_answer` (§5.4), as the prompt shows it. */
const FINAL_ANSWER = {
  description:
    'Ends the task with its final answer: the run stops at this call, and `answer` is what the agent returns.',
  inputs: { answer: { type: 'any', description: 'The final answer to the task.' } },
  output_type: 'never',
}

/** The prompt's import rule, which `importsRule` rewrites as a whole. */
const IMPORT_RULE = 'You may import only from: {{authorized_imports}}.'

/** The executors whose runs keep their images for the step callback (`stepImages`). */
const keepsImages = new WeakSet()
/** The images of each such executor's last run, until the step callback takes them. */
const lastImages = new WeakMap()

let CodeAgentExecutor
/**
 * The SESExecutor `codeAgentSetup` makes: `run(code)` as CodeAgent calls it, with the fence's
 * line break dropped and the run's images kept for the step callback. A subclass, so that
 * `instanceof SESExecutor` and every other method stay the executor's own.
 */
function codeAgentExecutorClass() {
  if (CodeAgentExecutor === undefined) {
    const { SESExecutor } = require('./executor.cjs')
    CodeAgentExecutor = class CodeAgentExecutor extends SESExecutor {
      run(code, options) {
        lastImages.delete(this)
        const running = super.run(withoutFenceLineBreak(code), options)
        return running.then((output) => {
          const images = output?.images
          if (keepsImages.has(this) && Array.isArray(images) && images.length > 0) lastImages.set(this, images)
          return output
        })
      }
    }
  }
  return CodeAgentExecutor
}

/**
 * `code` without the one line break (`\n`, `\r\n`, `\r`, U+2028, U+2029) that ends the opening
 * fence's line, when it starts with one; anything else as it is (what is no string, the
 * executor refuses as it would).
 */
function withoutFenceLineBreak(code) {
  if (typeof code !== 'string') return code
  return code.replace(/^(?:\r\n|[\n\r\u2028\u2029])/, '')
}

async function codeAgentSetup(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('codeAgentSetup(options): options must be an object')
  const { binding } = require('./executor.cjs')
  const { renderToolsPrompt, CODE_AGENT_SYSTEM_PROMPT } = binding
  const tools = toolRecord(options.tools ?? [])
  const executorOptions = options.executorOptions ?? {}
  const codeBlockTags = fences(options.codeBlockTags ?? DEFAULT_CODE_BLOCK_TAGS)
  const stepImages = options.stepImages ?? false
  if (typeof stepImages !== 'boolean') throw new TypeError('codeAgentSetup: stepImages must be a boolean')

  // The prompt first: a tool the prompt cannot show (a name that is no identifier) fails here,
  // before an engine thread exists.
  const toolsPrompt = renderToolsPrompt({ ...tools, final_answer: FINAL_ANSWER })
  const systemPrompt = fillPlaceholders(CODE_AGENT_SYSTEM_PROMPT, {
    '{{{tools_prompt}}}': toolsPrompt,
    [IMPORT_RULE]: importsRule(executorOptions.authorizedImports ?? []),
  })

  const executor = await codeAgentExecutorClass().create(executorOptions)
  try {
    await executor.sendTools(tools)
  } catch (error) {
    await executor.cleanup()
    throw error
  }
  const setup = { executor, prompt_templates: { system_prompt: systemPrompt }, code_block_tags: [...codeBlockTags] }
  if (stepImages) {
    keepsImages.add(executor)
    setup.step_callbacks = [imagesOfTheStep(executor)]
  }
  return setup
}

/**
 * The step callback that shows the model what a step's code drew. CodeAgent calls its step
 * callbacks with each finished step, after adding it to its memory and before the next step's
 * messages are written from that memory; the step's messages (`to_messages`) then end with a
 * user message holding the run's images as smolagents-ts's image content parts (chat APIs
 * take images only in user messages). A step that drew nothing, and the final answer's step
 * (no message follows it), are left as they are.
 */
function imagesOfTheStep(executor) {
  return function attachStepImages(step) {
    const images = lastImages.get(executor)
    lastImages.delete(executor)
    if (images === undefined || step === null || typeof step !== 'object') return
    const render = step.to_messages
    if (typeof render !== 'function' || !('step_number' in step) || !('observations' in step)) return
    const message = imagesMessage(
      images.length === 1 ? 'The image the code of this step drew:' : `The ${images.length} images the code of this step drew, in order:`,
      images.map(dataUrl),
      'smolagents',
    )
    // A step that cannot take the method (frozen) is left as it is: a step callback that throws
    // would only be logged by CodeAgent.
    Reflect.defineProperty(step, 'to_messages', {
      configurable: true,
      writable: true,
      // A summary (smolagents-ts's summary mode) stays text.
      value(summaryMode) {
        const messages = render.call(this, summaryMode)
        return summaryMode ? messages : [...messages, message]
      },
    })
  }
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
 * The prompt's import rule for `authorizedImports`: the list as CodeAgent writes its own (a JSON
 * array), and a sentence of its own for none and for "*".
 */
function importsRule(authorizedImports) {
  if (authorizedImports.includes('*')) return 'You may import any module the runtime registers.'
  if (authorizedImports.length === 0) return 'Nothing may be imported: no module is available to import.'
  return `You may import only from: ${JSON.stringify(authorizedImports)}.`
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
