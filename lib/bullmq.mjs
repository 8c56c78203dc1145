// ES module entry of `@smolagents-ts/ses-executor/bullmq`: the CommonJS module (bullmq.cjs),
// its exports named.
import adapter from './bullmq.cjs'

export const { SessionWorker, SessionQueue, RedisStore, currentToolCall } = adapter
