use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread::ThreadId;

use super::*;
use crate::scheduler::job::Account;
use crate::scheduler::pool;
use crate::scheduler::stack_pool::REFUSED_IN_TESTS;

/// A job that runs a function on whichever thread serves it.
struct Work {
    run: Box<dyn Fn() + Send + Sync>,
    stack_bytes: usize,
    account: Account,
}

impl Job for Work {
    fn serve(self: Arc<Self>) {
        (self.run)();
    }
    fn abandon(self: Arc<Self>) {}
    fn timer(self: Arc<Self>, _at: Instant) {}
    fn stack_bytes(&self) -> usize {
        self.stack_bytes
    }
    fn account(&self) -> &Account {
        &self.account
    }
}

fn work(stack_bytes: usize, run: impl Fn() + Send + Sync + 'static) -> Arc<dyn Job> {
    Arc::new(Work {
        run: Box::new(run),
        stack_bytes,
        account: Account::default(),
    })
}

const SMALL_STACK: usize = 64 * 1024;

/// A count of waiting jobs for tasks resumed by hand (they suspend themselves explicitly).
static NOBODY_WAITS: AtomicUsize = AtomicUsize::new(0);

/// Computes for `total`, yielding at every poll as the engine does; returns the threads it ran
/// on and how long it was suspended in all.
fn spin_for(total: Duration) -> (Vec<ThreadId>, Duration) {
    let start = Instant::now();
    let mut threads = vec![std::thread::current().id()];
    let mut away = Duration::ZERO;
    // A local on the coroutine's stack that must survive every suspension.
    let mut polls = 0_u64;
    while start.elapsed() < total + away {
        polls += 1;
        let suspended = yield_if_due(None);
        if !suspended.is_zero() {
            away += suspended;
            threads.push(std::thread::current().id());
        }
    }
    assert!(polls > 0);
    (threads, away)
}

#[test]
fn spinning_jobs_among_more_than_the_threads_take_turns_and_all_finish() {
    pool::set_threads(pool::stats().size.max(2));
    let jobs = pool::stats().size + 2;
    let (done, finished) = mpsc::channel();
    let all_queued = Arc::new(AtomicBool::new(false));
    for _ in 0..jobs {
        let done = Mutex::new(done.clone());
        let all_queued = Arc::clone(&all_queued);
        pool::schedule(work(SMALL_STACK, move || {
            // Computes only once every job is queued: the test thread may be descheduled
            // between two of them on a busy machine.
            while !all_queued.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            let outcome = spin_for(slice() * 12);
            let _ = done.lock().unwrap().send(outcome);
        }));
    }
    all_queued.store(true, Ordering::SeqCst);
    let outcomes: Vec<_> = (0..jobs)
        .map(|_| {
            finished
                .recv_timeout(Duration::from_secs(60))
                .expect("every job finishes")
        })
        .collect();
    // More jobs than threads: each gave its thread up at least once, and was away.
    assert!(
        outcomes
            .iter()
            .all(|(threads, away)| threads.len() > 1 && !away.is_zero()),
        "{outcomes:?} {:?}",
        pool::stats()
    );
}

#[test]
fn a_suspended_task_resumes_on_another_thread_where_it_stopped() {
    let (seen, threads) = mpsc::channel();
    let seen = Mutex::new(seen);
    let job = work(SMALL_STACK, move || {
        // Locals on the coroutine's stack, and a thread-local read afresh after each switch.
        let mut trail = vec![std::thread::current().id()];
        let before = deep(4);
        suspend_for_tests();
        trail.push(std::thread::current().id());
        assert_eq!(deep(4), before);
        suspend_for_tests();
        trail.push(std::thread::current().id());
        let _ = seen.lock().unwrap().send(trail);
    });
    let task = Task::new(job, stack_pool::take(SMALL_STACK).expect("a stack"));
    let mut task = Some(task);
    let mut runners = Vec::new();
    for _ in 0..3 {
        let taken = task.take().expect("a suspended task");
        let runner =
            std::thread::spawn(move || (std::thread::current().id(), resume(taken, &NOBODY_WAITS)));
        let (runner_id, ran) = runner.join().expect("the thread resumes it");
        runners.push(runner_id);
        match ran {
            Ran::Suspended(suspended) => task = Some(suspended),
            Ran::Finished(_) => break,
        }
    }
    let trail = threads
        .recv_timeout(Duration::from_secs(10))
        .expect("the job finished");
    assert_eq!(
        trail, runners,
        "each part ran on the thread that resumed it"
    );
}

#[test]
fn a_new_job_among_spinners_gets_a_thread_within_a_few_slices() {
    pool::set_threads(pool::stats().size.max(2));
    let spinners = pool::stats().size * 3;
    let (done, finished) = mpsc::channel();
    for _ in 0..spinners {
        let done = Mutex::new(done.clone());
        pool::schedule(work(SMALL_STACK, move || {
            spin_for(Duration::from_millis(1_500));
            let _ = done.lock().unwrap().send(());
        }));
    }
    std::thread::sleep(Duration::from_millis(100));
    let (served, probe) = mpsc::channel();
    let asked = Instant::now();
    let served = Mutex::new(served);
    pool::schedule(work(SMALL_STACK, move || {
        let _ = served.lock().unwrap().send(asked.elapsed());
    }));
    let waited = probe
        .recv_timeout(Duration::from_secs(60))
        .expect("the probe runs");
    // First come, first served would make it wait for the spinners' whole 1.5 s.
    assert!(waited < Duration::from_millis(500), "{waited:?}");
    for _ in 0..spinners {
        finished
            .recv_timeout(Duration::from_secs(60))
            .expect("spinners finish");
    }
}

