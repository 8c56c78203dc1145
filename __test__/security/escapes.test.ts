// Security suite, escapes: published sandbox-escape techniques, rewritten for this
// API, must leave the sandbox with nothing but its tools. Every payload's goal is the canary
// file (read it, or overwrite it) through Node's `process`, `require` or `fs`.
import { afterAll, describe, expect, it } from 'vitest'

import { type AttackCase, Canary, runCase } from './harness'

const canary = new Canary()
afterAll(() => canary.remove())

/** The tail every payload appends once it believes it holds `process`. */
const STEAL = ".mainModule.require('fs').readFileSync(canaryPath, 'utf8')"
const EVAL_REFUSED = /EvalError: eval\(\) and the Function constructors are not available/

const echo = (calls: unknown[][]) => ({
  echo: (...args: unknown[]) => {
    calls.push(args)
    return args[0]
  },
  later: async (...args: unknown[]) => {
    calls.push(args)
    return args[0]
  },
  boom: () => {
    throw new Error(`boom from ${canary.path}`)
  },
})

const constructorChains: AttackCase[] = [
  {
    name: "this.constructor.constructor('return process')() — Node.js vm documentation, vm2 README",
    code: `this.constructor.constructor('return process')()${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'Function constructor through a tool function — original',
    code: `echo.constructor('return process')()${STEAL}`,
    tools: echo,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
    after: (calls) => expect(calls).toEqual([]),
  },
  {
    name: 'Function constructor through a tool result’s prototype chain — original (vm2-style host prototype chains)',
    code: `const r = echo({ a: 1 }); r.constructor.constructor('return process')()${STEAL}`,
    tools: echo,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'AsyncFunction constructor — original',
    code: `await (async () => {}).constructor('return process')()`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'GeneratorFunction constructor — original',
    code: `(function* () {}).constructor('yield process')().next().value${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'AsyncGeneratorFunction constructor — original',
    code: `(async function* () {}).constructor('yield process')()`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'indirect eval (0, eval) — original',
    code: `(0, eval)('process')${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'Reflect.construct(Function, …) — original',
    code: `Reflect.construct(Function, ['return process'])()${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'Function constructor caught and retried from a catch clause — vm2 CVE-2023-29199',
    code: `let F; try { F = Function('return 1') } catch (e) { F = e.constructor.constructor }
           F('return process')()${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'stack overflow error’s constructor chain — vm2 CVE-2019-10761',
    code: `function f() { try { return f() } catch (e) { return e } }
           const e = f(); e.constructor.constructor('return process')()${STEAL}`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: EVAL_REFUSED },
  },
  {
    name: 'Proxy getPrototypeOf trap on a thrown value, destructured in catch — vm2 CVE-2023-30547',
    code: `const handler = { getPrototypeOf() { (function stack() { new Error().stack; stack() })() } };
           let got = 'no escape';
           try { throw new Proxy({}, handler) } catch ({ constructor: c }) {
             try { got = c.constructor('return process')()${STEAL} } catch (e) { got = e.name }
           }
           got`,
    expected: { output: 'EvalError' },
  },
]

const stackTraceTricks: AttackCase[] = [
  {
    name: 'Error.prepareStackTrace with CallSite.getThis — vm2 CVE-2022-36067 (SandBreak)',
    code: `Error.prepareStackTrace = (e, frames) => frames.map((f) => [typeof f.getThis, typeof f.getFunction]);
           (function inner() { return new Error('x').stack })()`,
    expected: {
      output: [
        ['undefined', 'function'],
        ['undefined', 'function'],
      ],
    },
  },
  {
    name: 'Error replaced by a plain object holding prepareStackTrace — vm2 CVE-2022-36067 payload',
    code: `globalThis.OldError = globalThis.Error;
           Error = {};
           Error.prepareStackTrace = (e, sst) => sst[0].getThis().constructor.constructor('return process')()${STEAL};
           const { stack } = new OldError('probe');
           // Only the sandbox's own frame, formatted by the engine: the replaced Error was ignored.
           [typeof stack, /^\\s+at <eval> \\(agent\\.js:\\d+:\\d+\\)\\n$/.test(stack)]`,
    expected: { output: ['string', true] },
  },
  {
    name: 'Error.prepareStackTrace on a tool’s failure — vm2 CVE-2023-29017',
    code: `const seen = [];
           Error.prepareStackTrace = (e, frames) => { seen.push(frames.length); return 'replaced' };
           let caught;
           try { boom() } catch (e) { caught = [e.name, e.message.startsWith('boom from'), String(e.stack).includes('node_modules')] }
           caught`,
    tools: echo,
    expected: { output: ['Error', true, false] },
  },
  {
    name: 'a tool’s error carries no host stack (host paths never reach the sandbox) — original',
    code: `let leaked; try { boom() } catch (e) { leaked = /\\.ts|node:|harness/.test(String(e.stack)) } leaked`,
    tools: echo,
    expected: { output: false },
  },
  {
    name: 'Error.captureStackTrace on a plain object — original',
    code: `const o = {}; Error.captureStackTrace(o); [typeof o.stack, o.stack.includes('node:')]`,
    expected: { output: ['string', false] },
  },
  {
    name: 'name.toString Proxy on an error thrown out of the run — vm2 CVE-2023-32314',
    code: `const err = new Error('x');
           err.name = { toString: new Proxy(() => '', { apply(t, thiz, args) {
             throw args.constructor.constructor('return process')()${STEAL};
           } }) };
           throw err`,
    // The engine reads the error without calling user code: the trap never runs.
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /^Runtime exception: Error: x \(line 1: / },
  },
]

const valuesHandedOut: AttackCase[] = [
  {
    name: 'Symbol.species on a tool’s promise — vm2 CVE-2023-37466',
    code: `const seen = [];
           const p = later(1);
           p.constructor = { [Symbol.species]: class FakePromise {
             constructor(executor) {
               executor((x) => seen.push(['ok', x]), (err) => {
                 try { err.constructor.constructor('return process')() } catch (e) { seen.push(['refused', e.name]) }
               });
             }
           } };
           await p.then();
           await null;
           seen`,
    tools: echo,
    expected: { output: [] },
    after: (calls) => expect(calls).toEqual([[1]]),
  },
  {
    name: 'Symbol.species on an array handed to a tool — original',
    code: `class Evil extends Array { static get [Symbol.species]() { return function () { throw new Error('ran on the host') } } }
           const a = Evil.from([1, 2]); echo(a)`,
    tools: echo,
    expected: { output: [1, 2] },
    after: ([[received]]) => {
      expect(Object.getPrototypeOf(received)).toBe(Array.prototype)
      expect((received as number[]).map((n) => n * 2)).toEqual([2, 4])
    },
  },
  {
    name: 'getter on a tool argument runs in the sandbox, never on the host — original',
    code: `let reads = 0; echo({ get x() { reads++; return 7 } }); reads`,
    tools: echo,
    expected: { output: 1 },
    after: ([[received]]) => {
      expect(Object.getOwnPropertyDescriptor(received, 'x')).toEqual({
        value: 7,
        writable: true,
        enumerable: true,
        configurable: true,
      })
    },
  },
  {
    name: 'toJSON on a tool argument is never called by the host — original',
    code: `echo({ toJSON() { return 'hijacked' } })`,
    tools: echo,
    expected: {
      code: 'ERR_TOOL_PROXY_FAIL',
      state: 'READY',
      message: /echo argument 0\.toJSON is a function, which cannot be copied/,
      details: { tool: 'echo' },
    },
    after: (calls) => expect(calls).toEqual([]),
  },
  {
    name: 'Proxy handed to a tool is refused before any trap runs — isolated-vm CVE-2021-21413 class',
    code: `let traps = 0;
           const p = new Proxy({}, { get() { traps++; return 1 }, ownKeys() { traps++; return [] }, getPrototypeOf() { traps++; return null } });
           let message; try { echo(p) } catch (e) { message = e.message }
           [message, traps]`,
    tools: echo,
    expected: { output: ['echo argument 0 is a Proxy, which cannot be copied (values cross as structured clones)', 0] },
    after: (calls) => expect(calls).toEqual([]),
  },
  {
    name: 'Proxy with throwing traps returned as output is described, not read — original',
    code: `new Proxy({}, { get() { throw new Error('trap ran') }, ownKeys() { throw new Error('trap ran') } })`,
    // What util.inspect prints for a Proxy (its target); a trap that ran would have thrown.
    expected: { output: '{}' },
  },
  {
    name: 'nodejs.util.inspect.custom hook on an output and a log — vm2 CVE-2023-37903',
    code: `const obj = { a: 1, [Symbol.for('nodejs.util.inspect.custom')]: (depth, opt, inspect) =>
             inspect.constructor('return process')()${STEAL} };
           console.log(obj); obj`,
    // The sandbox's inspect port prints the hook as a property; it never calls it.
    expected: {
      output: { a: 1 },
      logs: '{\n  a: 1,\n  [Symbol(nodejs.util.inspect.custom)]: [Function: [nodejs.util.inspect.custom]]\n}',
    },
  },
  {
    name: 'getter on an output object runs in the sandbox — original',
    code: `let reads = 0; const o = { get v() { reads++; return 'from getter' } }; [o, reads]`,
    expected: { output: [{ v: 'from getter' }, 0] },
  },
  {
    name: 'prototype pollution of Object.prototype and Array.prototype stays in the sandbox — vm2 CVE-2022-25893 class',
    code: `Object.prototype.polluted = 'yes'; Array.prototype.push = null; JSON.parse = null;
           echo({ a: 1 }, [1]); ({}).polluted`,
    tools: echo,
    expected: { output: 'yes' },
    after: ([[object, array]]) => {
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(typeof Array.prototype.push).toBe('function')
      expect(typeof JSON.parse).toBe('function')
      expect(Object.getPrototypeOf(object)).toBe(Object.prototype)
      expect(Object.keys(object as object)).toEqual(['a'])
      expect(Array.isArray(array)).toBe(true)
    },
  },
  {
    name: '__proto__ key from JSON.parse handed to a tool stays an own property — original (prototype pollution)',
    code: `echo(JSON.parse('{"__proto__": {"isAdmin": true}}')); 'sent'`,
    tools: echo,
    expected: { output: 'sent' },
    after: ([[received]]) => {
      expect(Object.getPrototypeOf(received)).toBe(Object.prototype)
      expect((received as Record<string, unknown>).isAdmin).toBeUndefined()
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
    },
  },
  {
    name: 'constructor.prototype pollution through a tool argument — original',
    code: `echo({ constructor: { prototype: { polluted: true } } }); 'sent'`,
    tools: echo,
    expected: { output: 'sent' },
    after: () => expect(({} as Record<string, unknown>).polluted).toBeUndefined(),
  },
  {
    name: 'WeakMap.prototype.set and Function.prototype.call overridden before tool calls — vm2 CVE-2022-25893',
    code: `WeakMap.prototype.set = function () { throw new Error('hooked') };
           Function.prototype.call = function () { throw new Error('hooked') };
           Promise.prototype.then = function () { throw new Error('hooked') };
           echo(new Map([[1, 2]])) instanceof Map`,
    tools: echo,
    expected: { output: true },
    after: () => {
      expect(String(WeakMap.prototype.set)).toContain('[native code]')
      expect(String(Function.prototype.call)).toContain('[native code]')
      expect(String(Promise.prototype.then)).toContain('[native code]')
    },
  },
]

const reentrancy: AttackCase[] = [
  {
    name: 'a tool called again from a getter while its own arguments are copied — original',
    code: 'echo({ get x() { return echo(1) } })',
    tools: echo,
    expected: { output: { x: 1 } },
    after: (calls) => expect(calls).toEqual([[1], [{ x: 1 }]]),
  },
  {
    name: 'final_answer() called from a getter while the output is copied — original',
    code: `({ get x() { final_answer('from the getter'); return 1 } })`,
    expected: { output: 'from the getter', final: true },
  },
  {
    name: 'an uncaught thrown object whose getter never returns is described without calling it — original',
    code: 'throw { get message() { for (;;) {} } }',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /^Runtime exception: Uncaught \{ message: \[Getter\] \}$/ },
  },
  {
    name: 'an uncaught thrown Proxy whose traps never return is described without a trap — original',
    code: 'throw new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } })',
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /^Runtime exception: Uncaught \{\}$/ },
  },
]

const hostReach: AttackCase[] = [
  {
    name: "import('fs') — vm2 CVE-2021-23449 (import() escape)",
    code: `const fs = await import('fs'); fs.readFileSync(canaryPath, 'utf8')`,
    expected: { code: 'ERR_IMPORT_NOT_ALLOWED', state: 'READY' },
  },
  {
    name: "import('node:child_process') — vm2 CVE-2021-23449",
    code: `const cp = await import('node:child_process'); cp.execSync('cat ' + canaryPath).toString()`,
    expected: { code: 'ERR_IMPORT_NOT_ALLOWED', state: 'READY' },
  },
  {
    name: "import('fs') when 'fs' is authorized but not registered — original",
    code: `const fs = await import('fs'); fs.readFileSync(canaryPath, 'utf8')`,
    options: { authorizedImports: ['fs'] },
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /Cannot find module 'fs'/ },
  },
  {
    name: 'computed import() of a host module under "*" — original',
    code: `const m = await import(['node', 'fs'].join(':')); m.readFileSync(canaryPath, 'utf8')`,
    options: { authorizedImports: ['*'] },
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /Cannot find module 'node:fs'/ },
  },
  {
    name: "QuickJS's own std and os modules — quickjs-emscripten / qjs (original)",
    code: `const out = [];
           for (const name of ['std', 'os', 'qjs:std', 'qjs:os']) {
             try { await import(name); out.push(name + ' loaded') } catch (e) { out.push(e.message) }
           }
           out`,
    options: { authorizedImports: ['*'] },
    expected: {
      output: [
        "Cannot find module 'std'",
        "Cannot find module 'os'",
        "Cannot find module 'qjs:std'",
        "Cannot find module 'qjs:os'",
      ],
    },
  },
  {
    name: "require('fs') — original",
    code: `require('fs').readFileSync(canaryPath, 'utf8')`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /ReferenceError: require is not defined/ },
  },
  {
    name: "process.binding('fs') — Node.js internals (original)",
    code: `process.binding('fs')`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /ReferenceError: process is not defined/ },
  },
  {
    name: 'scanning everything reachable from globalThis for host objects — original',
    code: `const hostNames = ['process', 'require', 'module', 'Buffer', 'global', 'std', 'os', 'scriptArgs', 'print',
             '__loadScript', 'setTimeout', 'fetch', 'WebAssembly', 'bjson', '__dirname'];
           const found = []; const seen = new Set(); const queue = [globalThis];
           while (queue.length && seen.size < 5000) {
             const o = queue.shift();
             if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
             seen.add(o);
             for (const key of Reflect.ownKeys(o)) {
               // RegExp.prototype.global is the flag's getter, not Node's global object.
               if (hostNames.includes(key) && o !== RegExp.prototype) found.push(String(key));
               let v; try { v = o[key] } catch { continue }
               queue.push(v);
             }
             queue.push(Object.getPrototypeOf(o));
           }
           [found, seen.size > 100]`,
    options: { maxOperations: 1e7 },
    expected: { output: [[], true] },
  },
  {
    name: 'WebAssembly is absent — vm2 CVE-2023-37903 (WebAssembly.compileStreaming vector)',
    code: `typeof WebAssembly`,
    expected: { output: 'undefined' },
  },
  {
    name: 'Atomics.wait on a SharedArrayBuffer cannot block the engine thread — original',
    code: `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)`,
    expected: { code: 'ERR_RUNTIME_EXCEPTION', state: 'READY', message: /TypeError: cannot block in this thread/ },
  },
  {
    name: 'f.caller / arguments.callee.caller to reach the host — original (classic vm escape)',
    code: `function f() { return [f.caller === null || f.caller === undefined, typeof arguments.callee] } f()`,
    expected: { output: [true, 'function'] },
  },
  {
    name: 'replacing the loop guard through a computed global name — original (guard bypass)',
    code: `try { globalThis['__smol_' + 'guard'] = () => {} } catch {}
           try { Object.defineProperty(globalThis, '__smol_' + 'guard', { value: () => {} }) } catch {}
           while (true) {}`,
    options: { maxOperations: 1000 },
    expected: { code: 'ERR_MAX_OPS_EXCEEDED', state: 'READY', details: { maxOperations: 1000 } },
  },
  {
    name: 'redefining final_answer and console at run time — original',
    code: `const out = [];
           try { Object.defineProperty(globalThis, 'final_answer', { value: () => 'hijacked' }) } catch (e) { out.push(e.name) }
           try { console.log = () => {} } catch (e) { out.push(e.name) }
           try { final_answer.call = null } catch (e) { out.push(e.name) }
           console.log('still logged');
           out`,
    expected: { output: ['TypeError'], logs: 'still logged' },
  },
]

describe('escapes: constructor chains and code from strings', () => {
  for (const attack of constructorChains) it(attack.name, () => runCase(canary, attack))
})

describe('escapes: stack-trace APIs', () => {
  for (const attack of stackTraceTricks) it(attack.name, () => runCase(canary, attack))
})

describe('escapes: getters, toJSON, Proxies, species and pollution on values handed out', () => {
  for (const attack of valuesHandedOut) it(attack.name, () => runCase(canary, attack))
})

describe('escapes: re-entering tools and final_answer while values are copied', () => {
  for (const attack of reentrancy) it(attack.name, () => runCase(canary, attack))
})

describe('escapes: reaching the host’s modules and globals', () => {
  for (const attack of hostReach) it(attack.name, () => runCase(canary, attack))
})
