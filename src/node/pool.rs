//! The engine-thread pool as Node sees it: its size, set once for the whole process, and its
//! figures. Executors of every Node environment of the process (the main thread and each
//! worker thread) share the one pool.

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};

use super::arguments;

use crate::executor::live_engines;
use crate::scheduler::pool::{self, BLOCKED_EXTRA, MAX_THREADS};

/// What the engine-thread pool is doing now.
#[napi(object, object_from_js = false)]
pub struct EnginePoolStats {
    /// The most engine threads that run executors' code at once (the configured size).
    pub size: u32,
    /// The most engine threads alive: `size`, and up to 4 more that serve waiting executors
    /// while others wait for Node's thread to answer a synchronous tool call.
    pub max_threads: u32,
    /// Engine threads started so far and still alive (they start as work arrives).
    pub threads: u32,
    /// Engine threads serving an executor at this moment.
    pub busy: u32,
    /// Of those, threads waiting for Node's thread to answer a synchronous tool call.
    pub blocked: u32,
    /// Executors waiting for a free engine thread (those suspended at the end of a time slice
    /// included).
    pub queued: u32,
    /// Of those, runs suspended at the end of a time slice, each keeping its coroutine stack.
    pub suspended: u32,
    /// Coroutine stacks that exist: one per run on an engine thread or suspended, and the free
    /// ones kept for reuse (at most 32).
    pub stacks: u32,
    /// QuickJS runtimes alive in the process: one per executor between `init()` and
    /// `cleanup()` (or until a forgotten executor is garbage-collected).
    pub engines: u32,
}

fn count(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Sets how many engine threads run the executors of this process (default: the number of
/// cores, or `SES_EXECUTOR_THREADS` when set as the process starts). Takes effect at once:
/// more threads start as work arrives; threads beyond a smaller size exit once idle (half a
/// second after their last run). Throws a `TypeError` unless `threads` is a number, and a
/// `RangeError` unless it is an integer from 1 to 1024.
#[napi(ts_args_type = "threads: number")]
pub fn set_engine_threads(env: Env, threads: Unknown) -> Result<()> {
    let max = u32::try_from(MAX_THREADS).unwrap_or(u32::MAX);
    let threads = arguments::integer(&env, &threads, "threads", 1, max)?;
    pool::set_threads(threads as usize);
    Ok(())
}

/// The engine-thread pool's figures now.
#[napi]
pub fn engine_pool_stats() -> EnginePoolStats {
    let stats = pool::stats();
    EnginePoolStats {
        size: count(stats.size),
        max_threads: count(stats.size + BLOCKED_EXTRA),
        threads: count(stats.threads),
        busy: count(stats.busy),
        blocked: count(stats.blocked),
        queued: count(stats.queued),
        suspended: count(stats.suspended),
        stacks: count(stats.stacks),
        engines: count(live_engines()),
    }
}
