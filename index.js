'use strict'
// CommonJS entry. The native exports come through the loader napi-rs generates (binding.js,
// rewritten by every `npm run build`); this file adds what is written in JavaScript
// (codeAgentSetup, createRunJavaScriptTool, the `tracer` option of SESExecutor, SessionPool and
// its stores) and the error for a platform with no addon (lib/load-binding.cjs).
const { binding, SESExecutor } = require('./lib/executor.cjs')
const { codeAgentSetup } = require('./lib/code-agent.cjs')
const { createRunJavaScriptTool } = require('./lib/run-javascript-tool.cjs')
const { SessionPool } = require('./lib/session-pool.cjs')
const { MemoryStore, FileStore, SessionError } = require('./lib/session-store.cjs')

module.exports = {
  ...binding,
  SESExecutor,
  SesExecutor: SESExecutor,
  codeAgentSetup,
  createRunJavaScriptTool,
  SessionPool,
  MemoryStore,
  FileStore,
  SessionError,
}
