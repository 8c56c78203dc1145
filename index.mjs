// ES module entry: re-exports the CommonJS loader that napi generates (index.js), naming every
// export so that `import { SESExecutor, ExecutorError } from "@smolagents-ts/ses-executor"` works.
import binding from './index.js'

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
} = binding
export default binding
