//! What the pool runs: a job (an executor's inbox with messages to serve), and the account of
//! thread time that orders it among the others (`fair.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Work the pool runs: an executor's inbox with messages to serve.
pub(crate) trait Job: Send + Sync + 'static {
    /// Serves the job on the calling pool thread (on a coroutine: `slice.rs`).
    fn serve(self: Arc<Self>);
    /// The pool cannot run the job (no thread could be started): it must answer its messages
    /// with a failure rather than leave them waiting.
    fn abandon(self: Arc<Self>);
    /// A timer set with `pool::wake_at` for `at` fired.
    fn timer(self: Arc<Self>, at: Instant);
    /// The stack depth the job's own code checks itself against (its coroutine's stack holds
    /// that and a margin: `stack_pool.rs`).
    fn stack_bytes(&self) -> usize;
    /// The thread time the job has used, which orders it among the others (`fair.rs`).
    fn account(&self) -> &Account;
}

/// A job's virtual runtime: the thread time its servings used, in nanoseconds, moved into the
/// queue's window whenever it queues (`fair.rs`).
#[derive(Debug, Default)]
pub(crate) struct Account {
    runtime: AtomicU64,
}

impl Account {
    /// The runtime now.
    pub(crate) fn runtime(&self) -> u64 {
        // Only pool threads write it, under the pool's lock; readers need no ordering.
        self.runtime.load(Ordering::Relaxed)
    }

    /// Adds the thread time one serving used.
    pub(crate) fn charge(&self, used: Duration) {
        let nanos = u64::try_from(used.as_nanos()).unwrap_or(u64::MAX);
        self.runtime
            .store(self.runtime().saturating_add(nanos), Ordering::Relaxed);
    }

    /// Moves the runtime into `low..=high`; returns it.
    pub(crate) fn clamp(&self, low: u64, high: u64) -> u64 {
        let runtime = self.runtime().clamp(low, high.max(low));
        self.runtime.store(runtime, Ordering::Relaxed);
        runtime
    }
}
