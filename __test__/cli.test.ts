// The `ses-exec` command, run as a child process exactly as a user runs it.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = path.join(root, 'bin', 'ses-exec.mjs')

interface Finished {
  code: number | null
  stdout: string
  stderr: string
}

function sesExec(args: string[], stdin = ''): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: 'pipe' })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(stdin)
  })
}

let dir: string
const file = async (name: string, text: string) => {
  const at = path.join(dir, name)
  await writeFile(at, text)
  return at
}
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ses-exec-test-'))
})

describe('ses-exec FILE', () => {
  it('runs the README example and prints logs, output and is_final_answer (exit 0)', async () => {
    const run = await sesExec(['examples/hello.js'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('first primes: [')
    expect(run.stdout).toContain("output: 'The 10th prime is 29'")
    expect(run.stdout).toContain('is_final_answer: true')
  })

  it('--json prints the CodeOutput with logEntries and stats', async () => {
    const run = await sesExec(['--json', await file('json.js', 'console.warn("w"); ({ n: 10n, list: [1, 2] })')])
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result).toMatchObject({ output: { n: '10', list: [1, 2] }, logs: 'w', is_final_answer: false })
    expect(result.logEntries[0]).toMatchObject({ level: 'warn', message: 'w' })
    expect(result.stats.wallTimeMs).toBeGreaterThan(0)
  })

  it('reads the program from standard input with "-"', async () => {
    const run = await sesExec(['-'], 'const a: number = 40; a + 2')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('output: 42')
  })

  it('a runtime error exits 1 and shows the user\'s line with a caret', async () => {
    const run = await sesExec([await file('throws.js', 'const ok = 1;\nconst bad = ok.missing.deeper;\n')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('ERR_RUNTIME_EXCEPTION')
    expect(run.stderr).toContain('at line 2, column')
    expect(run.stderr).toMatch(/ {2}const bad = ok\.missing\.deeper;\n {2}\s*\^/)
  })

  it('a validation error exits 2 with the code frame', async () => {
    const run = await sesExec([await file('invalid.js', 'let a = ;')])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('ERR_VALIDATION_FAILED')
    expect(run.stderr).toContain('1 | let a = ;')
  })

  it('a refused import exits 2; --authorized-imports with --module lets it load', async () => {
    const program = await file('imports.js', 'const { twice } = await import("helpers"); twice(21)')
    const refused = await sesExec([program])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('ERR_IMPORT_NOT_ALLOWED')
    const helpers = await file('helpers.mjs', 'export const twice = (x) => x * 2')
    const loaded = await sesExec(['--authorized-imports', 'helpers', '--module', `helpers=${helpers}`, program])
    expect(loaded.code).toBe(0)
    expect(loaded.stdout).toContain('output: 42')
  })

  it('a timeout exits 1 with ERR_EXEC_TIMEOUT', async () => {
    const run = await sesExec(['--timeout-ms', '100', '--max-operations', '1e12', await file('spin.js', 'while (true) {}')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('ERR_EXEC_TIMEOUT')
  })

  it('every ExecutorOptions flag reaches the executor (--max-operations)', async () => {
    const run = await sesExec(['--max-operations', '10', await file('loop.js', 'for (let i = 0; i < 11; i++) {}')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('Max operations exceeded (10)')
  })

  it('--collect-console-levels and --max-log-bytes shape the logs', async () => {
    const program = await file('levels.js', 'console.log("hidden"); console.error("shown")')
    const run = await sesExec(['--json', '--collect-console-levels', 'error', '--max-log-bytes', '1024', program])
    expect(JSON.parse(run.stdout).logs).toBe('shown')
  })

  it('options the executor refuses, and bad flags, exit 64', async () => {
    expect((await sesExec(['--timeout-ms', '0', 'examples/hello.js'])).code).toBe(64)
    expect((await sesExec(['--timeout-ms', 'soon', 'examples/hello.js'])).code).toBe(64)
    expect((await sesExec(['--no-such-flag'])).code).toBe(64)
    expect((await sesExec([path.join(dir, 'missing.js')])).code).toBe(64)
  })

  it('--tools loads host tools from a Node module', async () => {
    const tools = await file('tools.mjs', 'export const add = (a, b) => a + b\nexport const later = async (x) => x * 2\n')
    const run = await sesExec(['--tools', tools, await file('use-tools.js', 'add(1, 2) + await later(5)')])
    expect(run.stderr).toBe('')
    expect(run.stdout).toContain('output: 13')
  })

  it('--workspace exposes file tools confined to the folder', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'ses-exec-ws-'))
    await writeFile(path.join(workspace, 'in.txt'), 'hello')
    const program = await file('ws.js', [
      'const text = await read_file("in.txt");',
      'await write_file("out/copy.txt", text.toUpperCase());',
      'let escaped;',
      'try { await read_file("../../../etc/passwd"); escaped = true } catch (e) { escaped = e.message }',
      'escaped',
    ].join('\n'))
    const run = await sesExec(['--workspace', workspace, program])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('is outside the workspace')
    expect(await readFile(path.join(workspace, 'out', 'copy.txt'), 'utf8')).toBe('HELLO')
  })

  it('--images writes each drawn canvas as a PNG file, and --json carries image data as base64', async () => {
    const program = await file('draw.js', "getCanvas(8, 6).getContext('2d').fillRect(0, 0, 8, 6); 'drawn'")
    const out = path.join(dir, 'images')
    const run = await sesExec(['--images', out, program])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`image 1: 8×6 PNG -> ${path.join(out, 'image-1.png')}`)
    const png = await readFile(path.join(out, 'image-1.png'))
    expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47])
    const json = JSON.parse((await sesExec(['--json', program])).stdout)
    expect(json.images[0]).toMatchObject({ mimeType: 'image/png', width: 8, height: 6 })
    expect(Buffer.from(json.images[0].data, 'base64').equals(png)).toBe(true)
  })

  it('--trace prints each event of the run on standard error as it happens', async () => {
    const tools = await file('trace-tools.mjs', 'export const add = (a, b) => a + b\nexport const fail = async () => { throw new Error("down") }\n')
    const program = await file('traced.js', 'console.log("hi")\nconst sum = add(1, 2)\ntry { await fail() } catch {}\nfinal_answer(sum)')
    const run = await sesExec(['--trace', '--tools', tools, program])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('output: 3')
    const lines = run.stderr.trim().split('\n')
    expect(lines.map((line) => line.replace(/^\[\s*[\d.]+ ms\] /, '').split(' ')[0])).toEqual([
      'run_start', 'console.log', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'final_answer', 'run_end',
    ])
    expect(lines[2]).toMatch(/tool_call #0 add\(1, 2\) \(line 2\)$/)
    expect(lines[3]).toMatch(/tool_result #0 add -> 3 \(sync, [\d.]+ ms\)$/)
    expect(lines[5]).toMatch(/tool_result #1 fail threw Error: down \(async, [\d.]+ ms\)$/)
    expect(lines[7]).toMatch(/run_end final_answer \(2 tool calls, 0 operations, peak heap \d+ bytes\)$/)
  })

  it('--trace with --json puts the events in the result, and in the error of a failed run', async () => {
    const ok = JSON.parse((await sesExec(['--trace', '--json', await file('t-ok.js', '1 + 1')])).stdout)
    expect(ok.trace.map((event: { type: string }) => event.type)).toEqual(['run_start', 'run_end'])
    const failed = await sesExec(['--trace', '--json', await file('t-fail.js', 'null.x')])
    expect(failed.code).toBe(1)
    const { error } = JSON.parse(failed.stdout)
    expect(error.trace.at(-1)).toMatchObject({ type: 'run_end', outcome: 'error', error: { code: 'ERR_RUNTIME_EXCEPTION' } })
  })

  it('--help lists a flag for every ExecutorOptions field but the callbacks, the tracer\'s and snapshotKey', async () => {
    const run = await sesExec(['--help'])
    expect(run.code).toBe(0)
    // The fields as the typings declare them, so that a new option without a flag fails here.
    const typings = await readFile(path.join(root, 'binding.d.ts'), 'utf8')
    const body = /export interface ExecutorOptions \{([\s\S]*?)\n\}/.exec(typings)?.[1] ?? ''
    const fields = [...body.matchAll(/^  (\w+)\?:/gm)].map((m) => m[1])
    expect(fields).toContain('maxValueBytes')
    const flagOf = (field: string) =>
      field === 'modules' ? '--module' : `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
    const missing = fields
      // snapshotKey seals snapshots, and the CLI runs one program and never snapshots it.
      .filter((field) => !['onLog', 'onEvent', 'tracer', 'captureToolContent', 'snapshotKey'].includes(field))
      .filter((field) => !run.stdout.includes(`${flagOf(field)} `))
    expect(missing).toEqual([])
    for (const flag of ['--tools', '--workspace', '--json', '--images']) expect(run.stdout).toContain(flag)
  })

  it('--timers gives the sandbox timers, --max-value-bytes and --max-trace-bytes reach the executor', async () => {
    const timers = await sesExec(['--timers', '-'], 'await new Promise((r) => setTimeout(r, 5)); "slept"')
    expect(timers.stdout).toContain("output: 'slept'")
    expect(timers.code).toBe(0)
    const small = await sesExec(['--max-value-bytes', '1024', '--json', '-'], '"x".repeat(4096)')
    expect(small.code).toBe(1)
    expect(JSON.parse(small.stdout).error.details).toMatchObject({ limit: 'maxValueBytes', max: 1024 })
    const trace = await sesExec(['--max-trace-bytes', '512', '-'], '1')
    expect(trace.code).toBe(64)
    expect(trace.stderr).toMatch(/maxTraceBytes/)
  })
})

describe('ses-exec REPL (no FILE)', () => {
  it('keeps state between lines, continues incomplete code, and reports errors without ending', async () => {
    const run = await sesExec([], [
      'let x = 20',
      'function twice(v) {',
      '  return v * 2',
      '}',
      'twice(x) + 2',
      'missing()',
      'console.log("still here", x)',
      'final_answer(x)',
      '',
    ].join('\n'))
    expect(run.code).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines).toContain('42')
    expect(lines).toContain('still here 20')
    expect(lines).toContain('(final answer) 20')
    expect(run.stdout).toContain('ReferenceError: missing is not defined')
  })

  it('starts a fresh sandbox after a timeout leaves the old one DIRTY', async () => {
    const run = await sesExec(['--timeout-ms', '100', '--max-operations', '1e12'], 'var kept = 1\nwhile (true) {}\ntypeof kept\n')
    expect(run.stdout).toContain('ERR_EXEC_TIMEOUT')
    expect(run.stdout).toContain('starting a fresh one')
    expect(run.stdout.trim().split('\n').at(-1)).toBe("'undefined'")
  })

  it('.exit ends the session', async () => {
    const run = await sesExec([], '1 + 1\n.exit\n3 + 3\n')
    expect(run.code).toBe(0)
    expect(run.stdout.trim()).toBe('2')
  })
})
