// Conversations served by worker processes through BullMQ over Redis (docs/serving.md "Many
// processes: BullMQ"). Needs a Redis server and the packages bullmq and ioredis:
//
//   node examples/serving-bullmq.mjs [--redis-port 6379]
//
// Starts two worker processes (this file, with --worker), then plays a shop assistant's
// conversations against them: each step is a BullMQ job that whichever worker is free runs on
// the session's snapshot in Redis. Placing an order waits for a human's approval (the step
// pauses; `answer()` resumes it on any worker), and the order's charge is made once per
// idempotency key, however often a crashed worker's step is retried.
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'

import { Redis } from 'ioredis'

import { pauseRun } from '@smolagents-ts/ses-executor'
import { SessionQueue, SessionWorker, currentToolCall } from '@smolagents-ts/ses-executor/bullmq'

const portFlag = process.argv.indexOf('--redis-port')
const port = portFlag > 0 ? Number(process.argv[portFlag + 1]) : 6379
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null }
const queueName = 'shop-assistant'

/** The shop's tools, as every worker has them. `redis` holds the shop's own records. */
function shopTools(redis) {
  return {
    price: async (item) => ({ apple: 0.5, pear: 0.75, fig: 1.2 })[item] ?? null,
    // A human approves each order: the step waits (hours, if need be) with no worker held.
    approve: (order) => pauseRun({ approve: order }),
    // The charge is an effect outside the sandbox: made once per idempotency key, so that a
    // retried step (its worker died after charging) cannot charge twice.
    charge: async (customer, amount) => {
      const { idempotencyKey } = currentToolCall()
      const first = await redis.set(`shop:charge:${idempotencyKey}`, String(amount), 'NX')
      if (first === 'OK') await redis.incrbyfloat(`shop:charged:${customer}`, amount)
      return `charged ${customer} ${amount.toFixed(2)} EUR`
    },
  }
}

async function worker() {
  const redis = new Redis(connection)
  const steps = new SessionWorker({ connection, queueName, tools: shopTools(redis), executorOptions: { timeoutMs: 10_000 } })
  process.on('SIGTERM', async () => {
    await steps.close()
    redis.disconnect()
    process.exit(0)
  })
  // The parent is gone (it crashed, or was killed): so is this worker. BullMQ gives its steps
  // to the other workers.
  process.on('disconnect', () => process.exit(1))
  await steps.worker.waitUntilReady()
  process.send('ready')
}

async function main() {
  const workers = [1, 2].map(() => fork(fileURLToPath(import.meta.url), ['--worker', '--redis-port', String(port)]))
  await Promise.all(workers.map((child) => new Promise((resolve) => child.once('message', resolve))))
  const queue = new SessionQueue({ connection, queueName })
  const redis = new Redis(connection)
  try {
    // Sessions live in Redis until deleted: each run of the example has its own.
    const run = randomUUID().slice(0, 8)
    const conversation = async (customer, item, count) => {
      const session = `shop-${run}-${customer}`
      const quote = await queue.step(session, `const unit = await price("${item}"); const total = unit * ${count}; total`)
      const order = await queue.step(session, `let receipt = "not approved"; if (approve({ item: "${item}", count: ${count}, total })) receipt = await charge("${customer}", total); receipt`)
      // The step waits for a human: here one says yes at once.
      const approved = await queue.answer(session, order.stepId, true)
      const done = await queue.step(session, 'final_answer({ total, receipt })')
      return { quote: quote.output, paused: order.paused.reason, approved: approved.output, answer: done.output }
    }
    const results = await Promise.all([conversation(`ana-${run}`, 'apple', 12), conversation(`bo-${run}`, 'fig', 4)])
    for (const result of results) console.log(JSON.stringify(result).replaceAll(`-${run}`, ''))
    const charged = await Promise.all(['ana', 'bo'].map((customer) => redis.get(`shop:charged:${customer}-${run}`)))
    console.log(`charged: ana ${charged[0]}, bo ${charged[1]}`)
  } finally {
    await queue.close()
    redis.disconnect()
    for (const child of workers) child.kill('SIGTERM')
  }
}

if (process.argv.includes('--worker')) await worker()
else await main()
