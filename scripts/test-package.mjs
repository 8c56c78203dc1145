#!/usr/bin/env node
// `npm run test:package`: the user's path. Packs the release tarballs
// (`pack:release`), installs them with npm into a new project in the system's temp folder, where
// nothing of this checkout is reachable, and uses the package from there as a user would: require
// and import (and of `./workspace-tools`), a run with a sync and an async tool and
// `final_answer`, `npx ses-exec` on standard input, a Vitest file and a Jest file (those runners
// installed from the registry into that project), a `worker_threads` load, the typings under
// `tsc`, and, in a second project without the platform package, the error that names what to do.
// Needs the addon built (`npm install` or `npm run build`); prints what was installed.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const NAME = manifest.name
/** The runners and compiler, at the versions this repository tests with. */
const TOOLS = ['vitest', 'jest', 'typescript', '@types/node'].map((name) => `${name}@${manifest.devDependencies[name]}`)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'

/**
 * The environment of a user's shell: without the `npm_*` variables that `npm run` gives its
 * scripts (the parent npm's own settings, which a child npm would read back as "env config").
 */
const USER_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
/** npm's notes on the machine's own configuration (`~/.npmrc`, the global npmrc): no package's doing. */
const MACHINE_CONFIG = /^npm warn Unknown (user|global) config /

const work = mkdtempSync(path.join(os.tmpdir(), 'ses-executor-user-'))
if (!path.relative(root, work).startsWith('..')) throw new Error(`${work} is inside the checkout`)
const results = []

