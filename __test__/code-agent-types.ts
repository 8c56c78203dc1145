// The swap-in compiles for TypeScript users. `tsc -p __test__/tsconfig.json`
// checks this file against ./types/smolagents-ts.d.ts, a mirror of CodeAgent's config whose
// `executor` is the nominal PyodideExecutor class.
import { CodeAgent, type Model, type PyodideExecutor, type Tool } from 'smolagents-ts'

import { SESExecutor, codeAgentSetup, type CodeAgentSetup } from '../index.js'

declare const model: Model
declare const lookupPrice: Tool

export async function swapIn(): Promise<unknown> {
  const tools = [lookupPrice]
  const setup = await codeAgentSetup<PyodideExecutor>({ tools, executorOptions: { timeoutMs: 30_000 } })
  const agent = new CodeAgent({ model, tools, ...setup })
  const answer = await agent.run('What do 12 apples cost?')
  await setup.executor.cleanup()
  return answer
}

export async function withoutTheTypeArgument(): Promise<void> {
  const setup: CodeAgentSetup = await codeAgentSetup({ tools: { now: () => Date.now() }, codeBlockTags: ['<code>', '</code>'] })
  const state: SESExecutor['state'] = setup.executor.state
  void state
  // @ts-expect-error TS2740: an SESExecutor alone lacks PyodideExecutor's private members.
  new CodeAgent({ model, tools: [], executor: setup.executor })
}

export async function thePlainAssignmentIsRefused(): Promise<void> {
  const executor = await SESExecutor.create()
  // @ts-expect-error TS2740: the wall this file proves the way over (the mirror must stay nominal).
  new CodeAgent({ model, tools: [], executor })
}

export async function badSetupOptions(): Promise<void> {
  // @ts-expect-error code block tags are a pair
  await codeAgentSetup({ codeBlockTags: ['```js'] })
  // @ts-expect-error executorOptions are the executor's own
  await codeAgentSetup({ executorOptions: { timeoutMs: '1000' } })
}
