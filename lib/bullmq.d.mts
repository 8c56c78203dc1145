// Types of the ES module entry of `@smolagents-ts/ses-executor/bullmq` (bullmq.mjs).
export * from './bullmq.cjs'