try {
  section('pack:release')
  const tarballDir = path.join(work, 'tarballs')
  mustRun(process.execPath, [path.join(root, 'scripts', 'pack-release.mjs'), tarballDir], root, { stdio: 'inherit' })
  const tarballs = JSON.parse(readFileSync(path.join(tarballDir, 'tarballs.json'), 'utf8'))
  const main = tarballs.find((tarball) => tarball.name === NAME)
  const platforms = tarballs.filter((tarball) => tarball !== main)
  const tarballPath = (tarball) => path.join(tarballDir, tarball.filename)

  check('the sizes README.md and the docs quote are those of these tarballs (within 10 %)', () => {
    const linux = platforms.find((tarball) => tarball.name === `${NAME}-linux-x64-gnu`)
    const actual = {
      'main.tarball': main.size,
      'main.unpacked': main.unpackedSize,
      // The docs quote Linux x64's binary; another platform's packs check the main package only.
      ...(linux ? { 'binary.tarball': linux.size, 'binary.unpacked': linux.binaryBytes } : {}),
    }
    const unit = { KiB: 1024, MiB: 1024 * 1024 }
    let quoted = 0
    for (const page of docPages()) {
      const text = readFileSync(path.join(root, page), 'utf8')
      for (const [, key, value, suffix] of text.matchAll(/<!-- pack: ([\w.]+) -->([\d.]+) (KiB|MiB)<!-- \/pack -->/g)) {
        quoted++
        if (!(key in actual)) {
          if (key.startsWith('binary.')) continue
          throw new Error(`${page}: no tarball figure ${key}`)
        }
        const bytes = Number(value) * unit[suffix]
        if (Math.abs(bytes - actual[key]) > actual[key] * 0.1) {
          throw new Error(`${page}: ${key} reads ${value} ${suffix}, the tarballs say ${(actual[key] / unit[suffix]).toFixed(1)} ${suffix}`)
        }
      }
    }
    if (quoted === 0) throw new Error('no <!-- pack: … --> figure found in the docs')
  })

  section('a new project, outside the checkout')
  const app = project('app')
  check('nothing of the checkout is reachable from the new project', () => {
    const resolved = tryResolve(app, NAME)
    if (resolved) throw new Error(`${NAME} resolves to ${resolved} before anything is installed`)
  })
  const install = npmInstall(app, [...tarballs.map(tarballPath), ...TOOLS])
  check('npm install prints no warning of ours', () => noWarningsOfOurs(install))
  check('the main package names each platform package as an optional dependency at its own version', () => {
    const installed = JSON.parse(readFileSync(path.join(app, 'node_modules', NAME, 'package.json'), 'utf8'))
    const expected = Object.fromEntries(platforms.map((tarball) => [tarball.name, installed.version]))
    equal(installed.optionalDependencies, expected)
    for (const tarball of platforms) equal(tarball.version, installed.version)
  })
  check('every installed package carries its licence, and each binary the notices of what it links', () => {
    for (const name of [NAME, ...platforms.map((tarball) => tarball.name)]) {
      const dir = path.join(app, 'node_modules', name)
      if (!existsSync(path.join(dir, 'LICENSE'))) throw new Error(`${name} has no LICENSE`)
      if (name !== NAME && !readFileSync(path.join(dir, 'THIRD-PARTY-NOTICES.md'), 'utf8').includes('| rquickjs |')) {
        throw new Error(`${name}'s THIRD-PARTY-NOTICES.md does not list the crates its binary links`)
      }
    }
  })

  files(app, {
    'cjs.cjs': `
      const pkg = require('${NAME}')
      const { createWorkspaceTools } = require('${NAME}/workspace-tools')
      console.log(JSON.stringify({ exports: Object.keys(pkg).filter((n) => !n.startsWith('__')).sort(), tools: typeof createWorkspaceTools }))`,
    'esm.mjs': `
      import * as pkg from '${NAME}'
      import { createWorkspaceTools } from '${NAME}/workspace-tools'
      console.log(JSON.stringify({ exports: Object.keys(pkg).sort(), tools: typeof createWorkspaceTools }))`,
    'run.mjs': `
      import { SESExecutor } from '${NAME}'
      const executor = await SESExecutor.create({ timeoutMs: 5000 })
      await executor.sendTools({ add: (a, b) => a + b, price: async (item) => ({ apple: 3, pear: 4.5 })[item] })
      const out = await executor.run('const total = add(await price("apple"), await price("pear")); console.log("total", total); final_answer(total)')
      await executor.cleanup()
      console.log(JSON.stringify({ ...out, state: executor.state }))`,
    'worker.mjs': `
      import { Worker } from 'node:worker_threads'
      const code = "const { parentPort } = require('node:worker_threads'); const { SESExecutor } = require('${NAME}');" +
        "SESExecutor.create().then(async (e) => { const out = await e.run('6 * 7'); await e.cleanup(); parentPort.postMessage(out.output) })"
      const worker = new Worker(code, { eval: true })
      worker.once('message', (output) => { console.log(JSON.stringify({ output })); worker.terminate() })
      worker.once('error', (error) => { console.error(error); process.exit(1) })`,
    'executor.test.mjs': `
      import { expect, test } from 'vitest'
      import { SESExecutor } from '${NAME}'
      test('runs code in the sandbox', async () => {
        const executor = await SESExecutor.create()
        await executor.sendTools({ double: async (x) => x * 2 })
        const out = await executor.run('final_answer(await double(21))')
        expect(out).toMatchObject({ output: 42, is_final_answer: true })
        await executor.cleanup()
        expect(executor.state).toBe('DEAD')
      })`,
    'executor.jest.test.cjs': `
      const { ExecutorError, SESExecutor } = require('${NAME}')
      test('runs code in the sandbox', async () => {
        const executor = await SESExecutor.create({ maxOperations: 100 })
        expect((await executor.run('[1, 2, 3].map((x) => x * 2)')).output).toEqual([2, 4, 6])
        await expect(executor.run('while (true) {}')).rejects.toBeInstanceOf(ExecutorError)
        await executor.cleanup()
        expect(executor.state).toBe('DEAD')
      })`,
    'jest.config.cjs': `module.exports = { testMatch: ['<rootDir>/*.jest.test.cjs'], testEnvironment: 'node' }`,
    'typed.mts': `
      import { SESExecutor, codeAgentSetup, type CodeOutput, type ExecutorOptions } from '${NAME}'
      import { createWorkspaceTools } from '${NAME}/workspace-tools'
      const options: ExecutorOptions = { timeoutMs: 1000 }
      const executor: SESExecutor = await SESExecutor.create(options)
      const out: CodeOutput = await executor.run('1')
      const setup = await codeAgentSetup({ tools: [], executorOptions: options })
      const tags: [string, string] = setup.code_block_tags
      void out, tags, createWorkspaceTools`,
    'typed.cts': `
      import pkg = require('${NAME}')
      const executor: Promise<pkg.SESExecutor> = pkg.SESExecutor.create()
      void executor`,
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'ESNext.Disposable'], strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
      files: ['typed.mts', 'typed.cts'],
    }),
  })

  section(`using ${NAME} from ${app}`)
  const EXPORTS = ['CODE_AGENT_EXAMPLES', 'CODE_AGENT_SYSTEM_PROMPT', 'ExecutorError', 'FileStore', 'MemoryStore', 'PauseRequest', 'SESExecutor', 'SessionError', 'SessionPool', 'codeAgentSetup', 'createRunJavaScriptTool', 'enginePoolStats', 'pauseRun', 'prepareProgram', 'renderToolsPrompt', 'setEngineThreads', 'validateCode']
  check('require() of the package and of ./workspace-tools', () => {
    const out = json(node(app, ['cjs.cjs']))
    for (const name of EXPORTS) if (!out.exports.includes(name)) throw new Error(`no export ${name}: ${out.exports}`)
    equal(out.tools, 'function')
  })
  check('import of the package and of ./workspace-tools', () => {
    const out = json(node(app, ['esm.mjs']))
    equal(out.exports, [...EXPORTS, 'default'].sort())
    equal(out.tools, 'function')
  })
  check('./bullmq without its optional peers (bullmq, ioredis) fails naming them; the main entry does not need them', () => {
    const probe = `try { require('${NAME}/bullmq'); console.log('loaded') } catch (e) { console.log(e.message) }`
    const message = run(process.execPath, ['-e', probe], app).stdout.trim()
    if (!message.includes('needs the packages bullmq and ioredis')) throw new Error(message)
    const pool = run(process.execPath, ['-e', `const { SessionPool, MemoryStore } = require('${NAME}'); new SessionPool({ maxLive: 1, store: new MemoryStore() }).run('s', '6 * 7').then((o) => console.log(o.output))`], app)
    equal(pool.stdout.trim(), '42')
  })
  check('a run with a sync and an async tool ends in final_answer', () => {
    const { output, logs, is_final_answer, state } = json(node(app, ['run.mjs']))
    equal({ output, logs, is_final_answer, state }, { output: 7.5, logs: 'total 7.5', is_final_answer: true, state: 'DEAD' })
  })
  check('npx ses-exec runs standard input', () => {
    const result = mustRun(npx, ['--no-install', 'ses-exec', '-'], app, { input: 'console.log(6 * 7)\nfinal_answer("done")\n' })
    if (!result.stdout.includes('42') || !result.stdout.includes('done')) throw new Error(`stdout: ${result.stdout}`)
    const stderr = result.stderr.split('\n').filter((line) => line.trim() !== '' && !MACHINE_CONFIG.test(line))
    if (stderr.length > 0) throw new Error(`stderr: ${stderr.join('\n')}`)
  })
  check('a Vitest test file', () => mustRun(npx, ['--no-install', 'vitest', 'run', 'executor.test.mjs'], app))
  check('a Jest test file', () => mustRun(npx, ['--no-install', 'jest', '-c', 'jest.config.cjs'], app))
  check('a worker_threads load', () => equal(json(node(app, ['worker.mjs'])), { output: 42 }))
  check('the typings, from CommonJS and ES modules, under tsc', () => mustRun(npx, ['--no-install', 'tsc', '-p', 'tsconfig.json'], app))

  section('a project without the platform package')
  const bare = project('no-binary')
  npmInstall(bare, [tarballPath(main)])
  check('require() fails with the platform, what was tried, and how to build from source', () => {
    const result = run(process.execPath, ['-e', `try { require('${NAME}') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`], bare)
    const { code, message } = json(result.stdout)
    equal(code, 'ERR_SES_EXECUTOR_NO_BINARY')
    for (const tarball of platforms) {
      const triple = tarball.name.slice(NAME.length + 1)
      if (!message.includes(`this platform, ${triple}`) || !message.includes(tarball.name)) throw new Error(message)
    }
    if (!/To build it from source \(Rust [^)]*\): npm install /.test(message)) throw new Error(message)
    console.log(message.replace(/^/gm, '    | '))
  })
} finally {
  const failed = results.filter((result) => !result.ok)
  if (failed.length === 0) rmSync(work, { recursive: true, force: true })
  else console.log(`\nkept ${work} for inspection`)
  console.log(`\n${results.length - failed.length} passed, ${failed.length} failed`)
  process.exitCode = failed.length === 0 && results.length > 0 ? 0 : 1
}

