// Appendix C under Jest, the package loaded with require() (CommonJS).
const { SESExecutor, ExecutorError } = require('../..')
const { appendixC } = require('./appendix-c.cjs')

test('Appendix C smoke test from CommonJS', async () => {
  expect(await appendixC(SESExecutor)).toBe('DEAD')
})

test('errors are ExecutorError instances across Jest’s module registry (CommonJS)', async () => {
  const executor = await SESExecutor.create()
  await expect(executor.run('throw new Error("x")')).rejects.toBeInstanceOf(ExecutorError)
  await executor.cleanup()
})
