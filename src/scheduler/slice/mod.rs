//! Time slices: every job a pool thread serves runs on a stackful coroutine of its own
//! (corosensei), so that a job that has computed for a [`slice`] while others wait can give the
//! thread up in the middle of its work ([`yield_if_due`], which the engine calls at QuickJS's
//! interrupt polls) and be resumed later exactly where it stopped, on whichever pool thread is
//! free then. QuickJS cannot move a running interpreter from one stack to another; with a stack
//! per running job it never has to.
//!
//! What a coroutine that moves between threads must not rely on, and why none of it does:
//!
//! - *Thread-locals.* A coroutine resumed on another thread sees that thread's, and a function
//!   that computed a thread-local's address before a suspension may reuse it after (compilers
//!   take those addresses to be fixed for a function's whole call). Only two functions here
//!   touch thread-locals on a coroutine, and neither after [`Yielder::suspend`] returns: the
//!   pool thread sets [`CURRENT`] before every resume. The frames below a suspension are
//!   QuickJS's (no thread-locals at all), rquickjs's (none; its runtime lock is a `RefCell`
//!   without the `parallel` feature, which this crate does not enable) and the engine's, which
//!   keep their state in the executor's own structures.
//! - *The stack top QuickJS measures recursion from.* The engine records it on the coroutine's
//!   stack when a serving starts; a suspended coroutine keeps its stack, wherever it resumes.
//! - *Panics.* A job catches its own, inside the coroutine ([`Task`]'s function): no panic
//!   unwinds across the switch, and none could cross QuickJS's C frames.
//! - *Being discarded while suspended.* A suspended coroutine's stack holds QuickJS's C frames,
//!   which cannot be unwound the way corosensei unwinds a dropped coroutine. The pool never
//!   drops one: it resumes every suspended job until it finishes, and a job that must stop (a
//!   deadline, an abort, a shutdown) stops through QuickJS's own interrupt once resumed. A
//!   [`Task`] dropped anyway (a bug) leaks its stack rather than unwind it.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::job::Job;
use super::stack_pool::{self, CoroutineStack};

/// The default slice, in milliseconds: short enough that a trivial run among spinners answers
/// within a few milliseconds, long enough that switching costs nothing measurable
/// (docs/performance.md, "Time slices").
pub const DEFAULT_SLICE_MS: u64 = 4;

/// The environment variable that sets the slice, in whole milliseconds from 1 to
/// [`MAX_SLICE_MS`], when the pool starts.
pub const SLICE_VARIABLE: &str = "SES_EXECUTOR_SLICE_MS";

/// The longest slice the variable may set.
pub const MAX_SLICE_MS: u64 = 100;

/// How long a job computes before it gives its thread to others that wait.
pub fn slice() -> Duration {
    static SLICE: OnceLock<Duration> = OnceLock::new();
    *SLICE.get_or_init(|| {
        Duration::from_millis(slice_ms(std::env::var(SLICE_VARIABLE).ok().as_deref()))
    })
}

/// The slice [`SLICE_VARIABLE`] asks for, if it holds a whole number in `1..=MAX_SLICE_MS`,
/// else the default.
fn slice_ms(variable: Option<&str>) -> u64 {
    variable
        .and_then(|value| value.trim().parse::<u64>().ok())
        .filter(|ms| (1..=MAX_SLICE_MS).contains(ms))
        .unwrap_or(DEFAULT_SLICE_MS)
}

/// What the coroutine of a [`Task`] needs at its suspension points.
struct SliceState {
    /// The coroutine's yielder (it lives on the coroutine's stack, at a fixed place, for the
    /// coroutine's whole life); null until the coroutine first runs.
    yielder: Cell<*const Yielder<(), ()>>,
    /// When the current slice began (set by the thread that resumes the coroutine).
    started: Cell<Instant>,
    /// The resuming thread's CPU time when the slice began, read only when other jobs waited
    /// then (a turn nobody waits for pays no system call): a slice ends after that much CPU,
    /// not wall-clock time, so a turn the kernel set aside on a busy machine is not cut short.
    cpu_started: Cell<Option<Duration>>,
    /// The deadline the job reported when it last suspended itself.
    deadline: Cell<Option<Instant>>,
    /// How many jobs wait for a thread (the pool's count, set by the thread that resumes).
    waiting: Cell<Option<&'static AtomicUsize>>,
}

