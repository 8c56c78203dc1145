//! The engine threads: one bounded pool per process, shared by every executor.
//!
//! An executor owns no thread. Between runs its QuickJS runtime and everything around it rest in
//! its inbox (`inbox.rs`); a message for an idle executor queues the inbox here, and the next
//! free pool thread takes it up, serves its messages and puts it back. A run that waits for an
//! asynchronous tool gives its thread back the same way, and is queued again when the answer (or
//! its deadline, through [`wake_at`]) arrives.
//!
//! Every serving runs on a coroutine of its own (`slice.rs`), so a run keeps its thread for
//! one time slice at a time: once it has computed for a [`slice::slice`] while others wait, it
//! is suspended at its next interrupt poll and queued again, and resumes later, on whichever
//! thread is free, where it stopped. Which job a free thread takes is the fair order of
//! `fair.rs`: the least thread time used first, a newcomer or a run whose tool just answered
//! ahead of jobs that have been computing, a suspended run whose deadline has passed (or that
//! was aborted, or whose executor is being cleaned up) before all of them. A trivial run among
//! spinners therefore waits about one slice for a thread, whatever the number of spinners, and
//! spinners share the threads evenly.
//!
//! Threads start on demand, up to the configured size (default: the machine's cores; the
//! `SES_EXECUTOR_THREADS` environment variable when the pool starts, or [`set_threads`] at any
//! time). An idle thread polls the queue for a few microseconds, then sleeps without using CPU;
//! threads beyond a lowered size exit once idle.
//!
//! The size bounds the threads that compute. A run waiting for a synchronous tool holds its
//! thread, computing nothing, while Node's thread answers; with many executors Node's thread has
//! a backlog, and that wait grows to a large part of each step (bench/README.md, "Threads blocked
//! on Node's thread hand the queue over"). So a thread that waits for Node
//! while executors are queued ([`Blocked`]) lets another thread take the queue: up to
//! [`BLOCKED_EXTRA`] threads beyond the size, as Go's scheduler hands a blocked thread's
//! processor over. Free threads take a job only while fewer than the size compute; a thread
//! beyond the size exits once it has been idle for [`EXTRA_IDLE`].

use std::collections::BinaryHeap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::fair::{RunQueue, Runnable};
use super::job::Job;
use super::slice::{self, Ran};
use super::spin::Spin;
use super::stack;
use super::stack_pool;

/// The environment variable that sizes the pool when it starts.
pub const THREADS_VARIABLE: &str = "SES_EXECUTOR_THREADS";

/// The most threads the pool may be configured to.
pub const MAX_THREADS: usize = 1024;

/// The most threads beyond the configured size that serve the queue while others wait for
/// Node's thread (see the module documentation): the process runs at most size + this many
/// engine threads.
pub const BLOCKED_EXTRA: usize = 4;

/// How long a thread beyond the configured size stays asleep with nothing to do before it exits.
const EXTRA_IDLE: Duration = Duration::from_millis(500);

/// How long a thread that just finished a job polls for the next one before it sleeps: the next
/// run of an executor usually follows within one round trip through Node's thread (see
/// `inbox.rs` on the cost of waking a sleeping thread).
const SPIN: Duration = Duration::from_micros(50);

/// What a timer does when it fires. Neither allocates: a timer often outlives the run that set
/// it, and must not pin memory meanwhile.
enum Action {
    /// Tells the job, if it still exists.
    Wake(Weak<dyn Job>),
    /// Calls the function.
    Call(fn()),
}

impl Action {
    fn fire(self, at: Instant) {
        match self {
            Action::Wake(job) => {
                if let Some(job) = job.upgrade() {
                    job.timer(at);
                }
            }
            Action::Call(action) => action(),
        }
    }
}

/// A timer: `action` runs on a pool thread at (or soon after) `at`.
struct Timer {
    at: Instant,
    order: u64,
    action: Action,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}

impl Eq for Timer {}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timer {
    /// Reversed: [`BinaryHeap`] is a max-heap, the earliest timer must come out first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.order).cmp(&(self.at, self.order))
    }
}

struct State {
    jobs: RunQueue,
    timers: BinaryHeap<Timer>,
    timer_order: u64,
    /// Sleeping threads, by number, the most recently asleep last (woken first: its stack and
    /// caches are the warmest).
    sleeping: Vec<(usize, Thread)>,
    /// Threads polling for work before they sleep.
    spinning: usize,
    /// Threads serving a job.
    busy: usize,
    /// Of those, threads waiting for Node's thread ([`Blocked`]).
    blocked: usize,
    /// Threads started and not exited.
    threads: usize,
    /// The configured size.
    target: usize,
    next_number: usize,
}

/// The process's pool.
struct Pool {
    state: Mutex<State>,
    /// `state.jobs.len()`, readable without the lock by polling threads.
    queued: AtomicUsize,
    /// Jobs suspended at the end of a slice and not resumed yet.
    suspended: AtomicUsize,
}