/** README.md, CONTRIBUTING.md and the pages of docs/. */
function docPages() {
  const pages = ['README.md', 'CONTRIBUTING.md']
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.md')) pages.push(rel)
    }
  }
  walk('docs')
  return pages
}

function section(title) {
  console.log(`\n== ${title}`)
}

function check(name, body) {
  try {
    body()
    results.push({ name, ok: true })
    console.log(`  ok    ${name}`)
  } catch (error) {
    results.push({ name, ok: false })
    console.log(`  FAIL  ${name}\n${String(error?.stack ?? error).replace(/^/gm, '        ')}`)
  }
}

function project(name) {
  const dir = path.join(work, name)
  mkdirSync(dir)
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', private: true }, null, 2)}\n`)
  return dir
}

function files(dir, contents) {
  for (const [name, text] of Object.entries(contents)) writeFileSync(path.join(dir, name), `${text.trim()}\n`)
}

function npmInstall(dir, specs) {
  console.log(`$ npm install ${specs.map((spec) => (spec.endsWith('.tgz') ? path.basename(spec) : spec)).join(' ')}   (in ${dir})`)
  const result = mustRun(npm, ['install', '--no-audit', '--no-fund', ...specs], dir)
  process.stdout.write(result.stdout.replace(/^/gm, '    '))
  process.stdout.write(result.stderr.replace(/^/gm, '    '))
  return result
}

