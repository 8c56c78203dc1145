// examples/serving-bullmq.mjs runs as its header says, against a real Redis: two worker
// processes, two conversations, each with an approval, each charged once.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { type RedisServer, startRedis } from './redis-server'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})

describe('examples/serving-bullmq.mjs', () => {
  it('serves two conversations from two worker processes, each paused for approval and charged once', async () => {
    const example = path.join(__dirname, '..', 'examples', 'serving-bullmq.mjs')
    const { stdout } = await promisify(execFile)(process.execPath, [example, '--redis-port', String(redis.port)], { timeout: 60_000 })
    const lines = stdout.trim().split('\n')
    expect(lines.slice(0, 2).map((line) => JSON.parse(line))).toEqual([
      { quote: 6, paused: { approve: { item: 'apple', count: 12, total: 6 } }, approved: 'charged ana 6.00 EUR', answer: { total: 6, receipt: 'charged ana 6.00 EUR' } },
      { quote: 4.8, paused: { approve: { item: 'fig', count: 4, total: 4.8 } }, approved: 'charged bo 4.80 EUR', answer: { total: 4.8, receipt: 'charged bo 4.80 EUR' } },
    ])
    expect(lines[2]).toBe('charged: ana 6, bo 4.8')
  })
})
