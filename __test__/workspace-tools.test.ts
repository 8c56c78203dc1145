// The example's file tools run on the host with model-written arguments, so
// each is checked for staying inside its workspace.
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { beforeEach, describe, expect, it } from 'vitest'

import { createWorkspaceTools } from '../lib/workspace-tools.mjs'

let outside: string
let workspace: string
let tools: Awaited<ReturnType<typeof createWorkspaceTools>>

beforeEach(async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'ses-ws-'))
  outside = path.join(base, 'secret.txt')
  workspace = path.join(base, 'ws')
  await mkdir(path.join(workspace, 'src'), { recursive: true })
  await writeFile(outside, 'top secret')
  await writeFile(path.join(workspace, 'src', 'a.js'), 'const a = 1\n// TODO: b\nconst c = 3\n')
  await writeFile(path.join(workspace, 'README.md'), '# ws\nTODO: docs\n')
  tools = await createWorkspaceTools(workspace)
})

describe('confinement', () => {
  for (const [technique, attempt] of [
    ['a parent path', '../secret.txt'],
    ['a deep parent path', 'src/../../secret.txt'],
    ['an absolute path', '/etc/passwd'],
  ] as const) {
    it(`read_file refuses ${technique}`, async () => {
      await expect(tools.read_file.forward({ path: attempt })).rejects.toThrow(/outside the workspace/)
    })
  }

  it('a symbolic link pointing outside cannot be read or written through', async () => {
    await symlink(outside, path.join(workspace, 'link.txt'))
    await expect(tools.read_file.forward({ path: 'link.txt' })).rejects.toThrow(/outside the workspace/)
    await expect(tools.write_file.forward({ path: 'link.txt', content: 'x' })).rejects.toThrow(/outside the workspace/)
    expect(await readFile(outside, 'utf8')).toBe('top secret')
  })

  it('a linked folder pointing outside cannot be written into', async () => {
    await symlink(path.dirname(outside), path.join(workspace, 'escape'))
    await expect(tools.write_file.forward({ path: 'escape/new.txt', content: 'x' })).rejects.toThrow(/outside the workspace/)
  })

  it('paths with NUL characters are refused', async () => {
    await expect(tools.read_file.forward({ path: 'README.md\0.js' })).rejects.toThrow(/NUL/)
  })
})

describe('the tools', () => {
  it('write_file creates folders; read_file reads back', async () => {
    expect(await tools.write_file.forward({ path: 'out/deep/x.txt', content: 'héllo' })).toBe('wrote 6 bytes to out/deep/x.txt')
    expect(await tools.read_file.forward({ path: 'out/deep/x.txt' })).toBe('héllo')
  })

  it('edit_file replaces exactly one occurrence, and refuses none or several', async () => {
    expect(await tools.edit_file.forward({ path: 'src/a.js', old_text: 'const c = 3', new_text: 'const c = 4' })).toBe('edited src/a.js at line 3')
    expect(await readFile(path.join(workspace, 'src', 'a.js'), 'utf8')).toContain('const c = 4')
    await expect(tools.edit_file.forward({ path: 'src/a.js', old_text: 'nowhere', new_text: '' })).rejects.toThrow(/does not occur/)
    await expect(tools.edit_file.forward({ path: 'src/a.js', old_text: 'const', new_text: 'let' })).rejects.toThrow(/more than once/)
  })

  it('list_dir lists folders with a trailing slash, sorted', async () => {
    expect(await tools.list_dir.forward({})).toBe('README.md\nsrc/')
    expect(await tools.list_dir.forward({ path: 'src' })).toBe('a.js')
  })

  it('grep finds literal text by default and regular expressions on request', async () => {
    expect(await tools.grep.forward({ pattern: 'TODO' })).toBe('README.md:2: TODO: docs\nsrc/a.js:2: // TODO: b')
    expect(await tools.grep.forward({ pattern: 'const [ac]', regex: true, path: 'src' })).toBe('src/a.js:1: const a = 1\nsrc/a.js:3: const c = 3')
    expect(await tools.grep.forward({ pattern: 'const [ac]' })).toBe('no matches')
    await expect(tools.grep.forward({ pattern: '(', regex: true })).rejects.toThrow(/Invalid regular expression/)
  })

  it('does not open files over 1 MiB', async () => {
    await writeFile(path.join(workspace, 'big.txt'), 'x'.repeat(1024 * 1024 + 1))
    await expect(tools.read_file.forward({ path: 'big.txt' })).rejects.toThrow(/not opened/)
  })
})
