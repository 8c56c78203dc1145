// Property test of the loop guards (spec §6.3, §6.4): for generated programs made of loops,
// the executor's result equals plain Node `vm` evaluation of the same program while the loops
// stay within maxOperations, and the run ends with ERR_MAX_OPS_EXCEEDED once they do not.
import vm from 'node:vm'

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from './helpers'

type Loop =
  | { kind: 'for' | 'while' | 'do' | 'of' | 'in'; n: number }
  | { kind: 'nested'; outer: number; inner: number; skip: number }

const step = (value: string) => `acc = (acc * 31 + ${value}) % 1000003;`

/** The source of one loop, and how many times the guard runs for it. */
function render(loop: Loop, index: number): { source: string; count: number } {
  const i = `i${index}`
  switch (loop.kind) {
    case 'for':
      return { source: `for (let ${i} = 0; ${i} < ${loop.n}; ${i}++) { ${step(i)} }`, count: loop.n }
    case 'while':
      return { source: `let ${i} = 0; while (${i} < ${loop.n}) { ${step(i)} ${i}++; }`, count: loop.n }
    case 'do':
      // A do-while body runs once even when the bound is 0.
      return { source: `let ${i} = 0; do { ${step(i)} } while (++${i} < ${loop.n});`, count: Math.max(loop.n, 1) }
    case 'of':
      return { source: `for (const ${i} of Array.from({ length: ${loop.n} }, (_, k) => k * 2)) ${step(i)}`, count: loop.n }
    case 'in':
      return {
        source: `for (const ${i} in Object.fromEntries(Array.from({ length: ${loop.n} }, (_, k) => ["k" + k, k]))) ${step(`${i}.length`)}`,
        count: loop.n,
      }
    case 'nested': {
      // `continue` skips the rest of an inner body but the guard has already counted it.
      const source = `outer${index}: for (let ${i} = 0; ${i} < ${loop.outer}; ${i}++) {
        for (let j = 0; j < ${loop.inner}; j++) {
          if (j === ${loop.skip}) continue outer${index};
          ${step(`${i} * 7 + j`)}
        }
      }`
      const innerPerOuter = loop.skip < loop.inner ? loop.skip + 1 : loop.inner
      return { source, count: loop.outer * (1 + innerPerOuter) }
    }
  }
}

const loop: fc.Arbitrary<Loop> = fc.oneof(
  fc.record({ kind: fc.constantFrom('for', 'while', 'do', 'of', 'in') as fc.Arbitrary<'for' | 'while' | 'do' | 'of' | 'in'>, n: fc.nat({ max: 40 }) }),
  fc.record({ kind: fc.constant('nested' as const), outer: fc.nat({ max: 8 }), inner: fc.nat({ max: 8 }), skip: fc.nat({ max: 9 }) }),
)

describe('loop guards keep the meaning of programs (property)', () => {
  it('result equals node:vm within maxOperations, ERR_MAX_OPS_EXCEEDED beyond it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(loop, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 150 }), async (loops, maxOperations) => {
        const parts = loops.map(render)
        const source = ['let acc = 1;', ...parts.map((part) => part.source), 'acc'].join('\n')
        const count = parts.reduce((sum, part) => sum + part.count, 0)
        const executor = await SESExecutor.create({ maxOperations })
        try {
          if (count <= maxOperations) {
            const expected = vm.runInNewContext(source)
            expect((await executor.run(source)).output).toBe(expected)
          } else {
            expect((await rejectionOf(executor.run(source))).code).toBe('ERR_MAX_OPS_EXCEEDED')
          }
        } finally {
          await executor.cleanup()
        }
      }),
      { numRuns: 150 },
    )
  })
})
