// Nothing lost silently, second half: the executor never reads or builds its own values through
// what the guest can redefine. Agent code that replaces RegExp.prototype's getters, Map/Set
// iteration, Date.prototype.getTime, a constructor, Map.prototype.set, or turns
// Error.prototype.message into an accessor used to get inspect strings back instead of its
// values, and an async tool failure that was never delivered (a promise that could never
// settle). The executor reads and builds through the intrinsics captured when the context was
// made (as Node's primordials), whatever a run did to the prototypes — which persist within that
// executor, and only there.
import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from '../helpers'
import { expectUsable } from './harness'

const TAMPER = `
  const lie = (value) => ({ get() { return value; }, configurable: true });
  Object.defineProperty(RegExp.prototype, 'source', lie('evil'));
  Object.defineProperty(RegExp.prototype, 'flags', lie(''));
  Object.defineProperty(RegExp.prototype, 'global', lie(false));
  Map.prototype.entries = function* () { yield ['evil', 1]; };
  Map.prototype[Symbol.iterator] = Map.prototype.entries;
  Map.prototype.forEach = () => {};
  Set.prototype.values = function* () { yield 'evil'; };
  Set.prototype[Symbol.iterator] = Set.prototype.values;
  Object.getPrototypeOf(new Map().entries()).next = () => ({ done: true });
  Object.getPrototypeOf(new Set().values()).next = () => ({ done: true });
  Date.prototype.getTime = Date.prototype.valueOf = () => 0;
  Number.prototype.valueOf = () => -1;
  'tampered'`

async function tampered() {
  const executor = await SESExecutor.create({ timeoutMs: 10_000 })
  expect((await executor.run(TAMPER)).output).toBe('tampered')
  return executor
}

describe('class 5: outputs after the guest rewired the built-ins', () => {
  it('Map, Set, RegExp, Date and wrapped numbers come back as themselves, not inspect strings', async () => {
    const executor = await tampered()
    const { output } = await executor.run(
      "({ m: new Map([[1, 'a'], [2, 'b']]), s: new Set([3, 4]), r: /ab+c/gi, d: new Date(86400000), n: new Number(5) })",
    )
    const { m, s, r, d, n } = output as { m: Map<number, string>; s: Set<number>; r: RegExp; d: Date; n: number }
    expect(m).toBeInstanceOf(Map)
    expect([...m]).toEqual([
      [1, 'a'],
      [2, 'b'],
    ])
    expect(s).toBeInstanceOf(Set)
    expect([...s]).toEqual([3, 4])
    expect(r).toBeInstanceOf(RegExp)
    expect([r.source, r.flags]).toEqual(['ab+c', 'gi'])
    expect(d).toBeInstanceOf(Date)
    expect(d.getTime()).toBe(86400000)
    expect(n).toBe(5)
    await executor.cleanup()
  })

  it('the same values reach a tool as arguments, intact', async () => {
    const executor = await tampered()
    const seen: unknown[] = []
    await executor.sendTools({ keep: (...args: unknown[]) => seen.push(...args) })
    await executor.run("keep(new Map([[1, 2]]), new Set(['x']), /q/m)")
    expect(seen[0]).toEqual(new Map([[1, 2]]))
    expect(seen[1]).toEqual(new Set(['x']))
    expect(String(seen[2])).toBe('/q/m')
    await executor.cleanup()
  })

  it('console.log shows the real entries too', async () => {
    const executor = await tampered()
    const { logs } = await executor.run("console.log(new Map([[1, 2]]), new Set([3]), /x/y); 0")
    expect(logs).toBe('Map(1) { 1 => 2 } Set(1) { 3 } /x/y')
    await executor.cleanup()
  })
})

