// Property test of the one structured-clone walk (docs/contract.md "Values across the boundary",
// src/value/walk/mod.rs): for generated values, the round trip host → sandbox → host gives what
// Node's own `structuredClone` gives: the same types, holes, -0 and NaN, BigInts, byte
// contents, typed-array views over shared buffers, and the same graph of shared references and
// cycles. Two paths are checked per value: as a variable read back as the output (Node reads,
// QuickJS builds, QuickJS reads for an output, Node builds) and through a tool (QuickJS reads the
// arguments as a refusing copy, Node builds them; Node reads the result, QuickJS builds it).
//
// The generator keeps to what structured clone and the executor define alike; the documented
// differences (docs/security.md "Threat model: what the sandbox keeps": lone surrogates become U+FFFD; wrapped primitives travel
// unwrapped; an error keeps a custom `name`) are left out of it.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { SESExecutor } from './helpers'

let executor: InstanceType<typeof SESExecutor>
beforeAll(async () => {
  executor = await SESExecutor.create()
  await executor.sendTools({ echo: (value: unknown) => value })
})
afterAll(async () => {
  await executor.cleanup()
})

const TYPED_ARRAYS = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as const

const ERRORS = [Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError] as const

const REGEXPS = [/a+b/g, /^x$/im, /[\u{1F600}-\u{1F64F}]/u, /(?<year>\d{4})/d, /./sy, /(?:)/] as const

const text = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s.isWellFormed())
const key = fc.oneof(text, fc.constantFrom('__proto__', 'constructor', '0', '7', 'length', 'a-b'))

const primitive = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  text,
)

/**
 * Views over one buffer, with the buffer itself or not, in any order: views made from one
 * buffer share it, and the copy must number a view met before its buffer as a clone does.
 */
const views = fc
  .record({
    bytes: fc.uint8Array({ minLength: 0, maxLength: 48 }),
    views: fc.array(fc.record({ kind: fc.nat({ max: TYPED_ARRAYS.length - 1 }), at: fc.nat(), length: fc.nat() }), {
      maxLength: 3,
    }),
    withBuffer: fc.boolean(),
    rotate: fc.nat(),
  })
  .map(({ bytes, views, withBuffer, rotate }) => {
    const buffer = bytes.slice().buffer
    const parts: unknown[] = views.map(({ kind, at, length }) => {
      const View = TYPED_ARRAYS[kind]
      const size = View.BYTES_PER_ELEMENT
      const offset = (at % (Math.floor(buffer.byteLength / size) + 1)) * size
      const room = Math.floor((buffer.byteLength - offset) / size)
      return new View(buffer, offset, room === 0 ? 0 : length % (room + 1))
    })
    if (withBuffer || parts.length === 0) parts.push(buffer)
    const turn = rotate % parts.length
    return [...parts.slice(turn), ...parts.slice(0, turn)]
  })

const leafObject = fc.oneof(
  fc.date(),
  fc.constantFrom(...REGEXPS).map((regexp) => new RegExp(regexp.source, regexp.flags)),
  fc.record({ kind: fc.nat({ max: ERRORS.length - 1 }), message: text }).map(({ kind, message }) => new ERRORS[kind](message)),
  views,
)

/** Marks a hole in a generated array. */
const hole = Symbol('hole')

function withHoles(items: unknown[]): unknown[] {
  const array = new Array(items.length)
  items.forEach((item, index) => {
    if (item !== hole) array[index] = item
  })
  return array
}

const { tree, container } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, primitive, leafObject, tie('container')),
  container: fc.oneof(
    // Arrays, holes included.
    fc.array(fc.option(tie('tree'), { nil: hole }), { maxLength: 6 }).map(withHoles),
    fc.array(fc.tuple(key, tie('tree')), { maxLength: 5 }).map((entries) => {
      const object: Record<string, unknown> = {}
      for (const [name, value] of entries) Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true })
      return object
    }),
    fc.array(fc.tuple(fc.oneof(primitive, tie('tree')), tie('tree')), { maxLength: 4 }).map((entries) => new Map(entries)),
    fc.array(fc.oneof(primitive, tie('tree')), { maxLength: 4 }).map((items) => new Set(items)),
  ),
}))

/**
 * Every object reachable from `root`, each once: the containers (arrays, plain objects, Maps,
 * Sets), which can take more edges, and all objects, which edges may lead to.
 */
function objectsOf(root: unknown): { containers: object[]; all: object[] } {
  const containers: object[] = []
  const all: object[] = []
  const visit = (value: unknown) => {
    if (typeof value !== 'object' || value === null || all.includes(value)) return
    all.push(value)
    if (Array.isArray(value)) {
      containers.push(value)
      value.forEach(visit)
    } else if (value instanceof Map) {
      containers.push(value)
      value.forEach((item, key) => {
        visit(key)
        visit(item)
      })
    } else if (value instanceof Set) {
      containers.push(value)
      value.forEach(visit)
    } else if (ArrayBuffer.isView(value)) {
      visit(value.buffer)
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      containers.push(value)
      Object.values(value).forEach(visit)
    }
  }
  visit(root)
  return { containers, all }
}

