//! Waiting a few microseconds for another thread's message without sleeping, as the engine's
//! threads and Node's do for each other's answers: a thread that sleeps costs a wake-up, tens of
//! microseconds on these machines, where a synchronous tool call's whole round trip takes
//! under two.
//!
//! For the first [`PAUSE_PHASE`] of a wait each round only issues the CPU's spin-wait hint: most
//! answers come within it, and a yield costs a system call and a pass through the scheduler
//! (measured: W4 1.80 → 1.60 µs a call, W3 2.82 → 2.41). After it each round yields the core: on
//! a machine with more runnable threads than cores the thread that will answer may need this
//! one, and a pure spin made every hop slower there. With one core there is no first phase: the
//! answering thread cannot run while this one spins (measured with both threads held on one
//! core: W4 8.3 µs a call, of which the spinning took half).
//!
//! A thread that waits for each of a series of messages in turn (Node's thread for the calls of
//! a tool loop) bounds the series with a [`Chain`], so that its other work gets its turn.

use std::hint;
use std::sync::LazyLock;
use std::thread;
use std::time::{Duration, Instant};

/// How long a wait spins on the CPU before it yields the core each round.
const PAUSE_PHASE: Duration = Duration::from_micros(2);

/// Spin-wait hints per round of the first phase: a few hundred cycles between looks at the
/// clock and at what the caller waits for.
const PAUSES: u32 = 2;

/// Whether this process may run on more than one core (its affinity and cgroup quota count).
static SEVERAL_CORES: LazyLock<bool> =
    LazyLock::new(|| thread::available_parallelism().is_ok_and(|cores| cores.get() > 1));

/// One wait, begun when it was made.
pub struct Spin {
    pause_until: Instant,
}

impl Spin {
    /// A wait starting now.
    pub fn start() -> Self {
        let now = Instant::now();
        Self {
            pause_until: if *SEVERAL_CORES {
                now + PAUSE_PHASE
            } else {
                now
            },
        }
    }

    /// One round of waiting, between two looks at what the caller waits for.
    pub fn relax(&self) {
        if Instant::now() < self.pause_until {
            for _ in 0..PAUSES {
                hint::spin_loop();
            }
        } else {
            thread::yield_now();
        }
    }
}

/// A chain of waits, each for the next of a series of messages, that ends once it has lasted
/// its limit: then one message goes unwaited for, and the next wait starts a new chain.
pub struct Chain {
    limit: Duration,
    start: Option<Instant>,
}

impl Chain {
    /// No chain yet; each will last at most `limit`.
    pub const fn new(limit: Duration) -> Self {
        Self { limit, start: None }
    }

    /// Until when to wait, at `now`, for the next message (`wait` at most): `None` once the
    /// chain has lasted its limit, which ends it.
    pub fn wait_until(&mut self, now: Instant, wait: Duration) -> Option<Instant> {
        let start = *self.start.get_or_insert(now);
        if now.duration_since(start) >= self.limit {
            self.start = None;
            return None;
        }
        Some(now + wait)
    }

    /// Ends the chain: no message came, or the thread has other work.
    pub fn end(&mut self) {
        self.start = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_micros(20);

    #[test]
    fn a_chain_ends_at_its_limit_with_one_unwaited_message_and_the_next_wait_starts_another() {
        let mut chain = Chain::new(Duration::from_millis(1));
        let start = Instant::now();
        let at = |micros| start + Duration::from_micros(micros);
        assert_eq!(chain.wait_until(start, WAIT), Some(at(20)));
        assert_eq!(chain.wait_until(at(999), WAIT), Some(at(1_019)));
        // The thread's other work gets its turn: this message goes back without a wait.
        assert_eq!(chain.wait_until(at(1_000), WAIT), None);
        // The next wait is at once (not a millisecond later), and its chain lasts as long.
        assert_eq!(chain.wait_until(at(1_001), WAIT), Some(at(1_021)));
        assert_eq!(chain.wait_until(at(2_000), WAIT), Some(at(2_020)));
        assert_eq!(chain.wait_until(at(2_001), WAIT), None);
    }

    #[test]
    fn an_ended_chain_starts_again_at_the_next_wait() {
        let mut chain = Chain::new(Duration::from_millis(1));
        let start = Instant::now();
        let at = |micros| start + Duration::from_micros(micros);
        assert_eq!(chain.wait_until(start, WAIT), Some(at(20)));
        chain.end();
        assert_eq!(chain.wait_until(at(1_500), WAIT), Some(at(1_520)));
        assert_eq!(chain.wait_until(at(2_499), WAIT), Some(at(2_519)));
        assert_eq!(chain.wait_until(at(2_500), WAIT), None);
    }
}
