// scripts/quickjs-patches.mjs, the QuickJS patch queue's tool, on a copy of the queue: the
// script finds the queue relative to itself, so each test copies the script, the patches and
// the pristine sources into a scratch root and works there, never on this checkout.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { afterEach, describe, expect, it } from 'vitest'

import { root } from './markdown'

const roots: string[] = []

/** A scratch root holding the script, the queue and the pristine sources. */
function scratchRoot(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'quickjs-queue-'))
  roots.push(dir)
  cpSync(path.join(root, 'scripts/quickjs-patches.mjs'), path.join(dir, 'scripts/quickjs-patches.mjs'))
  cpSync(path.join(root, 'vendor/quickjs-patches'), path.join(dir, 'vendor/quickjs-patches'), {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}upstream`),
  })
  cpSync(path.join(root, 'vendor/rquickjs-sys/quickjs'), path.join(dir, 'vendor/rquickjs-sys/quickjs'), { recursive: true })
  return dir
}

function queue(dir: string, ...args: string[]) {
  return spawnSync(process.execPath, [path.join(dir, 'scripts/quickjs-patches.mjs'), ...args], { cwd: dir, encoding: 'utf8' })
}

function git(work: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: work, encoding: 'utf8' })
}

/** Every patch file's text, by name. */
function patches(dir: string): Record<string, string> {
  const folder = path.join(dir, 'vendor/quickjs-patches')
  return Object.fromEntries(
    readdirSync(folder)
      .filter((name) => name.endsWith('.patch'))
      .map((name) => [name, readFileSync(path.join(folder, name), 'utf8')]),
  )
}

afterEach(() => {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('scripts/quickjs-patches.mjs', () => {
  it('apply then refresh writes every patch back byte for byte', () => {
    const dir = scratchRoot()
    const before = patches(dir)
    expect(queue(dir, 'apply').status).toBe(0)
    const work = path.join(dir, 'target/quickjs-queue')
    expect(git(work, 'rev-list', '--count', 'queue-base..HEAD').trim()).toBe(String(Object.keys(before).length))
    const refreshed = queue(dir, 'refresh')
    expect(refreshed.stdout).toContain('0 patch files written')
    expect(patches(dir)).toEqual(before)
  }, 180_000)

  it('refresh writes an amended commit back into its own patch file, header kept', () => {
    const dir = scratchRoot()
    const before = patches(dir)
    expect(queue(dir, 'apply', '--upto', '0103').status).toBe(0)
    const work = path.join(dir, 'target/quickjs-queue')
    // Amend the top commit (0103): one more line in the function it patches.
    const source = readFileSync(path.join(work, 'quickjs.c'), 'utf8')
    const edited = source.replace('        rt->dump_flags = flags;\n', '        rt->dump_flags = flags; /* amended */\n')
    expect(edited).not.toBe(source)
    writeFileSync(path.join(work, 'quickjs.c'), edited)
    git(work, 'commit', '-q', '-a', '--amend', '--no-edit')
    // apply refuses to throw that work away.
    const again = queue(dir, 'apply')
    expect(again.status).toBe(1)
    expect(again.stderr).toContain('0103-set-dump-flags-on-no-runtime.patch')
    expect(queue(dir, 'refresh').stdout).toContain('1 patch files written')
    const after = patches(dir)
    const changed = Object.keys(after).filter((name) => after[name] !== before[name])
    expect(changed).toEqual(['0103-set-dump-flags-on-no-runtime.patch'])
    const text = after['0103-set-dump-flags-on-no-runtime.patch']
    expect(text).toContain('+        rt->dump_flags = flags; /* amended */\n')
    expect(text.slice(0, text.indexOf('\n--- a/'))).toBe(before['0103-set-dump-flags-on-no-runtime.patch'].slice(0, text.indexOf('\n--- a/')))
  }, 180_000)

  it('rebase replays the queue onto new sources, stops at a conflict and continues', () => {
    const dir = scratchRoot()
    const before = patches(dir)
    // New "upstream" sources: one line far from every patch, and one line 0103 changes.
    const upstream = path.join(dir, 'upstream')
    cpSync(path.join(dir, 'vendor/rquickjs-sys/quickjs'), upstream, { recursive: true })
    const file = path.join(upstream, 'quickjs.c')
    const source = readFileSync(file, 'utf8')
    const moved = `/* a new first line */\n${source}`.replace('    rt->dump_flags = flags;\n', '    rt->dump_flags = flags | 0;\n')
    writeFileSync(file, moved)

    const first = queue(dir, 'rebase', upstream)
    expect(first.status).toBe(1)
    expect(first.stderr).toContain('CONFLICT in 0103-set-dump-flags-on-no-runtime.patch')
    expect(first.stdout).toMatch(/applied\s+0102-oom-while-compiling\.patch/)
    // Nothing under vendor/ changed while the rebase waits.
    expect(patches(dir)).toEqual(before)

    // Resolve: the patch's guard around upstream's new expression.
    const work = path.join(dir, 'target/quickjs-queue')
    const conflicted = readFileSync(path.join(work, 'quickjs.c'), 'utf8')
    const resolved = conflicted.replace(/<<<<<<< ours\n[\s\S]*?>>>>>>> theirs\n/, '    if (rt)\n        rt->dump_flags = flags | 0;\n')
    expect(resolved).not.toBe(conflicted)
    writeFileSync(path.join(work, 'quickjs.c'), resolved)
    git(work, 'add', 'quickjs.c')
    const rest = queue(dir, 'rebase', '--continue')
    expect(rest.stderr).toBe('')
    expect(rest.status).toBe(0)
    expect(rest.stdout).toMatch(/conflict, resolved by hand\s+0103-set-dump-flags-on-no-runtime\.patch/)

    // The new sources are vendored, and the queue applies to them with git as it is.
    expect(readFileSync(path.join(dir, 'vendor/rquickjs-sys/quickjs/quickjs.c'), 'utf8')).toBe(moved)
    expect(patches(dir)['0103-set-dump-flags-on-no-runtime.patch']).toContain('+        rt->dump_flags = flags | 0;\n')
    expect(queue(dir, 'apply').status).toBe(0)
    expect(readFileSync(path.join(work, 'quickjs.c'), 'utf8')).toContain('/* a new first line */')
  }, 180_000)
})
