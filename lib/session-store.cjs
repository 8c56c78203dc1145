'use strict'
// Where hibernated sessions live (docs/serving.md "Stores"): the interface a `SessionPool` saves
// snapshots through, and the two stores the package brings, in memory and on a file system.
//
// A store maps a session id to its newest snapshot and a generation number: 0 means no snapshot,
// and every save makes it one higher. A save names the generation it replaces (compare and swap),
// so a writer that read an older generation, in this process or another, is refused
// (`ERR_SESSION_CONFLICT`) instead of silently overwriting what another writer saved since.
// Stores hold bytes only: what they hand back is checked by `SESExecutor.restore` (checksum,
// versions, an HMAC with `snapshotKey`), never trusted.

const { randomBytes, createHash } = require('node:crypto')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const path = require('node:path')
const zlib = require('node:zlib')

const guarded = require('./guarded.cjs')

/** Every failure of a session pool or store that is not the executor's own, by `code`. */
class SessionError extends Error {
  constructor(code, message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'SessionError'
    this.code = code
    for (const [key, value] of Object.entries(details)) if (key !== 'cause') this[key] = value
  }
}

function conflict(sessionId, expected, stored) {
  return new SessionError(
    'ERR_SESSION_CONFLICT',
    `session ${JSON.stringify(sessionId)}: the save expected generation ${expected}, the store has ${stored === undefined ? 'a newer one' : stored}; another writer saved this session since it was loaded`,
    { sessionId, expectedGeneration: expected, storedGeneration: stored },
  )
}

/** Checks a session id (any non-empty string up to 1 KiB) and a generation argument. */
function checkId(sessionId) {
  if (typeof sessionId !== 'string' || sessionId.length === 0 || sessionId.length > 1024) {
    throw new TypeError('a session id must be a non-empty string of at most 1024 characters')
  }
}
function checkGeneration(generation, name = 'expectedGeneration') {
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new TypeError(`${name} must be a non-negative safe integer`)
  }
}
function checkBytes(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength === 0) {
    throw new TypeError('a snapshot must be a non-empty Uint8Array')
  }
}

/**
 * Snapshots in this process's memory: for a single process, for tests, and for hibernation
 * whose only aim is to hold many more sessions than live executors (a restart loses them).
 * With `compress: true` each snapshot is kept deflated (zlib, at its fastest level): a snapshot
 * holds the session's code and the answers of its tools, text that deflates several times over.
 */
class MemoryStore {
  /** id → { bytes, size (the snapshot's, before compression), generation } */
  #sessions = new Map()
  #compress
  #bytes = 0
  #snapshotBytes = 0

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('new MemoryStore(options): options must be an object')
    const compress = guarded.readOrThrow(options, 'compress', 'MemoryStore options') ?? false
    if (typeof compress !== 'boolean') throw new TypeError('MemoryStore option compress must be a boolean')
    this.#compress = compress
  }

  async get(sessionId) {
    checkId(sessionId)
    const stored = this.#sessions.get(sessionId)
    if (stored === undefined) return undefined
    // This store deflated these bytes itself; the size it recorded bounds the inflation.
    if (!this.#compress) return { bytes: stored.bytes, generation: stored.generation }
    const inflated = zlib.inflateRawSync(stored.bytes, { maxOutputLength: stored.size })
    return { bytes: new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength), generation: stored.generation }
  }

  async put(sessionId, bytes, expectedGeneration) {
    checkId(sessionId)
    checkBytes(bytes)
    checkGeneration(expectedGeneration)
    const stored = this.#sessions.get(sessionId)
    const generation = stored?.generation ?? 0
    if (generation !== expectedGeneration) throw conflict(sessionId, expectedGeneration, generation)
    // A copy the caller cannot change after the fact, sized to the snapshot (not to a larger
    // buffer it may be a view of).
    const kept = this.#compress ? new Uint8Array(zlib.deflateRawSync(bytes, { level: zlib.constants.Z_BEST_SPEED })) : new Uint8Array(bytes)
    this.#bytes += kept.byteLength - (stored?.bytes.byteLength ?? 0)
    this.#snapshotBytes += bytes.byteLength - (stored?.size ?? 0)
    this.#sessions.set(sessionId, { bytes: kept, size: bytes.byteLength, generation: generation + 1 })
    return generation + 1
  }

  async delete(sessionId, expectedGeneration) {
    checkId(sessionId)
    const stored = this.#sessions.get(sessionId)
    if (stored === undefined) return false
    if (expectedGeneration !== undefined) {
      checkGeneration(expectedGeneration)
      if (stored.generation !== expectedGeneration) throw conflict(sessionId, expectedGeneration, stored.generation)
    }
    this.#bytes -= stored.bytes.byteLength
    this.#snapshotBytes -= stored.size
    this.#sessions.delete(sessionId)
    return true
  }

  /**
   * How many sessions the store holds, the bytes it keeps for them, and the bytes of their
   * snapshots (the same unless it compresses).
   */
  get size() {
    return { sessions: this.#sessions.size, bytes: this.#bytes, snapshotBytes: this.#snapshotBytes }
  }
}

/** Names of a session's generation files: decimal numbers, nothing else. */
const GENERATION_FILE = /^[1-9][0-9]{0,15}$/
/**
 * How long a replaced generation's file stays (its successor's age): a save claims the name of
 * the next generation, and a name freed sooner could be claimed by a writer that checked the
 * newest generation before the free and linked after it.
 */
const KEEP_REPLACED_MS = 60_000

