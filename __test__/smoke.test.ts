// Spec Appendix C (§13): the smoke test baseline, as written there.
import { strict as assert } from 'node:assert'

import { it } from 'vitest'

import { SESExecutor } from './helpers'

it('Appendix C smoke test: final_answer capture, max operations guard, timeout', async () => {
  const executor = new SESExecutor({
    maxOperations: 1000,
    timeoutMs: 2000,
    authorizedImports: [],
  })

  await executor.init()
  await executor.sendTools({
    readTool: async (path: string) => `content:${path}`,
    sleepTool: async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
  })

  // Case A: final_answer capture
  {
    const code = `
      const text = await readTool("a.txt");
      final_answer(text + ":ok");
    `
    const res = await executor.run(code)
    assert.equal(res.is_final_answer, true)
    assert.equal(res.output, 'content:a.txt:ok')
  }

  // Case B: max operations guard
  {
    const code = `while (true) {}`
    let gotCode = ''
    try {
      await executor.run(code)
    } catch (e: any) {
      gotCode = e.code || ''
    }
    assert.equal(gotCode, 'ERR_MAX_OPS_EXCEEDED')
  }

  // Case C: timeout
  {
    const code = `
      await sleepTool(999999);
    `
    let got = ''
    try {
      await executor.run(code)
    } catch (e: any) {
      got = e.code || e.message || ''
    }
    assert.match(String(got), /ERR_EXEC_TIMEOUT|timed out/)
  }

  await executor.cleanup()
})
