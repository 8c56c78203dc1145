// A complete CodeAgent loop over SESExecutor: Thought -> Code -> Observation, with file tools
// confined to a workspace folder, errors fed back to the model as observations, state kept
// across steps, and final_answer.
//
//   node examples/agent.mjs [TASK]
//
// With OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_MODEL) set it asks that OpenAI-compatible
// endpoint; otherwise a scripted model plays the agent's part, so the example runs offline.
// The workspace is a temporary copy of examples/agent-workspace; the original is never touched.
import { cp, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { inspect } from 'node:util'

import Handlebars from 'handlebars'

import {
  CODE_AGENT_EXAMPLES,
  CODE_AGENT_SYSTEM_PROMPT,
  ExecutorError,
  SESExecutor,
  renderToolsPrompt,
} from '@smolagents-ts/ses-executor'
import { createWorkspaceTools } from '@smolagents-ts/ses-executor/workspace-tools'

const OPENING_TAG = '```js'
const CLOSING_TAG = '```'

/** The system prompt of §14.2 rendered for `tools`, followed by the §14.3 examples. */
export function systemPrompt(tools, authorizedImports = []) {
  const render = (template) =>
    Handlebars.compile(template, { noEscape: true })({
      code_block_opening_tag: OPENING_TAG,
      code_block_closing_tag: CLOSING_TAG,
      tools_prompt: renderToolsPrompt(tools),
      authorized_imports: authorizedImports.length > 0 ? JSON.stringify(authorizedImports) : 'no modules',
      custom_instructions: 'Paths passed to the file tools are relative to the workspace folder.',
    })
  const examples = CODE_AGENT_EXAMPLES.map(render).join('\n\n---\n\n')
  return `${render(CODE_AGENT_SYSTEM_PROMPT)}\n\nHere are a few examples using notional tools:\n\n${examples}`
}

/** The code of the last code block of a model reply, or undefined. */
export function codeOf(reply) {
  const blocks = [...reply.matchAll(/```(?:js|javascript)?\n([\s\S]*?)```/g)]
  return blocks.at(-1)?.[1]
}

/** What the model sees after a run: its logs, and its output or its error. */
function observation(result) {
  let text = `Execution logs:\n${result.logs || '(none)'}`
  if (result.output !== undefined) {
    text += `\nLast output from code snippet:\n${typeof result.output === 'string' ? result.output : inspect(result.output)}`
  }
  return text
}

function errorObservation(error, code) {
  const lines = [`Error: ${error.code}: ${error.message}`]
  const { line, sourceLine } = error.details ?? {}
  if (typeof line === 'number') lines.push(`at line ${line} of your code: ${sourceLine ?? code.split('\n')[line - 1]}`)
  if (error.logs) lines.push(`Execution logs before the error:\n${error.logs}`)
  lines.push('Now fix the code: do not repeat the same error.')
  return lines.join('\n')
}

/**
 * Runs the agent loop. `model(messages)` returns the assistant's next reply as text.
 * Returns `{ answer, steps }` where `steps` records each step's code and observation.
 */
export async function runAgent({ task, model, workspace, maxSteps = 8, onStep = () => {} }) {
  const tools = await createWorkspaceTools(workspace)
  const executor = await SESExecutor.create({ timeoutMs: 30_000 })
  try {
    await executor.sendTools(tools)
    return await loop({ task, model, tools, executor, maxSteps, onStep })
  } finally {
    await executor.cleanup()
  }
}

async function loop({ task, model, tools, executor, maxSteps, onStep }) {
  const messages = [
    { role: 'system', content: systemPrompt(tools) },
    { role: 'user', content: `New task:\n${task}` },
  ]
  const steps = []
  for (let number = 1; number <= maxSteps; number++) {
    const reply = await model(messages)
    messages.push({ role: 'assistant', content: reply })
    const code = codeOf(reply)
    let seen
    let answer
    let done = false
    if (code === undefined) {
      seen = `Error: no code block found. Write your code between ${OPENING_TAG} and ${CLOSING_TAG}.`
    } else {
      try {
        const result = await executor.run(code)
        seen = observation(result)
        if (result.is_final_answer) {
          answer = result.output
          done = true
        }
      } catch (error) {
        if (!(error instanceof ExecutorError)) throw error
        seen = errorObservation(error, code)
        // A timeout leaves the sandbox DIRTY (§7.6). This example stops there; an agent that
        // must go on would create a fresh executor and tell the model its state is gone.
        if (executor.state === 'DIRTY') {
          throw new Error(`step ${number} left the sandbox unusable: ${error.message}`)
        }
      }
    }
    const step = { number, reply, code, observation: seen }
    steps.push(step)
    onStep(step)
    if (done) return { answer, steps }
    messages.push({ role: 'user', content: `Observation:\n${seen}` })
  }
  throw new Error(`no final answer after ${maxSteps} steps`)
}

/**
 * A model that replies from a script, for running the example (and its test) offline. It plays
 * a realistic run: looks around, makes a mistake, recovers using state from an earlier step,
 * edits files, and answers.
 */
export function scriptedModel() {
  const replies = [
    `Thought: I will look at the workspace and read the notes.
${OPENING_TAG}
const listing = await list_dir();
console.log(listing);
const notes = await read_file("notes.md");
console.log(notes.split("\\n").length, "lines read");
${CLOSING_TAG}`,
    `Thought: I will count the open items.
${OPENING_TAG}
const open = countOpenItems(notes);
console.log(open);
${CLOSING_TAG}`,
    `Thought: countOpenItems does not exist; I will filter the lines myself. \`notes\` is still defined from the first step.
${OPENING_TAG}
const openItems = notes.split("\\n").filter((line) => line.startsWith("- [ ]")).map((line) => line.slice(6));
console.log(openItems);
await write_file("summary.md", "# Open items\\n" + openItems.map((item) => "- " + item).join("\\n") + "\\n");
await edit_file("notes.md", "# Release notes draft", "# Release notes draft (summarised in summary.md)");
console.log(await grep("summary.md"));
${CLOSING_TAG}`,
    `Thought: The summary is written; I can answer.
${OPENING_TAG}
final_answer(\`\${openItems.length} open items: \${openItems.join(", ")}\`);
${CLOSING_TAG}`,
  ]
  let next = 0
  return async () => {
    if (next >= replies.length) throw new Error('the scripted model has no more replies')
    return replies[next++]
  }
}

/** A model behind an OpenAI-compatible chat completions endpoint. */
export function openAIModel({
  baseURL = process.env.OPENAI_BASE_URL,
  apiKey = process.env.OPENAI_API_KEY,
  model = process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
} = {}) {
  return async (messages) => {
    const response = await fetch(`${baseURL.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model, messages, stop: ['Observation:'], temperature: 0 }),
    })
    if (!response.ok) throw new Error(`the model endpoint answered ${response.status}: ${await response.text()}`)
    const body = await response.json()
    return body.choices[0].message.content
  }
}

/** A fresh copy of examples/agent-workspace to work in. */
export async function scratchWorkspace() {
  const workspace = await mkdtemp(path.join(tmpdir(), 'ses-agent-'))
  await cp(fileURLToPath(new URL('./agent-workspace/', import.meta.url)), workspace, { recursive: true })
  return workspace
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const task = process.argv[2] ?? 'Summarise the open items of notes.md into summary.md, then tell me how many there are.'
  const model = process.env.OPENAI_BASE_URL ? openAIModel() : scriptedModel()
  const workspace = await scratchWorkspace()
  console.log(`workspace: ${workspace}\nmodel: ${process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL : 'scripted'}\n`)
  const { answer } = await runAgent({
    task,
    model,
    workspace,
    onStep: (step) => console.log(`--- step ${step.number}\n${step.reply}\n\nObservation:\n${step.observation}\n`),
  })
  console.log(`Final answer: ${answer}`)
}
