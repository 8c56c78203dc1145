// The types of the stand-in for smolagents-ts (./index.js): the part of smolagents-ts's public
// API that this package's code, docs and tests use, declared as smolagents-ts declares it
// (src/types/, src/tools/base-tool.ts, src/memory/memory-step.ts, src/agents/code-agent.ts,
// src/models/, read at its commit e6eea34) but written here: smolagents-ts publishes no
// licence, so this file is our own declaration of its API, not a copy of its `.d.ts` or
// sources. It is what the always-on checks call "smolagents-ts's types". smolagents-ts is not on the npm registry, so the always-on type
// tests (../../tsconfig.json) compile against this; scripts/check-smolagents-types.mjs compiles
// the docs' swap-in against smolagents-ts's own sources and checks that every declaration here
// is assignable both ways with the real one, so the two cannot drift apart unnoticed.
//
// What matters most is kept as upstream has it: `CodeAgentConfig['executor']` is the class
// `PyodideExecutor`, which the package does not export and whose private members make it
// nominal (no other class matches it); tools are `Tool` objects with a `to_dict()`, which a
// TypeScript user gets by subclassing `BaseTool`; an `ActionStep` carries its observation as
// text, and a message carries images as `ImageContentPart`s.
export {}

export interface ToolInput {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'any'
  description?: string
  nullable?: boolean
  default?: unknown
  enum?: readonly string[]
  items?: ToolInput
  properties?: Record<string, ToolInput>
  additionalProperties?: ToolInput
  anyOf?: ToolInput[]
}

/** A tool as a function-calling model API is told of it. */
export interface ToolDefinition {
  type: 'function'
  function: {
    name: string
    description: string
    parameters: { type: 'object'; properties: Record<string, unknown>; required?: string[] }
  }
}

export interface Tool {
  name: string
  description: string
  inputs: Record<string, ToolInput>
  output_type?: string
  output_description?: string
  output_example?: unknown
  output_schema?: unknown
  forward(...args: unknown[]): Promise<unknown>
  to_dict(): ToolDefinition
  pythonCode?: string
}

/** What a TypeScript tool extends: it supplies `to_dict()` from `name`, `description`, `inputs`. */
export declare abstract class BaseTool implements Tool {
  abstract name: string
  abstract description: string
  abstract inputs: Record<string, ToolInput>
  output_type?: string
  output_description?: string
  output_example?: unknown
  abstract forward(args: Record<string, any>): Promise<unknown>
  to_dict(): ToolDefinition
}

export type BinaryData = ArrayBuffer | ArrayBufferView | string

export declare class AgentImage {
  data: BinaryData
  mimeType: string
  constructor(data: BinaryData, mimeType?: string)
  toString(): string
}

export declare class AgentAudio {
  data: BinaryData
  mimeType: string
  constructor(data: BinaryData, mimeType?: string)
  toString(): string
}

export interface TextContentPart {
  type: 'text'
  text: string
}

export interface ImageContentPart {
  type: 'image'
  image: string | AgentImage
}

export interface AudioContentPart {
  type: 'audio'
  audio: string | AgentAudio
}

export type ContentPart = TextContentPart | ImageContentPart | AudioContentPart

export interface ToolCall {
  id: string
  type?: 'function'
  function?: { name: string; arguments: string }
  name?: string
  arguments?: Record<string, unknown> | string
}

export interface TokenUsage {
  input_tokens: number
  output_tokens: number
  total_tokens?: number
}

export interface Timing {
  start_time: number
  end_time?: number
  duration?: number
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | ContentPart[]
  tool_calls?: ToolCall[]
  tool_call_id?: string
  name?: string
  token_usage?: TokenUsage
  raw?: unknown
}

export interface ChatMessageStreamDelta {
  role?: 'system' | 'user' | 'assistant' | 'tool'
  content?: string
  tool_calls?: Array<{
    index?: number
    id?: string
    type?: 'function'
    function?: { name?: string; arguments?: string }
  }>
}

export interface GenerateOptions {
  stop_sequences?: string[]
  tools_to_call_from?: unknown[]
  temperature?: number
  max_tokens?: number
  model?: string
}

