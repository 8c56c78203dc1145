'use strict'
// `codeAgentSetup`: what smolagents-ts's `CodeAgent` needs to run JavaScript through an
// SESExecutor, in one call (docs/codeagent.md).
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
  const { binding, authorizedImportsOf } = require('./executor.cjs')
  const { renderToolsPrompt, CODE_AGENT_SYSTEM_PROMPT } = binding
  // Each option, each tool and each of a tool object's properties is read once, here.
  const given = (key) => guarded.readOrThrow(options, key, 'codeAgentSetup: options')
  const tools = toolRecords(given('tools') ?? [])
  const executorOptions = given('executorOptions')
  const codeBlockTags = fences(given('codeBlockTags') ?? DEFAULT_CODE_BLOCK_TAGS)
  const snapshot = given('snapshot')
  const stepImages = given('stepImages') ?? false
  if (typeof stepImages !== 'boolean') throw new TypeError('codeAgentSetup: stepImages must be a boolean')

  // No engine thread until init(): a tool the prompt cannot show (a name that is no
  // identifier) fails before one exists.
  const Executor = codeAgentExecutorClass()
  const executor = new Executor(executorOptions)
  const toolsPrompt = renderToolsPrompt({ ...tools.prompt, final_answer: FINAL_ANSWER })
  const systemPrompt = fillPlaceholders(CODE_AGENT_SYSTEM_PROMPT, {
    '{{{tools_prompt}}}': toolsPrompt,
    [IMPORT_RULE]: importsRule(authorizedImportsOf(executor)),
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
    // CodeAgent's step, read once through the guarded path; only an ActionStep (a step number
    // and observations) is a step whose code ran.
    const render = guarded.read(step, 'to_messages')
    const isAction = guarded.attempt(() => 'step_number' in step && 'observations' in step, false)
    if (!render.ok || typeof render.value !== 'function' || !isAction) return
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
        const messages = apply(render.value, this, [summaryMode])
        return summaryMode ? messages : [...messages, message]
      },
    })
  }
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
