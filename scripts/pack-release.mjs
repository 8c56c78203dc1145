#!/usr/bin/env node
// `npm run pack:release -- <dir> [--artifacts <dir>]`: writes into <dir> the tarballs a release
// publishes: one platform package per built binary (`@smolagents-ts/ses-executor-<triple>`,
// carrying its `.node` file), then the main package, whose `optionalDependencies` name those
// platform packages pinned to its own version. The napi-rs CLI does the release work
// (`napi artifacts` moves each binary into its `npm/<triple>` package, `napi pre-publish` checks
// the packages, syncs their versions and writes `optionalDependencies`); this script runs it on a
// staged copy so that the checkout is never modified, then packs with npm.
//
// Binaries: `--artifacts <dir>` (the release workflow: every build job's upload), or by default
// the one `npm run build` left in the checkout (this machine's platform).
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const require = createRequire(import.meta.url)

/** What the addon is made of besides our code (`npm run notices`): ships beside each binary. */
const NOTICES = 'THIRD-PARTY-NOTICES.md'

/** A failure this script explains itself (no stack trace). */
class PackError extends Error {}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { artifacts: { type: 'string' } },
})
if (positionals.length !== 1) {
  console.error('usage: npm run pack:release -- <dir> [--artifacts <dir>]')
  process.exit(64)
}
const outDir = path.resolve(positionals[0])

const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const { binaryName, targets } = manifest.napi
const { parseTriple } = await import('@napi-rs/cli')
const napiCli = path.join(path.dirname(require.resolve('@napi-rs/cli/package.json')), require('@napi-rs/cli/package.json').bin.napi)
const targetOf = new Map(targets.map((triple) => [parseTriple(triple).platformArchABI, triple]))

const scratch = mkdtempSync(path.join(os.tmpdir(), 'ses-executor-pack-'))
try {
  const artifacts = values.artifacts ? path.resolve(values.artifacts) : localBuild()
  const built = builtPlatforms(artifacts)
  const stage = path.join(scratch, 'package')
  stagePackage(stage, built)
  // The CLI releases every configured target and refuses a missing binary: give it the targets
  // that were built (all of them in the release workflow), then put the configuration back.
  const staged = readJson(path.join(stage, 'package.json'))
  writeJson(path.join(stage, 'package.json'), { ...staged, napi: { ...staged.napi, targets: built.map((abi) => targetOf.get(abi)) } })
  napi(stage, 'artifacts', '--output-dir', artifacts)
  napi(stage, 'pre-publish', '--tag-style', 'npm', '--skip-optional-publish', '--no-gh-release')
  // `prepare` builds the addon in a checkout or a git dependency; a published package has its
  // binary, and npm counts `prepare` among the install scripts it asks users to approve.
  const released = readJson(path.join(stage, 'package.json'))
  delete released.scripts.prepare
  writeJson(path.join(stage, 'package.json'), { ...released, napi: staged.napi })
  // `napi artifacts` also drops each binary beside the main package; it ships in its platform
  // package only.
  for (const name of readdirSync(stage)) if (name.endsWith('.node')) rmSync(path.join(stage, name))

  mkdirSync(outDir, { recursive: true })
  const packed = [...built.map((abi) => pack(path.join(stage, 'npm', abi))), pack(stage)]
  report(packed)
} catch (error) {
  if (!(error instanceof PackError)) throw error
  console.error(`pack:release: ${error.message}`)
  process.exitCode = 1
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

/** This machine's build (`npm run build` writes `<binaryName>.<triple>.node` in the checkout). */
function localBuild() {
  const binaries = readdirSync(root).filter((name) => name.startsWith(`${binaryName}.`) && name.endsWith('.node'))
  if (binaries.length === 0) fail(`no ${binaryName}.<triple>.node in ${root}: run \`npm run build\` first`)
  const dir = path.join(scratch, 'artifacts')
  mkdirSync(dir)
  for (const name of binaries) copyFileSync(path.join(root, name), path.join(dir, name))
  return dir
}

/** The platforms (napi's `<platform>-<arch>[-<abi>]`) that `dir` holds a binary for. */
function builtPlatforms(dir) {
  if (!existsSync(dir)) fail(`--artifacts ${dir} does not exist`)
  const found = []
  const visit = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name)
      if (entry.isDirectory()) visit(full)
      const match = entry.isFile() && new RegExp(`^${binaryName}\\.(.+)\\.node$`).exec(entry.name)
      if (match) {
        if (!targetOf.has(match[1])) fail(`${full} is for ${match[1]}, which package.json's napi.targets does not list`)
        found.push(match[1])
      }
    }
  }
  visit(dir)
  if (found.length === 0) fail(`no ${binaryName}.<triple>.node under ${dir}`)
  return [...new Set(found)].sort()
}

