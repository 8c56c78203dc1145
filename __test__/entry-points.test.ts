// The package loads by name from CommonJS and from ES modules, in a plain Node
// process (no test-runner transform), with the same exports either way.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

const run = async (fixture: string) => {
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url))])
  return JSON.parse(stdout)
}

const EXPORTS = [
  'CODE_AGENT_EXAMPLES',
  'CODE_AGENT_SYSTEM_PROMPT',
  'ExecutorError',
  'FileStore',
  'MemoryStore',
  'SESExecutor',
  'SessionError',
  'SessionPool',
  'codeAgentSetup',
  'createRunJavaScriptTool',
  'enginePoolStats',
  'prepareProgram',
  'renderToolsPrompt',
  'setEngineThreads',
  'validateCode',
]

describe('entry points', () => {
  it('require("@smolagents-ts/ses-executor") gives every export', async () => {
    const result = await run('entry.cjs')
    expect(result.exports).toEqual(expect.arrayContaining(EXPORTS))
    expect(result).toMatchObject({ output: 42, state: 'DEAD' })
  })

  it('import from "@smolagents-ts/ses-executor" gives the same exports, named and default', async () => {
    const result = await run('entry.mjs')
    expect(result.exports).toEqual(EXPORTS)
    expect(result).toMatchObject({ output: 42, code: 'ERR_RUNTIME_EXCEPTION', state: 'DEAD', workspaceTools: 'function' })
    expect(result.bullmq).toEqual(['RedisStore', 'SessionQueue', 'SessionWorker', 'currentToolCall'])
  })
})