/// Figures about the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// The configured size: the most threads that compute at once.
    pub size: usize,
    /// Threads started and not exited.
    pub threads: usize,
    /// Threads serving an executor now.
    pub busy: usize,
    /// Of those, threads waiting for Node's thread (a synchronous tool call).
    pub blocked: usize,
    /// Executors waiting for a thread (those suspended at the end of a slice included).
    pub queued: usize,
    /// Of those, runs suspended at the end of a slice, each holding its coroutine stack.
    pub suspended: usize,
    /// Coroutine stacks that exist: one per serving or suspended run, and the free ones kept
    /// for reuse.
    pub stacks: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State {
            jobs: RunQueue::default(),
            timers: BinaryHeap::new(),
            timer_order: 0,
            sleeping: Vec::new(),
            spinning: 0,
            busy: 0,
            blocked: 0,
            threads: 0,
            target: initial_size(std::env::var(THREADS_VARIABLE).ok().as_deref()),
            next_number: 0,
        }),
        queued: AtomicUsize::new(0),
        suspended: AtomicUsize::new(0),
    })
}

/// The size the pool starts with: `SES_EXECUTOR_THREADS` if it holds a whole number in
/// `1..=MAX_THREADS`, otherwise the machine's cores.
fn initial_size(variable: Option<&str>) -> usize {
    variable
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|size| (1..=MAX_THREADS).contains(size))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

impl State {
    /// Threads serving a job that compute (not waiting for Node's thread).
    fn computing(&self) -> usize {
        self.busy - self.blocked
    }

    /// The threads the pool may run now: its size, and one more per thread waiting for Node's
    /// thread, up to [`BLOCKED_EXTRA`].
    fn allowed(&self) -> usize {
        self.target + self.blocked.min(BLOCKED_EXTRA)
    }

