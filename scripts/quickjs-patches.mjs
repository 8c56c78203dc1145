#!/usr/bin/env node
// The QuickJS patch queue (vendor/quickjs-patches) as a stack of git commits, quilt / `git am`
// style: one commit per patch on top of the pristine sources (vendor/rquickjs-sys/quickjs), in
// a scratch repository under target/ that nothing else reads. The patch files stay the source of
// truth; this script only moves them in and out of git. docs/quickjs-patches.md says how to use
// it. Node and git only: the work is git's (apply, 3-way merge, diff); this script keeps the
// queue's order, names and headers.
//
//   apply [--upto NNNN]     the queue (or up to patch NNNN) onto the pristine sources
//   refresh                 write the patch files back from the scratch repository's commits
//   rebase <quickjs dir>    replay the queue onto another QuickJS source tree (3-way)
//   rebase --continue       after resolving a conflict; rebase --abort gives up
//   check                   every patch is in the queue's format and applies in order with
//                           the build's applier (vendor/rquickjs-sys/patch_queue.rs)
//
// Options: --work <dir> (default target/quickjs-queue), --force (replace a scratch repository
// whose commits were not written back).

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PATCHES = path.join(ROOT, 'vendor/quickjs-patches')
const PRISTINE = path.join(ROOT, 'vendor/rquickjs-sys/quickjs')
const CHECKER = path.join(ROOT, 'scripts/quickjs-patches-check')
// The queue's state in the scratch repository: the patches it holds, and a rebase under way.
const STATE = '.git/quickjs-queue.json'
const BASE_TAG = 'queue-base'

class QueueError extends Error {}

function git(work, args, options = {}) {
  const result = spawnSync('git', args, {
    cwd: work,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    input: options.input,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' },
  })
  if (result.error) throw result.error
  if (result.status !== 0 && !options.allowFailure) {
    throw new QueueError(`git ${args.join(' ')} (in ${work}):\n${result.stderr}${result.stdout}`)
  }
  return options.allowFailure ? result : result.stdout
}

/** The patch files, in the order the build applies them (by name). */
function patchNames() {
  return fs
    .readdirSync(PATCHES)
    .filter((name) => name.endsWith('.patch'))
    .sort()
}

/**
 * A patch file as its header (the prose before the first file's diff, trailing blank lines
 * dropped) and its diffs per file. Reads the queue's format and, so that a patch written by
 * hand (`diff -u`, `git diff`) can enter the queue, the other usual ones:
 * the file is the last component of the `---` path; `diff --git` and `index` lines are dropped.
 */
function parsePatch(text) {
  const lines = text.split(/(?<=\n)/)
  const isFileStart = (i) => lines[i].startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')
  const first = lines.findIndex((_, i) => isFileStart(i))
  if (first < 0) throw new QueueError('no `--- ` / `+++ ` file lines')
  // A git header (`diff --git`, `index`, mode lines) just before the first file is not prose.
  let headerEnd = first
  while (headerEnd > 0 && /^(diff --git |index |(old|new) mode |similarity )/.test(lines[headerEnd - 1])) {
    headerEnd -= 1
  }
  const header = lines.slice(0, headerEnd).join('').replace(/\s+$/, '')
  const files = []
  for (let i = first; i < lines.length; i += 1) {
    if (isFileStart(i)) {
      const oldPath = lines[i].slice(4).split('\t')[0].trim()
      files.push({ file: oldPath.split('/').pop(), hunks: '' })
      i += 1
    } else if (/^(@@|[ +\-\\\n])/.test(lines[i])) {
      files[files.length - 1].hunks += lines[i]
    }
  }
  return { header, files }
}

/** A patch in the queue's format (what vendor/rquickjs-sys/patch_queue.rs accepts). */
function renderPatch({ header, files }) {
  const diffs = files.map(({ file, hunks }) => `--- a/${file}\n+++ b/${file}\n${hunks}`).join('')
  return `${header}\n\n${diffs}`
}

