// What the docs tests read from the repository's Markdown: its pages, their headings (as GitHub
// makes anchors of them), their links and their fenced code blocks.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('..', import.meta.url))

/** README.md, CONTRIBUTING.md and every page under docs/: what a reader of the repository reads. */
export function docPages(): string[] {
  const pages = ['README.md', 'CONTRIBUTING.md']
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.md')) pages.push(rel)
    }
  }
  walk('docs')
  return pages
}

export function read(rel: string): string {
  return readFileSync(path.join(root, rel), 'utf8')
}

/** The text of the page with its fenced code blocks blanked (line numbers kept). */
export function prose(text: string): string {
  let inFence = false
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence
        return ''
      }
      return inFence ? '' : line
    })
    .join('\n')
}

/** A heading's text as a reader sees it: code spans, links and emphasis reduced to their text. */
export function headingText(raw: string): string {
  return raw
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_]{1,2}([^*_]+)[*_]{1,2}/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
}

/** GitHub's anchor for a heading: lower case, punctuation and symbols dropped, spaces to hyphens. */
export function slug(text: string): string {
  return headingText(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The headings of a page, in order. */
export function headings(text: string): string[] {
  return prose(text)
    .split('\n')
    .flatMap((line) => {
      const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
      return m ? [headingText(m[1])] : []
    })
}

/** The anchors a page offers: one per heading (a repeated one gets -1, -2, …) and explicit ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const heading of headings(text)) {
    const base = slug(heading)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) out.add(m[1])
  return out
}

/** Every Markdown link and image of a page's prose with its line: `[text](target)` and `[ref]: target`. */
export function links(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = []
  prose(text)
    .split('\n')
    .forEach((line, i) => {
      const code = line.replace(/`[^`]*`/g, '')
      for (const m of code.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1], line: i + 1 })
      const ref = /^\s*\[[^\]]+\]:\s+(\S+)/.exec(code)
      if (ref) out.push({ target: ref[1], line: i + 1 })
    })
  return out
}

/** Where a relative link from `page` leads, or why it leads nowhere. */
export function brokenLink(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined // https:, mailto:
  const [file, anchor] = target.split('#', 2) as [string, string | undefined]
  const rel = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file))
  if (rel.startsWith('..')) return `${target} leaves the repository`
  const abs = path.join(root, rel)
  if (!existsSync(abs)) return `${target}: no file ${rel}`
  if (anchor === undefined) return undefined
  if (!rel.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`
  if (!anchors(read(rel)).has(decodeURIComponent(anchor))) return `${target}: ${rel} has no heading #${anchor}`
  return undefined
}

/** The repository's tracked text files, but the vendored rquickjs-sys sources (upstream's words). */
export function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0')
  return files.filter(
    (f) =>
      f !== '' &&
      !f.startsWith('vendor/rquickjs-sys/') &&
      /\.(rs|ts|mts|cts|js|mjs|cjs|md|toml|json|yml|yaml|patch|sh)$|(^|\/)run$/.test(f) &&
      existsSync(path.join(root, f)),
  )
}

/** A fenced code block: its info string's language, its text, and the marker comment above it. */
export interface CodeBlock {
  page: string
  line: number
  lang: string
  code: string
  marker: string | undefined
}

/** Every fenced code block of a page, with the `<!-- … -->` comment right above it, if any. */
export function codeBlocks(page: string, text = read(page)): CodeBlock[] {
  const lines = text.split('\n')
  const out: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*([\w+-]*)/.exec(lines[i])
    if (!open) continue
    const fence = open[2]
    let j = i + 1
    while (j < lines.length && !lines[j].trimStart().startsWith(fence)) j++
    let k = i - 1
    while (k >= 0 && lines[k].trim() === '') k--
    const above = k >= 0 ? /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[k]) : null
    out.push({
      page,
      line: i + 1,
      lang: open[3],
      code: lines.slice(i + 1, j).map((l) => l.slice(open[1].length)).join('\n') + '\n',
      marker: above?.[1],
    })
    i = j
  }
  return out
}
