// A stand-in for smolagents-ts (which the npm registry this project builds from does not carry),
// written here, in our own words, from how smolagents-ts's CodeAgent behaves. smolagents-ts
// publishes no licence, so none of its code is copied here: what this reproduces is behaviour
// (what CodeAgent does with an executor, the model's output and a step's messages), read from
// its sources (src/agents/code-agent.ts,
// src/agents/multi-step-agent.ts, src/utils/code.ts, src/memory/): what it does with an
// executor, with the model's output and with a step's messages, so that the tests drive an
// SESExecutor as the real CodeAgent does. Types: ./index.d.ts. A test that needs a model from
// `smolagents-ts/models` puts its own scripted models.js in place of ./models.js.
//
// - The system prompt is `prompt_templates.system_prompt` rendered once by Handlebars with
//   CodeAgent's variables (`tools_prompt` as Python `def`s, its own `final_answer` included; its
//   Python module list as `authorized_imports` unless told otherwise).
// - Each step sends the memory as messages to `model.generate(messages, { stop_sequences })`,
//   appends the closing fence to the reply if it is missing, and takes the code from the reply
//   as CodeAgent does: every stretch between the opening and the closing fence (from right
//   after the opening fence, so a fence on a line of its own leaves a line break first), each
//   with trailing white space trimmed, joined by a blank line, then dedented by the smallest
//   indentation of its non-blank lines; an assignment to `final_answer` is renamed. Then
//   `sendVariables(state)`, `sendTools({}, pythonToolsMap)` (never a JavaScript tool) and
//   `run(code)`; a failing run ends the agent's run with an `AgentExecutionError` carrying the
//   executor's message. `init()` is never called.
// - The observation is text (`Execution logs:` and `Last output from code snippet:`); the step
//   goes to memory, then every step callback is called with it; the next step's messages come
//   from memory (`ActionStep.to_messages()`). A final answer ends the run with a
//   `FinalAnswerStep`, which the callbacks also get.
import Handlebars from 'handlebars'

export class BaseTool {
  to_dict() {
    const properties = {}
    const required = []
    for (const [name, input] of Object.entries(this.inputs)) {
      properties[name] = { description: input.description ?? '', ...(input.type === 'any' ? {} : { type: input.type }) }
      if (input.default === undefined && !input.nullable) required.push(name)
    }
    return {
      type: 'function',
      function: {
        name: this.name,
        description: this.description,
        parameters: { type: 'object', properties, required: required.length > 0 ? required : undefined },
      },
    }
  }
}

export class FinalAnswerTool extends BaseTool {
  name = 'final_answer'
  description = 'Ends the task: its argument is what the agent answers.'
  inputs = { answer: { type: 'any', description: "The agent's answer" } }
  output_type = 'any'
  forward({ answer }) {
    return Promise.resolve(answer)
  }
}

export class AgentImage {
  constructor(data, mimeType = 'image/png') {
    this.data = data
    this.mimeType = mimeType
  }
  toString() {
    return `an image (${this.mimeType})`
  }
}

export class AgentAudio {
  constructor(data, mimeType = 'audio/mp3') {
    this.data = data
    this.mimeType = mimeType
  }
  toString() {
    return `a sound (${this.mimeType})`
  }
}

export class MemoryStepBase {}

export class TaskStep extends MemoryStepBase {
  constructor(task) {
    super()
    this.task = task
  }
  to_messages() {
    return [{ role: 'user', content: this.task }]
  }
}

export class ActionStep extends MemoryStepBase {
  constructor(step_number) {
    super()
    this.step_number = step_number
    this.model_output_message = undefined
    this.model_output = undefined
    this.tool_calls = undefined
    this.observations = undefined
    this.error = undefined
    this.timing = { start_time: Date.now() }
  }
  complete() {
    this.timing.end_time = Date.now()
    this.timing.duration = this.timing.end_time - this.timing.start_time
  }
  /** The model's reply as it came, then (a text model's reply has no tool calls) the observation. */
  to_messages(summary_mode = false) {
    const messages = []
    if (this.model_output_message) messages.push(this.model_output_message)
    else if (this.model_output) messages.push({ role: 'assistant', content: this.model_output })
    if (this.observations) {
      const text = summary_mode ? this.observations.slice(0, 200) : this.observations
      messages.push({ role: 'assistant', content: `Observation:\n${text}` })
    }
    return messages
  }
  getSummary() {
    return `Step ${this.step_number}`
  }
}

export class FinalAnswerStep extends MemoryStepBase {
  constructor(final_answer, from_managed_agent = false) {
    super()
    this.final_answer = final_answer
    this.from_managed_agent = from_managed_agent
  }
  to_messages() {
    const content = typeof this.final_answer === 'string' ? this.final_answer : JSON.stringify(this.final_answer, null, 2)
    return [{ role: 'assistant', content: `Final Answer: ${content}` }]
  }
}

export class AgentExecutionError extends Error {
  name = 'AgentExecutionError'
}

export { BaseModel, OpenAIModel } from './models.js'

const PYTHON_TYPES = { string: 'str', number: 'float', integer: 'int', boolean: 'bool', object: 'dict', array: 'list' }
const pythonSignature = (tool) =>
  `def ${tool.name}(${Object.entries(tool.inputs)
    .map(([name, input]) => `${name}: ${PYTHON_TYPES[input.type] ?? 'Any'}`)
    .join(', ')}) -> ${PYTHON_TYPES[tool.output_type] ?? 'Any'}:\n    """${tool.description}"""`