/** A commit's diff against its parent as `{ file, hunks }` per file, refusing what the build cannot apply. */
function commitFiles(work, commit, name) {
  // Every option that a user's git configuration could change is given, so that the same
  // commits give the same patch files on every machine.
  const diff = git(work, [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-renames',
    '--diff-algorithm=myers',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '-U3',
    `${commit}^`,
    commit,
  ])
  const files = []
  for (const part of diff.split(/^diff --git /m).slice(1)) {
    const lines = part.split(/(?<=\n)/)
    const start = lines.findIndex((line) => line.startsWith('--- '))
    if (start < 0 || !lines[start].startsWith('--- a/') || !lines[start + 1].startsWith('+++ b/')) {
      throw new QueueError(
        `${name}: ${lines[0].trim()}: the build only changes existing text files (no new, deleted, renamed or binary files)`,
      )
    }
    if (lines.slice(0, start).some((line) => /^(old|new) mode /.test(line))) {
      throw new QueueError(`${name}: ${lines[0].trim()}: the build cannot change a file's mode`)
    }
    files.push({ file: lines[start].slice(6).trim(), hunks: lines.slice(start + 2).join('') })
  }
  return files
}

function readState(work) {
  const file = path.join(work, STATE)
  if (!fs.existsSync(file)) throw new QueueError(`${work} is not a queue's scratch repository: run \`apply\` first`)
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

function writeState(work, state) {
  fs.writeFileSync(path.join(work, STATE), `${JSON.stringify(state, null, 2)}\n`)
}

/** The queue's commits, oldest first: `{ commit, name }` (the subject is the patch's file name). */
function queueCommits(work) {
  const log = git(work, ['log', '--reverse', '--format=%H %s', `${BASE_TAG}..HEAD`])
  return log
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [commit, subject] = [line.slice(0, 40), line.slice(41)]
      return { commit, name: `${subject}.patch` }
    })
}

/** The patch file each commit gives, header from the file on disk (kept verbatim) or, for a new patch, the commit's body. */
function renderCommits(work) {
  return queueCommits(work).map(({ commit, name }) => {
    const file = path.join(PATCHES, name)
    const header = fs.existsSync(file)
      ? parsePatch(fs.readFileSync(file, 'utf8')).header
      : git(work, ['log', '-1', '--format=%b', commit]).replace(/\s+$/, '')
    return { name, text: renderPatch({ header, files: commitFiles(work, commit, name) }) }
  })
}

/** Patches whose file differs from what the scratch repository's commits give. */
function unwritten(work) {
  if (!fs.existsSync(path.join(work, STATE))) return []
  const state = readState(work)
  if (state.rebase) return ['(a rebase is under way)']
  const dirty = git(work, ['status', '--porcelain', '--untracked-files=no']).trim()
  const changed = renderCommits(work)
    .filter(({ name, text }) => {
      const file = path.join(PATCHES, name)
      return !fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text
    })
    .map(({ name }) => name)
  const dropped = state.patches.filter((name) => !queueCommits(work).some((c) => c.name === name))
  return [...(dirty ? ['(uncommitted changes)'] : []), ...changed, ...dropped.map((name) => `${name} (dropped)`)]
}

function commitPatch(work, name, header) {
  const message = path.join(work, '.git/QUEUE_MSG')
  fs.writeFileSync(message, `${name.replace(/\.patch$/, '')}\n\n${header}\n`)
  git(work, ['commit', '-q', '--no-verify', '--cleanup=verbatim', '-F', message])
}

