// Every performance figure the docs quote comes from the last full bench: a marked figure
// (`<!-- bench: KEY -->…<!-- /bench -->`) must read what scripts/docs-figures.mjs makes of
// bench/results.json, and a figure next to a workload name that is not marked is refused, so
// that no hand-copied number can go stale beside the generated ones.
import { describe, expect, it } from 'vitest'

// @ts-expect-error: a plain ES module without typings
import { fill, MARKED, readResults } from '../scripts/docs-figures.mjs'
import { docPages, prose, read } from './markdown'

/** A number with a unit of time or memory, as a figure reads. */
const FIGURE = /\d(?:[\d,.]*\d)?\s?(?:µs|ms|KiB|MiB)\b/
/** A workload of bench/workloads.mjs, named as the docs name them (W1 … W13). */
const WORKLOAD = /\bW(?:[1-9]|1[0-3])\b/

/** The paragraphs (and table rows) of a page's prose, without the bench's own quoted block. */
function paragraphs(text: string): { line: number; text: string }[] {
  const lines = prose(text.replace(/<!-- bench:start -->[\s\S]*?<!-- bench:end -->/g, (m) => m.replace(/[^\n]/g, ''))).split('\n')
  const out: { line: number; text: string }[] = []
  let current: { line: number; text: string } | undefined
  lines.forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('|')) {
      if (current) out.push(current)
      current = undefined
      if (line.startsWith('|')) out.push({ line: i + 1, text: line })
      return
    }
    current = current ? { ...current, text: `${current.text} ${line}` } : { line: i + 1, text: line }
  })
  if (current) out.push(current)
  return out
}

describe('the figures the docs quote', () => {
  it('every marked figure reads what bench/results.json gives', () => {
    const results = readResults()
    let marked = 0
    const wrong: string[] = []
    for (const page of docPages()) {
      const text = read(page)
      marked += [...text.matchAll(MARKED)].length
      const { changes, errors } = fill(text, results)
      for (const error of errors) wrong.push(`${page}: ${error}`)
      for (const { key, was, now } of changes) wrong.push(`${page}: ${key} reads ${was}, the bench says ${now}`)
    }
    expect(wrong, 'run node scripts/docs-figures.mjs').toEqual([])
    expect(marked).toBeGreaterThan(20)
  })

  it('no figure in a sentence or table row that names a workload is left unmarked', () => {
    const unmarked = docPages().flatMap((page) =>
      paragraphs(read(page)).flatMap(({ line, text }) =>
        text
          .replace(MARKED, '')
          .split(/(?<=[.;])\s+(?=[A-Z(`*])/)
          .flatMap((sentence) =>
            WORKLOAD.test(sentence) && FIGURE.test(sentence)
              ? [`${page}:${line}: ${FIGURE.exec(sentence)?.[0]} in "${sentence.slice(0, 120)}"`]
              : [],
          ),
      ),
    )
    expect(unmarked).toEqual([])
  })
})
