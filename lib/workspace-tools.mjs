// File tools for agents, confined to one workspace folder: read_file, write_file, edit_file,
// list_dir and grep, as smolagents tool objects (`name`, `description`, `inputs`, `output_type`,
// `forward`) that `sendTools` and `renderToolsPrompt` take as they are.
//
// They run on the host, with the host's file system rights, on arguments the model wrote; so
// every path is resolved inside the workspace and checked after symbolic links are followed,
// reads and listings are bounded, and grep matches literal text unless asked for a regular
// expression (a model-written regex runs in Node, where nothing can interrupt it).
import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'

/** Largest file `read_file`, `edit_file` and `grep` open. */
const MAX_FILE_BYTES = 1024 * 1024
/** Most lines `grep` reports, and longest line it looks at. */
const MAX_MATCHES = 200
const MAX_LINE_CHARS = 2000
/** Most entries `list_dir` and `grep` visit. */
const MAX_ENTRIES = 5000
/** Folders `grep` does not descend into. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules'])

/**
 * The file tools of `root` (which must exist). Paths the model passes are relative to `root`;
 * none of them can reach outside it, through `..`, an absolute path or a symbolic link.
 * @param {string} root
 */
export async function createWorkspaceTools(root) {
  const workspace = await realpath(root)

  /** The real path of `relative` inside the workspace; throws if it would leave it. */
  async function resolve(relative, { mustExist }) {
    if (typeof relative !== 'string' || relative.includes('\0')) {
      throw new Error('path must be a string without NUL characters')
    }
    const wanted = path.resolve(workspace, relative)
    ensureInside(wanted, relative)
    // Follow links on the longest part of the path that exists; the rest is created inside it.
    let existing = wanted
    const missing = []
    for (;;) {
      try {
        existing = await realpath(existing)
        break
      } catch (error) {
        if (error.code !== 'ENOENT' || mustExist) throw notFound(error, relative)
        missing.unshift(path.basename(existing))
        const parent = path.dirname(existing)
        if (parent === existing) throw notFound(error, relative)
        existing = parent
      }
    }
    const real = path.join(existing, ...missing)
    ensureInside(real, relative)
    return real
  }

  function ensureInside(candidate, relative) {
    const inside = path.relative(workspace, candidate)
    if (inside.startsWith('..') || path.isAbsolute(inside)) {
      throw new Error(`${JSON.stringify(relative)} is outside the workspace`)
    }
  }

  const display = (real) => path.relative(workspace, real) || '.'

  async function readText(real, relative) {
    const info = await stat(real)
    if (!info.isFile()) throw new Error(`${JSON.stringify(relative)} is not a file`)
    if (info.size > MAX_FILE_BYTES) {
      throw new Error(`${JSON.stringify(relative)} is ${info.size} bytes; files over ${MAX_FILE_BYTES} bytes are not opened`)
    }
    return readFile(real, 'utf8')
  }

  const read_file = {
    name: 'read_file',
    description: 'Reads a text file of the workspace and returns its content.',
    inputs: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
    },
    output_type: 'string',
    async forward({ path: relative }) {
      return readText(await resolve(relative, { mustExist: true }), relative)
    },
  }

  const write_file = {
    name: 'write_file',
    description: 'Writes text to a file of the workspace, creating it and its folders if needed, replacing its content otherwise.',
    inputs: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      content: { type: 'string', description: 'The whole new content.' },
    },
    output_type: 'string',
    async forward({ path: relative, content }) {
      if (typeof content !== 'string') throw new Error('content must be a string')
      const real = await resolve(relative, { mustExist: false })
      await mkdir(path.dirname(real), { recursive: true })
      await refuseLink(real, relative)
      await writeFile(real, content, 'utf8')
      return `wrote ${Buffer.byteLength(content)} bytes to ${display(real)}`
    },
  }

  const edit_file = {
    name: 'edit_file',
    description: 'Replaces one exact occurrence of old_text with new_text in a file of the workspace. Fails if old_text occurs zero or several times.',
    inputs: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      old_text: { type: 'string', description: 'Text to replace; must occur exactly once.' },
      new_text: { type: 'string', description: 'Replacement text.' },
    },
    output_type: 'string',
    async forward({ path: relative, old_text: oldText, new_text: newText }) {
      if (typeof oldText !== 'string' || oldText === '') throw new Error('old_text must be a non-empty string')
      if (typeof newText !== 'string') throw new Error('new_text must be a string')
      const real = await resolve(relative, { mustExist: true })
      const text = await readText(real, relative)
      const first = text.indexOf(oldText)
      if (first < 0) throw new Error(`old_text does not occur in ${display(real)}`)
      if (text.indexOf(oldText, first + 1) >= 0) {
        throw new Error(`old_text occurs more than once in ${display(real)}; include more context`)
      }
      await writeFile(real, text.slice(0, first) + newText + text.slice(first + oldText.length), 'utf8')
      const line = text.slice(0, first).split('\n').length
      return `edited ${display(real)} at line ${line}`
    },
  }

  const list_dir = {
    name: 'list_dir',
    description: 'Lists a folder of the workspace: one entry per line, folders ending with "/".',
    inputs: {
      path: { type: 'string', description: 'Folder relative to the workspace.', nullable: true, default: '.' },
    },
    output_type: 'string',
    async forward({ path: relative = '.' } = {}) {
      const real = await resolve(relative ?? '.', { mustExist: true })
      const entries = await readdir(real, { withFileTypes: true })
      const names = entries
        .slice(0, MAX_ENTRIES)
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .sort()
      if (entries.length > MAX_ENTRIES) names.push(`... ${entries.length - MAX_ENTRIES} more`)
      return names.join('\n')
    },
  }

  const grep = {
    name: 'grep',
    description: 'Searches the text files under a folder of the workspace and returns matching lines as "path:line: text".',
    inputs: {
      pattern: { type: 'string', description: 'The text to look for (a JavaScript regular expression if regex is true).' },
      path: { type: 'string', description: 'Folder or file relative to the workspace.', nullable: true, default: '.' },
      regex: { type: 'boolean', description: 'Treat pattern as a regular expression.', nullable: true, default: false },
    },
    output_type: 'string',
    async forward({ pattern, path: relative = '.', regex = false }) {
      if (typeof pattern !== 'string' || pattern === '') throw new Error('pattern must be a non-empty string')
      const matches = regex ? ((line) => new RegExp(pattern).test(line)) : (line) => line.includes(pattern)
      if (regex) new RegExp(pattern) // reports an invalid pattern before any file is read
      const start = await resolve(relative ?? '.', { mustExist: true })
      const found = []
      let visited = 0
      const visit = async (real) => {
        if (found.length >= MAX_MATCHES || visited++ >= MAX_ENTRIES) return
        const info = await lstat(real)
        if (info.isSymbolicLink()) return
        if (info.isDirectory()) {
          for (const entry of (await readdir(real)).sort()) {
            if (!SKIPPED_DIRS.has(entry)) await visit(path.join(real, entry))
          }
          return
        }
        if (!info.isFile() || info.size > MAX_FILE_BYTES) return
        const text = await readFile(real, 'utf8')
        if (text.includes('\0')) return // binary
        const lines = text.split('\n')
        for (let i = 0; i < lines.length && found.length < MAX_MATCHES; i++) {
          const line = lines[i].length > MAX_LINE_CHARS ? lines[i].slice(0, MAX_LINE_CHARS) : lines[i]
          if (matches(line)) found.push(`${display(real)}:${i + 1}: ${line}`)
        }
      }
      await visit(start)
      if (found.length === 0) return 'no matches'
      return found.length >= MAX_MATCHES ? `${found.join('\n')}\n... (stopped at ${MAX_MATCHES} matches)` : found.join('\n')
    },
  }

  return { read_file, write_file, edit_file, list_dir, grep }
}

/** Refuses to write through a symbolic link that `resolve` did not see (created meanwhile). */
async function refuseLink(real, relative) {
  try {
    if ((await lstat(real)).isSymbolicLink()) throw new Error(`${JSON.stringify(relative)} is a symbolic link`)
  } catch (error) {
    if (error.code !== 'ENOENT') throw error
  }
}

function notFound(error, relative) {
  return error.code === 'ENOENT' ? new Error(`${JSON.stringify(relative)} does not exist`) : error
}
