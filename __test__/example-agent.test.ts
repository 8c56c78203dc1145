// The end-to-end agent example, driven by its scripted model.
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'

import { describe, expect, it } from 'vitest'

import { codeOf, openAIModel, runAgent, scratchWorkspace, scriptedModel, systemPrompt } from '../examples/agent.mjs'
import { createWorkspaceTools } from '../lib/workspace-tools.mjs'

describe('examples/agent.mjs', () => {
  it('runs Thought -> Code -> Observation to a final answer, with errors fed back and state kept', async () => {
    const workspace = await scratchWorkspace()
    const { answer, steps } = await runAgent({
      task: 'Summarise the open items of notes.md',
      model: scriptedModel(),
      workspace,
    })
    expect(answer).toBe('3 open items: Benchmarks against the peers, CLI with a REPL, Streaming logs to the host')
    expect(steps).toHaveLength(4)
    // Step 1 looked around through the file tools.
    expect(steps[0].observation).toContain('notes.md')
    // Step 2's mistake came back as an observation naming the line, and the loop went on.
    expect(steps[1].observation).toMatch(/ERR_RUNTIME_EXCEPTION: .*countOpenItems is not defined/)
    expect(steps[1].observation).toContain('at line 1 of your code')
    // Step 3 used `notes` from step 1: the sandbox kept its state.
    expect(steps[2].observation).toContain('Benchmarks against the peers')
    expect(await readFile(path.join(workspace, 'summary.md'), 'utf8')).toBe(
      '# Open items\n- Benchmarks against the peers\n- CLI with a REPL\n- Streaming logs to the host\n',
    )
    expect(await readFile(path.join(workspace, 'notes.md'), 'utf8')).toContain('(summarised in summary.md)')
  })

  it('gives the model the rendered §14.2 prompt with the file tools\' signatures', async () => {
    const prompt = systemPrompt(await createWorkspaceTools(await scratchWorkspace()))
    expect(prompt).not.toMatch(/\{\{|\}\}/)
    expect(prompt).toContain('async function read_file(path) {}')
    expect(prompt).toContain('async function edit_file(path, old_text, new_text) {}')
    expect(prompt).toContain("The code block must start with '```js'")
  })

  it('takes the code of the last code block of a reply', () => {
    expect(codeOf('Thought: x\n```js\na()\n```\nmore\n```js\nb()\n```')).toBe('b()\n')
    expect(codeOf('no code')).toBeUndefined()
  })

  it('talks to an OpenAI-compatible endpoint (a local stand-in serving the scripted replies)', async () => {
    const script = scriptedModel()
    const requests: Array<{ auth?: string; body: { model: string; messages: unknown[]; stop: string[] } }> = []
    const server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', async () => {
        requests.push({ auth: request.headers.authorization, body: JSON.parse(body) })
        const content = await script()
        response.setHeader('content-type', 'application/json')
        response.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const model = openAIModel({ baseURL: `http://127.0.0.1:${port}/v1/`, apiKey: 'test-key', model: 'test-model' })
      const { answer } = await runAgent({ task: 'Summarise', model, workspace: await scratchWorkspace() })
      expect(answer).toMatch(/^3 open items/)
      expect(requests).toHaveLength(4)
      expect(requests[0]).toMatchObject({ auth: 'Bearer test-key', body: { model: 'test-model', stop: ['Observation:'] } })
      // Each request carries the conversation so far: system, task, then one reply and one
      // observation per finished step.
      expect(requests.map((r) => r.body.messages.length)).toEqual([2, 4, 6, 8])
    } finally {
      server.close()
    }
  })
})