/** The tree with extra edges from containers to any object: shared references and cycles. */
const graph = fc
  .tuple(
    fc.oneof({ arbitrary: container, weight: 4 }, { arbitrary: tree, weight: 1 }),
    fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
  )
  .map(([root, links]) => {
    const { containers, all } = objectsOf(root)
    links.forEach(([from, to], index) => {
      if (containers.length === 0) return
      const source = containers[from % containers.length]
      const target = all[to % all.length]
      if (Array.isArray(source)) source.push(target)
      else if (source instanceof Map) source.set(`link${index}`, target)
      else if (source instanceof Set) source.add(target)
      else (source as Record<string, unknown>)[`link${index}`] = target
    })
    return root
  })

/**
 * Whether `actual` is a structured clone of `expected`'s kind: compares the two graphs node by
 * node, with a one-to-one map between their objects, so shared references and cycles must
 * match exactly. Returns where they differ, or `null`.
 */
function difference(actual: unknown, expected: unknown): string | null {
  const pairs = new Map<object, object>()
  const taken = new Map<object, object>()
  const compare = (a: unknown, e: unknown, path: string): string | null => {
    if (typeof e !== 'object' || e === null) {
      return Object.is(a, e) ? null : `${path}: ${String(a)} is not ${String(e)}`
    }
    if (typeof a !== 'object' || a === null) return `${path}: not an object`
    if (pairs.has(e) || taken.has(a)) {
      return pairs.get(e) === a && taken.get(a) === e ? null : `${path}: another object than in the original graph`
    }
    pairs.set(e, a)
    taken.set(a, e)
    const kind = Object.prototype.toString.call(e)
    if (Object.prototype.toString.call(a) !== kind) return `${path}: ${Object.prototype.toString.call(a)} is not ${kind}`
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(e)) return `${path}: another prototype`
    if (Array.isArray(e)) {
      const array = a as unknown[]
      if (array.length !== e.length) return `${path}: length ${array.length} is not ${e.length}`
      for (let index = 0; index < e.length; index++) {
        if (index in e !== index in array) return `${path}[${index}]: hole mismatch`
        const found = compare(array[index], e[index], `${path}[${index}]`)
        if (found) return found
      }
      return null
    }
    if (e instanceof Date) return Object.is((a as Date).getTime(), e.getTime()) ? null : `${path}: another time`
    if (e instanceof RegExp) {
      const regexp = a as RegExp
      return regexp.source === e.source && regexp.flags === e.flags ? null : `${path}: /${regexp.source}/${regexp.flags}`
    }
    if (e instanceof Error) {
      const error = a as Error
      return error.name === e.name && error.message === e.message ? null : `${path}: ${error.name}: ${error.message}`
    }
    if (e instanceof ArrayBuffer) {
      return Buffer.from(a as ArrayBuffer).equals(Buffer.from(e)) ? null : `${path}: other bytes`
    }
    if (ArrayBuffer.isView(e)) {
      const view = a as Uint8Array
      const original = e as Uint8Array
      if (view.byteOffset !== original.byteOffset || view.length !== original.length) return `${path}: another window`
      return compare(view.buffer, original.buffer, `${path}.buffer`)
    }
    if (e instanceof Map) {
      const map = a as Map<unknown, unknown>
      if (map.size !== e.size) return `${path}: size ${map.size} is not ${e.size}`
      const got = [...map]
      let index = 0
      for (const [key, value] of e) {
        const found =
          compare(got[index][0], key, `${path}.keys()[${index}]`) ?? compare(got[index][1], value, `${path}.values()[${index}]`)
        if (found) return found
        index++
      }
      return null
    }
    if (e instanceof Set) {
      const set = a as Set<unknown>
      if (set.size !== e.size) return `${path}: size ${set.size} is not ${e.size}`
      const got = [...set]
      let index = 0
      for (const item of e) {
        const found = compare(got[index], item, `${path}.values()[${index}]`)
        if (found) return found
        index++
      }
      return null
    }
    const keys = Object.keys(e)
    const actualKeys = Object.keys(a)
    if (actualKeys.join('\u0000') !== keys.join('\u0000')) return `${path}: keys ${JSON.stringify(actualKeys)} are not ${JSON.stringify(keys)}`
    for (const name of keys) {
      const found = compare((a as Record<string, unknown>)[name], (e as Record<string, unknown>)[name], `${path}[${JSON.stringify(name)}]`)
      if (found) return found
    }
    return null
  }
  return compare(actual, expected, 'value')
}

describe('the structured-clone walk (property)', () => {
  it('the comparison itself tells graphs apart', () => {
    const shared = { n: 1 }
    expect(difference(structuredClone([shared, shared]), [shared, shared])).toBeNull()
    expect(difference([{ n: 1 }, { n: 1 }], [shared, shared])).toMatch(/another object/)
    expect(difference([-0], [0])).toMatch(/is not/)
    expect(difference(new Array(1), [undefined])).toMatch(/hole/)
  })

  it('host → sandbox → host equals structuredClone, as a variable and through a tool', async () => {
    await fc.assert(
      fc.asyncProperty(graph, async (value) => {
        const expected = structuredClone(value)
        await executor.sendVariables({ v: value })
        const asOutput = (await executor.run('v')).output
        expect(difference(asOutput, expected)).toBeNull()
        const throughTool = (await executor.run('echo(v)')).output
        expect(difference(throughTool, expected)).toBeNull()
      }),
      { numRuns: 500 },
    )
  })
})
