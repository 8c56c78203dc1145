// The session stores (docs/serving.md "Stores"): MemoryStore, FileStore and the BullMQ adapter's
// RedisStore (on a real redis-server) keep one contract: a snapshot per session with a
// generation, a save that names the generation it replaces and is refused when another writer
// saved since (in one process and, for the file and Redis stores, across processes), copies
// that the caller cannot change afterwards, and arguments checked.
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type * as Entry from '../index'
import { type RedisServer, startRedis } from './redis-server'

const require = createRequire(import.meta.url)
const { MemoryStore, FileStore, SessionError } = require('../index.js') as typeof Entry
const { RedisStore } = require('../lib/bullmq.cjs')
const IORedis = require('ioredis')

type Store = InstanceType<typeof MemoryStore>

const bytes = (...values: number[]) => new Uint8Array(values)
const scratch = () => mkdtempSync(path.join(tmpdir(), 'ses-store-'))

let redis: RedisServer
const redisStores: Array<{ close(): Promise<void> }> = []
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await Promise.all(redisStores.map((store) => store.close()))
  await redis?.stop()
})

const kinds: Array<[string, () => Store]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['MemoryStore, compressed', () => new MemoryStore({ compress: true })],
  ['FileStore', () => new FileStore(scratch())],
  ['FileStore without fsync', () => new FileStore(scratch(), { fsync: false })],
  [
    'RedisStore',
    () => {
      const store = new RedisStore({ connection: redis.connection, prefix: `t${Math.random().toString(36).slice(2, 8)}` })
      redisStores.push(store)
      return store
    },
  ],
]

async function conflictOf(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(SessionError)
    return error as InstanceType<typeof SessionError>
  }
  throw new Error('expected ERR_SESSION_CONFLICT, the save went through')
}

describe.each(kinds)('%s', (_name, make) => {
  it('has nothing for an unknown session, then each save one generation higher', async () => {
    const store = make()
    expect(await store.get('s')).toBeUndefined()
    expect(await store.put('s', bytes(1, 2, 3), 0)).toBe(1)
    expect(await store.get('s')).toEqual({ bytes: bytes(1, 2, 3), generation: 1 })
    expect(await store.put('s', bytes(4), 1)).toBe(2)
    expect(await store.get('s')).toEqual({ bytes: bytes(4), generation: 2 })
    expect(await store.get('other')).toBeUndefined()
  })

  it('refuses a save that names a generation other than the stored one, and keeps the stored one', async () => {
    const store = make()
    await store.put('s', bytes(1), 0)
    await store.put('s', bytes(2), 1)
    for (const stale of [0, 1, 3, 7]) {
      const error = await conflictOf(store.put('s', bytes(9), stale))
      expect(error.code).toBe('ERR_SESSION_CONFLICT')
      expect(error).toMatchObject({ sessionId: 's', expectedGeneration: stale })
    }
    expect(await store.get('s')).toEqual({ bytes: bytes(2), generation: 2 })
  })

  it('of saves racing from the same generation, exactly one wins', async () => {
    const store = make()
    await store.put('s', bytes(0), 0)
    const racing = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => store.put('s', bytes(10 + i), 1)))
    const won = racing.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []))
    expect(won).toHaveLength(1)
    for (const r of racing) if (r.status === 'rejected') expect(r.reason.code).toBe('ERR_SESSION_CONFLICT')
    expect(await store.get('s')).toEqual({ bytes: bytes(10 + won[0]), generation: 2 })
  })

  it('keeps a copy: changing the saved array afterwards changes nothing stored', async () => {
    const store = make()
    const saved = bytes(1, 2, 3)
    await store.put('s', saved, 0)
    saved[0] = 99
    expect((await store.get('s'))!.bytes).toEqual(bytes(1, 2, 3))
    // A view into a larger buffer saves the view only.
    const view = new Uint8Array([7, 7, 5, 6, 7, 7]).subarray(2, 4)
    await store.put('v', view, 0)
    expect((await store.get('v'))!.bytes).toEqual(bytes(5, 6))
  })

  it('deletes, refusing a delete that names another generation', async () => {
    const store = make()
    await store.put('s', bytes(1), 0)
    expect((await conflictOf(store.delete('s', 5))).code).toBe('ERR_SESSION_CONFLICT')
    expect(await store.delete('s', 1)).toBe(true)
    expect(await store.get('s')).toBeUndefined()
    expect(await store.delete('s')).toBe(false)
    // A stale writer cannot bring it back at its old generation.
    await conflictOf(store.put('s', bytes(2), 1))
    expect(await store.put('s', bytes(3), 0)).toBe(1)
  })

  it('keeps ids apart that differ only in characters a key or a file name gives meaning to', async () => {
    const store = make()
    const ids = ['a', 'a}', '{a}', 'a:state', 'a/../b', 'A', 'a ', 'ü', '%7Ba%7D', 'x'.repeat(1024)]
    for (const [i, id] of ids.entries()) await store.put(id, bytes(i + 1), 0)
    for (const [i, id] of ids.entries()) expect(await store.get(id)).toEqual({ bytes: bytes(i + 1), generation: 1 })
  })

  it('checks its arguments', async () => {
    const store = make()
    for (const id of ['', 'x'.repeat(1025), 3, undefined]) {
      await expect(store.get(id as string)).rejects.toBeInstanceOf(TypeError)
    }
    for (const snapshot of [new Uint8Array(0), [1, 2], 'bytes', undefined]) {
      await expect(store.put('s', snapshot as Uint8Array, 0)).rejects.toBeInstanceOf(TypeError)
    }
    for (const generation of [-1, 1.5, Number.NaN, '0', undefined]) {
      await expect(store.put('s', bytes(1), generation as number)).rejects.toBeInstanceOf(TypeError)
    }
  })
})

