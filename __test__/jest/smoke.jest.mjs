// Appendix C under Jest, the package loaded with import (ESM; needs node --experimental-vm-modules).
import { ExecutorError, SESExecutor } from '../../index.mjs'
import { appendixC } from './appendix-c.cjs'

test('Appendix C smoke test from ESM', async () => {
  expect(await appendixC(SESExecutor)).toBe('DEAD')
})

test('errors are ExecutorError instances across Jest’s module registry (ESM)', async () => {
  const executor = await SESExecutor.create()
  await expect(executor.run('throw new Error("x")')).rejects.toBeInstanceOf(ExecutorError)
  await executor.cleanup()
})
