// The security suite's harness: every case runs attack code and asserts the exact
// outcome — the output or the error code, the state afterwards, that the host process is alive
// and unharmed, that a canary file outside the sandbox was neither read nor written, and that the
// executor still works afterwards (or is DIRTY, and works again after cleanup() + init(), §7.5).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect } from 'vitest'

import { contractOf, ExecutorError, SESExecutor, type ExecutorOptions } from '../helpers'

export type Executor = InstanceType<typeof SESExecutor>
type Tools = Record<string, (...args: any[]) => unknown>

/** A file outside the sandbox holding a secret: attack code is told its path. */
export class Canary {
  readonly dir = mkdtempSync(join(tmpdir(), 'ses-canary-'))
  readonly path = join(this.dir, 'secret.txt')
  readonly secret = `canary-${randomBytes(16).toString('hex')}`
  readonly pwnedPath = join(this.dir, 'pwned')
  private readonly mtimeMs: number

  constructor() {
    writeFileSync(this.path, this.secret)
    this.mtimeMs = statSync(this.path).mtimeMs
  }

  /** The file is exactly as written, and no attack created a file next to it. */
  expectUntouched() {
    expect(readFileSync(this.path, 'utf8')).toBe(this.secret)
    expect(statSync(this.path).mtimeMs).toBe(this.mtimeMs)
    expect(() => statSync(this.pwnedPath)).toThrow()
  }

  /** The secret appears nowhere in `texts` (outputs, logs, messages, details). */
  expectNotLeaked(...texts: unknown[]) {
    for (const text of texts) expect(stringify(text)).not.toContain(this.secret)
  }

  remove() {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? String(v) : v)) ?? String(value)
  } catch {
    return String(value)
  }
}

/** What a case expects from its run. */
export type Expected =
  | { output: unknown; logs?: string | RegExp; final?: boolean }
  | {
      code: string
      state: 'READY' | 'DIRTY'
      message?: RegExp
      details?: Record<string, unknown>
    }

export interface AttackCase {
  /** Technique — source (a CVE, a public issue, or "original"). */
  name: string
  code: string
  expected: Expected
  options?: ExecutorOptions
  tools?: (calls: unknown[][]) => Tools
  variables?: Record<string, unknown>
  /** Extra checks on the host after the run (what the tools received, host intrinsics). */
  after?: (calls: unknown[][]) => void
}

/** Resolves after a macrotask turn: the host's event loop still turns. */
export function hostTick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1))
}

/** Checks the executor works after the case: READY runs code; DIRTY refuses, then recovers. */
export async function expectUsable(executor: Executor, state: 'READY' | 'DIRTY') {
  expect(executor.state).toBe(state)
  if (state === 'DIRTY') {
    const refused = await settle(executor.run('1 + 1'))
    expect(refused).toBeInstanceOf(ExecutorError)
    expect((refused as InstanceType<typeof ExecutorError>).code).toBe('ERR_INVALID_STATE')
    await executor.cleanup()
    expect(executor.state).toBe('DEAD')
    await executor.init()
  }
  expect(executor.state).toBe('READY')
  expect(contractOf(await executor.run('[1, 2, 3].map((n) => n * 2)'))).toEqual({
    output: [2, 4, 6],
    logs: '',
    is_final_answer: false,
  })
}

async function settle(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise
  } catch (error) {
    return error
  }
}

/** Runs one case end to end with every assertion of the suite. */
export async function runCase(canary: Canary, attack: AttackCase) {
  const calls: unknown[][] = []
  const executor = await SESExecutor.create({ timeoutMs: 2_000, ...attack.options })
  try {
    if (attack.tools) await executor.sendTools(attack.tools(calls))
    await executor.sendVariables({ canaryPath: canary.path, ...attack.variables })
    const outcome = await settle(executor.run(attack.code))
    await hostTick()
    const expected = attack.expected
    if ('output' in expected) {
      if (outcome instanceof Error) throw outcome
      const result = outcome as { output: unknown; logs: string; is_final_answer: boolean }
      expect(result.output).toEqual(expected.output)
      expect(result.is_final_answer).toBe(expected.final ?? false)
      if (expected.logs instanceof RegExp) expect(result.logs).toMatch(expected.logs)
      else expect(result.logs).toBe(expected.logs ?? '')
      canary.expectNotLeaked(result)
      await expectUsable(executor, 'READY')
    } else {
      expect(outcome).toBeInstanceOf(ExecutorError)
      const error = outcome as InstanceType<typeof ExecutorError>
      expect({ code: error.code, state: executor.state }).toEqual({ code: expected.code, state: expected.state })
      if (expected.message) expect(error.message).toMatch(expected.message)
      if (expected.details) expect(error.details).toMatchObject(expected.details)
      canary.expectNotLeaked(error.message, error.details, error.logs)
      await expectUsable(executor, expected.state)
    }
    attack.after?.(calls)
    canary.expectNotLeaked(calls)
    canary.expectUntouched()
  } finally {
    if (executor.state === 'READY' || executor.state === 'DIRTY') await executor.cleanup()
  }
}
