// `npm run bench [-- --quick] [-- --only=ses-executor,isolated-vm]`: every peer in a child
// process of its own, one after another, then the machine's floors (floors.mjs), then W5's
// guard overhead from the Rust example, then
// bench/results.json + bench/RESULTS.md (--quick writes *.quick.* files, which git ignores).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { fill, pages } from '../scripts/docs-figures.mjs'
import { render, renderSummary } from './report.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)
const args = process.argv.slice(2)
const quick = args.includes('--quick')
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',')
/** `--note=…`: what the figures cannot show about this run (e.g. a busy machine). */
const note = args.find((a) => a.startsWith('--note='))?.slice('--note='.length)

/** This package first: every other row is read against it. */
const PEERS = ['ses-executor', 'isolated-vm', 'quickjs-emscripten', 'ses', 'node-vm', 'pyodide']
const CHILD_TIMEOUT_MS = quick ? 120_000 : 900_000
/** W15 makes 100,000 sessions before it measures: minutes on a quiet machine, more on a busy one. */
const SEPARATE_TIMEOUT_MS = { W15: quick ? 120_000 : 2_700_000 }

// `--report-only`: render RESULTS.md (and docs/performance.md's quote) again from results.json, measuring
// nothing, e.g. after a change to the report's layout.
if (args.includes('--report-only')) {
  const saved = JSON.parse(readFileSync(path.join(here, `results${quick ? '.quick' : ''}.json`), 'utf8'))
  publish(saved)
  process.exit(0)
}

const started = Date.now()
const machine = {
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.availableParallelism?.() ?? os.cpus().length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  date: new Date().toISOString(),
}
console.log(`bench${quick ? ' --quick' : ''} on ${machine.cpu} × ${machine.cores}, Node ${machine.node}`)

const scratch = mkdtempSync(path.join(os.tmpdir(), 'ses-executor-bench-'))
/**
 * Workloads that each get a fresh child process of their own: W11 reads the whole process's RSS
 * with 10,000 executors live, and what the earlier workloads left (V8's grown heap, allocator
 * arenas, W12's 1,000 executors not yet given back) would count as theirs ("10,000 live
 * executors in one process" is the target); W15 reads it with 100,000 sessions held by one
 * process.
 */
const SEPARATE = ['W11', 'W15']
const peers = []
for (const id of PEERS.filter((p) => !only || only.includes(p))) {
  console.log(`\n== ${id}`)
  const t0 = Date.now()
  const result = runChild(id, path.join(scratch, `${id}.json`), [`--except=${SEPARATE.join(',')}`])
  for (const name of result.skipped ? [] : SEPARATE) {
    const part = runChild(id, path.join(scratch, `${id}-${name}.json`), [`--workloads=${name}`], SEPARATE_TIMEOUT_MS[name])
    result.workloads[name] = part.skipped ? { error: part.skipped } : part.workloads[name]
  }
  result.wallSeconds = (Date.now() - t0) / 1000
  if (result.skipped) console.log(`skipped: ${result.skipped}`)
  peers.push(result)
}
rmSync(scratch, { recursive: true, force: true })

const floors = machineFloors()
const guard = guardOverhead()
const results = { machine, quick, note, wallSeconds: (Date.now() - started) / 1000, peers, floors, guard }
writeFileSync(path.join(here, `results${quick ? '.quick' : ''}.json`), `${JSON.stringify(results, null, 2)}\n`)
publish(results)
console.log(
  `wrote bench/RESULTS${quick ? '.quick' : ''}.md and bench/results${quick ? '.quick' : ''}.json in ` +
    `${results.wallSeconds.toFixed(0)} s`,
)

const failed = peers.flatMap((p) =>
  Object.entries(p.workloads ?? {})
    .filter(([, w]) => w.error)
    .map(([name]) => `${p.peer.id} ${name}`),
)
if (failed.length > 0) {
  console.error(`workloads that failed: ${failed.join(', ')}`)
  process.exitCode = 1
}

