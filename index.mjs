// ES module entry: re-exports the CommonJS entry (index.js), naming every export so that
// `import { SESExecutor, ExecutorError } from "@smolagents-ts/ses-executor"` works.
import entry from './index.js'

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
  PauseRequest,
  SessionPool,
  MemoryStore,
  FileStore,
  SessionError,
} = entry
export default entry
