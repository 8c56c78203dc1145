// The types of the stand-in for `smolagents-ts/models` (see ./index.d.ts).
import type { BaseModel, ChatMessage, ChatMessageStreamDelta, GenerateOptions } from './index.js'

export { BaseModel, type Model } from './index.js'

export interface OpenAIModelConfig {
  apiKey: string
  baseURL?: string
  organization?: string
  dangerouslyAllowBrowser?: boolean
  defaultModel?: string
  timeout?: number
  maxRetries?: number
}

export declare class OpenAIModel extends BaseModel {
  constructor(config: OpenAIModelConfig)
  generate(messages: ChatMessage[], options?: GenerateOptions): Promise<ChatMessage>
  generate_stream(messages: ChatMessage[], options?: GenerateOptions): AsyncGenerator<ChatMessageStreamDelta>
  parse_tool_calls(message: ChatMessage): ChatMessage
}