/** What CodeAgent takes from the model's reply as code (see the header). */
function parseCodeBlobs(text, [open, close]) {
  const escape = (tag) => tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const blocks = [...text.matchAll(new RegExp(`${escape(open)}(.*?)${escape(close)}`, 'gs'))]
  if (blocks.length === 0) throw new Error(`no code between ${open} and ${close} in the reply`)
  const code = blocks.map((match) => match[1].trimEnd()).join('\n\n')
  const lines = code.split('\n')
  const indents = lines.filter((line) => line.trim() !== '').map((line) => /^\s*/.exec(line)[0].length)
  const indent = indents.length > 0 ? Math.min(...indents) : 0
  return indent > 0 ? lines.map((line) => line.slice(indent)).join('\n') : code
}

/** CodeAgent renames assignments to `final_answer` (and reads of it) to `final_answer_variable`. */
function fixFinalAnswerCode(code) {
  const assignment = /(?<![.\w])\bfinal_answer(\s*=)(?!=)/g
  if (!code.includes('final_answer(') && !assignment.test(code)) return code
  return code
    .replace(/(?<![.\w])\bfinal_answer(\s*=)(?!=)/g, 'final_answer_variable$1')
    .replace(/(?<![.\w])\bfinal_answer\b(?!\s*\()/g, 'final_answer_variable')
}

const DEFAULT_IMPORTS = ['collections', 'datetime', 'itertools', 'math', 'os', 'queue', 'random', 're', 'stat', 'statistics', 'time', 'unicodedata', 'json', 'base64', 'pathlib']

export class CodeAgent {
  constructor(config) {
    if (!config.model) throw new Error('the stand-in CodeAgent needs a model')
    if (!config.executor) throw new Error('this stand-in has no PyodideExecutor: pass an executor')
    this.model = config.model
    this.tools = new Map()
    for (const tool of config.tools ?? []) {
      if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(tool.name)) throw new Error(`the stand-in CodeAgent refuses the tool name ${tool.name}`)
      this.tools.set(tool.name, tool)
    }
    if (config.add_base_tools !== false && !this.tools.has('final_answer')) this.tools.set('final_answer', new FinalAnswerTool())
    this.max_steps = config.max_steps ?? 10
    this.step_callbacks = config.step_callbacks ?? []
    this.authorized_imports = config.authorized_imports ?? DEFAULT_IMPORTS
    this.code_block_tags = config.code_block_tags ?? ['<code>', '</code>']
    this.executor = config.executor
    this.state = new Map()
    const [open, close] = this.code_block_tags
    this.system_prompt = Handlebars.compile(config.prompt_templates.system_prompt, { noEscape: true, strict: false })({
      tools_prompt: [...this.tools.values()].map(pythonSignature).join('\n\n'),
      managed_agents_prompt: '',
      has_managed_agents: false,
      authorized_imports: this.authorized_imports.includes('*') ? 'any module' : JSON.stringify(this.authorized_imports),
      custom_instructions: config.instructions,
      code_block_opening_tag: open,
      code_block_closing_tag: close,
    })
  }

  messages() {
    return [{ role: 'system', content: this.system_prompt }, ...this.steps.flatMap((step) => step.to_messages(false))]
  }

  async callbacks(step) {
    for (const callback of this.step_callbacks) {
      try {
        await callback(step)
      } catch (error) {
        console.error('a step callback threw:', error)
      }
    }
  }

  async run(task) {
    this.steps = [new TaskStep(task)]
    this.state.clear()
    const [open, close] = this.code_block_tags
    for (let number = 1; number <= this.max_steps; number++) {
      const step = new ActionStep(number)
      const stop_sequences = ['Observation:', 'Calling tools:']
      if (!open.includes(close)) stop_sequences.push(close)
      const response = await this.model.generate(this.messages(), { stop_sequences })
      let text = typeof response.content === 'string' ? response.content : response.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
      step.model_output_message = response
      step.model_output = text
      if (text && !text.trim().endsWith(close)) {
        text += close
        step.model_output_message.content = text
      }
      const code = fixFinalAnswerCode(parseCodeBlobs(text, this.code_block_tags))
      step.tool_calls = [{ id: `call_${number}`, name: 'python_interpreter', arguments: { code } }]
      await this.executor.sendVariables(Object.fromEntries(this.state))
      const pythonToolsMap = {}
      for (const tool of this.tools.values()) if (tool.pythonCode) pythonToolsMap[tool.name] = tool.pythonCode
      await this.executor.sendTools({}, pythonToolsMap)
      let out
      try {
        out = await this.executor.run(code)
      } catch (error) {
        step.error = new AgentExecutionError(error instanceof Error ? error.message : String(error))
        this.steps.push(step)
        throw step.error
      }
      let observation = `Execution logs:\n${out.logs}`
      if (out.output !== undefined) {
        observation += `\nLast output from code snippet:\n${typeof out.output === 'string' ? out.output : JSON.stringify(out.output)}`
      }
      step.observations = observation
      if (out.is_final_answer) {
        const final = new FinalAnswerStep(out.output)
        this.steps.push(final)
        await this.callbacks(final)
        return out.output
      }
      step.complete()
      this.steps.push(step)
      await this.callbacks(step)
    }
    return 'the stand-in CodeAgent ran out of steps'
  }

  async cleanup() {
    await this.executor.cleanup()
  }
}