describe('MemoryStore sizes', () => {
  it('counts what it keeps, and keeps compressed snapshots smaller than they are', async () => {
    const text = new TextEncoder().encode('const page = "Lyon is a city in France"; '.repeat(100))
    const plain = new MemoryStore()
    const compressed = new MemoryStore({ compress: true })
    for (const store of [plain, compressed]) {
      await store.put('a', text, 0)
      await store.put('b', text.subarray(0, 100), 0)
      await store.put('a', text.subarray(0, 50), 1)
      await store.delete('b')
    }
    expect(plain.size).toEqual({ sessions: 1, bytes: 50, snapshotBytes: 50 })
    expect(compressed.size.snapshotBytes).toBe(50)
    await compressed.put('a', text, 2)
    expect(compressed.size.snapshotBytes).toBe(text.length)
    expect(compressed.size.bytes).toBeLessThan(text.length / 10)
    expect((await compressed.get('a'))!.bytes).toEqual(text)
    expect(() => new MemoryStore({ compress: 'yes' as never })).toThrow(TypeError)
  })
})

describe('FileStore on disk', () => {
  it('writes one file per generation in a folder per session, and removes replaced ones once their successor is a minute old', async () => {
    const dir = scratch()
    const store = new FileStore(dir)
    for (let g = 0; g < 3; g++) await store.put('s', bytes(g), g)
    const shards = readdirSync(dir)
    expect(shards).toHaveLength(1)
    const [name] = readdirSync(path.join(dir, shards[0]))
    const folder = path.join(dir, shards[0], name)
    // Generation 1's successor is fresh: its name could still be claimed by a slow writer.
    expect(readdirSync(folder).sort()).toEqual(['1', '2', '3'])
    const past = new Date(Date.now() - 120_000)
    for (const file of ['1', '2', '3']) utimesSync(path.join(folder, file), past, past)
    await store.put('s', bytes(9), 3)
    expect(readdirSync(folder).sort()).toEqual(['3', '4'])
    expect(await store.get('s')).toEqual({ bytes: bytes(9), generation: 4 })
    rmSync(dir, { recursive: true })
  })

  it('ignores what a writer killed mid-save left (a temporary file), and a generation file is whole or absent', async () => {
    const dir = scratch()
    const store = new FileStore(dir)
    await store.put('s', bytes(1, 1), 0)
    const shard = readdirSync(dir)[0]
    const folder = path.join(dir, shard, readdirSync(path.join(dir, shard))[0])
    writeFileSync(path.join(folder, '.tmp-1-deadbeef'), bytes(9))
    expect(await store.get('s')).toEqual({ bytes: bytes(1, 1), generation: 1 })
    expect(await store.put('s', bytes(2, 2), 1)).toBe(2)
    expect(await store.get('s')).toEqual({ bytes: bytes(2, 2), generation: 2 })
    rmSync(dir, { recursive: true })
  })

  it('of processes racing saves of one session from the same generation, exactly one wins each round', async () => {
    const dir = scratch()
    const store = new FileStore(dir)
    await store.put('shared', bytes(0), 0)
    const racer = path.join(__dirname, 'fixtures', 'file-store-racer.cjs')
    const rounds = 20
    const outcomes = await Promise.all(
      [1, 2, 3].map(async (writer) => {
        const { stdout } = await promisify(execFile)(process.execPath, [racer, dir, String(writer), String(rounds)])
        return JSON.parse(stdout) as Array<number | null>
      }),
    )
    // Each writer reports, per round, the generation it won or null; every generation from 2 up
    // to the last was won by exactly one writer.
    const won = outcomes.flat().filter((g): g is number => g !== null)
    const final = await store.get('shared')
    expect(new Set(won).size).toBe(won.length)
    expect([...won].sort((a, b) => a - b)).toEqual(Array.from({ length: final!.generation - 1 }, (_, i) => i + 2))
    rmSync(dir, { recursive: true })
  })
})

describe('RedisStore keys', () => {
  it('keeps every key of a session under one hash tag, and the snapshot under the prefix', async () => {
    const store = new RedisStore({ connection: redis.connection, prefix: 'keys' })
    redisStores.push(store)
    await store.put('conv {7}:a', bytes(1), 0)
    const client = new IORedis(redis.connection)
    try {
      const keys = (await client.keys('keys:*')).sort()
      expect(keys).toEqual(['keys:{conv%20%7B7%7D%3Aa}:history', 'keys:{conv%20%7B7%7D%3Aa}:state'])
      expect(await client.hget('keys:{conv%20%7B7%7D%3Aa}:state', 'gen')).toBe('1')
    } finally {
      client.disconnect()
    }
  })
})
