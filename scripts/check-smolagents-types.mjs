#!/usr/bin/env node
// `node scripts/check-smolagents-types.mjs <smolagents-ts checkout>` (or SMOLAGENTS_TS_DIR): checks
// this package against smolagents-ts's own sources, which its tests cannot use (smolagents-ts is
// not on the npm registry; the always-on tests use the stand-in in __test__/stand-ins/). `.ci/run`
// runs it when SMOLAGENTS_TS_DIR is set.
//
// 1. Types. Every TypeScript block of README.md and docs/ marked `<!-- test: name -->` is
//    compiled against smolagents-ts's `src/` with smolagents-ts's own tsconfig and compiler, as a
//    user's file beside its sources would be; and every declaration the stand-in
//    (__test__/stand-ins/smolagents-ts/*.d.ts) exports must be assignable both ways with the real
//    one of that name (for an interface, the members the stand-in declares; for a class, its
//    public members: private ones make a class nominal, which is checked apart: an SESExecutor
//    is refused as CodeAgent's executor, and a plain object as a Tool, by both). The compiler's
//    output is printed as it is; errors in smolagents-ts's own files are its own, and only
//    errors in the files written here fail the check.
// 2. Behaviour. smolagents-ts's CodeAgent (its `src/`, bundled with esbuild) runs a scripted
//    model over an executor from `codeAgentSetup`: a step's error must name the model's own line,
//    and with `stepImages` the canvas a step drew must reach the model's next request as an
//    image content part.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const standIn = path.join(root, '__test__', 'stand-ins', 'smolagents-ts')

const checkout = path.resolve(process.argv[2] ?? process.env.SMOLAGENTS_TS_DIR ?? '')
if (!process.argv[2] && !process.env.SMOLAGENTS_TS_DIR) {
  console.error('usage: node scripts/check-smolagents-types.mjs <path to a smolagents-ts checkout>')
  process.exit(64)
}
for (const needed of ['src/index.ts', 'tsconfig.json', 'package.json']) {
  if (!existsSync(path.join(checkout, needed))) {
    console.error(`${checkout} is no smolagents-ts checkout: ${needed} is missing`)
    process.exit(64)
  }
}
if (!existsSync(path.join(checkout, 'node_modules', 'typescript'))) {
  console.log(`installing smolagents-ts's dependencies in ${checkout} (npm install --ignore-scripts)`)
  execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: checkout, stdio: 'inherit' })
}
const { version } = JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8'))
const commit = gitHead(checkout)
console.log(`smolagents-ts ${version}${commit ? ` at ${commit}` : ''} (${checkout})`)

const scratch = mkdtempSync(path.join(tmpdir(), 'ses-smolagents-types-'))
let failed = false
try {
  failed = checkTypes() || failed
  failed = (await checkBehaviour()) || failed
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
console.log(failed ? '\nFAILED' : '\nOK: the docs\' swap-in compiles against smolagents-ts, the stand-in agrees with it, and CodeAgent runs as the docs say')
process.exit(failed ? 1 : 0)

function gitHead(dir) {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return ''
  }
}

/** The TypeScript blocks of the docs marked `<!-- test: name -->`, by name. */
function typescriptBlocks() {
  const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  const blocks = []
  for (const page of pages) {
    const text = readFileSync(path.join(root, page), 'utf8')
    for (const match of text.matchAll(/<!-- test: (\S+) -->\n```(?:ts|typescript)\n([\s\S]*?)\n```/g)) {
      blocks.push({ page, name: match[1], code: match[2] })
    }
  }
  return blocks
}

/** The stand-in's exported declarations: name, kind, and the module ('' or 'models') that has it. */
function standInExports(ts) {
  const found = []
  for (const [file, module] of [
    ['index.d.ts', ''],
    ['models.d.ts', 'models'],
  ]) {
    const source = ts.createSourceFile(file, readFileSync(path.join(standIn, file), 'utf8'), ts.ScriptTarget.Latest, true)
    for (const statement of source.statements) {
      const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      if (!exported || !statement.name) continue
      const kind = ts.isClassDeclaration(statement)
        ? 'class'
        : ts.isInterfaceDeclaration(statement)
          ? 'interface'
          : ts.isTypeAliasDeclaration(statement)
            ? 'type'
            : undefined
      if (kind) found.push({ name: statement.name.text, kind, module })
    }
  }
  return found
}

