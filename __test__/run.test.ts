// Spec §2.2 / §7.2 (the run pipeline), §5.4 (final_answer), docs/contract.md "Output",
// "Persistence" and "TypeScript-annotated agent code".
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { contractOf, rejectionOf, SESExecutor } from './helpers'

let executor: InstanceType<typeof SESExecutor>
beforeAll(async () => {
  executor = await SESExecutor.create({ maxOperations: 100_000 })
})
afterAll(async () => {
  await executor.cleanup()
})

const run = (code: string) => executor.run(code)
const output = async (code: string) => (await run(code)).output

describe('output: the last expression statement', () => {
  it('is the value of the last expression statement', async () => {
    expect(contractOf(await run('const a = 20;\na + 22'))).toEqual({ output: 42, logs: '', is_final_answer: false })
  })

  it('is undefined when the last statement is not an expression', async () => {
    expect(await output('const unused = 1')).toBeUndefined()
    expect(await output('if (true) { 5 }')).toBeUndefined()
  })

  it('is the awaited value when the last expression awaits', async () => {
    expect(await output('await Promise.resolve(7)')).toBe(7)
  })

  it('is a lone string literal, which is otherwise a directive', async () => {
    expect(await output('"ready"')).toBe('ready')
  })

  it('is a copy of objects and arrays', async () => {
    expect(await output('({ list: [1, "two", { three: 3 }], nothing: null })')).toEqual({
      list: [1, 'two', { three: 3 }],
      nothing: null,
    })
  })
})

describe('top-level return and await (the async wrapper)', () => {
  it('top-level return ends the run with its value', async () => {
    expect(await output('const x = 3;\nif (x > 2) return "big";\n"small"')).toBe('big')
  })

  it('return with no value gives undefined and skips the rest', async () => {
    expect(contractOf(await run('console.log("before"); return; console.log("after")'))).toEqual({
      output: undefined,
      logs: 'before',
      is_final_answer: false,
    })
  })

  it('return inside try/finally runs the finally block first', async () => {
    expect(contractOf(await run('try { return 1 } finally { console.log("finally ran") }'))).toEqual({
      output: 1,
      logs: 'finally ran',
      is_final_answer: false,
    })
  })

  it('return inside a function is that function’s own return', async () => {
    expect(await output('function f() { return 5 }\nf() + 1')).toBe(6)
  })

  it('top-level await works on promises and on plain values', async () => {
    expect(await output('const a = await 1; const b = await Promise.resolve(2); a + b')).toBe(3)
  })
})

