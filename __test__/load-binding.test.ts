// Where no native addon loads, requiring the package fails with an error that
// names the platform triple, every candidate the generated loader tried, why a binary that exists
// did not load, and the one command that builds from source. Each case is a copy of the
// package's JavaScript (index.js, binding.js, lib/) without the binary, loaded by a plain Node.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const TRIPLES = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']

/** A copy of the package with `changes` merged into its package.json, and no binary. */
function packageCopy(changes: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ses-no-binary-'))
  // The package's CommonJS files, as package.json lists them.
  const commonJs = (manifest.files as string[]).filter((file) => file === 'index.js' || file === 'binding.js' || file.endsWith('.cjs'))
  for (const file of commonJs) {
    cpSync(path.join(root, file), path.join(dir, file))
  }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, ...changes }))
  return dir
}

/** What `require(dir)` throws, as `{ code, message }`. */
function loadError(dir: string): { code: string; message: string } {
  const script = `try { require(${JSON.stringify(dir)}); console.log('{}') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
}

const published = { optionalDependencies: Object.fromEntries(TRIPLES.map((t) => [`${manifest.name}-${t}`, manifest.version])) }

describe('no native addon for this platform', () => {
  it('names the platform, what was tried, and the published platforms when this one has none', () => {
    const first = loadError(packageCopy())
    const triple = /this platform, ([^ ]+) \(Node/.exec(first.message)![1]
    const elsewhere = TRIPLES.filter((t) => t !== triple)
    const { code, message } = loadError(
      packageCopy({ optionalDependencies: Object.fromEntries(elsewhere.map((t) => [`${manifest.name}-${t}`, manifest.version])) }),
    )
    expect(code).toBe('ERR_SES_EXECUTOR_NO_BINARY')
    expect(message).toContain(`${manifest.name}: no native addon loads on this platform, ${triple} (Node ${process.version}).`)
    expect(message).toContain(`Tried: ./ses-executor.${triple}.node, ${manifest.name}-${triple}`)
    expect(message).toContain(`Prebuilt binaries are published for: ${elsewhere.join(', ')}.`)
    expect(message).toMatch(/To build it from source \(Rust 1\.95\+ and a C compiler\): npm install <git URL or clone of @smolagents-ts\/ses-executor> \(its prepare script builds the addon\)$/)
  })

  it('gives both causes when this platform has a platform package that is not installed', () => {
    const { message } = loadError(packageCopy(published))
    expect(message).toMatch(/A prebuilt binary for [^ ]+ is the optional dependency @smolagents-ts\/ses-executor-[^ @]+@[^ ]+, and it is not installed\./)
    // Left out on purpose (or by a foreign lock file)…
    expect(message).toContain('Either it was left out: install again without --omit=optional (or --no-optional), and without a lock file made on another platform.')
    // …or not on the registry npm installed from, which npm passes over without a word.
    expect(message).toMatch(/Or npm could not fetch it \(npm skips an optional dependency it cannot install\): check that your registry has it \(npm view @smolagents-ts\/ses-executor-[^ ]+ version\), then install again\./)
  })

  it('names the git URL from package.json\'s repository', () => {
    const { message } = loadError(packageCopy({ ...published, repository: { type: 'git', url: 'https://github.com/example/ses-executor.git' } }))
    expect(message).toContain('npm install git+https://github.com/example/ses-executor.git (its prepare script builds the addon)')
  })

  it('in a checkout, says to build it there', () => {
    const dir = packageCopy()
    writeFileSync(path.join(dir, 'Cargo.toml'), '')
    expect(loadError(dir).message).toContain(`To build it from source (Rust 1.95+ and a C compiler), run in ${dir}: npm run build`)
  })

  it('says why a binary that is there did not load', () => {
    const dir = packageCopy(published)
    const triple = /this platform, ([^ ]+) \(Node/.exec(loadError(dir).message)![1]
    writeFileSync(path.join(dir, `ses-executor.${triple}.node`), 'not a shared library')
    const { code, message } = loadError(dir)
    expect(code).toBe('ERR_SES_EXECUTOR_NO_BINARY')
    expect(message).toMatch(new RegExp(`\\nFailed: .*ses-executor\\.${triple}\\.node`))
  })
})
