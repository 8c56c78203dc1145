#!/usr/bin/env node
// `node scripts/docs-figures.mjs [--check]`: fills every bench figure that README.md,
// CONTRIBUTING.md and docs/ quote from bench/results.json (the last full `npm run bench`), so that
// a figure in the docs is never older than the bench. `npm run bench` runs it after a full run;
// `--check` changes nothing and exits 1 listing each figure that disagrees.
//
// A figure is marked where it is quoted: `<!-- bench: KEY -->5.9 µs<!-- /bench -->`, the text
// between the markers being what this script writes. KEY is `PEER.WORKLOAD[.FIELD…]` (PEER a
// peer id of bench/run.mjs, FIELD `median` unless given: `p95`, `floorMs`, `perExecutorKiB`,
// `relative.1000`, …), or `guard.overheadPct`, `floors.spinGapMs`, `machine.date`, `machine.node`.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { num, quantity } from '../bench/report.mjs'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

/** A marked figure: its key and the text quoted between its markers. */
export const MARKED = /<!-- bench: ([\w.-]+) -->([^<`\n]*)<!-- \/bench -->/g

/** The pages that may quote figures. */
export function pages() {
  const found = ['README.md', 'CONTRIBUTING.md']
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.md')) found.push(rel)
    }
  }
  walk('docs')
  return found
}

/** The unit of a field: the workload's own, unless the field's name says otherwise. */
function unitOf(field, workload) {
  if (/^(count|threads|addedThreads|samples)$/.test(field)) return ''
  if (/KiB$/.test(field)) return 'KiB'
  if (/MiB$/.test(field)) return 'MiB'
  if (/Ms$|^ms/.test(field)) return 'ms'
  if (/Us$/.test(field)) return 'µs'
  if (/Pct$/.test(field)) return '%'
  if (/^(relative|inTurn)\./.test(field)) return '×'
  return workload?.unit
}

/** How a figure reads in the docs: as bench/RESULTS.md writes it. */
function format(value, unit) {
  if (unit === '×') return `${num(value)}×`
  if (unit === '%') return `${num(value)} %`
  if (unit === 'MiB' || unit === 'KiB') return `${num(value)} ${unit}`
  if (unit === '× one executor') return `${num(value)}×`
  if (unit === '') return num(value)
  return quantity(value, unit)
}

const dig = (object, fields) => fields.reduce((at, field) => (at == null ? undefined : at[field]), object)

/** The text a key stands for in `results`, or an error saying why it has none. */
export function figure(results, key) {
  const [head, ...rest] = key.split('.')
  if (head === 'machine') {
    const value = dig(results.machine, rest)
    if (value == null) throw new Error(`results.json has no machine.${rest.join('.')}`)
    return rest[0] === 'date' ? String(value).slice(0, 10) : String(value)
  }
  if (head === 'guard' || head === 'floors') {
    const value = dig(results[head], rest)
    if (typeof value !== 'number') throw new Error(`results.json has no ${key}`)
    return format(value, unitOf(rest.at(-1), undefined))
  }
  const peer = results.peers.find((p) => p.peer.id === head)
  if (!peer) throw new Error(`results.json has no peer ${head}`)
  const [name, ...fields] = rest
  const workload = peer.workloads?.[name]
  if (!workload || workload.error || workload.unsupported) throw new Error(`results.json has no ${head} ${name}`)
  const path_ = fields.length === 0 ? ['median'] : fields
  const value = dig(workload, path_)
  if (typeof value !== 'number') throw new Error(`results.json has no ${key}`)
  return format(value, unitOf(path_.join('.'), workload))
}

/** `text` with every marked figure filled from `results`, and what changed or failed. */
export function fill(text, results) {
  const changes = []
  const errors = []
  const filled = text.replace(MARKED, (whole, key, quoted) => {
    let value
    try {
      value = figure(results, key)
    } catch (error) {
      errors.push(`${key}: ${error.message}`)
      return whole
    }
    if (value !== quoted) changes.push({ key, was: quoted, now: value })
    return `<!-- bench: ${key} -->${value}<!-- /bench -->`
  })
  return { text: filled, changes, errors }
}

export function readResults() {
  const results = JSON.parse(readFileSync(path.join(root, 'bench', 'results.json'), 'utf8'))
  if (results.quick) throw new Error('bench/results.json is from a --quick run: its figures mean nothing')
  return results
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check')
  const results = readResults()
  let failed = false
  for (const page of pages()) {
    const file = path.join(root, page)
    const { text, changes, errors } = fill(readFileSync(file, 'utf8'), results)
    for (const error of errors) console.error(`${page}: ${error}`)
    failed ||= errors.length > 0
    for (const { key, was, now } of changes) console.log(`${page}: ${key} ${was} -> ${now}`)
    if (changes.length > 0 && check) failed = true
    else if (changes.length > 0) writeFileSync(file, text)
  }
  if (failed) {
    if (check) console.error('docs-figures: run `node scripts/docs-figures.mjs` to fill them from bench/results.json')
    process.exit(1)
  }
}