/** One child process of a peer (bench/child.mjs): its result, or why it has none. */
function runChild(id, out, selection, timeout = CHILD_TIMEOUT_MS) {
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', path.join(here, 'child.mjs'), id, out, ...selection, ...(quick ? ['--quick'] : [])],
    { stdio: ['ignore', 'inherit', 'inherit'], timeout },
  )
  try {
    return JSON.parse(readFileSync(out, 'utf8'))
  } catch {
    const why = child.error?.message ?? `exit ${child.status ?? child.signal}`
    return { peer: { id, name: id }, skipped: `the child process failed (${why})`, workloads: {} }
  }
}

/**
 * RESULTS.md, printed too; a full run of every peer also refreshes what docs/performance.md
 * quotes and every figure README.md and docs/ mark (scripts/docs-figures.mjs).
 */
function publish(results) {
  const markdown = render(results)
  writeFileSync(path.join(here, `RESULTS${results.quick ? '.quick' : ''}.md`), markdown)
  console.log(`\n${markdown}`)
  if (results.quick || results.peers.length < PEERS.length) return
  const readme = path.join(root, 'docs', 'performance.md')
  const text = readFileSync(readme, 'utf8')
  const [open, close] = ['<!-- bench:start -->', '<!-- bench:end -->']
  const from = text.indexOf(open)
  const to = text.indexOf(close)
  if (from >= 0 && to > from) {
    const quoted = `${open}\n${renderSummary(results, '../')}\n${close}`
    writeFileSync(readme, text.slice(0, from) + quoted + text.slice(to + close.length))
    console.log('updated the results quoted in docs/performance.md')
  }
  // Every figure the docs quote (`<!-- bench: KEY -->`) follows this run.
  for (const page of pages()) {
    const file = path.join(root, page)
    const { text: filled, changes, errors } = fill(readFileSync(file, 'utf8'), results)
    for (const error of errors) console.error(`${page}: ${error}`)
    if (changes.length > 0) {
      writeFileSync(file, filled)
      console.log(`updated ${changes.length} figures in ${page}`)
    }
  }
}

/** What the machine allows any off-thread design (bench/floors.mjs), in a child of its own. */
function machineFloors() {
  console.log('\n== floors of this machine (bench/floors.mjs)')
  const out = path.join(os.tmpdir(), `ses-executor-floors-${process.pid}.json`)
  const child = spawnSync(process.execPath, [path.join(here, 'floors.mjs'), out, ...(quick ? ['--quick'] : [])], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: CHILD_TIMEOUT_MS,
  })
  try {
    return JSON.parse(readFileSync(out, 'utf8'))
  } catch {
    return { skipped: `bench/floors.mjs failed (${child.error?.message ?? `exit ${child.status ?? child.signal}`})` }
  } finally {
    rmSync(out, { force: true })
  }
}

/**
 * W5's guard overhead, measured in Rust on our engine (examples/guard_overhead.rs): the same
 * loop with and without the loop-guard rewrite, which only the `bench-internals` feature can
 * switch off. The full run builds it with the release profile; --quick with the debug one,
 * which only proves it works.
 */
function guardOverhead() {
  console.log('\n== guard overhead (cargo run --features bench-internals --example guard_overhead)')
  // `napi build --platform --release` builds with an explicit `--target`, into
  // target/<triple>/release: naming the same target reuses its dependencies instead of
  // building every crate again with fat LTO.
  const host = /^host: (.+)$/m.exec(spawnSync('rustc', ['-vV'], { encoding: 'utf8' }).stdout ?? '')?.[1]
  const release = quick ? [] : ['--release', ...(host ? ['--target', host] : [])]
  const cargoArgs = ['run', '--quiet', ...release, '--features', 'bench-internals', '--example', 'guard_overhead']
  const run = spawnSync('cargo', [...cargoArgs, '--', ...(quick ? ['--quick'] : [])], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: CHILD_TIMEOUT_MS,
  })
  try {
    return { ...JSON.parse(run.stdout), profile: quick ? 'debug' : 'release' }
  } catch {
    const why = run.error?.message ?? `exit ${run.status ?? run.signal}`
    console.log(`guard overhead not measured: cargo ${cargoArgs.join(' ')} failed (${why})`)
    return { skipped: `cargo ${cargoArgs.join(' ')} failed (${why})` }
  }
}