/** A copy of what `npm pack` takes from the checkout, plus the built platforms' `npm/` folders. */
function stagePackage(stage, built) {
  const [{ files }] = JSON.parse(npm(root, 'pack', '--dry-run', '--json', '--ignore-scripts'))
  for (const { path: file } of files) {
    if (file.endsWith('.node')) continue
    mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
    copyFileSync(path.join(root, file), path.join(stage, file))
  }
  for (const abi of built) {
    const from = path.join(root, 'npm', abi)
    if (!existsSync(path.join(from, 'package.json'))) fail(`npm/${abi} is missing: run \`npx napi create-npm-dirs\``)
    const platform = path.join(stage, 'npm', abi)
    cpSync(from, platform, { recursive: true, filter: (source) => !source.endsWith('.node') })
    // The binary links and embeds others' works: its package carries their notices (npm adds a
    // LICENSE by itself; the notices file must be listed). The npm/ folders stay exactly what
    // `napi create-npm-dirs` makes, so the listing is added to the staged copy only.
    for (const file of ['LICENSE', NOTICES]) copyFileSync(path.join(root, file), path.join(platform, file))
    const platformManifest = readJson(path.join(platform, 'package.json'))
    writeJson(path.join(platform, 'package.json'), { ...platformManifest, files: [...platformManifest.files, NOTICES] })
  }
}

function pack(dir) {
  const [result] = JSON.parse(npm(dir, 'pack', '--json', '--ignore-scripts', '--pack-destination', outDir))
  return result
}

function report(packed) {
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`
  console.log(`\nTarballs in ${outDir}:`)
  for (const { filename, size, unpackedSize, files } of packed) {
    console.log(`\n${filename}  ${kib(size)} (${kib(unpackedSize)} unpacked, ${files.length} files)`)
    for (const file of files) console.log(`  ${kib(file.size).padStart(12)}  ${file.path}`)
  }
  // `binaryBytes`: the addon's own size, which the README quotes (test:package checks it).
  const described = packed.map(({ filename, name, version, size, unpackedSize, files }) => ({
    filename,
    name,
    version,
    size,
    unpackedSize,
    binaryBytes: files.find((file) => file.path.endsWith('.node'))?.size,
  }))
  writeFileSync(path.join(outDir, 'tarballs.json'), `${JSON.stringify(described, null, 2)}\n`)
}

function napi(cwd, ...args) {
  run(process.execPath, [napiCli, ...args], cwd, 'inherit')
}

function npm(cwd, ...args) {
  return run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, cwd, 'pipe')
}

function run(command, args, cwd, stdout) {
  // npm.cmd runs only through a shell on Windows; node itself must not (its path has a space).
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', stdout, 'inherit'], encoding: 'utf8', shell: command.endsWith('.cmd') })
  if (result.status !== 0) fail(`${path.basename(command)} ${args.join(' ')} (in ${cwd}) failed: ${result.error?.message ?? `exit ${result.status}`}`)
  return result.stdout
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'))
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

function fail(message) {
  throw new PackError(message)
}
