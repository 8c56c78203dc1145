// Security suite, deadlines: every run settles by timeoutMs plus the
// documented grace (DEADLINE_GRACE, 500 ms), whatever built-in the code is in, and after
// cleanup() no thread of ours uses CPU. The built-ins below looped in C without asking QuickJS's
// interrupt handler, so these runs never settled (or only after seconds to minutes) and their
// threads went on spinning after cleanup(); vendor/quickjs-patches/0110–0113 make them ask, and
// the Rust suite has one test per patched loop (src/engine/tests/deadline.rs). Where a built-in
// can tell at once that its result cannot fit (Array.prototype.join's separators alone), it
// refuses before looping. If a thread ever cannot be stopped, the run is still answered at the
// deadline plus the grace, with details.stillRunning (src/executor/tests/deadline.rs).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, describe, expect, it } from 'vitest'

import { SESExecutor } from '../helpers'
import { Canary, expectUsable } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')
const GiB = 1024 * 1024 * 1024
/** The grace of src/executor/mod.rs `DEADLINE_GRACE`, as the README states it. */
const GRACE_MS = 500
/** Room for thread wake-ups and Node's event loop on a loaded machine. */
const SLACK_MS = 500

interface DeadlineCase {
  name: string
  /**
   * Builds a large input before `code` runs, in the same run (so `timeoutMs` covers it): `code`
   * then runs in a loop until the deadline, which finds it inside the built-in.
   */
  setup?: string
  code: string
  memoryLimitBytes?: number
  expected: { code: string; state: 'READY' | 'DIRTY'; message?: RegExp }
}

const timeout = { code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY' } as const
/** `term(0) + term(1) + … + term(n - 1)`. */
const sum = (n: number, term: (i: number) => string) => Array.from({ length: n }, (_, i) => term(i)).join(' + ')
const atLimit = { code: 'ERR_RUNTIME_EXCEPTION', state: 'DIRTY', message: /out of memory/ } as const

const cases: DeadlineCase[] = [
  // The reproducers that found these loops.
  { name: "Array(1e9).join('x') in a 2 GiB heap", code: "Array(1e9).join('x')", memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: "Array(1e9).join('x') is refused at once where its separators cannot fit", code: "Array(1e9).join('x')", expected: atLimit },
  { name: "new Array(1e9) + '' in a 2 GiB heap", code: "new Array(1e9) + ''", memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'Array.prototype.indexOf on an array-like of length 2^32 - 1', code: 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1)', expected: timeout },
  { name: 'Array.prototype.includes on an array-like of length 2^53 - 1', code: 'Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)', expected: timeout },
  { name: 'Array.prototype.lastIndexOf on an array-like of length 2^53 - 1', code: 'Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)', expected: timeout },
  { name: 'Array.prototype.every on an array-like of length 2^53 - 1', code: 'Array.prototype.every.call({ length: 2 ** 53 - 1 }, () => true)', expected: timeout },
  { name: 'Array.prototype.fill on an array-like of length 2^32 - 1', code: 'Array.prototype.fill.call({ length: 2 ** 32 - 1 }, 1)', expected: timeout },
  {
    name: 'Array.prototype.join on an array-like of length 2^32 - 1 is refused at once',
    code: 'Array.prototype.join.call({ length: 2 ** 32 - 1 })',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /RangeError: invalid string length/ },
  },
  { name: "Array.prototype.join('') on an array-like of length 2^53 - 1", code: "Array.prototype.join.call({ length: 2 ** 53 - 1 }, '')", expected: timeout },
  { name: "a huge String.prototype.repeat in a 2 GiB heap", code: "'ab'.repeat(2 ** 29 - 1)", memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'a huge String.prototype.padEnd in a 2 GiB heap', code: "''.padEnd(2 ** 30 - 2, 'ab')", memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'a huge String.prototype.split', setup: "var s = 'x'.repeat(2 ** 24)", code: "s.split('')", memoryLimitBytes: 2 * GiB, expected: timeout },
  // Straight-line arithmetic: the interpreter itself checks nothing between these operations.
  { name: 'BigInt ** on huge values', code: `const t = 3n; ${sum(40, (i) => `t ** ${650000 + i}n`)}`, expected: timeout },
  { name: 'BigInt * on huge values', code: `const h = (1n << 500000n) - 1n; ${sum(40, (i) => `h * (h - ${i}n)`)}`, expected: timeout },
  { name: 'BigInt toString of a 2^20-bit value', code: '((1n << 1000000n) - 1n).toString()', expected: timeout },
  { name: 'JSON.stringify of a huge string', setup: "var s = 'x'.repeat(2 ** 28)", code: 'JSON.stringify(s)', memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'a catastrophic RegExp', code: "/(x+x+)+y/.test('x'.repeat(5000))", expected: timeout },
  // Found by the survey of quickjs.c's loops.
  { name: 'Array.prototype.slice on an array-like of length 2^32 - 1', code: 'Array.prototype.slice.call({ length: 2 ** 32 - 1 })', expected: timeout },
  { name: 'Array.prototype.copyWithin on an array-like of length 2^53 - 1', code: 'Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)', expected: timeout },
  { name: 'Array.prototype.reverse on an array-like of length 2^32 - 1', code: 'Array.prototype.reverse.call({ length: 2 ** 32 - 1 })', expected: timeout },
  { name: 'Array.from an array-like of length 2^32 - 1', code: 'Array.from({ length: 2 ** 32 - 1 })', expected: timeout },
  { name: 'String.prototype.replaceAll with 2^26 matches', code: "'x'.repeat(2 ** 26).replaceAll('x', 'yy')", expected: timeout },
  { name: 'sorting 2^22 numbers without a comparator', code: 'Array.from({ length: 2 ** 22 }, (_, i) => (i * 7919) % 1000003).sort()', memoryLimitBytes: 2 * GiB, expected: timeout },
  {
    name: 'sorting a 2^25-element Float64Array without a comparator',
    setup: 'var t = new Float64Array(2 ** 25).fill(0.5).map((x, i) => x * ((i * 7919) % 1000003))',
    code: 't.sort()',
    memoryLimitBytes: 2 * GiB,
    expected: timeout,
  },
  { name: 'TypedArray.prototype.join of 2^27 bytes', setup: 'var bytes = new Uint8Array(2 ** 27)', code: 'bytes.join()', memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'String.prototype.toUpperCase of 2^28 characters', setup: "var s = 'x'.repeat(2 ** 28)", code: 's.toUpperCase()', memoryLimitBytes: 2 * GiB, expected: timeout },
  { name: 'encodeURIComponent of 2^26 characters', setup: "var e = 'é'.repeat(2 ** 26)", code: 'encodeURIComponent(e)', memoryLimitBytes: 2 * GiB, expected: timeout },
]