/** A new scratch repository: the pristine sources as its first commit (tagged), then the queue. */
function freshWork(work, { force, upto }) {
  const pending = unwritten(work)
  if (pending.length > 0 && !force) {
    throw new QueueError(
      `${work} holds work not written back to vendor/quickjs-patches:\n  ${pending.join('\n  ')}\n` +
        'Run `refresh` first, or pass --force to throw it away.',
    )
  }
  const foreign = fs.existsSync(work) && fs.readdirSync(work).length > 0 && !fs.existsSync(path.join(work, STATE))
  if (foreign && !force) throw new QueueError(`${work} exists and is not a queue's scratch repository; pass --force to replace it`)
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  git(work, ['init', '-q', '-b', 'queue'])
  git(work, ['config', 'user.name', 'quickjs-patches'])
  git(work, ['config', 'user.email', 'quickjs-patches@localhost'])
  git(work, ['config', 'core.autocrlf', 'false'])
  git(work, ['config', 'commit.gpgsign', 'false'])
  for (const file of fs.readdirSync(PRISTINE)) {
    fs.copyFileSync(path.join(PRISTINE, file), path.join(work, file))
  }
  git(work, ['add', '-A'])
  git(work, ['commit', '-q', '-m', 'pristine: vendor/rquickjs-sys/quickjs'])
  git(work, ['tag', BASE_TAG])
  const names = patchNames()
  const last = upto ? names.findIndex((name) => name.startsWith(upto)) : names.length - 1
  if (last < 0) throw new QueueError(`no patch named ${upto}*`)
  const state = { patches: [] }
  for (const name of names.slice(0, last + 1)) {
    const patch = parsePatch(fs.readFileSync(path.join(PATCHES, name), 'utf8'))
    const applied = git(work, ['apply', '--index', '--whitespace=nowarn', '-'], {
      input: renderPatch(patch),
      allowFailure: true,
    })
    if (applied.status !== 0) {
      writeState(work, state)
      throw new QueueError(`${name} does not apply on top of the patches before it:\n${applied.stderr}`)
    }
    commitPatch(work, name, patch.header)
    state.patches.push(name)
  }
  writeState(work, state)
  return state
}

function cmdApply(work, options) {
  const state = freshWork(work, options)
  console.log(`${work}: pristine sources (tag ${BASE_TAG}) and ${state.patches.length} patches, one commit each.`)
  console.log('Edit with git there (commit --amend, rebase -i, a new commit whose subject is the new')
  console.log('patch\'s file name without .patch), then run `refresh` to write the patch files.')
}

function cmdRefresh(work) {
  const state = readState(work)
  if (state.rebase) throw new QueueError('a rebase is under way: `rebase --continue` or `rebase --abort` first')
  if (git(work, ['status', '--porcelain', '--untracked-files=no']).trim()) {
    throw new QueueError(`${work} has uncommitted changes: commit (or amend) them first`)
  }
  const rendered = renderCommits(work)
  let written = 0
  for (const { name, text } of rendered) {
    const file = path.join(PATCHES, name)
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) continue
    fs.writeFileSync(file, text)
    written += 1
    console.log(`wrote    ${name}`)
  }
  for (const name of state.patches) {
    if (!rendered.some((patch) => patch.name === name)) {
      fs.rmSync(path.join(PATCHES, name))
      console.log(`removed  ${name}`)
    }
  }
  writeState(work, { patches: rendered.map(({ name }) => name) })
  console.log(`${written} patch files written, ${rendered.length} in the scratch repository.`)
}

/** The QuickJS files the build uses: those vendored now. */
function vendoredFiles() {
  return fs.readdirSync(PRISTINE).sort()
}

