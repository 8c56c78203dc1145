// Loads the addon through Node's own `require`, exactly as a CommonJS user would (Vite's module
// transform is not involved), and gives the tests a few one-liners.
import { createRequire } from 'node:module'

import { afterEach } from 'vitest'

import type * as Binding from '../index'

const require = createRequire(import.meta.url)

export const {
  SESExecutor,
  ExecutorError,
  validateCode,
  prepareProgram,
  renderToolsPrompt,
  setEngineThreads,
  enginePoolStats,
  CODE_AGENT_SYSTEM_PROMPT,
  CODE_AGENT_EXAMPLES,
  codeAgentSetup,
  createRunJavaScriptTool,
  pauseRun,
} = require('../index.js') as typeof Binding

export type { CodeOutput, ExecutorOptions } from '../index'

/** The fields of `CodeOutput` that spec §3.1 defines, without the §10.2 extensions. */
export function contractOf({ output, logs, is_final_answer }: { output: unknown; logs: string; is_final_answer: boolean }) {
  return { output, logs, is_final_answer }
}

/** Awaits `promise` and returns what it rejected with; fails the test if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<InstanceType<typeof ExecutorError>> {
  try {
    const value = await promise
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`)
  } catch (error) {
    if (!(error instanceof ExecutorError)) throw error
    return error
  }
}

/** Runs `fn` and returns what it threw; fails the test if it returned. */
export function thrownBy(fn: () => unknown): InstanceType<typeof ExecutorError> {
  try {
    fn()
  } catch (error) {
    if (!(error instanceof ExecutorError)) throw error
    return error
  }
  throw new Error('expected a throw')
}

type Options = NonNullable<ConstructorParameters<typeof SESExecutor>[0]>

/**
 * A `SESExecutor.create` for one test file: `defaults` under each call's options, and every
 * executor it made cleaned up after each test.
 */
export function executorsCleanedAfterEach(defaults: Options = {}) {
  const live: InstanceType<typeof SESExecutor>[] = []
  afterEach(async () => {
    await Promise.all(live.splice(0).map((e) => e.cleanup().catch(() => {})))
  })
  return async (options: Options = {}) => {
    const created = await SESExecutor.create({ ...defaults, ...options })
    live.push(created)
    return created
  }
}