describe('results that are Promises are awaited (docs/contract.md "Output")', () => {
  it('a returned Promise gives its value', async () => {
    expect(await output('return new Promise((r) => r("done"))')).toBe('done')
  })

  it('a Promise left as the last expression gives its value', async () => {
    expect(await output('const later = (v) => new Promise((r) => r(v));\nlater([1, 2])')).toEqual([1, 2])
  })

  it('a rejected result is ERR_RUNTIME_EXCEPTION at the return or expression', async () => {
    const returned = await rejectionOf(run('const reason = "no";\nreturn Promise.reject(reason)'))
    expect(returned.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(returned.message).toBe("Runtime exception: Uncaught 'no' (line 2: return Promise.reject(reason))")
    const left = await rejectionOf(run('1;\nPromise.reject(new RangeError("left"))'))
    expect(left.message).toMatch(/^Runtime exception: RangeError: left \(line 2/)
    expect(left.details.line).toBe(2)
  })

  it('only Promises are awaited: an object with then is an ordinary output', async () => {
    expect(await output('({ then: 1, v: 2 })')).toEqual({ then: 1, v: 2 })
  })
})

describe('final_answer (§5.4)', () => {
  it('ends the run with is_final_answer and its value', async () => {
    expect(contractOf(await run('final_answer({ answer: 42 })'))).toEqual({
      output: { answer: 42 },
      logs: '',
      is_final_answer: true,
    })
  })

  it('nothing after final_answer runs', async () => {
    const result = await run('console.log("a"); final_answer("x"); console.log("b"); globalThis.after = 1')
    expect(contractOf(result)).toEqual({ output: 'x', logs: 'a', is_final_answer: true })
    expect(await output('typeof after')).toBe('undefined')
  })

  it('cannot be swallowed by try/catch, nor delayed by finally', async () => {
    const code = `
      try { final_answer("caught?") } catch (e) { console.log("caught", e) }
      try { final_answer("again") } finally { console.log("finally") }
      console.log("still running")`
    expect(contractOf(await run(code))).toEqual({ output: 'caught?', logs: '', is_final_answer: true })
  })

  it('ends the run from inside nested async functions', async () => {
    const code = `
      async function deep() { await null; try { final_answer("deep") } catch {} return "no" }
      const r = await deep().catch(() => "swallowed");
      console.log("after", r)`
    expect(contractOf(await run(code))).toEqual({ output: 'deep', logs: '', is_final_answer: true })
  })

  it('with no argument gives undefined as the final answer', async () => {
    expect(contractOf(await run('final_answer()'))).toEqual({ output: undefined, logs: '', is_final_answer: true })
  })

  it('is not final on a normal run', async () => {
    expect((await run('1')).is_final_answer).toBe(false)
  })
})

describe('persistence across runs (docs/contract.md "Persistence")', () => {
  it('const x = 1 in one run, x + 1 in the next gives 2', async () => {
    await run('const x = 1')
    expect(await output('x + 1')).toBe(2)
  })

  it('declaring const x again in a later run works (V8 REPL rules)', async () => {
    await run('const again = 1')
    expect(await output('const again = 2; again')).toBe(2)
    await run('let againLet = 1; class AgainClass {}')
    expect(await output('let againLet = 2; class AgainClass { static v = 3 } [againLet, AgainClass.v]')).toEqual([2, 3])
  })

  it('a later run may not change a const into a let, or a let into a const', async () => {
    await run('const kept = 1; let mutable = 1')
    const error = await rejectionOf(run('let kept = 2'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.message).toMatch(/SyntaxError: redeclaration of 'kept'/)
    expect((await rejectionOf(run('const mutable = 2'))).message).toMatch(/redeclaration of 'mutable'/)
    expect(await output('[kept, mutable]')).toEqual([1, 1])
  })

  it('a top-level const stays constant, in later runs too (§6.4: meaning kept)', async () => {
    await run('const fixed = 1')
    const error = await rejectionOf(run('fixed = 2'))
    expect(error.message).toMatch(/TypeError/)
    expect(await output('fixed')).toBe(1)
  })

  it('a const assignment throws in every form, in this run and later ones', async () => {
    for (const code of ['const cx = 1; cx = 2; cx', 'const cy = 1; [cy] = [5]', 'const cz = 1; cz++']) {
      const error = await rejectionOf(run(code))
      expect(error.message, code).toMatch(/TypeError: '(cx|cy|cz)' is read-only/)
    }
    expect((await rejectionOf(run('cx = 3'))).message).toMatch(/TypeError/)
    expect(await output('cx')).toBe(1)
  })

  it('top-level let, const and class are not properties of the global object', async () => {
    expect(await output('let lexA = 1; const lexB = 2; class LexC {}\n["lexA" in globalThis, "lexB" in globalThis, "LexC" in globalThis]')).toEqual([false, false, false])
  })

  it('reading a let before its declaration is a ReferenceError (TDZ)', async () => {
    const error = await rejectionOf(run('inTdz;\nlet inTdz = 1'))
    expect(error.message).toMatch(/ReferenceError/)
    expect(error.details.line).toBe(1)
  })

  it('let without initializer resets the binding like a fresh declaration', async () => {
    await run('let reset = 5')
    expect(await output('let reset; reset')).toBeUndefined()
  })

  it('functions and classes persist and keep their closures', async () => {
    await run('let count = 0; function inc() { return ++count }; class Box { constructor(v) { this.v = v } }')
    await run('inc(); inc()')
    expect(await output('[count, inc(), new Box(9).v]')).toEqual([2, 3, 9])
  })

  it('destructuring declarations persist every name', async () => {
    await run('const { p, q: [r, ...rest] } = { p: 1, q: [2, 3, 4] }')
    expect(await output('[p, r, rest]')).toEqual([1, 2, [3, 4]])
  })

  it('block-scoped and loop bindings stay local', async () => {
    await run('{ const blockOnly = 1 } for (let loopOnly = 0; loopOnly < 1; loopOnly++) {}')
    expect(await output('[typeof blockOnly, typeof loopOnly]')).toEqual(['undefined', 'undefined'])
  })

  it('a failed run keeps what it declared before failing', async () => {
    await rejectionOf(run('const beforeFailure = "kept"; null.x'))
    expect(await output('beforeFailure')).toBe('kept')
  })
})

describe('script semantics (sloppy unless "use strict")', () => {
  it('assignment to an undeclared name creates a global in sloppy mode', async () => {
    expect(await output('implicitGlobal = 5; globalThis.implicitGlobal')).toBe(5)
  })

  it('"use strict" makes the same assignment a ReferenceError', async () => {
    const error = await rejectionOf(run('"use strict";\nundeclaredStrict = 5'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.message).toMatch(/ReferenceError/)
  })

  it('var and function declarations become properties of the global object', async () => {
    expect(await output('var v1 = 1; function f1() {}\n[globalThis.v1, typeof globalThis.f1]')).toEqual([1, 'function'])
  })

  it('top-level this is the global object', async () => {
    expect(await output('this === globalThis')).toBe(true)
  })

  it('function declarations are hoisted above the code that calls them', async () => {
    expect(await output('hoisted()\nfunction hoisted() { return "up" }')).toBe('up')
  })

  it('for (let …) closures keep their per-iteration bindings', async () => {
    expect(await output('const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); fs.map(f => f())')).toEqual([0, 1, 2])
  })

  it('labelled break and continue keep working with guards in the loops', async () => {
    const code = `
      const seen = [];
      outer: for (const a of [1, 2, 3]) {
        for (const b of [1, 2, 3]) {
          if (b === 2) continue outer;
          if (a === 3) break outer;
          seen.push(a * 10 + b);
        }
      }
      seen`
    expect(await output(code)).toEqual([11, 21])
  })

  it('switch inside a loop: break leaves the switch, continue the iteration', async () => {
    const code = `
      const seen = [];
      for (const n of [1, 2, 3, 4]) {
        switch (n % 2) {
          case 0: seen.push("even " + n); break;
          default: if (n === 3) continue; seen.push("odd " + n);
        }
        seen.push("after " + n);
      }
      seen`
    expect(await output(code)).toEqual(['odd 1', 'after 1', 'even 2', 'after 2', 'even 4', 'after 4'])
  })

  it('generators and loops in default parameters keep their meaning', async () => {
    const code = `
      function* upTo(limit) { for (let i = 0; i < limit; i++) yield i }
      function sum(list = [...upTo(4)]) { let s = 0; for (const x of list) s += x; return s }
      [sum(), sum([10, 20]), [...upTo(3)]]`
    expect(await output(code)).toEqual([6, 30, [0, 1, 2]])
  })

  it('every loop kind runs (while, do-while, for-in, for-of, for await)', async () => {
    const code = `
      let n = 0;
      while (n < 3) n++;
      do n++; while (n < 5);
      for (const k in { a: 1, b: 2 }) n++;
      for (const v of [1, 2]) n++;
      for await (const w of [Promise.resolve(1)]) n += w;
      n`
    expect(await output(code)).toBe(10)
  })
})

describe('TypeScript-annotated input', () => {
  it('annotations are stripped and the code runs', async () => {
    const code = `
      interface Item { name: string; price: number }
      type Total = number;
      const items: Item[] = [{ name: "a", price: 2 }, { name: "b", price: 3 }];
      function total(list: Item[]): Total { return list.reduce((s, i) => s + i.price, 0) }
      const result = total(items) as number;
      result`
    expect(await output(code)).toBe(5)
  })

  it('enums become real objects', async () => {
    expect(await output('enum Color { Red, Green }\nColor.Green')).toBe(1)
  })

  it('generic functions and non-null assertions run', async () => {
    expect(await output('function first<T>(xs: T[]): T { return xs[0]! }\nfirst<number>([4, 5])')).toBe(4)
  })
})

describe('the result object (§3.1 CodeOutput, LogEntry)', () => {
  const dataKeys = (value: object) =>
    Object.entries(Object.getOwnPropertyDescriptors(value)).map(([key, d]) => [key, 'value' in d && d.writable && d.enumerable])

  it('§3.1 CodeOutput is a plain object of own data properties, in the order index.d.ts documents', async () => {
    const result = await run('console.log("a"); 1 + 1')
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(dataKeys(result)).toEqual(
      ['output', 'logs', 'is_final_answer', 'logEntries', 'stats', 'diagnostics', 'images'].map((k) => [k, true]),
    )
    expect(dataKeys(result.stats)).toEqual(
      ['wallTimeMs', 'cpuTimeMs', 'toolTimeMs', 'toolCalls', 'operations', 'peakHeapBytes'].map((k) => [k, true]),
    )
    expect(dataKeys(result.logEntries[0])).toEqual(['level', 'message', 'ts'].map((k) => [k, true]))
    expect(result.logEntries[0]).toMatchObject({ level: 'log', message: 'a' })
    // Fields with nothing in them are fresh arrays, one per result.
    const again = await run('2')
    expect(again.diagnostics).toEqual([])
    expect(again.images).not.toBe(result.images)
  })

  it('is built without running the host realm’s setters or prototype code', async () => {
    const touched: string[] = []
    const names = ['output', 'logs', 'stats', 'logEntries', 'level', 'wallTimeMs', 'trace', 'type', 'outcome']
    for (const name of names) {
      Object.defineProperty(Object.prototype, name, {
        configurable: true,
        set() {
          touched.push(name)
        },
      })
    }
    try {
      const result = await executor.run('console.info("b"); 41 + 1', { trace: true })
      expect(result.output).toBe(42)
      expect(Object.hasOwn(result, 'trace')).toBe(true)
      expect(result.trace?.at(-1)?.type).toBe('run_end')
      expect(result.logEntries[0].level).toBe('info')
      expect(typeof result.stats.wallTimeMs).toBe('number')
    } finally {
      for (const name of names) delete (Object.prototype as Record<string, unknown>)[name]
    }
    expect(touched).toEqual([])
  })
})