/** The file that holds each stand-in declaration against the real one. */
function agreementFile(declarations) {
  const modules = { '': ['Real', 'StandIn'], models: ['RealModels', 'StandInModels'] }
  const lines = [
    "import type * as Real from 'smolagents-ts'",
    "import type * as RealModels from 'smolagents-ts/models'",
    `import type * as StandIn from '${path.join(standIn, 'index.js')}'`,
    `import type * as StandInModels from '${path.join(standIn, 'models.js')}'`,
    "import type { SESExecutor } from '@smolagents-ts/ses-executor'",
    '',
    '/** A class\'s public members (private and protected ones make it nominal). */',
    'type Public<T> = { [K in keyof T]: T[K] }',
    '/** What the stand-in declares that the real one lacks: must be `never`. */',
    'type Missing<S, R> = Exclude<keyof S, keyof R>',
    'const none = <T extends never>(): T[] => []',
    '',
  ]
  for (const { name, kind, module } of declarations) {
    const [real, ours] = modules[module]
    const r = `${real}.${name}`
    const s = `${ours}.${name}`
    if (name === 'CodeAgentConfig') {
      // The executor is the nominal PyodideExecutor: its public members here, nominality below.
      lines.push(
        `export const ${name}_members = none<Missing<${s}, ${r}>>()`,
        `export const ${name}_toStandIn = (x: Omit<${r}, 'executor'>): Omit<${s}, 'executor'> => x`,
        `export const ${name}_toReal = (x: Omit<${s}, 'executor'>): Pick<${r}, Exclude<keyof ${s}, 'executor'>> => x`,
        `export const ${name}_executorToStandIn = (x: Public<NonNullable<${r}['executor']>>): Public<NonNullable<${s}['executor']>> => x`,
        `export const ${name}_executorToReal = (x: Public<NonNullable<${s}['executor']>>): Public<NonNullable<${r}['executor']>> => x`,
      )
    } else if (kind === 'type') {
      lines.push(`export const ${name}_toStandIn = (x: ${r}): ${s} => x`, `export const ${name}_toReal = (x: ${s}): ${r} => x`)
    } else {
      const [R, S] = kind === 'class' ? [`Public<${r}>`, `Public<${s}>`] : [r, s]
      lines.push(
        `export const ${name}_members = none<Missing<${S}, ${R}>>()`,
        `export const ${name}_toStandIn = (x: ${R}): ${S} => x`,
        `export const ${name}_toReal = (x: ${S}): Pick<${R}, keyof ${S} & keyof ${R}> => x`,
      )
    }
  }
  lines.push(
    '',
    'export function nominal(executor: SESExecutor, forward: () => Promise<unknown>): unknown[] {',
    '  // @ts-expect-error CodeAgent\'s executor is the nominal PyodideExecutor upstream…',
    "  const real: NonNullable<Real.CodeAgentConfig['executor']> = executor",
    '  // @ts-expect-error …and in the stand-in',
    "  const ours: NonNullable<StandIn.CodeAgentConfig['executor']> = executor",
    "  const plain = { name: 'now', description: 'The time.', inputs: {}, forward }",
    "  // @ts-expect-error a plain object is no Tool upstream (it has no to_dict)…",
    '  const realTool: Real.Tool = plain',
    '  // @ts-expect-error …nor in the stand-in',
    '  const ourTool: StandIn.Tool = plain',
    '  return [real, ours, realTool, ourTool]',
    '}',
  )
  return `${lines.join('\n')}\n`
}