const TIMEOUT_MS = 200
/** Room for building a large input first (a 256 MiB string takes a second on a loaded machine). */
const SETUP_TIMEOUT_MS = 3000

describe('every run settles by timeoutMs plus the grace', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const timeoutMs = c.setup ? SETUP_TIMEOUT_MS : TIMEOUT_MS
      const executor = await SESExecutor.create({
        timeoutMs,
        maxOperations: 1e12,
        memoryLimitBytes: c.memoryLimitBytes ?? 256 * 1024 * 1024,
      })
      try {
        const code = c.setup ? `${c.setup}; for (;;) ${c.code}` : c.code
        const started = performance.now()
        const error = await executor.run(code).then(
          (output) => {
            throw new Error(`expected a failure, got ${JSON.stringify(output.output)?.slice(0, 100)}`)
          },
          (e) => e,
        )
        const settled = performance.now() - started
        expect({ code: error.code, state: executor.state }).toEqual({ code: c.expected.code, state: c.expected.state })
        if (c.expected.message) expect(error.message).toMatch(c.expected.message)
        // Stopped by the engine itself, not answered for a thread still busy.
        expect(error.details?.stillRunning).toBeUndefined()
        expect(settled).toBeLessThan(timeoutMs + GRACE_MS + SLACK_MS)
        canary.expectNotLeaked(error.message, error.details)
        await expectUsable(executor, c.expected.state)
      } finally {
        if (executor.state === 'READY' || executor.state === 'DIRTY') await executor.cleanup()
      }
    })
  }
})

describe('after cleanup() no thread of ours uses CPU', () => {
  // Each in a process of its own, so that nothing else runs in the quiet second it measures.
  const stuck = [
    ["Array(1e9).join('x') in a 1 GiB heap", "new Array(1e9).join('')"],
    ['Array.prototype.includes on an array-like of length 2^53 - 1', 'Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)'],
    ['BigInt toString of a 2^20-bit value', '((1n << 1000000n) - 1n).toString()'],
    ['String.prototype.replaceAll with 2^26 matches', "'x'.repeat(2 ** 26).replaceAll('x', 'yy')"],
  ]
  for (const [name, code] of stuck) {
    it(name, () => {
      const result = spawnSync(process.execPath, [join(fixtures, 'cpu-after-cleanup.cjs'), code, String(TIMEOUT_MS)], {
        encoding: 'utf8',
        timeout: 30_000,
      })
      expect(result.status, result.stderr).toBe(0)
      const measured = JSON.parse(result.stdout.trim().split('\n').pop()!)
      expect(measured).toMatchObject({ code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY' })
      // The runtime is freed and no engine thread is busy; the pool keeps its (idle) threads.
      expect(measured.pool).toMatchObject({ busy: 0, queued: 0, engines: 0 })
      expect(measured.engineThreads).toBe(measured.pool.threads)
      expect(measured.settledMs).toBeLessThan(TIMEOUT_MS + GRACE_MS + SLACK_MS)
      // An idle Node process uses a few milliseconds of CPU a second; a spinning thread, a full
      // second.
      expect(measured.quietCpuMs).toBeLessThan(100)
    })
  }
})