    /// Whether a free thread may take a job now.
    fn may_take(&self) -> bool {
        !self.jobs.is_empty() && self.computing() < self.target
    }
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing runs user code under this lock; poisoning would follow a bug, and the state
        // stays consistent through every update made under it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Queues `job` for the next free thread, waking or starting one if none is about to look.
pub(crate) fn schedule(job: Arc<dyn Job>) {
    let pool = pool();
    let mut state = pool.lock();
    state.jobs.push(Runnable::Fresh(job));
    pool.queued.store(state.jobs.len(), Ordering::Release);
    if state.jobs.len() > state.spinning && state.may_take() {
        wake_or_start(pool, state);
    }
}

/// Something `job` must answer at once arrived (an abort, a shutdown): if it is suspended at
/// the end of a slice, it is resumed before the jobs that wait their turn.
pub(crate) fn hurry(job: &Arc<dyn Job>) {
    pool().lock().jobs.hurry(job);
}

/// The calling pool thread waits for Node's thread (a synchronous tool call) and computes
/// nothing until this drops: meanwhile queued executors may take another thread (see the
/// module documentation). Nothing on a thread that is not the pool's (tests drive engines on
/// their own threads).
pub(crate) struct Blocked {
    counted: bool,
}

thread_local! {
    /// Whether this thread is one of the pool's, serving a job.
    static SERVING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Blocked {
    /// Counts the calling thread (serving a job) as blocked, and hands the queue to another
    /// thread if executors wait.
    pub(crate) fn now() -> Self {
        if !SERVING.get() {
            return Blocked { counted: false };
        }
        let pool = pool();
        let mut state = pool.lock();
        state.blocked += 1;
        if state.jobs.len() > state.spinning && state.may_take() {
            wake_or_start(pool, state);
        }
        Blocked { counted: true }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        if self.counted {
            // The thread computes again: the pool runs over its size until a thread is free.
            pool().lock().blocked -= 1;
        }
    }
}

/// Tells `job` (through [`Job::timer`]) on a pool thread once `at` has passed, if it still
/// exists. Timers are not cancelled: a job whose wait is over by then ignores it.
pub(crate) fn wake_at(at: Instant, job: Weak<dyn Job>) {
    add_timer(at, Action::Wake(job));
}

/// Calls `action` on a pool thread once `at` has passed.
pub(crate) fn call_at(at: Instant, action: fn()) {
    add_timer(at, Action::Call(action));
}

fn add_timer(at: Instant, action: Action) {
    let pool = pool();
    let mut state = pool.lock();
    let earliest = state.timers.peek().is_none_or(|first| at < first.at);
    let order = state.timer_order;
    state.timer_order += 1;
    state.timers.push(Timer { at, order, action });
    // A sleeping thread sleeps until the earliest timer it knew of: wake one to look again.
    // Busy threads look at the timers whenever they finish a job.
    if earliest && state.spinning == 0 {
        if let Some((_, thread)) = state.sleeping.pop() {
            thread.unpark();
        }
    }
}

/// Whether executors are waiting for a thread: a job that could give its thread up should, and
/// nobody should poll for an answer (the cores have better things to do).
pub fn others_waiting() -> bool {
    pool().queued.load(Ordering::Acquire) > 0
}

/// [`others_waiting`] for a caller that has just queued a job of its own, which may not have
/// been taken yet: whether more than one job waits.
pub fn others_waiting_besides_one() -> bool {
    pool().queued.load(Ordering::Acquire) > 1
}

/// Sets the number of threads. Fewer: threads beyond it exit once idle for [`EXTRA_IDLE`] (at
/// once beyond [`BLOCKED_EXTRA`] more). More: they start as work arrives.
pub fn set_threads(size: usize) {
    let pool = pool();
    let mut state = pool.lock();
    state.target = size.clamp(1, MAX_THREADS);
    // Sleeping threads beyond the new size exit when woken; waiting jobs may use new threads.
    for (_, thread) in state.sleeping.drain(..) {
        thread.unpark();
    }
    while state.threads < state.allowed() && state.jobs.len() > state.spinning + state.busy {
        if !start_thread(&mut state) {
            break;
        }
    }
}

/// The pool's figures now.
pub fn stats() -> PoolStats {
    let state = pool().lock();
    PoolStats {
        size: state.target,
        threads: state.threads,
        busy: state.busy,
        blocked: state.blocked,
        queued: state.jobs.len(),
        suspended: pool().suspended.load(Ordering::Relaxed),
        stacks: stack_pool::mapped(),
    }
}

fn wake_or_start(pool: &Pool, mut state: MutexGuard<'_, State>) {
    if let Some((_, thread)) = state.sleeping.pop() {
        thread.unpark();
        return;
    }
    if state.threads < state.allowed() && start_thread(&mut state) {
        return;
    }
    if state.threads == 0 {
        // No thread runs and none can be started: nothing would ever serve the queue. (A
        // suspended job stays: it is resumed, never abandoned, and the next thread takes it.)
        let abandoned = state.jobs.drain_fresh();
        pool.queued.store(state.jobs.len(), Ordering::Release);
        drop(state);
        for job in abandoned {
            job.abandon();
        }
    }
}

/// Starts one pool thread; false if the system refused.
fn start_thread(state: &mut State) -> bool {
    let number = state.next_number;
    let started = std::thread::Builder::new()
        .name("ses-executor".into())
        .stack_size(stack::THREAD_STACK_BYTES)
        .spawn(move || thread_main(number));
    if started.is_ok() {
        state.next_number += 1;
        state.threads += 1;
    }
    started.is_ok()
}

/// A pool thread: fires due timers, serves jobs, polls briefly when work runs out, then sleeps
/// until woken or until the next timer is due.
fn thread_main(number: usize) {
    let pool = pool();
    let stack = stack::Stack::of_current_thread();
    let mut just_served = false;
    let mut state = pool.lock();
    loop {
        let now = Instant::now();
        let mut due = Vec::new();
        while state.timers.peek().is_some_and(|timer| timer.at <= now) {
            due.extend(state.timers.pop());
        }
        if !due.is_empty() {
            drop(state);
            for timer in due {
                let _ = catch_unwind(AssertUnwindSafe(|| timer.action.fire(timer.at)));
            }
            state = pool.lock();
            continue;
        }
        if state.threads > state.target + BLOCKED_EXTRA {
            state.threads -= 1;
            return;
        }
        let now = Instant::now();
        if let Some(runnable) = state.may_take().then(|| state.jobs.pop(now)).flatten() {
            pool.queued.store(state.jobs.len(), Ordering::Release);
            state.busy += 1;
            drop(state);
            if matches!(runnable, Runnable::Suspended(_)) {
                pool.suspended.fetch_sub(1, Ordering::Relaxed);
            }
            // A job catches its own panics (it must answer its messages), inside its coroutine;
            // this keeps the thread alive whatever else happens.
            SERVING.set(true);
            let ran = catch_unwind(AssertUnwindSafe(|| match runnable {
                Runnable::Fresh(job) => slice::start(job, &pool.queued),
                Runnable::Suspended(task) => slice::resume(task, &pool.queued),
            }));
            SERVING.set(false);
            let used = now.elapsed();
            just_served = true;
            state = pool.lock();
            state.busy -= 1;
            // A turn counts at most one slice: the time is the wall clock's, and a thread the
            // kernel set aside meanwhile (a busy machine) must not push a short run behind a
            // whole round of spinners.
            let used = used.min(slice::slice());
            match ran {
                Ok(Ran::Finished(job)) => job.account().charge(used),
                Ok(Ran::Suspended(task)) => {
                    task.job().account().charge(used);
                    pool.suspended.fetch_add(1, Ordering::Relaxed);
                    state.jobs.push(Runnable::Suspended(task));
                    pool.queued.store(state.jobs.len(), Ordering::Release);
                }
                Err(_) => {}
            }
            continue;
        }
        if just_served {
            just_served = false;
            state.spinning += 1;
            drop(state);
            Spin::start().until(Instant::now() + SPIN, || {
                pool.queued.load(Ordering::Acquire) > 0
            });
            state = pool.lock();
            state.spinning -= 1;
            continue;
        }
        // A thread beyond the size (started while others waited for Node's thread, or left by
        // a smaller size) sleeps at most `EXTRA_IDLE`: the next wait for Node's thread usually
        // follows soon, and starting a thread costs more than waking one.
        let idle_until = (state.threads > state.target).then(|| Instant::now() + EXTRA_IDLE);
        let wake_at = [state.timers.peek().map(|timer| timer.at), idle_until]
            .into_iter()
            .flatten()
            .min();
        state.sleeping.push((number, std::thread::current()));
        drop(state);
        // Pages a deep run touched below the usual depth go back to the system while the
        // thread has nothing to do.
        stack.release_deep_pages();
        stack_pool::release_deep_pages();
        match wake_at {
            Some(at) => std::thread::park_timeout(at.saturating_duration_since(Instant::now())),
            None => std::thread::park(),
        }
        state = pool.lock();
        // Woken by a timer's time or spuriously rather than by `unpark`: no longer asleep.
        state.sleeping.retain(|(sleeper, _)| *sleeper != number);
        let idle = idle_until.is_some_and(|until| Instant::now() >= until);
        if idle && state.threads > state.target && !state.may_take() {
            state.threads -= 1;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::job::Account;
    use std::sync::mpsc;

    struct Probe {
        served: mpsc::Sender<(String, std::thread::ThreadId)>,
        name: String,
        hold: Duration,
        account: Account,
    }

    impl Job for Probe {
        fn serve(self: Arc<Self>) {
            std::thread::sleep(self.hold);
            let _ = self
                .served
                .send((self.name.clone(), std::thread::current().id()));
        }

        fn abandon(self: Arc<Self>) {}

        fn timer(self: Arc<Self>, at: Instant) {
            let _ = self.served.send((
                format!("{} at {at:?}", self.name),
                std::thread::current().id(),
            ));
        }

        fn stack_bytes(&self) -> usize {
            64 * 1024
        }

        fn account(&self) -> &Account {
            &self.account
        }
    }

    #[test]
    fn the_size_comes_from_the_variable_when_it_is_a_sensible_number() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(initial_size(Some("3")), 3);
        assert_eq!(initial_size(Some(" 8 ")), 8);
        assert_eq!(initial_size(None), cores);
        for bad in ["0", "-1", "1.5", "lots", "", "1000000"] {
            assert_eq!(initial_size(Some(bad)), cores, "{bad}");
        }
    }

    #[test]
    fn jobs_run_on_pool_threads_and_timers_fire_after_their_time() {
        let (served, results) = mpsc::channel();
        for name in ["a", "b", "c"] {
            schedule(Arc::new(Probe {
                served: served.clone(),
                name: name.into(),
                hold: Duration::ZERO,
                account: Account::default(),
            }));
        }
        let mut names: Vec<String> = (0..3)
            .map(|_| results.recv_timeout(Duration::from_secs(10)).unwrap().0)
            .collect();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);

        let start = Instant::now();
        let due = start + Duration::from_millis(30);
        let probe: Arc<dyn Job> = Arc::new(Probe {
            served,
            name: "timer".into(),
            hold: Duration::ZERO,
            account: Account::default(),
        });
        wake_at(due, Arc::downgrade(&probe));
        let (fired, _) = results.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(fired, format!("timer at {due:?}"));
        assert!(Instant::now() >= due);
        // A timer of a job that is gone does nothing.
        let gone: Arc<dyn Job> = Arc::new(Probe {
            served: mpsc::channel().0,
            name: "gone".into(),
            hold: Duration::ZERO,
            account: Account::default(),
        });
        wake_at(start, Arc::downgrade(&gone));
        drop(gone);
        drop(probe);
        let stats = stats();
        assert!(stats.threads >= 1 && stats.threads <= stats.size + BLOCKED_EXTRA);
    }

    #[test]
    fn timers_come_out_earliest_first() {
        let mut heap = BinaryHeap::new();
        let now = Instant::now();
        for (order, delay) in [30_u64, 10, 20].into_iter().enumerate() {
            heap.push(Timer {
                at: now + Duration::from_millis(delay),
                order: order as u64,
                action: Action::Call(|| {}),
            });
        }
        let order: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|timer| timer.order)).collect();
        assert_eq!(order, [1, 2, 0]);
    }
}
