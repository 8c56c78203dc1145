// A mirror of the types smolagents-ts declares for CodeAgent's config (src/agents/code-agent.ts,
// src/types/config.ts, src/types/tool.ts, src/utils/python-executor.ts), for the type test in
// ../code-agent-types.ts. What matters is kept as upstream writes it: `executor?: PyodideExecutor`,
// a class with private members, which makes the type nominal.
declare module 'smolagents-ts' {
  export interface CodeOutput {
    output: unknown
    logs: string
    is_final_answer: boolean
  }

  export interface ToolInput {
    type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'any'
    description?: string
    nullable?: boolean
    default?: unknown
    enum?: readonly string[]
  }

  export interface Tool {
    name: string
    description: string
    inputs: Record<string, ToolInput>
    output_type?: string
    forward(...args: unknown[]): Promise<unknown>
    to_dict(): unknown
  }

  export interface PromptTemplates {
    system_prompt: string
    planning?: { initial_plan: string; update_plan_pre_messages: string; update_plan_post_messages: string }
    managed_agent?: { task: string; report: string }
    final_answer?: { pre_messages: string; post_messages: string }
  }

  export interface Model {
    generate(messages: unknown[], options?: { stop_sequences?: string[] }): Promise<unknown>
  }

  export interface MultiStepAgentConfig {
    tools: Tool[]
    model: Model
    prompt_templates?: PromptTemplates
    instructions?: string
    max_steps?: number
    add_base_tools?: boolean
  }

  export interface PyodideExecutorOptions {
    authorized_imports?: string[]
    max_operations?: number
    workDir?: string
  }

  export class PyodideExecutor {
    private pyodide
    private state
    private authorizedImports
    private maxOperations
    private maxWhileIterations
    private allowedDangerousBuiltins
    private toolNames
    private runtimeReady
    private workDir
    private mountPoint
    private isMounted
    constructor(authorizedImports?: string[], options?: PyodideExecutorOptions)
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

  export class CodeAgent {
    constructor(config: CodeAgentConfig)
    run(task: string): Promise<unknown>
    cleanup(): Promise<void>
  }
}
