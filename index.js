'use strict'
// CommonJS entry. The native exports come through the loader napi-rs generates (binding.js,
// rewritten by every `npm run build`); this file adds what is written in JavaScript
// (codeAgentSetup, createRunJavaScriptTool) and the error for a platform with no addon
// (lib/load-binding.cjs).
const { loadBinding } = require('./lib/load-binding.cjs')
const { codeAgentSetup } = require('./lib/code-agent.cjs')
const { createRunJavaScriptTool } = require('./lib/run-javascript-tool.cjs')

module.exports = { ...loadBinding(), codeAgentSetup, createRunJavaScriptTool }
