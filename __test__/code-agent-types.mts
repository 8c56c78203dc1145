// The swap-in compiles for TypeScript users: `tsc -p __test__/tsconfig.json` checks this file
// against the stand-in's declaration of smolagents-ts (stand-ins/smolagents-ts/index.d.ts: our
// own, written from reading smolagents-ts's sources, which publish no licence), whose
// `CodeAgentConfig['executor']` is the nominal PyodideExecutor class, which the package does not
// export, as upstream's is (scripts/check-smolagents-types.mjs holds the stand-in against
// smolagents-ts's own sources). The docs' TypeScript swap-in itself is compiled and run by the
// README test.
// @ts-expect-error TS2305: smolagents-ts does not export PyodideExecutor.
import type { PyodideExecutor } from 'smolagents-ts'
import { BaseTool, CodeAgent, type CodeAgentConfig, type Model, type StepCallback, type Tool, type ToolInput } from 'smolagents-ts'

import { SESExecutor, codeAgentSetup, type CodeAgentSetup } from '../index.js'

/** What the docs name as `codeAgentSetup`'s type argument. */
type CodeAgentExecutor = NonNullable<CodeAgentConfig['executor']>

declare const model: Model

class LookupPrice extends BaseTool {
  name = 'lookup_price'
  description = 'The unit price of an item, in euros.'
  inputs: Record<string, ToolInput> = { item: { type: 'string', description: 'The item.' } }
  output_type = 'number'
  async forward({ item }: { item: string }): Promise<number> {
    return item.length
  }
}

export async function swapIn(): Promise<unknown> {
  const tools = [new LookupPrice()]
  const setup = await codeAgentSetup<CodeAgentExecutor>({ tools, executorOptions: { timeoutMs: 30_000 } })
  const agent = new CodeAgent({ model, tools, ...setup })
  const answer = await agent.run('What do 12 apples cost?')
  await agent.cleanup()
  return answer
}

export async function withStepImagesAndCallbacksOfOnesOwn(): Promise<void> {
  const setup = await codeAgentSetup<CodeAgentExecutor>({ stepImages: true })
  const mine: StepCallback = (step) => void step.to_messages()
  new CodeAgent({ model, tools: [], ...setup })
  new CodeAgent({ model, tools: [], ...setup, step_callbacks: [...(setup.step_callbacks ?? []), mine] })
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
  // @ts-expect-error TS2740: the wall this file proves the way over (the stand-in must stay nominal).
  new CodeAgent({ model, tools: [], executor })
}

export function aPlainObjectIsNoTool(): Tool {
  // @ts-expect-error TS2741: a Tool has a to_dict(), which BaseTool supplies.
  const tool: Tool = { name: 'now', description: 'The time.', inputs: {}, forward: async () => Date.now() }
  return tool
}

export async function badSetupOptions(): Promise<void> {
  // @ts-expect-error code block tags are a pair
  await codeAgentSetup({ codeBlockTags: ['```js'] })
  // @ts-expect-error executorOptions are the executor's own
  await codeAgentSetup({ executorOptions: { timeoutMs: '1000' } })
  // @ts-expect-error stepImages is a boolean
  await codeAgentSetup({ stepImages: 'yes' })
}
