// The package loads from both require() and import (issue: "exports that work from both"),
// checked in fresh Node processes through the package's own name and `exports` map.
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim()
}

const program = `
  const ex = await SESExecutor.create();
  const { output } = await ex.run("6 * 7");
  let code;
  try { await ex.run("null.x") } catch (e) { code = (e instanceof ExecutorError) + ":" + e.code }
  await ex.cleanup();
  console.log(JSON.stringify([output, code, typeof validateCode, typeof prepareProgram]));
`
const expected = JSON.stringify([42, 'true:ERR_RUNTIME_EXCEPTION', 'function', 'function'])

describe('package entry points', () => {
  it('require("@smolagents-ts/ses-executor") gives every export', () => {
    const script = `
      const { SESExecutor, ExecutorError, validateCode, prepareProgram } = require("@smolagents-ts/ses-executor");
      (async () => { ${program} })();`
    expect(node(['-e', script])).toBe(expected)
  })

  it('import { … } from "@smolagents-ts/ses-executor" gives every export by name', () => {
    const script = `
      import { SESExecutor, ExecutorError, validateCode, prepareProgram } from "@smolagents-ts/ses-executor";
      ${program}`
    expect(node(['--input-type=module', '-e', script])).toBe(expected)
  })

  it('the default import is the same binding as require()', () => {
    const script = `
      import binding from "@smolagents-ts/ses-executor";
      import { createRequire } from "node:module";
      const required = createRequire(import.meta.url)("@smolagents-ts/ses-executor");
      console.log(binding === required && binding.SESExecutor === required.SESExecutor);`
    expect(node(['--input-type=module', '-e', script])).toBe('true')
  })
})

describe('examples/quickstart.mjs', () => {
  it('runs and prints the results its comments describe', () => {
    const printed = node([join(root, 'examples', 'quickstart.mjs')])
    expect(printed).toContain("output: 19.5")
    expect(printed).toContain("logs: 'items: 3 { total: 19.5 }'")
    expect(printed).toContain("step 2 -> { output: 'The total is 19.5', logs: '', is_final_answer: true }")
    expect(printed).toContain('step 3 -> ERR_MAX_OPS_EXCEEDED - Max operations exceeded (10000)')
  })
})

describe('examples/trace.mjs', () => {
  it('streams the events live and prints the trace of the step', () => {
    const printed = node([join(root, 'examples', 'trace.mjs')])
    expect(printed).toContain('live: run_start')
    expect(printed).toContain("output: <title>https://example.com/lyon/0</title>")
    expect(printed).toMatch(/call #0 search\("lyon",\{"limit":2\}\) at line 2/)
    expect(printed).toMatch(/#1 -> "<title>https:\/\/example.com\/lyon\/0<\/title>" in [\d.]+ ms \(async\)/)
    expect(printed).toContain('#2 threw translation service unavailable')
    expect(printed).toContain('run_end: final_answer, 3 tool calls')
  })
})
