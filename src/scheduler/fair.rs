//! Which job gets the next free pool thread: the one that has used the least thread time, as
//! the kernel's fair scheduler picks the task with the least virtual runtime.
//!
//! Each job keeps an [`Account`](super::job::Account) of the thread time its servings used (its
//! virtual runtime), each serving counting at most one slice (`pool.rs`). Runnable jobs wait in order of it, and the queue remembers the least
//! runtime it has handed out (`floor`, which only grows). A job that queues is placed no lower
//! than that floor minus [`newcomer_credit`]: a new executor, or one whose tool answered after
//! a long wait, goes ahead of every job that has computed for a slice since, but a long sleeper
//! cannot bank its idle time and then hold the threads for seconds on waking. Nor is it placed
//! higher than the floor plus [`max_lag`]: CPU it used long ago, while nobody else wanted the
//! threads, is not held against it now. A job suspended at the end of its slice goes back in at
//! its own runtime, behind the ones that have used less.
//!
//! Two kinds of job go first whatever their runtime: a suspended job whose deadline has passed
//! (resumed, it stops at once), and one asked to hurry ([`RunQueue::hurry`]: a run aborted or an
//! executor cleaned up while it was suspended), so that neither waits for a turn among spinners
//! to end.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::job::Job;
use super::slice::Task;

/// How far below the floor a queuing job is placed: one slice, so that a run that just arrived
/// goes before every job that has computed a whole slice since the floor was set.
pub fn newcomer_credit() -> Duration {
    super::slice::slice()
}

/// How far above the floor a queuing job is placed at most: thread time used long ago (a
/// large run while the others were idle) is not held against a job for longer than this, so
/// the order follows the CPU used recently.
pub fn max_lag() -> Duration {
    super::slice::slice() * 2
}

/// Something a pool thread can run: a job to serve from its start, or one suspended at the end
/// of a slice.
pub(crate) enum Runnable {
    Fresh(Arc<dyn Job>),
    Suspended(Task),
}

impl Runnable {
    /// The job it serves.
    pub(crate) fn job(&self) -> &Arc<dyn Job> {
        match self {
            Runnable::Fresh(job) => job,
            Runnable::Suspended(task) => task.job(),
        }
    }
}

/// Where a runnable waits: its runtime when it queued, and the order it queued in.
type Place = (u64, u64);

/// The runnable jobs, least runtime first.
#[derive(Default)]
pub(crate) struct RunQueue {
    waiting: BTreeMap<Place, Runnable>,
    /// Jobs asked to hurry, in the order they were asked.
    hurried: VecDeque<Runnable>,
    /// The deadlines of the suspended jobs that have one, earliest first; entries whose job has
    /// left `waiting` meanwhile are skipped.
    deadlines: BinaryHeap<Reverse<(Instant, Place)>>,
    /// The least runtime handed out so far (it never decreases).
    floor: u64,
    next_order: u64,
}

impl RunQueue {
    /// How many runnables wait.
    pub(crate) fn len(&self) -> usize {
        self.waiting.len() + self.hurried.len()
    }

    /// Whether none waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues a runnable at its job's runtime, moved to no lower than the floor less
    /// [`newcomer_credit`] and no higher than the floor plus [`max_lag`].
    pub(crate) fn push(&mut self, runnable: Runnable) {
        let nanos = |time: Duration| u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        let runtime = runnable.job().account().clamp(
            self.floor.saturating_sub(nanos(newcomer_credit())),
            self.floor.saturating_add(nanos(max_lag())),
        );
        let place = (runtime, self.next_order);
        self.next_order += 1;
        if let Runnable::Suspended(task) = &runnable {
            if let Some(deadline) = task.deadline() {
                self.deadlines.push(Reverse((deadline, place)));
            }
        }
        self.waiting.insert(place, runnable);
    }

    /// The runnable to run next at `now`: a suspended job past its deadline, then a hurried one,
    /// then the least runtime.
    pub(crate) fn pop(&mut self, now: Instant) -> Option<Runnable> {
        while let Some(&Reverse((deadline, place))) = self.deadlines.peek() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            if let Some(overdue) = self.waiting.remove(&place) {
                return Some(overdue);
            }
        }
        if let Some(hurried) = self.hurried.pop_front() {
            return Some(hurried);
        }
        let ((runtime, _), runnable) = self.waiting.pop_first()?;
        self.floor = self.floor.max(runtime);
        Some(runnable)
    }

    /// Moves `job`, if it waits, ahead of every job that is not overdue: something it must
    /// answer at once arrived (an abort, a shutdown).
    pub(crate) fn hurry(&mut self, job: &Arc<dyn Job>) {
        let place = self
            .waiting
            .iter()
            .find(|(_, runnable)| same_job(runnable.job(), job))
            .map(|(place, _)| *place);
        if let Some(runnable) = place.and_then(|place| self.waiting.remove(&place)) {
            self.hurried.push_back(runnable);
        }
    }

    /// Takes every job that has not started out of the queue (suspended ones stay: they are
    /// resumed, never abandoned).
    pub(crate) fn drain_fresh(&mut self) -> Vec<Arc<dyn Job>> {
        let mut fresh = Vec::new();
        let mut kept = VecDeque::new();
        for runnable in self.hurried.drain(..) {
            match runnable {
                Runnable::Fresh(job) => fresh.push(job),
                suspended => kept.push_back(suspended),
            }
        }
        self.hurried = kept;
        let places: Vec<Place> = self
            .waiting
            .iter()
            .filter(|(_, runnable)| matches!(runnable, Runnable::Fresh(_)))
            .map(|(place, _)| *place)
            .collect();
        for place in places {
            if let Some(Runnable::Fresh(job)) = self.waiting.remove(&place) {
                fresh.push(job);
            }
        }
        fresh
    }
}