impl SliceState {
    /// The CPU time the calling thread has used since the slice began, when it was measured
    /// (see [`SliceState::cpu_started`]).
    fn cpu_used(&self) -> Option<Duration> {
        self.cpu_started
            .get()
            .zip(thread_cpu_time())
            .map(|(started, now)| now.saturating_sub(started))
    }
}

thread_local! {
    /// The slice of the coroutine this pool thread is running; null when none (a job served on
    /// the thread's own stack, or a thread that is not the pool's).
    static CURRENT: Cell<*const SliceState> = const { Cell::new(ptr::null()) };
}

/// A job on its coroutine: started and suspended at the end of a slice, or about to start.
pub(crate) struct Task {
    job: Arc<dyn Job>,
    /// `None` once it has finished and its stack has gone back to the pool.
    coroutine: Option<Coroutine<(), (), (), CoroutineStack>>,
    /// Boxed: the coroutine keeps a pointer to it.
    state: Box<SliceState>,
}

// SAFETY: a task moves between pool threads only while its coroutine is suspended (or not yet
// started), and is resumed by one thread at a time (it is owned, and `resume` takes it by value).
// What its stack holds then is the job's: the `Arc<dyn Job>` (Send), and the engine's frames,
// which reach only the executor's own structures (its runtime and everything around it, `Send`
// as a whole: `engine::run::worker::Resting`), plus QuickJS's and rquickjs's frames, which hold
// no thread-locals and no locks (see the module documentation).
unsafe impl Send for Task {}

impl Task {
    fn new(job: Arc<dyn Job>, stack: CoroutineStack) -> Self {
        let state = Box::new(SliceState {
            yielder: Cell::new(ptr::null()),
            started: Cell::new(Instant::now()),
            cpu_started: Cell::new(None),
            deadline: Cell::new(None),
            waiting: Cell::new(None),
        });
        let slice: *const SliceState = &*state;
        let serving = Arc::clone(&job);
        let coroutine = Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
            // SAFETY: the state is boxed and owned by the task, which outlives its coroutine.
            unsafe { (*slice).yielder.set(yielder) };
            // A job answers its own failures; this keeps any panic on this side of the switch.
            let _ = catch_unwind(AssertUnwindSafe(|| serving.serve()));
        });
        Self {
            job,
            coroutine: Some(coroutine),
            state,
        }
    }

    /// The job it serves.
    pub(crate) fn job(&self) -> &Arc<dyn Job> {
        &self.job
    }

    /// The deadline the job reported when it suspended itself.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.state.deadline.get()
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(coroutine) = self.coroutine.take() {
            if coroutine.started() && !coroutine.done() {
                // Never happens (the pool resumes every suspended task to its end): a suspended
                // stack holds C frames that cannot be unwound, so it is leaked, not unwound.
                std::mem::forget(coroutine);
            }
        }
    }
}

/// How a turn on a pool thread ended.
pub(crate) enum Ran {
    /// The job has nothing more to do now.
    Finished(Arc<dyn Job>),
    /// The job gave the thread up at the end of its slice.
    Suspended(Task),
}

/// A turn on a pool thread: how it ended, and the thread's CPU time it used when that was
/// measured (a turn that began while other jobs waited; see [`SliceState::cpu_started`]).
pub(crate) struct Turn {
    pub(crate) ran: Ran,
    pub(crate) cpu: Option<Duration>,
}

/// Starts serving `job` on the calling pool thread, on a coroutine, until it finishes or its
/// slice ends while others wait (`waiting` counts them).
pub(crate) fn start(job: Arc<dyn Job>, waiting: &'static AtomicUsize) -> Turn {
    match stack_pool::take(job.stack_bytes()) {
        Some(stack) => resume(Task::new(job, stack), waiting),
        None => {
            // No memory for a stack: the thread's own holds the deepest job, without slices.
            Arc::clone(&job).serve();
            Turn {
                ran: Ran::Finished(job),
                cpu: None,
            }
        }
    }
}