/**
 * Snapshots as files under a directory: one folder per session (named by the SHA-256 of its id,
 * under a folder of its first two hex digits), one file per generation, named by its number.
 *
 * A save checks that the generation it names is the newest, writes the snapshot to a temporary
 * file in the session's folder, flushes it (`fsync`, unless `fsync: false`), and links it under
 * the next generation's name: `link` never replaces a file, so of two writers that loaded the
 * same generation only the first gets that name, on a local file system, in one process or
 * several. Readers take the highest generation. A generation's file is removed once it is two
 * generations old and its successor a minute old, so that no name a writer may still claim is
 * free; a writer that took longer than half of that between its check and its link checks again
 * after it (and may then be refused although a faster writer already loaded its save).
 *
 * `fsync: true` (the default): once `put` resolves, the snapshot survives a crash of the machine.
 * `fsync: false`: a crash of the process loses nothing, one of the machine may lose the last
 * saves (a file cut short by it is refused by `restore`'s checksum, never run).
 */
class FileStore {
  #dir
  #fsync

  constructor(directory, options = {}) {
    if (typeof directory !== 'string' || directory === '') throw new TypeError('new FileStore(directory): directory must be a path')
    if (options === null || typeof options !== 'object') throw new TypeError('new FileStore(directory, options): options must be an object')
    const fsync = guarded.readOrThrow(options, 'fsync', 'FileStore options') ?? true
    if (typeof fsync !== 'boolean') throw new TypeError('FileStore option fsync must be a boolean')
    this.#dir = path.resolve(directory)
    this.#fsync = fsync
    fs.mkdirSync(this.#dir, { recursive: true })
  }

  /** The folder of a session. */
  #folder(sessionId) {
    const hash = createHash('sha256').update(sessionId, 'utf8').digest('hex')
    return path.join(this.#dir, hash.slice(0, 2), hash)
  }

  /** The generations a session's folder holds, highest first. */
  async #generations(folder) {
    let names
    try {
      names = await fsp.readdir(folder)
    } catch (error) {
      if (error.code === 'ENOENT') return []
      throw error
    }
    return names
      .filter((name) => GENERATION_FILE.test(name))
      .map(Number)
      .sort((a, b) => b - a)
  }

  async get(sessionId) {
    checkId(sessionId)
    const folder = this.#folder(sessionId)
    // A save may remove the generation just listed (only an old one, but this reader may be
    // slow): list again.
    for (;;) {
      const [generation] = await this.#generations(folder)
      if (generation === undefined) return undefined
      try {
        const bytes = await fsp.readFile(path.join(folder, String(generation)))
        return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), generation }
      } catch (error) {
        if (error.code !== 'ENOENT') throw error
      }
    }
  }

  async put(sessionId, bytes, expectedGeneration) {
    checkId(sessionId)
    checkBytes(bytes)
    checkGeneration(expectedGeneration)
    const folder = this.#folder(sessionId)
    const next = expectedGeneration + 1
    const checked = Date.now()
    const [before] = await this.#generations(folder)
    if ((before ?? 0) !== expectedGeneration) throw conflict(sessionId, expectedGeneration, before ?? 0)
    await fsp.mkdir(folder, { recursive: true })
    const temporary = path.join(folder, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`)
    const file = await fsp.open(temporary, 'wx', 0o600)
    try {
      await file.writeFile(bytes)
      if (this.#fsync) await file.sync()
    } finally {
      await file.close()
    }
    try {
      await fsp.link(temporary, path.join(folder, String(next)))
    } catch (error) {
      if (error.code === 'EEXIST') {
        const [stored] = await this.#generations(folder)
        throw conflict(sessionId, expectedGeneration, stored)
      }
      throw error
    } finally {
      await fsp.rm(temporary, { force: true })
    }
    if (Date.now() - checked > KEEP_REPLACED_MS / 2) {
      const [newest] = await this.#generations(folder)
      if (newest !== next) throw conflict(sessionId, expectedGeneration, newest)
    }
    if (this.#fsync) await syncFolder(folder)
    await this.#prune(folder, next)
    return next
  }

  /** Removes the generations below `newest - 1` whose successor is older than KEEP_REPLACED_MS. */
  async #prune(folder, newest) {
    const old = (await this.#generations(folder)).filter((g) => g < newest - 1)
    const cutoff = Date.now() - KEEP_REPLACED_MS
    await Promise.all(
      old.map(async (generation) => {
        try {
          const successor = await fsp.stat(path.join(folder, String(generation + 1)))
          if (successor.mtimeMs < cutoff) await fsp.rm(path.join(folder, String(generation)), { force: true })
        } catch (error) {
          // Its successor already went: it is older still.
          if (error.code !== 'ENOENT') throw error
          await fsp.rm(path.join(folder, String(generation)), { force: true })
        }
      }),
    )
  }

  async delete(sessionId, expectedGeneration) {
    checkId(sessionId)
    const folder = this.#folder(sessionId)
    const [generation] = await this.#generations(folder)
    if (generation === undefined) return false
    if (expectedGeneration !== undefined) {
      checkGeneration(expectedGeneration)
      if (generation !== expectedGeneration) throw conflict(sessionId, expectedGeneration, generation)
    }
    await fsp.rm(folder, { recursive: true, force: true })
    return true
  }
}

/** Flushes a folder's entries (the new name of a file), where the platform can. */
async function syncFolder(folder) {
  let handle
  try {
    handle = await fsp.open(folder, 'r')
    await handle.sync()
  } catch (error) {
    // Windows cannot open a folder for flushing; its rename and link are durable by themselves.
    if (!['EISDIR', 'EPERM', 'EACCES'].includes(error.code)) throw error
  } finally {
    await handle?.close()
  }
}

module.exports = { MemoryStore, FileStore, SessionError, conflict, checkId, checkGeneration, checkBytes }
