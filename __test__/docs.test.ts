// The documentation a fresh clone carries resolves inside the clone: every relative link of the
// README and docs/ leads to a file and heading that exist, and every reference to the contract
// (`§N.M` anywhere in the repository, `docs/contract.md "Heading"`) names a heading of
// docs/contract.md.
import { readFileSync } from 'node:fs'
import path from 'node:path'

import { describe, expect, it } from 'vitest'

import { brokenLink, docPages, headings, links, read, root, trackedTextFiles } from './markdown'

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

  it('no page points outside the clone to the original spec or the team notes', () => {
    const outside = [...docPages(), 'CHANGELOG.md'].flatMap((page) =>
      read(page)
        .split('\n')
        .flatMap((line, i) => (/\.\.\/shared\/|shared\/spec\/|shared\/DESIGN/.test(line) ? [`${page}:${i + 1}`] : [])),
    )
    expect(outside).toEqual([])
  })
})