function checkTypes() {
  const require = createRequire(path.join(checkout, 'package.json'))
  const ts = require('typescript')
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')
  const files = []
  for (const block of typescriptBlocks()) {
    const file = path.join(scratch, `${block.name}.ts`)
    writeFileSync(file, `${block.code}\n`)
    files.push(file)
    console.log(`checking ${block.page} block "${block.name}"`)
  }
  const declarations = standInExports(ts)
  const agreement = path.join(scratch, 'stand-in-agreement.ts')
  writeFileSync(agreement, agreementFile(declarations))
  files.push(agreement)
  console.log(`checking the stand-in's ${declarations.length} declarations against smolagents-ts's: ${declarations.map((d) => d.name).join(', ')}`)
  const tsconfig = path.join(scratch, 'tsconfig.json')
  writeFileSync(
    tsconfig,
    JSON.stringify(
      {
        extends: path.join(checkout, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          types: ['node'],
          typeRoots: [path.join(checkout, 'node_modules', '@types')],
          paths: {
            'smolagents-ts': [path.join(checkout, 'src', 'index.ts')],
            'smolagents-ts/models': [path.join(checkout, 'src', 'models', 'index.ts')],
            '@smolagents-ts/ses-executor': [path.join(root, 'index.d.mts')],
          },
        },
        include: [],
        files,
      },
      null,
      2,
    ),
  )
  console.log(`$ tsc -p <scratch>/tsconfig.json (TypeScript ${ts.version}, extends ${path.join(checkout, 'tsconfig.json')})`)
  let output = ''
  try {
    output = execFileSync(process.execPath, [tsc, '-p', tsconfig, '--pretty', 'false'], { cwd: scratch, encoding: 'utf8' })
  } catch (error) {
    output = `${error.stdout ?? ''}${error.stderr ?? ''}`
  }
  const text = output.trim()
  console.log(text === '' ? '(no output: no errors)' : text)
  const errors = text.split('\n').filter((line) => /error TS\d+/.test(line))
  const inCheckout = (line) => {
    const file = /^(.+?)\(\d+,\d+\): error/.exec(line)?.[1]
    return file !== undefined && path.resolve(scratch, file).startsWith(`${checkout}${path.sep}`)
  }
  const upstream = errors.filter(inCheckout)
  const ours = errors.filter((line) => !inCheckout(line))
  if (upstream.length > 0) console.log(`${upstream.length} error(s) in smolagents-ts's own sources (its own, not checked here)`)
  if (ours.length > 0) console.log(`${ours.length} error(s) in the docs' blocks or the stand-in's agreement`)
  return ours.length > 0
}

async function checkBehaviour() {
  // Bundled into the checkout's node_modules, so that its own dependencies resolve from there.
  const out = path.join(checkout, 'node_modules', '.ses-executor-check')
  mkdirSync(out, { recursive: true })
  const bundle = path.join(out, 'smolagents-ts.mjs')
  const esbuild = path.join(root, 'node_modules', '.bin', 'esbuild')
  try {
    execFileSync(esbuild, [path.join(checkout, 'src', 'index.ts'), '--bundle', '--platform=node', '--format=esm', '--packages=external', '--log-level=warning', `--outfile=${bundle}`], { stdio: 'inherit' })
    const smolagents = await import(pathToFileURL(bundle).href)
    const { codeAgentSetup } = createRequire(import.meta.url)(path.join(root, 'index.js'))
    return (await lineCheck(smolagents, codeAgentSetup)) || (await imageCheck(smolagents, codeAgentSetup))
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** A model that answers with `replies` in turn and hands each request's messages to `seen`. */
function scriptedModel({ BaseModel }, replies, seen) {
  return new (class extends BaseModel {
    async generate(messages) {
      seen.push(messages)
      return { role: 'assistant', content: replies[seen.length - 1] ?? replies.at(-1) }
    }
  })()
}

async function lineCheck(smolagents, codeAgentSetup) {
  const setup = await codeAgentSetup()
  const reply = 'Thought: read a missing property.\n```js\nconst ok = { a: 1 };\nconst bad = ok.missing.deeper;\n```'
  const agent = new smolagents.CodeAgent({ model: scriptedModel(smolagents, [reply], []), tools: [], verbosity_level: 3, ...setup })
  let message = ''
  try {
    await agent.run('Fail on line 2.')
  } catch (error) {
    message = String(error?.message)
  } finally {
    await agent.cleanup()
  }
  const ok = message.includes('(line 2: const bad = ok.missing.deeper;)')
  console.log(`CodeAgent step error: ${message}\n  names the model's line 2: ${ok ? 'yes' : 'NO'}`)
  return !ok
}

async function imageCheck(smolagents, codeAgentSetup) {
  const setup = await codeAgentSetup({ stepImages: true })
  const draw = 'Thought: draw.\n```js\nconst canvas = getCanvas(8, 8);\ncanvas.getContext("2d").fillRect(0, 0, 8, 8);\n"drawn"\n```'
  const answer = 'Thought: done.\n```js\nfinal_answer("seen")\n```'
  const seen = []
  const agent = new smolagents.CodeAgent({ model: scriptedModel(smolagents, [draw, answer], seen), tools: [], verbosity_level: 3, ...setup })
  try {
    await agent.run('Draw a square.')
  } finally {
    await agent.cleanup()
  }
  const parts = (seen[1] ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image') : []))
  const ok = parts.length === 1 && parts[0].image.startsWith('data:image/png;base64,')
  console.log(`CodeAgent's second request holds the step's image as an ImageContentPart: ${ok ? 'yes' : 'NO'} (${parts.length} image part(s))`)
  return !ok
}
