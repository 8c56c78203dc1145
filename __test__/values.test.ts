// Values across the boundary (docs/contract.md "Values across the boundary"): structured-clone
// semantics in both directions. Each type makes the round trip host → sandbox (sendVariables)
// → host (run output), and the sandbox checks what it received.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from './helpers'

let executor: InstanceType<typeof SESExecutor>
beforeAll(async () => {
  executor = await SESExecutor.create()
  await executor.sendTools({ echo: (value: unknown) => value, echoAsync: async (value: unknown) => value })
})
afterAll(async () => {
  await executor.cleanup()
})

/** Sends `value` in as a variable and returns it as the run's output, untouched. */
async function roundTrip(value: unknown): Promise<unknown> {
  await executor.sendVariables({ sent: value })
  return (await executor.run('sent')).output
}

/** Passes `value` through a tool, both ways, from inside the sandbox. */
async function throughTool(code: string): Promise<unknown> {
  return (await executor.run(code)).output
}

describe('round trip of every structured-clone type', () => {
  const cases: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['null', null],
    ['NaN', Number.NaN],
    ['-0', -0],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['BigInt beyond 2^64', 123456789012345678901234567890n],
    ['negative BigInt', -42n],
    ['string with astral characters', 'héllo 😀'],
    ['array with holes', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['nested plain objects', { a: { b: [1, { c: 'd' }] } }],
    ['Date', new Date('2024-02-29T12:00:00.000Z')],
    ['invalid Date', new Date(Number.NaN)],
    ['RegExp', /a+b*/giu],
    ['Map', new Map<unknown, unknown>([['k', 1], [2, { v: true }]])],
    ['Set', new Set([1, 'two', 3n])],
    ['ArrayBuffer', new Uint8Array([1, 2, 255]).buffer],
    ['Uint8Array', new Uint8Array([1, 2, 3])],
    ['Int16Array', new Int16Array([-1, 300])],
    ['Float64Array', new Float64Array([0.5, -0, Number.NaN])],
    ['BigInt64Array', new BigInt64Array([-1n, 2n ** 62n])],
    ['Uint8ClampedArray', new Uint8ClampedArray([0, 255])],
  ]
  for (const [name, value] of cases) {
    it(`${name} survives host → sandbox → host`, async () => {
      expect(await roundTrip(value)).toStrictEqual(value)
    })
  }

  it('-0 stays -0 (Object.is)', async () => {
    expect(Object.is(await roundTrip(-0), -0)).toBe(true)
  })

  it('a typed array view keeps its offset and length', async () => {
    const buffer = new ArrayBuffer(16)
    const view = new Uint16Array(buffer, 4, 3)
    view.set([7, 8, 9])
    const back = (await roundTrip(view)) as Uint16Array
    expect(Array.from(back)).toEqual([7, 8, 9])
    expect(back.byteOffset).toBe(4)
    expect(back.buffer.byteLength).toBe(16)
  })

  it('Error keeps its name and message', async () => {
    const back = (await roundTrip(new TypeError('bad input'))) as Error
    expect(back).toBeInstanceOf(Error)
    expect(back.name).toBe('TypeError')
    expect(back.message).toBe('bad input')
  })

  it('cycles survive', async () => {
    const cyclic: Record<string, unknown> = { name: 'root' }
    cyclic.self = cyclic
    const back = (await roundTrip(cyclic)) as Record<string, unknown>
    expect(back.self).toBe(back)
    expect(back.name).toBe('root')
  })

  it('shared references stay shared', async () => {
    const shared = { n: 1 }
    const back = (await roundTrip({ a: shared, b: shared, list: [shared] })) as Record<string, unknown>
    expect(back.a).toBe(back.b)
    expect((back.list as unknown[])[0]).toBe(back.a)
  })

  it('two views of one buffer still share it', async () => {
    const buffer = new ArrayBuffer(8)
    const back = (await roundTrip({ x: new Uint8Array(buffer), y: new Uint32Array(buffer) })) as {
      x: Uint8Array
      y: Uint32Array
    }
    expect(back.x.buffer).toBe(back.y.buffer)
  })

  it('the sandbox sees real instances of each type', async () => {
    await executor.sendVariables({
      v: { d: new Date(0), r: /x/g, m: new Map([[1, 2]]), s: new Set([1]), u: new Uint8Array(2), b: 5n, h: [1, , 3] }, // eslint-disable-line no-sparse-arrays
    })
    const { output } = await executor.run(
      '[v.d instanceof Date, v.r instanceof RegExp && v.r.global, v.m instanceof Map && v.m.get(1), v.s instanceof Set, v.u instanceof Uint8Array, typeof v.b, 1 in v.h]',
    )
    expect(output).toEqual([true, true, 2, true, true, 'bigint', false])
  })

  it('tool arguments and results are copied the same way, sync and async', async () => {
    const code = `
      const m = new Map([["a", [1, , 3]]]);
      const cyc = { m }; cyc.self = cyc;
      const back = echo(cyc);
      const later = await echoAsync(new Set([new Date(5)]));
      [back !== cyc, back.self === back, back.m.get("a").length, 1 in back.m.get("a"), [...later][0].getTime()]`
    expect(await throughTool(code)).toEqual([true, true, 3, false, 5])
  })
})

