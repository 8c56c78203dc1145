// The release layout stays in step with package.json's napi.targets:
// every target has a build row and a test row in the GitHub workflow and an npm/ package, and the
// npm/ packages are exactly what napi-rs's CLI generates for them (names, os/cpu/libc, binary,
// version), so that nothing in them is edited by hand or left behind.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { parseTriple } from '@napi-rs/cli'
import { load } from 'js-yaml'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const targets: string[] = manifest.napi.targets
const workflow = load(readFileSync(path.join(root, '.github', 'workflows', 'CI.yml'), 'utf8')) as {
  jobs: Record<string, { strategy?: { matrix?: { settings?: Array<{ target: string }> } } }>
}
const matrixTargets = (job: string) => (workflow.jobs[job]?.strategy?.matrix?.settings ?? []).map((row) => row.target).sort()

describe('release layout', () => {
  it('every napi.targets entry has a row in the workflow\'s build matrix, and no other target does', () => {
    expect(matrixTargets('build')).toEqual([...targets].sort())
  })

  it('every napi.targets entry is tested on a runner of its own platform', () => {
    expect(matrixTargets('test')).toEqual([...targets].sort())
  })

  it('every napi.targets entry has an npm/ package, and npm/ has no other', () => {
    const folders = readdirSync(path.join(root, 'npm')).sort()
    expect(folders).toEqual(targets.map((target) => parseTriple(target).platformArchABI).sort())
  })

  it('the npm/ packages are what `napi create-npm-dirs` makes of package.json', () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'ses-npm-dirs-'))
    try {
      cpSync(path.join(root, 'package.json'), path.join(scratch, 'package.json'))
      const cli = createRequire(import.meta.url).resolve('@napi-rs/cli/package.json')
      execFileSync(process.execPath, [path.join(path.dirname(cli), 'dist', 'cli.js'), 'create-npm-dirs', '--cwd', scratch], { stdio: 'pipe' })
      for (const folder of readdirSync(path.join(root, 'npm'))) {
        for (const file of readdirSync(path.join(scratch, 'npm', folder))) {
          const committed = readFileSync(path.join(root, 'npm', folder, file), 'utf8')
          expect(committed, `npm/${folder}/${file}`).toBe(readFileSync(path.join(scratch, 'npm', folder, file), 'utf8'))
        }
        const { name, version } = JSON.parse(readFileSync(path.join(root, 'npm', folder, 'package.json'), 'utf8'))
        expect({ name, version }).toEqual({ name: `${manifest.name}-${folder}`, version: manifest.version })
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  })

  it('THIRD-PARTY-NOTICES.md lists what the addon links as Cargo.lock has it (npm run notices)', () => {
    // Throws (and prints why) when the committed notices no longer match the dependencies.
    const out = execFileSync(process.execPath, [path.join(root, 'scripts', 'third-party-notices.mjs'), '--check'], { encoding: 'utf8', stdio: 'pipe' })
    expect(out).toContain('matches Cargo.lock')
  })

  it('the workflow builds with the release profile and publishes what pack:release packs, with provenance', () => {
    const text = readFileSync(path.join(root, '.github', 'workflows', 'CI.yml'), 'utf8')
    for (const row of workflow.jobs.build.strategy!.matrix!.settings! as Array<{ target: string; build: string }>) {
      expect(row.build).toMatch(new RegExp(`^npm run build -- --target ${row.target}( |$)`))
    }
    expect(text).toContain('npm run pack:release -- dist --artifacts artifacts')
    expect(text).toContain('npm publish "dist/${tarball}" --provenance --access public')
  })
})
