// Types of `@smolagents-ts/ses-executor/bullmq` (bullmq.cjs): sessions served by BullMQ worker
// processes over Redis (docs/serving.md "Many processes: BullMQ").
import type { ConnectionOptions, Job, Queue, QueueOptions, Worker, WorkerOptions, JobsOptions } from 'bullmq'
import type { Redis } from 'ioredis'

import type { ExecutorErrorCode, ExecutorOptions, PausedCall, SessionPool, SessionStore, SessionTools, StoredSession } from '../index.js'

/** A Redis connection: an ioredis instance (duplicated, never changed) or ioredis options. */
export type RedisConnection = Redis | { host?: string; port?: number; [option: string]: unknown }

export interface RedisStoreOptions {
  connection: RedisConnection
  /** The first part of every key (default `"ses"`; 1-64 letters, digits, `_`, `.`, `-`). */
  prefix?: string
}

/**
 * Sessions in Redis, the `SessionStore` of `SessionWorker` (and of a `SessionPool`, if you
 * like): every key of a session under the hash tag `{id}`, saves compared and swapped by a Lua
 * script.
 */
export declare class RedisStore implements SessionStore {
  constructor(options: RedisStoreOptions)
  get(sessionId: string): Promise<StoredSession | undefined>
  put(sessionId: string, bytes: Uint8Array, expectedGeneration: number): Promise<number>
  delete(sessionId: string, expectedGeneration?: number): Promise<boolean>
  /** The session's generation, last step and whether a step waits for an answer. */
  head(sessionId: string): Promise<{ generation: number; step?: string; commits: number; result?: string; paused?: string }>
  /** The last 64 saves of the session, oldest first (`step` undefined for a plain `put`). */
  history(sessionId: string): Promise<Array<{ generation: number; step?: string }>>
  close(): Promise<void>
}

/** The tool call being answered, inside a tool of a `SessionWorker`. */
export interface ToolCallContext {
  sessionId: string
  /** The step (the BullMQ job id). */
  step: string
  /** The call's number within the step (from 0; after a resume, from 0 again). */
  call: number
  /**
   * The same on every attempt of this call: a tool with an effect outside the sandbox makes it
   * at most once per key (passes it on as the API's idempotency key, or records it with the
   * effect, atomically).
   */
  idempotencyKey: string
}

/** The tool call being answered, inside a tool of a `SessionWorker`; `undefined` elsewhere. */
export declare function currentToolCall(): ToolCallContext | undefined

export interface SessionWorkerOptions {
  /** Redis, for BullMQ and for the sessions (BullMQ needs `maxRetriesPerRequest: null`). */
  connection: RedisConnection & ConnectionOptions
  /** The BullMQ queue of steps (default `"ses-steps"`). */
  queueName?: string
  /** The first part of the session keys (default `"ses"`). */
  prefix?: string
  /** Options of every session's executor: the same in every worker. */
  executorOptions?: ExecutorOptions
  /** The tools of every session, or a function of the session id that gives them. */
  tools?: SessionTools | ((sessionId: string) => SessionTools | Promise<SessionTools>)
  /** Sessions this worker keeps live between steps (default 100). */
  maxLive?: number
  /** Steps this worker runs at once (BullMQ's `concurrency`, default 4). */
  concurrency?: number
  /**
   * How long a step attempt holds its session without renewing (default 30000 ms; renewed
   * every third of it): after a worker dies, its sessions wait this long at most.
   */
  leaseMs?: number
  /** How long a step waits before it tries again for a session another step holds (default 250 ms). */
  busyDelayMs?: number
  /** How often a paused step looks for its answer if nothing promotes it (default 1 hour). */
  pausedRecheckMs?: number
  /** Further options of the BullMQ `Worker` (`lockDuration`, `stalledInterval`, `name`, …). */
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency'>
}

/** What a `SessionWorker` did so far. */
export interface SessionWorkerStats {
  steps: number
  /** Tool calls a retried step answered from its journal instead of calling the tool. */
  replayedCalls: number
  /** Retries of steps an earlier attempt had saved: answered from the save. */
  alreadySaved: number
  /** Steps set to wait for an answer. */
  parked: number
  /** Saves refused by the store. */
  conflicts: number
  pool: ReturnType<SessionPool['stats']>
}

/** A BullMQ worker that runs agent steps of sessions kept in Redis. */
export declare class SessionWorker {
  constructor(options: SessionWorkerOptions)
  readonly worker: Worker
  readonly pool: SessionPool
  stats(): SessionWorkerStats
  /** Stops taking steps and waits for those under way. */
  close(): Promise<void>
}

/** An image a step drew, as a data URL. */
export interface StepImage {
  mimeType: 'image/png'
  width: number
  height: number
  dataUrl: string
}

/** How a step ended (JSON-safe: what BullMQ keeps as the job's return value). */
export type StepOutcome = {
  stepId: string
  sessionId: string
  /** The session's generation once the step was saved. */
  generation: number
  logs: string
} & (
  | {
      ok: true
      /** The run's output, JSON-safe (as `createRunJavaScriptTool` gives it). */
      output?: unknown
      is_final_answer?: boolean
      images?: StepImage[]
      /** Present while the step waits for an answer: `answer()` continues it. */
      paused?: PausedCall
    }
  | {
      ok: false
      /** The run's `ExecutorError`, as data. */
      error: { code: ExecutorErrorCode; message: string; retryable: boolean; details: Record<string, unknown> }
    }
)

export interface SessionQueueOptions {
  connection: RedisConnection & ConnectionOptions
  queueName?: string
  prefix?: string
  /**
   * Options of every step's job (default: 5 attempts, exponential backoff from 200 ms, the last
   * 1000 completed and failed jobs kept).
   */
  jobOptions?: Omit<JobsOptions, 'jobId'>
  /** Further options of the BullMQ `Queue`. */
  queueOptions?: Omit<QueueOptions, 'connection'>
}

export interface StepOptions {
  /** The run's `input`. */
  input?: unknown
  /** `sendVariables(variables)` before the run. */
  variables?: Record<string, unknown>
  /** The job id (default: a new UUID; 1-128 letters, digits, `_`, `.`, `-`). */
  stepId?: string
  /** Wait at most this long for the outcome (the step goes on). */
  waitMs?: number
}

/** Adds steps to the queue and waits for their outcomes. */
export declare class SessionQueue {
  constructor(options: SessionQueueOptions)
  readonly queue: Queue
  readonly store: RedisStore
  step(sessionId: string, code: string, options?: StepOptions): Promise<StepOutcome>
  /** Answers the paused step (what `executor.resume(answer)` takes) and waits for its next outcome. */
  answer(sessionId: string, stepId: string, answer: unknown, options?: { waitMs?: number }): Promise<StepOutcome>
  generation(sessionId: string): Promise<number>
  close(): Promise<void>
}

export type { Job }