/// Whether two handles are the same job (their data pointers; vtables may differ between
/// codegen units).
fn same_job(a: &Arc<dyn Job>, b: &Arc<dyn Job>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::job::Account;

    #[derive(Default)]
    struct Named {
        account: Account,
    }

    impl Job for Named {
        fn serve(self: Arc<Self>) {}
        fn abandon(self: Arc<Self>) {}
        fn timer(self: Arc<Self>, _at: Instant) {}
        fn stack_bytes(&self) -> usize {
            64 * 1024
        }
        fn account(&self) -> &Account {
            &self.account
        }
    }

    fn job(runtime_us: u64) -> Arc<dyn Job> {
        let job = Arc::new(Named::default());
        job.account.charge(Duration::from_micros(runtime_us));
        job
    }

    fn popped(queue: &mut RunQueue) -> Arc<dyn Job> {
        match queue.pop(Instant::now()) {
            Some(Runnable::Fresh(job)) => job,
            _ => panic!("a fresh job"),
        }
    }

    #[test]
    fn the_least_runtime_goes_first_and_equals_in_the_order_they_queued() {
        let mut queue = RunQueue::default();
        let (a, b, c, d) = (job(30), job(10), job(20), job(10));
        for job in [&a, &b, &c, &d] {
            queue.push(Runnable::Fresh(Arc::clone(job)));
        }
        for expected in [&b, &d, &c, &a] {
            assert!(same_job(&popped(&mut queue), expected));
        }
        assert!(queue.is_empty());
    }

    #[test]
    fn a_newcomer_goes_ahead_of_jobs_that_computed_but_a_long_sleeper_cannot_bank_its_sleep() {
        let mut queue = RunQueue::default();
        // Spinners that have used 6 ms each; the floor follows the first handed out.
        let spinners: Vec<_> = (0..4).map(|i| job(6_000 + i)).collect();
        for spinner in &spinners {
            queue.push(Runnable::Fresh(Arc::clone(spinner)));
        }
        let first = popped(&mut queue);
        let floor = first.account().runtime();
        // A new executor, and one that computed a little long ago and slept since.
        let (newcomer, sleeper) = (job(0), job(1_000));
        queue.push(Runnable::Fresh(Arc::clone(&sleeper)));
        queue.push(Runnable::Fresh(Arc::clone(&newcomer)));
        let credit = u64::try_from(newcomer_credit().as_nanos()).unwrap();
        assert_eq!(sleeper.account().runtime(), floor - credit);
        assert_eq!(newcomer.account().runtime(), floor - credit);
        assert!(same_job(&popped(&mut queue), &sleeper));
        assert!(same_job(&popped(&mut queue), &newcomer));
        // Had the sleeper kept its 1 ms, it would now run ahead of the spinners for 5 ms more.
        sleeper.account().charge(newcomer_credit() * 2);
        queue.push(Runnable::Fresh(Arc::clone(&sleeper)));
        assert!(!same_job(&popped(&mut queue), &sleeper));
    }

    #[test]
    fn cpu_used_long_ago_holds_a_job_back_by_at_most_the_lag() {
        let mut queue = RunQueue::default();
        // A job that computed for a minute while nobody else wanted the threads.
        let heavy = job(60_000_000);
        let spinners: Vec<_> = (0..3).map(|_| job(0)).collect();
        for spinner in &spinners {
            queue.push(Runnable::Fresh(Arc::clone(spinner)));
        }
        queue.push(Runnable::Fresh(Arc::clone(&heavy)));
        let lag = u64::try_from(max_lag().as_nanos()).unwrap();
        assert_eq!(heavy.account().runtime(), lag);
        // The spinners, each charged a slice per turn, catch up with it within a few turns.
        let mut turns = 0;
        loop {
            let next = popped(&mut queue);
            if same_job(&next, &heavy) {
                break;
            }
            next.account().charge(newcomer_credit());
            queue.push(Runnable::Fresh(next));
            turns += 1;
            assert!(
                turns < 20,
                "the heavy job waits for the spinners' whole minute"
            );
        }
    }

    #[test]
    fn a_hurried_job_goes_first() {
        let mut queue = RunQueue::default();
        let (a, b) = (job(1), job(50));
        queue.push(Runnable::Fresh(Arc::clone(&a)));
        queue.push(Runnable::Fresh(Arc::clone(&b)));
        queue.hurry(&b);
        assert_eq!(queue.len(), 2);
        assert!(same_job(&popped(&mut queue), &b));
        assert!(same_job(&popped(&mut queue), &a));
        // A job that does not wait is not found, and nothing changes.
        queue.hurry(&a);
        assert!(queue.is_empty());
    }
}