function cmdRebase(work, source, options) {
  if (source === '--continue' || source === '--abort') {
    const state = readState(work)
    if (!state.rebase) throw new QueueError('no rebase under way')
    if (source === '--abort') {
      delete state.rebase
      writeState(work, state)
      console.log(`Rebase abandoned; vendor/ is unchanged. ${work} is left as it is (run \`apply --force\` to start over).`)
      return
    }
    const conflicted = git(work, ['diff', '--name-only', '--diff-filter=U']).trim()
    const markers = git(work, ['diff', '--check', 'HEAD'], { allowFailure: true }).stdout
    if (conflicted || /conflict marker/.test(markers)) {
      throw new QueueError(`still conflicted (resolve, then \`git add\`):\n${conflicted}${markers}`)
    }
    const current = state.rebase.todo.shift()
    git(work, ['add', '-u'])
    git(work, ['commit', '-q', '--no-verify', '--allow-empty', '--cleanup=verbatim', '-C', current.commit])
    state.rebase.outcomes.push({ name: current.name, outcome: 'conflict, resolved by hand' })
    writeState(work, state)
    return replay(work, state)
  }
  if (!source || !fs.existsSync(source)) throw new QueueError('usage: rebase <quickjs source dir>')
  const started = Date.now()
  freshWork(work, options)
  const todo = queueCommits(work)
  // The new sources go in as a child of the old ones, so that every old blob is in the
  // repository: `git apply --3way` then merges a hunk that no longer applies as text.
  git(work, ['checkout', '-q', '-b', 'upstream', BASE_TAG])
  const missing = []
  for (const file of vendoredFiles()) {
    const from = path.join(source, file)
    if (fs.existsSync(from)) fs.copyFileSync(from, path.join(work, file))
    else missing.push(file)
  }
  if (missing.length > 0) throw new QueueError(`${source} lacks ${missing.join(', ')}`)
  git(work, ['commit', '-q', '--allow-empty', '-am', `upstream: ${path.resolve(source)}`])
  git(work, ['tag', '-f', BASE_TAG])
  git(work, ['branch', '-q', '-f', 'old-queue', 'queue'])
  git(work, ['checkout', '-q', '-B', 'queue', 'upstream'])
  const state = readState(work)
  state.rebase = { source: path.resolve(source), started, todo, outcomes: [] }
  writeState(work, state)
  replay(work, state)
}