#[test]
fn a_panic_after_a_suspension_stays_on_the_coroutine_and_the_thread_goes_on() {
    let (done, finished) = mpsc::channel();
    let done = Mutex::new(done);
    pool::schedule(work(SMALL_STACK, move || {
        let _ = done.lock().unwrap().send(());
        suspend_for_tests();
        panic!("a bug in a job");
    }));
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the job ran");
    // The pool still serves jobs afterwards.
    let (done, finished) = mpsc::channel();
    let done = Mutex::new(done);
    pool::schedule(work(SMALL_STACK, move || {
        let _ = done.lock().unwrap().send(());
    }));
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the next job ran");
}

#[inline(never)]
fn deep(depth: usize) -> u8 {
    let mut block = [0_u8; 16 * 1024];
    block[0] = u8::try_from(depth % 251).unwrap_or(0);
    let below = if depth == 0 { 0 } else { deep(depth - 1) };
    std::hint::black_box(&mut block);
    block[0].wrapping_add(below)
}

#[test]
fn deep_native_work_runs_on_the_threads_stack_not_the_coroutines() {
    let (done, finished) = mpsc::channel();
    let done = Mutex::new(done);
    // 8 MiB of frames: far beyond the coroutine's 64 KiB and margin, well within the thread's.
    pool::schedule(work(SMALL_STACK, move || {
        let result = on_thread_stack(|| deep(512));
        let _ = done.lock().unwrap().send(result);
    }));
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the job ran");
}

#[test]
fn a_job_that_gets_no_stack_runs_on_the_threads_own_without_slices() {
    let (done, finished) = mpsc::channel();
    let done = Mutex::new(done);
    pool::schedule(work(REFUSED_IN_TESTS, move || {
        // Off a coroutine nothing suspends, and deep work runs where it is.
        let never = yield_if_due(None);
        let result = on_thread_stack(|| deep(64));
        let _ = done.lock().unwrap().send((never, result));
    }));
    let (never, _) = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the job ran");
    assert_eq!(never, Duration::ZERO);
}

#[test]
fn a_suspended_task_that_is_dropped_is_leaked_not_unwound() {
    struct Unwound(Arc<AtomicBool>);
    impl Drop for Unwound {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let unwound = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&unwound);
    let job = work(SMALL_STACK, move || {
        let _guard = Unwound(Arc::clone(&seen));
        suspend_for_tests();
    });
    let stacks = crate::scheduler::stack_pool::mapped();
    let task = Task::new(job, stack_pool::take(SMALL_STACK).expect("a stack"));
    let Ran::Suspended(task) = resume(task, &NOBODY_WAITS) else {
        panic!("the job suspends itself");
    };
    drop(task);
    assert!(!unwound.load(Ordering::SeqCst), "the stack was unwound");
    // Its stack is gone with it, never reused.
    assert!(crate::scheduler::stack_pool::mapped() >= stacks);
}

#[test]
fn a_finished_task_gives_its_stack_back() {
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    let job = work(SMALL_STACK, move || {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let task = Task::new(job, stack_pool::take(SMALL_STACK).expect("a stack"));
    assert!(matches!(resume(task, &NOBODY_WAITS), Ran::Finished(_)));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

/// Another job waits, for tasks resumed by hand that must see contention.
static ONE_WAITS: AtomicUsize = AtomicUsize::new(1);

/// A thread the kernel set aside (here: asleep) for a slice's length has not had its slice: on
/// a busy machine, a trivial run cut there would wait behind every spinner.
#[cfg(unix)]
#[test]
fn a_slice_is_cpu_time_so_a_turn_spent_off_the_cpu_is_not_cut() {
    let (seen, after_sleep) = mpsc::channel();
    let seen = Mutex::new(seen);
    let job = work(SMALL_STACK, move || {
        std::thread::sleep(slice() * 3);
        let _ = seen.lock().unwrap().send(yield_if_due(None));
        // Computing for a slice ends it (the test thread resumes it to its end).
        let started = Instant::now();
        while yield_if_due(None).is_zero() && started.elapsed() < Duration::from_secs(60) {
            std::hint::spin_loop();
        }
    });
    let task = Task::new(job, stack_pool::take(SMALL_STACK).expect("a stack"));
    let Ran::Suspended(task) = resume(task, &ONE_WAITS) else {
        panic!("a turn that computed for a slice while another job waited goes on");
    };
    assert_eq!(
        after_sleep.try_recv(),
        Ok(Duration::ZERO),
        "the poll after the sleep gave the thread up"
    );
    assert!(matches!(resume(task, &ONE_WAITS), Ran::Finished(_)));
}

#[test]
fn the_slice_comes_from_the_variable_when_it_is_a_sensible_number() {
    assert_eq!(slice_ms(Some("2")), 2);
    assert_eq!(slice_ms(Some(" 10 ")), 10);
    assert_eq!(slice_ms(None), DEFAULT_SLICE_MS);
    for bad in ["0", "-1", "1.5", "soon", "", "101"] {
        assert_eq!(slice_ms(Some(bad)), DEFAULT_SLICE_MS, "{bad}");
    }
}