/** npm's warnings about this package (an install script, an engine, a deprecation, a peer). */
function noWarningsOfOurs({ stdout, stderr }) {
  const ours = `${stdout}\n${stderr}`.split('\n').filter((line) => /\bwarn\b/i.test(line) && line.includes(NAME))
  if (ours.length > 0) throw new Error(ours.join('\n'))
}

function node(cwd, args) {
  return mustRun(process.execPath, args, cwd).stdout
}

function mustRun(command, args, cwd, options = {}) {
  const result = run(command, args, cwd, options)
  if (result.status !== 0) {
    throw new Error(`${path.basename(command)} ${args.join(' ')} exited ${result.status ?? result.signal}\n${result.stdout ?? ''}${result.stderr ?? ''}`)
  }
  return result
}

function run(command, args, cwd, { input, stdio } = {}) {
  return spawnSync(command, args, {
    cwd,
    env: USER_ENV,
    input,
    stdio: stdio ?? 'pipe',
    encoding: 'utf8',
    timeout: 600_000,
    // npm.cmd / npx.cmd run only through a shell on Windows; node itself must not (its path has a space).
    shell: command.endsWith('.cmd'),
  })
}

function tryResolve(dir, specifier) {
  try {
    return createRequire(path.join(dir, 'package.json')).resolve(specifier)
  } catch {
    return undefined
  }
}

function json(text) {
  return JSON.parse(text.trim().split('\n').at(-1))
}

function equal(actual, expected) {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) throw new Error(`expected ${e}, got ${a}`)
}