export interface Model {
  generate(messages: ChatMessage[], options?: GenerateOptions): Promise<ChatMessage>
  generate_stream?(messages: ChatMessage[], options?: GenerateOptions): AsyncGenerator<ChatMessageStreamDelta>
  parse_tool_calls(message: ChatMessage): ChatMessage
}

export declare abstract class BaseModel implements Model {
  abstract generate(messages: ChatMessage[], options?: GenerateOptions): Promise<ChatMessage>
  generate_stream?(messages: ChatMessage[], options?: GenerateOptions): AsyncGenerator<ChatMessageStreamDelta>
  parse_tool_calls(message: ChatMessage): ChatMessage
}

export { OpenAIModel, type OpenAIModelConfig } from './models.js'

export interface MemoryStep {
  to_messages(summary_mode?: boolean): ChatMessage[]
}

/** Called with each finished step (an `ActionStep`, or the `FinalAnswerStep` that ends a run). */
export type StepCallback = (step: MemoryStep) => void | Promise<void>

export declare abstract class MemoryStepBase {
  abstract to_messages(summary_mode?: boolean): ChatMessage[]
}

/** One step of an agent: the model's output, the code it ran and what that printed, as text. */
export declare class ActionStep extends MemoryStepBase {
  step_number: number
  model_input_messages?: ChatMessage[]
  model_output_message?: ChatMessage
  model_output?: string
  tool_calls?: Array<{ id: string; name: string; arguments: Record<string, unknown> | string }>
  observations?: string
  error?: Error
  token_usage?: TokenUsage
  timing?: Timing
  constructor(step_number: number)
  complete(): void
  to_messages(summary_mode?: boolean): ChatMessage[]
  getSummary(): string
}

export declare class FinalAnswerStep extends MemoryStepBase {
  final_answer: unknown
  from_managed_agent: boolean
  constructor(final_answer: unknown, from_managed_agent?: boolean)
  to_messages(summary_mode?: boolean): ChatMessage[]
}

export interface PromptTemplates {
  system_prompt: string
  planning?: { initial_plan: string; update_plan_pre_messages: string; update_plan_post_messages: string }
  managed_agent?: { task: string; report: string }
  final_answer?: { pre_messages: string; post_messages: string }
}

export interface MultiStepAgentConfig {
  tools: Tool[]
  model: Model
  prompt_templates?: PromptTemplates
  instructions?: string
  max_steps?: number
  add_base_tools?: boolean
  step_callbacks?: StepCallback[]
}

interface CodeOutput {
  output: unknown
  logs: string
  is_final_answer: boolean
}

/** CodeAgent's Python executor; the package does not export it. */
declare class PyodideExecutor {
  private pyodide
  private state
  private authorizedImports
  private maxOperations
  private maxWhileIterations
  private allowedDangerousBuiltins
  private toolNames
  constructor(authorizedImports?: string[], options?: { authorized_imports?: string[]; max_operations?: number })
  init(): Promise<void>
  sendTools(tools: Record<string, (...args: unknown[]) => Promise<unknown>>, pythonToolsMap?: Record<string, string>): Promise<void>
  sendVariables(variables: Record<string, unknown>): Promise<void>
  run(code: string): Promise<CodeOutput>
  cleanup(): Promise<void>
}

export interface CodeAgentConfig extends MultiStepAgentConfig {
  authorized_imports?: string[]
  executor?: PyodideExecutor
  code_block_tags?: [string, string]
}

export interface AgentRunOptions {
  stream?: boolean
  reset?: boolean
  images?: unknown[]
  additional_args?: Record<string, unknown>
  max_steps?: number
}

export declare class CodeAgent {
  constructor(config: CodeAgentConfig)
  // As upstream declares them: a call without options matches the first overload.
  run(task: string, options?: AgentRunOptions & { stream: true }): AsyncGenerator<unknown>
  run(task: string, options?: AgentRunOptions & { stream?: false }): Promise<unknown>
  run(task: string, options?: AgentRunOptions): Promise<unknown> | AsyncGenerator<unknown>
  cleanup(): Promise<void>
}