/** Replays the rest of the rebase's queue: as text first (what the build would do), then 3-way. */
function replay(work, state) {
  const { rebase } = state
  while (rebase.todo.length > 0) {
    const { commit, name } = rebase.todo[0]
    const diff = git(work, ['diff', '--full-index', '--no-color', '--no-ext-diff', '--no-renames', '--src-prefix=a/', '--dst-prefix=b/', `${commit}^`, commit])
    let outcome
    const asText = git(work, ['apply', '--index', '--whitespace=nowarn', '-'], { input: diff, allowFailure: true })
    if (asText.status === 0) {
      outcome = 'applied'
    } else {
      const merged = git(work, ['apply', '--index', '--3way', '--whitespace=nowarn', '-'], {
        input: diff,
        allowFailure: true,
      })
      if (merged.status !== 0) {
        writeState(work, state)
        console.log(rebase.outcomes.map((o) => `${o.outcome.padEnd(28)} ${o.name}`).join('\n'))
        throw new QueueError(
          `CONFLICT in ${name}:\n${merged.stderr}\n` +
            `Resolve it in ${work}: edit the files with conflict markers (\`git diff\` shows them; ` +
            `\`git show ${commit.slice(0, 12)}\` is the patch as it was), \`git add\` them, then run\n` +
            '  node scripts/quickjs-patches.mjs rebase --continue\n' +
            '(or `rebase --abort`). Nothing under vendor/ has changed yet.',
        )
      }
      outcome = 'merged (3-way)'
    }
    git(work, ['commit', '-q', '--no-verify', '--allow-empty', '--cleanup=verbatim', '-C', commit])
    rebase.outcomes.push({ name, outcome })
    rebase.todo.shift()
    writeState(work, state)
  }
  // Every patch is in: the new sources become the vendored ones, and the queue is written back.
  for (const file of vendoredFiles()) {
    fs.copyFileSync(path.join(rebase.source, file), path.join(PRISTINE, file))
  }
  delete state.rebase
  writeState(work, state)
  cmdRefresh(work)
  const minutes = ((Date.now() - rebase.started) / 60000).toFixed(1)
  console.log(rebase.outcomes.map((o) => `${o.outcome.padEnd(28)} ${o.name}`).join('\n'))
  console.log(`\nThe queue is on ${rebase.source} (${minutes} min since \`rebase\` started);`)
  console.log('vendor/rquickjs-sys/quickjs now holds its files. Next: `check`, then')
  console.log('`cargo test --lib loop_inventory` (re-read the rows it names) and the full suite.')
  // A header or source the new sources include that the build does not copy yet.
  const vendored = vendoredFiles()
  const included = new Set(
    vendored.flatMap((file) => [...fs.readFileSync(path.join(PRISTINE, file), 'latin1').matchAll(/^#\s*include\s+"([^"]+)"/gm)].map((m) => m[1])),
  )
  const missing = [...included].filter((file) => !vendored.includes(file))
  if (missing.length > 0) {
    console.log(`Included by the new sources but not vendored (copy them, and list them in vendor/rquickjs-sys/build.rs): ${missing.join(', ')}`)
  }
}

function cmdCheck() {
  const target = path.join(ROOT, 'target/quickjs-patches-check')
  const built = spawnSync(
    'cargo',
    ['build', '--quiet', '--release', '--manifest-path', path.join(CHECKER, 'Cargo.toml'), '--target-dir', target],
    { stdio: 'inherit' },
  )
  if (built.status !== 0) throw new QueueError('could not build scripts/quickjs-patches-check')
  const out = path.join(target, 'patched')
  fs.rmSync(out, { recursive: true, force: true })
  const result = spawnSync(path.join(target, 'release/quickjs-patches-check'), [PATCHES, PRISTINE, out], {
    stdio: 'inherit',
  })
  if (result.status !== 0) throw new QueueError("the queue does not apply with the build's applier")
  // The files are what `refresh` would write: the format holds, whoever wrote them.
  const drift = patchNames().filter((name) => {
    const text = fs.readFileSync(path.join(PATCHES, name), 'utf8')
    return renderPatch(parsePatch(text)) !== text
  })
  if (drift.length > 0) throw new QueueError(`not as \`refresh\` writes them: ${drift.join(', ')}`)
  // git apply (this script) and diffy (the build) must put every hunk at the same place, or
  // what a maintainer edits is not what the build compiles.
  const work = path.join(target, 'queue')
  freshWork(work, { force: true })
  const differ = fs.readdirSync(out).filter((file) => !fs.readFileSync(path.join(work, file)).equals(fs.readFileSync(path.join(out, file))))
  if (differ.length > 0) throw new QueueError(`git apply and the build's applier disagree on ${differ.join(', ')}`)
  console.log(`${patchNames().length} patches apply in order with the build's applier, as \`apply\` applies them.`)
}

function main(argv) {
  const args = [...argv]
  const take = (flag) => {
    const at = args.indexOf(flag)
    if (at < 0) return undefined
    const [, value] = args.splice(at, 2)
    return value
  }
  const work = path.resolve(take('--work') ?? path.join(ROOT, 'target/quickjs-queue'))
  const upto = take('--upto')
  const force = args.includes('--force')
  const rest = args.filter((arg) => arg !== '--force')
  const [command, operand] = rest
  switch (command) {
    case 'apply':
      return cmdApply(work, { force, upto })
    case 'refresh':
      return cmdRefresh(work)
    case 'rebase':
      return cmdRebase(work, operand, { force })
    case 'check':
      return cmdCheck()
    default:
      console.error('usage: node scripts/quickjs-patches.mjs apply [--upto NNNN] | refresh | rebase <quickjs dir> | rebase --continue | rebase --abort | check  [--work DIR] [--force]')
      process.exitCode = 2
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof QueueError)) throw error
    console.error(error.message)
    process.exitCode = 1
  }
}
