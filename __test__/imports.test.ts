// Spec §5.3 (import policy), CF-05, CF-06; docs/contract.md "Imports" (the module registry).
import { describe, expect, it } from 'vitest'

import { SESExecutor, rejectionOf } from './helpers'

describe('CF-05 static import is refused in the script baseline', () => {
  it('CF-05 import fs from "node:fs" with node:fs authorized: ERR_IMPORT_NOT_ALLOWED and no side effect', async () => {
    const executor = await SESExecutor.create({ authorizedImports: ['node:fs'] })
    await executor.sendVariables({ marker: 'untouched' })
    const error = await rejectionOf(executor.run('marker = "ran";\nimport fs from "node:fs";'))
    expect(error.code).toBe('ERR_IMPORT_NOT_ALLOWED')
    // The user code did not execute: the assignment before the import never ran.
    expect((await executor.run('marker')).output).toBe('untouched')
    expect(executor.state).toBe('READY')
    await executor.cleanup()
  })

  it('export is refused the same way', async () => {
    const executor = await SESExecutor.create()
    const error = await rejectionOf(executor.run('export const a = 1'))
    expect(error.code).toBe('ERR_IMPORT_NOT_ALLOWED')
    expect(error.details.diagnostics).toEqual([expect.objectContaining({ rule: 'static_import_in_script_mode' })])
    await executor.cleanup()
  })
})

describe('CF-06 dynamic import allows only authorized modules', () => {
  const modules = { 'x-ok': 'export const ok = true; export default "x-ok module"' }

  it('CF-06 await import("x-ok") passes validation and runs', async () => {
    const executor = await SESExecutor.create({ authorizedImports: ['x-ok'], modules })
    const result = await executor.run('const m = await import("x-ok"); [m.ok, m.default]')
    expect(result.output).toEqual([true, 'x-ok module'])
    await executor.cleanup()
  })

  it('CF-06 await import("x-denied") fails with ERR_IMPORT_NOT_ALLOWED', async () => {
    const executor = await SESExecutor.create({ authorizedImports: ['x-ok'], modules })
    const error = await rejectionOf(executor.run('await import("x-denied")'))
    expect(error.code).toBe('ERR_IMPORT_NOT_ALLOWED')
    expect(error.message).toBe("Import not allowed: 'x-denied'. Allowed: x-ok")
    expect(error.retryable).toBe(true)
    await executor.cleanup()
  })

  it('a computed specifier is refused at validation unless "*" is authorized', async () => {
    const executor = await SESExecutor.create({ authorizedImports: ['x-ok'], modules })
    const error = await rejectionOf(executor.run('const name = "x-ok"; await import(name)'))
    expect(error.code).toBe('ERR_IMPORT_NOT_ALLOWED')
    await executor.cleanup()
    const open = await SESExecutor.create({ authorizedImports: ['*'], modules })
    expect((await open.run('const name = "x-ok"; (await import(name)).ok')).output).toBe(true)
    await open.cleanup()
  })

  it('an authorized name nobody registered fails at run time as ERR_RUNTIME_EXCEPTION', async () => {
    const executor = await SESExecutor.create({ authorizedImports: ['ghost'] })
    const error = await rejectionOf(executor.run('await import("ghost")'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.message).toContain("Cannot find module 'ghost'")
    await executor.cleanup()
  })
})

describe('the module registry (ExecutorOptions.modules)', () => {
  it('source modules run inside the sandbox under the same loop guards', async () => {
    const executor = await SESExecutor.create({
      authorizedImports: ['spin'],
      maxOperations: 500,
      modules: { spin: 'export function forever() { for (;;) {} }' },
    })
    const error = await rejectionOf(executor.run('const { forever } = await import("spin"); forever()'))
    expect(error.code).toBe('ERR_MAX_OPS_EXCEEDED')
    await executor.cleanup()
  })

  it('TypeScript module sources are stripped', async () => {
    const executor = await SESExecutor.create({
      authorizedImports: ['typed'],
      modules: { typed: 'export function twice(n: number): number { return n * 2 }' },
    })
    expect((await executor.run('(await import("typed")).twice(4)')).output).toBe(8)
    await executor.cleanup()
  })

  it('object modules: functions become bridged exports, data is copied', async () => {
    const config = { units: ['m', 'km'] }
    const calls: unknown[] = []
    const executor = await SESExecutor.create({
      authorizedImports: ['geo'],
      modules: {
        geo: {
          config,
          distance: (a: number, b: number) => {
            calls.push([a, b])
            return Math.abs(a - b)
          },
          lookup: async (city: string) => ({ city, population: 1000 }),
        },
      },
    })
    const code = `
      const geo = await import("geo");
      geo.config.units.push("mi");
      [geo.distance(3, 10), (await geo.lookup("Lyon")).population, geo.config.units, typeof geo.default.distance]`
    expect((await executor.run(code)).output).toEqual([7, 1000, ['m', 'km', 'mi'], 'function'])
    expect(calls).toEqual([[3, 10]])
    expect(config).toEqual({ units: ['m', 'km'] })
    await executor.cleanup()
  })

  it('a module failure reaches the sandbox as a tool failure', async () => {
    const executor = await SESExecutor.create({
      authorizedImports: ['svc'],
      modules: {
        svc: {
          fail: () => {
            throw new Error('service down')
          },
        },
      },
    })
    const error = await rejectionOf(executor.run('(await import("svc")).fail()'))
    expect(error.code).toBe('ERR_TOOL_PROXY_FAIL')
    expect(error.details.tool).toBe('svc#fail')
    await executor.cleanup()
  })

  it('a module that is neither source text nor an object is refused by the constructor', () => {
    expect(() => new SESExecutor({ modules: { bad: 42 as unknown as string } })).toThrow(/modules.bad must be ES module source text or an object/)
  })
})
