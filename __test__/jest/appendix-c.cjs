// Spec Appendix C (§13), the smoke test baseline as written there, shared by the Jest suites
// that load the package from CommonJS and from ESM (other test runners and hosts).
const assert = require('node:assert/strict')

/** Runs the three cases of Appendix C against `SESExecutor`. */
async function appendixC(SESExecutor) {
  const executor = new SESExecutor({
    maxOperations: 1000,
    timeoutMs: 2000,
    authorizedImports: [],
  })

  await executor.init()
  // The spec's sleepTool, whose timers are remembered: Case C leaves one pending for 999999 ms
  // after the run timed out, and clearing it at the end lets Jest's process exit by itself —
  // which then shows that the executor holds nothing that keeps Node alive.
  const timers = []
  await executor.sendTools({
    readTool: async (path) => `content:${path}`,
    sleepTool: async (ms) => new Promise((resolve) => timers.push(setTimeout(resolve, ms))),
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
    } catch (e) {
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
    } catch (e) {
      got = e.code || e.message || ''
    }
    assert.match(String(got), /ERR_EXEC_TIMEOUT|timed out/)
  }

  await executor.cleanup()
  timers.forEach(clearTimeout)
  return executor.state
}

module.exports = { appendixC }