/// Resumes a suspended task on the calling pool thread (see [`start`]).
pub(crate) fn resume(mut task: Task, waiting: &'static AtomicUsize) -> Turn {
    let Some(coroutine) = task.coroutine.as_mut() else {
        return Turn {
            ran: Ran::Finished(Arc::clone(&task.job)),
            cpu: None,
        };
    };
    task.state.started.set(Instant::now());
    task.state
        .cpu_started
        .set(if waiting.load(Ordering::Acquire) > 0 {
            thread_cpu_time()
        } else {
            None
        });
    task.state.waiting.set(Some(waiting));
    let outer = CURRENT.replace(&*task.state);
    let result = coroutine.resume(());
    CURRENT.set(outer);
    // Read on this thread, which ran the whole turn.
    let cpu = task.state.cpu_used();
    let ran = match result {
        CoroutineResult::Yield(()) => Ran::Suspended(task),
        CoroutineResult::Return(()) => {
            if let Some(finished) = task.coroutine.take() {
                stack_pool::give_back(finished.into_stack());
            }
            Ran::Finished(Arc::clone(&task.job))
        }
    };
    Turn { ran, cpu }
}

/// At an interrupt poll of the job running on this thread: once it has computed for a
/// [`slice`] and other jobs wait for a thread, suspends it (it resumes later, on whichever pool
/// thread takes it up) and returns how long it was suspended. `deadline` is the job's own: once
/// it has passed, the job is resumed before every other. Nothing happens off a coroutine.
// Never inlined: the one read of `CURRENT` stays inside this call, before the suspension, so no
// caller can reuse a thread-local address computed on the thread the coroutine left.
#[inline(never)]
pub(crate) fn yield_if_due(deadline: Option<Instant>) -> Duration {
    let current = CURRENT.get();
    if current.is_null() {
        return Duration::ZERO;
    }
    // SAFETY: set by the pool thread that resumed this coroutine, to the state of its task,
    // which outlives the coroutine.
    let slice = unsafe { &*current };
    let now = Instant::now();
    if now.duration_since(slice.started.get()) < self::slice() {
        return Duration::ZERO;
    }
    if slice
        .waiting
        .get()
        .is_none_or(|waiting| waiting.load(Ordering::Acquire) == 0)
    {
        return Duration::ZERO;
    }
    // The wall clock is only a cheap first test (CPU time never runs ahead of it): a run the
    // kernel preempted for a slice's length has not had its turn, and giving its thread up now
    // would put it behind every waiting job (a trivial run would wait a whole round).
    if slice
        .cpu_used()
        .is_some_and(|computed| computed < self::slice())
    {
        return Duration::ZERO;
    }
    let yielder = slice.yielder.get();
    if yielder.is_null() {
        return Duration::ZERO;
    }
    slice.deadline.set(deadline);
    // SAFETY: the yielder lives on this coroutine's stack for the coroutine's whole life.
    unsafe { &*yielder }.suspend(());
    // Possibly on another thread from here: no thread-local is read again.
    slice.started.get().saturating_duration_since(now)
}

/// The CPU time the calling thread has used, where the system keeps one per thread.
// libc's `clock_gettime` rather than a crate: one call, and libc is already a dependency.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the call writes only it.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (read == 0).then(|| {
        Duration::new(
            u64::try_from(now.tv_sec).unwrap_or(0),
            u32::try_from(now.tv_nsec).unwrap_or(0),
        )
    })
}

/// Elsewhere the slice is measured by the wall clock alone.
#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}

/// Test builds: suspends the running coroutine at once, whatever its slice.
#[cfg(test)]
pub(crate) fn suspend_for_tests() {
    let current = CURRENT.get();
    assert!(!current.is_null(), "on a coroutine");
    // SAFETY: as in `yield_if_due`.
    unsafe { &*(*current).yielder.get() }.suspend(());
}

/// Runs `work` on the pool thread's own stack when called on a coroutine (whose stack is sized
/// for the guest, not for deep native work such as parsing a program), else right here.
#[inline(never)]
pub(crate) fn on_thread_stack<R>(work: impl FnOnce() -> R + Send) -> R {
    let current = CURRENT.get();
    if current.is_null() {
        return work();
    }
    // SAFETY: as in `yield_if_due`.
    let yielder = unsafe { (*current).yielder.get() };
    if yielder.is_null() {
        return work();
    }
    // SAFETY: the yielder lives on this coroutine's stack for the coroutine's whole life.
    unsafe { &*yielder }.on_parent_stack(work)
}

#[cfg(test)]
mod tests;
