//! Waiting a few microseconds for another thread's message without sleeping, as the engine's
//! threads and Node's do for each other's answers: a wake-up costs more than a synchronous tool
//! call's whole round trip.
//!
//! For the first [`PAUSE_PHASE`] of a wait each round only issues the CPU's spin-wait hint (most
//! answers come within it, and a yield is a system call); then each round yields the core, which
//! the answering thread may need. With one core there is no first phase: the answering thread
//! cannot run while this one spins. Figures: bench/README.md, "Spin waits".
//!
//! Node's thread waits with [`Spin::keeping_core`], which never yields: the engine thread it just
//! woke may run on Node's own core, and a yield would give it that core for a whole time slice
//! while Node's event loop stalls. Where the answering thread last ran on Node's core
//! ([`Core`]), Node's thread does not wait at all but sleeps in its event loop, so the kernel can
//! wake it on a free core. Figures: bench/README.md, "Node's thread keeps its core".
//!
//! A thread that waits for each of a series of messages in turn (Node's thread for the calls of
//! a tool loop) bounds the series with a [`Chain`], so that its other work gets its turn.

use std::hint;
use std::sync::atomic::{AtomicI32, Ordering};
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
    /// Until when each round only issues the spin-wait hint; `None`: every round does.
    pause_until: Option<Instant>,
}

impl Spin {
    /// A wait starting now.
    pub fn start() -> Self {
        let now = Instant::now();
        Self {
            pause_until: Some(if *SEVERAL_CORES {
                now + PAUSE_PHASE
            } else {
                now
            }),
        }
    }

    /// A wait starting now, for a thread that last ran on `answerer`, that never yields the
    /// caller's core while another core exists (see the module documentation); `None` when that
    /// thread ran on the caller's core, where the caller should sleep rather than wait. On one
    /// core it yields from the start like [`start`](Self::start): there the answering thread
    /// always shares the core, cannot run while the caller spins, and there is no free core to
    /// be woken on.
    pub fn keeping_core(answerer: &Core) -> Option<Self> {
        if !*SEVERAL_CORES {
            return Some(Self::start());
        }
        let shared = answerer
            .last()
            .is_some_and(|core| Some(core) == current_core());
        (!shared).then_some(Self { pause_until: None })
    }

    /// Waits until `done` says so or `deadline` passes, looking at `done` first and then between
    /// rounds.
    pub fn until(self, deadline: Instant, mut done: impl FnMut() -> bool) {
        while !done() && Instant::now() < deadline {
            self.relax();
        }
    }

    /// One round of waiting, between two looks at what the caller waits for.
    fn relax(&self) {
        if self.pause_until.is_none_or(|until| Instant::now() < until) {
            for _ in 0..PAUSES {
                hint::spin_loop();
            }
        } else {
            thread::yield_now();
        }
    }
}

/// The core a thread last ran on when it said so ([`record`](Self::record)): that of the
/// engine thread that last queued a message for Node's thread, for [`Spin::keeping_core`].
/// Unknown where the system does not tell (then waits never skip).
pub struct Core(AtomicI32);

impl Core {
    /// No core recorded yet.
    pub const fn new() -> Self {
        Self(AtomicI32::new(-1))
    }

    /// Records the calling thread's core.
    pub fn record(&self) {
        if let Some(core) = current_core() {
            self.0.store(core, Ordering::Relaxed);
        }
    }

    fn last(&self) -> Option<i32> {
        Some(self.0.load(Ordering::Relaxed)).filter(|core| *core >= 0)
    }
}

impl Default for Core {
    fn default() -> Self {
        Self::new()
    }
}

/// The core the calling thread runs on (a few nanoseconds: the vDSO reads it).
#[cfg(target_os = "linux")]
fn current_core() -> Option<i32> {
    // SAFETY: no arguments; it returns -1 with errno set when the kernel cannot tell.
    let core = unsafe { libc::sched_getcpu() };
    (core >= 0).then_some(core)
}

#[cfg(not(target_os = "linux"))]
fn current_core() -> Option<i32> {
    None
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

    /// Keeps the calling thread on the core it runs on now, which it returns.
    #[cfg(target_os = "linux")]
    fn pin_to_current_core() -> i32 {
        let core = current_core().expect("Linux tells a thread its core");
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it, and
        // sched_setaffinity reads it for the calling thread (pid 0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(usize::try_from(core).expect("a core number"), &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
        core
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn node_waits_only_for_a_thread_that_last_ran_on_another_core() {
        // Read before pinning: the count is taken once per process, from the thread that first
        // asks, and a pinned thread would see one core.
        let several = *SEVERAL_CORES;
        std::thread::spawn(move || {
            let here = pin_to_current_core();
            let answerer = Core::new();
            // Nothing recorded yet: the wait may happen.
            assert!(Spin::keeping_core(&answerer).is_some());
            answerer.record();
            assert_eq!(answerer.last(), Some(here));
            // Last seen on the caller's core: no wait (with other cores to be woken on).
            assert_eq!(Spin::keeping_core(&answerer).is_none(), several);
            let elsewhere = Core(AtomicI32::new(here + 1));
            assert!(Spin::keeping_core(&elsewhere).is_some());
        })
        .join()
        .expect("the pinned thread");
    }

    #[test]
    fn a_wait_that_keeps_its_core_never_reaches_the_yielding_phase() {
        let spin = Spin::keeping_core(&Core::new()).expect("no core recorded: a wait");
        assert_eq!(spin.pause_until.is_none(), *SEVERAL_CORES);
    }
}