describe('class 5: values built in the sandbox after the guest replaced constructors and methods', () => {
  it('variables and tool results of every kind are built with the engine\'s own constructors; replaced ones never run', async () => {
    const executor = await SESExecutor.create()
    await executor.run(`
      globalThis.calls = [];
      const spy = (name) => function () { calls.push(name); throw new Error(name); };
      Map.prototype.set = spy('Map.prototype.set');
      Set.prototype.add = spy('Set.prototype.add');
      Object.defineProperty(Map.prototype, 'constructor', { value: spy('Map ctor') });
      globalThis.Map = spy('Map'); globalThis.Set = spy('Set'); globalThis.RegExp = spy('RegExp');
      delete globalThis.EvalError;
      0`)
    await executor.sendVariables({ vm: new Map([['k', 1]]), vs: new Set([1, 2]), vr: /v/g, ve: new EvalError('e') })
    await executor.sendTools({ give: () => new Map([[2, new Set(['nested'])]]), later: async () => /later/i })
    const { output } = await executor.run(`
      const m = give(); const r = await later();
      [calls.length, vm.get('k'), vs.size, vr.flags, ve.name, ve.message, m.get(2).has('nested'), r.flags]`)
    expect(output).toEqual([0, 1, 2, 'g', 'EvalError', 'e', true, 'i'])
    await executor.cleanup()
  })
})

describe('class 5: tool failures after the guest made Error.prototype.message an accessor', () => {
  const ACCESSOR = `
    Object.defineProperty(Error.prototype, 'message', { get() { return 'lied'; }, set(v) { throw new Error('setter ran'); }, configurable: true });
    Object.defineProperty(Error.prototype, 'name', { get() { return 'Lied'; }, set(v) { throw new Error('name setter ran'); }, configurable: true });
    0`

  it('an async tool failure is delivered: ERR_TOOL_PROXY_FAIL (it used to be "a promise that can never settle")', async () => {
    const executor = await SESExecutor.create()
    await executor.sendTools({ fail: async () => { throw new TypeError('disk full') } })
    await executor.run(ACCESSOR)
    const error = await rejectionOf(executor.run('const x = 1;\nawait fail()'))
    expect([error.code, error.message, error.details]).toEqual([
      'ERR_TOOL_PROXY_FAIL',
      'Tool execution failed: fail: TypeError: disk full',
      { tool: 'fail', line: 2, column: 7, sourceLine: 'await fail()' },
    ])
    await expectUsable(executor, 'READY')
    await executor.cleanup()
  })

  it('sync and async failures reach sandbox code with their own name and message, whatever the prototype says', async () => {
    const executor = await SESExecutor.create()
    await executor.sendTools({ now: () => { throw new RangeError('sync') }, later: async () => { throw new Error('async') } })
    await executor.run(ACCESSOR)
    const { output } = await executor.run(`
      const seen = [];
      try { now() } catch (e) { seen.push(e.name, e.message) }
      try { await later() } catch (e) { seen.push(e.name, e.message) }
      seen`)
    expect(output).toEqual(['RangeError', 'sync', 'Error', 'async'])
    await executor.cleanup()
  })

  it('the loop guard stays uncatchable: a throwing message setter cannot turn its stop into a catchable error', async () => {
    const executor = await SESExecutor.create({ maxOperations: 100 })
    await executor.run(ACCESSOR)
    const error = await rejectionOf(executor.run('globalThis.caught = false; try { while (true) {} } catch (e) { globalThis.caught = true }'))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    expect((await executor.run('caught')).output).toBe(false)
    await executor.cleanup()
  })
})

describe('built-in prototypes changed by a run persist within that executor, and only there — README threat model', () => {
  it('a later run of the same executor sees the change; another executor does not', async () => {
    const first = await SESExecutor.create()
    const second = await SESExecutor.create()
    await first.run("Array.prototype.answer = 42; String.prototype.shout = function () { return this.toUpperCase() + '!' }; 0")
    expect((await first.run("[[].answer, 'hi'.shout()]")).output).toEqual([42, 'HI!'])
    expect((await second.run("[[].answer, typeof ''.shout]")).output).toEqual([undefined, 'undefined'])
    await first.cleanup()
    await first.init()
    expect((await first.run('[].answer')).output).toBeUndefined()
    await first.cleanup()
    await second.cleanup()
  })
})
