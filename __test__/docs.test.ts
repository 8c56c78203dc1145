// The documentation a fresh clone carries resolves inside the clone: every relative link of the
// README and docs/ leads to a file and heading that exist, and every reference to the contract
// (`§N.M` anywhere in the repository, `docs/contract.md "Heading"`) names a heading of
// docs/contract.md.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

import { describe, expect, it } from 'vitest'

import { brokenLink, docPages, headings, links, prose, read, root, trackedTextFiles } from './markdown'

const CONTRACT = 'docs/contract.md'

/** The section numbers docs/contract.md has headings for (`## §4.3.2 …` gives `4.3.2`). */
function contractSections(): Set<string> {
  return new Set(headings(read(CONTRACT)).flatMap((h) => /^§(\d+(?:\.\d+)*)\s/.exec(h)?.slice(1) ?? []))
}

describe('the documentation resolves inside the repository', () => {
  it('every relative link of README.md, CONTRIBUTING.md and docs/ leads to a file and heading that exist', () => {
    const broken = docPages().flatMap((page) =>
      links(read(page)).flatMap(({ target, line }) => {
        const why = brokenLink(page, target)
        return why ? [`${page}:${line}: ${why}`] : []
      }),
    )
    expect(broken).toEqual([])
  })

  it('every § reference in the repository names a section heading of docs/contract.md', () => {
    const sections = contractSections()
    expect(sections.size).toBeGreaterThan(40)
    const unresolved: string[] = []
    for (const file of trackedTextFiles()) {
      const text = readFileSync(path.join(root, file), 'utf8')
      text.split('\n').forEach((line, i) => {
        for (const m of line.matchAll(/§\s*(\d+(?:\.\d+)*)/g)) {
          if (!sections.has(m[1])) unresolved.push(`${file}:${i + 1}: §${m[1]}`)
        }
      })
    }
    expect(unresolved).toEqual([])
  })

  it('every docs/contract.md "Heading" reference names a heading of docs/contract.md', () => {
    const names = new Set(headings(read(CONTRACT)).map((h) => h.toLowerCase()))
    const unresolved: string[] = []
    let references = 0
    // This file's own examples of the pattern are not references.
    for (const file of trackedTextFiles().filter((f) => f !== '__test__/docs.test.ts')) {
      const text = readFileSync(path.join(root, file), 'utf8')
      text.split('\n').forEach((line, i) => {
        // `docs/contract.md "A" and "B"` names two headings.
        for (const m of line.matchAll(/contract\.md((?:,?\s*(?:and\s+)?"[^"]+")+)/g)) {
          for (const q of m[1].matchAll(/"([^"]+)"/g)) {
            references++
            if (!names.has(q[1].toLowerCase())) unresolved.push(`${file}:${i + 1}: "${q[1]}"`)
          }
        }
      })
    }
    expect(unresolved).toEqual([])
    expect(references).toBeGreaterThan(0)
  })

  it('every README "Heading" or docs/page.md "Heading" reference names a heading of that page', () => {
    const unresolved: string[] = []
    let references = 0
    for (const file of trackedTextFiles().filter((f) => f !== '__test__/docs.test.ts' && f !== 'CHANGELOG.md')) {
      const text = readFileSync(path.join(root, file), 'utf8')
      text.split('\n').forEach((line, i) => {
        for (const m of line.matchAll(/(?<![\w/.-])((?:bench\/)?README(?:\.md)?|CONTRIBUTING(?:\.md)?|docs\/[\w-]+\.md)((?:,?\s*(?:and\s+)?"[^"]+")+)/g)) {
          const page = /\.md$/.test(m[1]) ? m[1] : `${m[1]}.md`
          if (page === CONTRACT) continue
          if (!existsSync(path.join(root, page))) {
            unresolved.push(`${file}:${i + 1}: ${page} does not exist`)
            continue
          }
          const names = headings(read(page)).map((h) => h.toLowerCase())
          for (const q of m[2].matchAll(/"([^"]+)"/g)) {
            references++
            // A heading may go on after the name it is cited by ("Spin waits: …", "Foo (`src/…`)").
            const name = q[1].toLowerCase()
            const found = names.some((h) => h === name || h.startsWith(`${name}:`) || h.startsWith(`${name} (`))
            if (!found) unresolved.push(`${file}:${i + 1}: ${page} "${q[1]}"`)
          }
        }
      })
    }
    expect(unresolved).toEqual([])
    expect(references).toBeGreaterThan(10)
  })

  it('docs/contract.md has a heading for each decision the team recorded beyond the original design', () => {
    const names = headings(read(CONTRACT))
    for (const name of [
      'What we are building',
      'Where we go beyond SES',
      'Script semantics first',
      'Output',
      'Persistence',
      'Values across the boundary',
      'Tool failures',
      'Tools',
      'Logs',
      'Imports',
      'Errors',
      'Defaults beyond the spec',
      'Shape of the code',
    ]) {
      expect(names).toContain(name)
    }
  })

  it('every repository path and Rust test path the docs name in code spans exists', () => {
    const missing: string[] = []
    for (const page of docPages()) {
      prose(read(page))
        .split('\n')
        .forEach((line, i) => {
          for (const [, span] of line.matchAll(/`([^`\s]+)`/g)) {
            const why = missingPath(span)
            if (why) missing.push(`${page}:${i + 1}: ${span} (${why})`)
          }
        })
    }
    expect(missing).toEqual([])
  })

  it('no page points outside the clone to the original spec or the team notes', () => {
    const outside = [...docPages(), 'CHANGELOG.md'].flatMap((page) =>
      read(page)
        .split('\n')
        .flatMap((line, i) => (/\.\.\/shared\/|shared\/spec\/|shared\/DESIGN/.test(line) ? [`${page}:${i + 1}`] : [])),
    )
    expect(outside).toEqual([])
  })
})

/** The top folders whose paths the docs name (`src/engine/run/`, `__test__/security/*.ts`). */
const REPO_DIRS = /^(src|__test__|tests|bench|scripts|lib|bin|vendor|examples|fuzz|docs|\.github)\//
/** The crate's top modules, which a Rust test path starts with (`engine::run::script::tests::…`). */
const MODULES = /^(engine|scheduler|executor|program|value|node|options|canvas|prompt|error|diagnostic|modules|tool_args|trace|architecture)::/

/** Why a path named in a code span leads nowhere, or undefined. Placeholders (`<hash>`) pass. */
function missingPath(span: string): string | undefined {
  if (/[<>]/.test(span)) return undefined
  if (REPO_DIRS.test(span)) {
    const plain = span.replace(/[*?].*$/, '').replace(/[),.;:]+$/, '')
    const at = path.join(root, plain)
    if (existsSync(at)) return undefined
    // `fuzz/regressions/<target>/*` and the like: the folder part must exist.
    return existsSync(path.dirname(at)) && plain.endsWith('/') ? undefined : 'no such file'
  }
  if (MODULES.test(span)) return missingTest(span)
  return undefined
}

/**
 * A Rust path `a::b::c::name` (or `…::prefix_*`): the module's file must exist under src/, and a
 * function of that name (or with that prefix) must be defined in it or below it.
 */
function missingTest(span: string): string | undefined {
  const segments = span.replace(/\*$/, '').split('::').filter(Boolean)
  const name = segments.at(-1) ?? ''
  // The module path: every segment but a function's name (a path of modules only names them all).
  const modules = /^[a-z0-9_]+$/.test(name) && segments.length > 1 ? segments.slice(0, -1) : segments
  let at = path.join(root, 'src')
  for (const [i, segment] of modules.entries()) {
    const dir = path.join(at, segment)
    if (existsSync(dir) && statSync(dir).isDirectory()) {
      at = dir
      continue
    }
    if (existsSync(`${dir}.rs`)) {
      // Modules declared inside that file (`mod tests;` or `mod tests { … }`) must be declared there.
      const text = readFileSync(`${dir}.rs`, 'utf8')
      const inner = modules.slice(i + 1).find((m) => !new RegExp(`mod ${m}\\b`).test(text))
      if (inner) return `no module ${inner} in ${path.relative(root, dir)}.rs`
      at = dir
      break
    }
    return `no module ${modules.slice(0, i + 1).join('::')} under src/`
  }
  if (modules === segments) return undefined
  // The last segment may name a module of its own (`engine::tests::intrinsics`).
  if (existsSync(`${path.join(at, name)}.rs`) || existsSync(path.join(at, name, 'mod.rs'))) return undefined
  const files = [`${at}.rs`, ...rustFiles(at)].filter((f) => existsSync(f))
  const fn = new RegExp(`fn ${name}${span.endsWith('*') ? '' : '\\b'}`)
  return files.some((f) => fn.test(readFileSync(f, 'utf8'))) ? undefined : `no fn ${name} in ${path.relative(root, at)}`
}

function rustFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? rustFiles(path.join(dir, entry.name)) : entry.name.endsWith('.rs') ? [path.join(dir, entry.name)] : [],
  )
}