describe('copies, never references', () => {
  it('the host’s originals are never touched by the sandbox', async () => {
    const original = { list: [1, 2], nested: { flag: false } }
    await executor.sendVariables({ original })
    await executor.run('original.list.push(3); original.nested.flag = true; original.added = 1')
    expect(original).toEqual({ list: [1, 2], nested: { flag: false } })
  })

  it('no host prototype is reachable from a copied value', async () => {
    class HostClass {
      secret() {
        return 'host'
      }
    }
    await executor.sendVariables({ instance: new HostClass() })
    const { output } = await executor.run(
      '[Object.getPrototypeOf(instance) === Object.prototype, typeof instance.secret, instance.constructor === Object]',
    )
    expect(output).toEqual([true, 'undefined', true])
  })

  it('sandbox getters, toJSON and Proxies never run on the host', async () => {
    const { output } = await executor.run(`
      let hostCalls = 0;
      const tricky = {
        get value() { return "computed in the sandbox" },
        toJSON() { return "never" },
      };
      const proxy = new Proxy({}, { get() { return "trap" } });
      ({ tricky, proxy })`)
    const result = output as { tricky: Record<string, unknown>; proxy: unknown }
    expect(result.tricky.value).toBe('computed in the sandbox')
    expect(typeof result.tricky.toJSON).not.toBe('function')
    expect(Object.getOwnPropertyDescriptor(result.tricky, 'value')?.get).toBeUndefined()
    expect(typeof result.proxy).toBe('string')
  })
})

describe('values that cannot be cloned', () => {
  it('a function inside sendVariables is refused with an error naming its path', async () => {
    const error = await rejectionOf(executor.sendVariables({ cfg: { hooks: [{ onDone() {} }] } }))
    expect(error.code).toBe('ERR_VALIDATION_FAILED')
    expect(error.details.path).toBe('variables.cfg.hooks[0].onDone')
    expect(error.message).toContain('variables.cfg.hooks[0].onDone is a function')
  })

  it('a symbol inside sendVariables is refused too', async () => {
    const error = await rejectionOf(executor.sendVariables({ s: Symbol('x') }))
    expect(error.details.path).toBe('variables.s')
  })

  it('an output that cannot be cloned never fails the run: its parts become inspect strings', async () => {
    const { output } = await executor.run('({ f: function named() {}, s: Symbol("tag"), ok: 1 })')
    expect(output).toEqual({ f: '[Function: named]', s: 'Symbol(tag)', ok: 1 })
  })

  it('a function passed to a tool is ERR_TOOL_PROXY_FAIL', async () => {
    const error = await rejectionOf(executor.run('echo({ callback() {} })'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.message).toContain('callback')
  })
})
