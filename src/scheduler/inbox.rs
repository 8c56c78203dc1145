//! An executor's inbox: the messages for its engine, and the engine itself while no pool thread
//! serves it (an idle executor owns no thread; see `pool.rs`).
//!
//! A message for an idle engine queues the inbox on the pool. The thread that takes it up holds
//! the engine until the inbox is empty (or the engine gives the thread up to others), then leaves
//! the engine in the inbox again. A thread blocked in a synchronous tool call waits here for the
//! answer.
//!
//! Between a message the engine sends (a tool call, a run's answer) and the reply it waits for
//! (the tool's answer, the next run) lies one round trip through Node's thread, and sleeping
//! through it adds a wake-up from idle that costs as much as the trip (bench/README.md,
//! "Cross-thread hops and wake-ups"). So a waiting thread polls first ([`SPIN`]; see [`Spin`] for how it
//! keeps from holding a core another thread wants), and only then sleeps.
//!
//! Spec: §7.4 (tool answers reach the engine here) and §2.3 (runs arrive in order).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::job::{Account, Job};
use super::pool;
use super::spin::Spin;

/// How long a thread polls for a message before it sleeps.
pub(crate) const SPIN: Duration = Duration::from_micros(50);

/// Where the inbox is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The engine rests here and no thread is asked for: the next message queues the inbox.
    Idle,
    /// Queued on the pool, waiting for a thread.
    Queued,
    /// A thread holds the engine.
    Serving,
    /// The engine is gone: messages are dropped, and with them their reply channels.
    Closed,
}

struct Shared<M, E> {
    mail: VecDeque<M>,
    phase: Phase,
    /// The engine while no thread holds it.
    resting: Option<E>,
    /// A thread sleeps on [`Inbox::arrived`] for the next message.
    sleeping: bool,
    /// The pool timer set for this inbox ([`Inbox::wake_at`]), if one is pending.
    armed: Option<Instant>,
}

/// The mailbox of one engine `E`, receiving messages `M`.
pub(crate) struct Inbox<M, E> {
    shared: Mutex<Shared<M, E>>,
    arrived: Condvar,
    /// `mail.len()`, for polling without the lock.
    count: AtomicUsize,
    /// How a pool thread serves this inbox.
    serve: fn(&Arc<Self>),
    /// The message a timer set by [`Inbox::wake_at`] delivers.
    wake: fn() -> M,
    /// The stack depth the engine checks itself against (see [`Job::stack_bytes`]).
    stack_bytes: usize,
    /// The thread time the engine has used (see [`Job::account`]).
    account: Account,
}

/// The inbox is closed: its engine is gone.
#[derive(Debug)]
pub(crate) struct Closed;

/// What [`Inbox::next`] found.
pub(crate) enum Next<M, E> {
    /// A message, with the engine still held.
    Message(M, E),
    /// Nothing: the engine was left in the inbox.
    Rested,
}

impl<M: Send + 'static, E: Send + 'static> Inbox<M, E> {
    /// An inbox whose first message is `first`, already queued on the pool: the thread that takes
    /// it up finds no engine and builds it from that message. `serve` is what that thread runs
    /// (on a stack that holds `stack_bytes` of the engine's own checked depth and a margin);
    /// `wake` makes the message a timer delivers.
    pub(crate) fn start(
        first: M,
        serve: fn(&Arc<Self>),
        wake: fn() -> M,
        stack_bytes: usize,
    ) -> Arc<Self> {
        let inbox = Arc::new(Self {
            shared: Mutex::new(Shared {
                mail: VecDeque::from([first]),
                phase: Phase::Queued,
                resting: None,
                sleeping: false,
                armed: None,
            }),
            arrived: Condvar::new(),
            count: AtomicUsize::new(1),
            serve,
            wake,
            stack_bytes,
            account: Account::default(),
        });
        pool::schedule(Arc::clone(&inbox) as Arc<dyn Job>);
        inbox
    }

    fn lock(&self) -> MutexGuard<'_, Shared<M, E>> {
        // Nothing runs user code under this lock (replies are sent, and messages dropped, after
        // it is released); the state stays consistent through every update made under it.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Delivers `message`: queues the inbox if the engine rests, wakes the thread waiting for
    /// it if one sleeps. On a closed inbox the message is dropped (its reply channel with it).
    pub(crate) fn post(self: &Arc<Self>, message: M) {
        let mut shared = self.lock();
        if shared.phase == Phase::Closed {
            drop(shared);
            drop(message);
            return;
        }
        shared.mail.push_back(message);
        self.count.store(shared.mail.len(), Ordering::Release);
        match shared.phase {
            Phase::Idle => {
                shared.phase = Phase::Queued;
                drop(shared);
                pool::schedule(Arc::clone(self) as Arc<dyn Job>);
            }
            Phase::Serving if shared.sleeping => {
                drop(shared);
                self.arrived.notify_one();
            }
            _ => {}
        }
    }

    /// Delivers `message`, which the engine must act on at once (an abort, a shutdown): like
    /// [`Inbox::post`], and if the engine is suspended at the end of a time slice it is resumed
    /// ahead of the jobs waiting their turn.
    pub(crate) fn post_urgent(self: &Arc<Self>, message: M) {
        self.post(message);
        let serving = self.lock().phase == Phase::Serving;
        if serving {
            pool::hurry(&(Arc::clone(self) as Arc<dyn Job>));
        }
    }

    /// Takes the engine up on a pool thread: `Ok(None)` when it does not exist yet, `Err` when
    /// the inbox was closed meanwhile.
    pub(crate) fn take_up(&self) -> Result<Option<E>, Closed> {
        let mut shared = self.lock();
        if shared.phase == Phase::Closed {
            return Err(Closed);
        }
        shared.phase = Phase::Serving;
        Ok(shared.resting.take())
    }

    /// The next message, or, when there is none, leaves `engine` here until one arrives.
    pub(crate) fn next(&self, engine: E) -> Next<M, E> {
        let mut shared = self.lock();
        match shared.mail.pop_front() {
            Some(message) => {
                self.count.store(shared.mail.len(), Ordering::Release);
                Next::Message(message, engine)
            }
            None => {
                shared.resting = Some(engine);
                shared.phase = Phase::Idle;
                Next::Rested
            }
        }
    }

    /// The next message without the engine changing hands (the engine has no other place to go:
    /// before it is built, or after it is gone).
    pub(crate) fn pop(&self) -> Option<M> {
        let mut shared = self.lock();
        let message = shared.mail.pop_front();
        self.count.store(shared.mail.len(), Ordering::Release);
        message
    }

    /// Leaves `engine` here and queues the inbox at the back of the pool's queue: the thread
    /// goes to executors that waited while this one had its turn.
    pub(crate) fn requeue(self: &Arc<Self>, engine: E) {
        let mut shared = self.lock();
        shared.resting = Some(engine);
        shared.phase = Phase::Queued;
        drop(shared);
        pool::schedule(Arc::clone(self) as Arc<dyn Job>);
    }

    /// Puts `messages` back in front of the mail, in their order (messages a run set aside).
    pub(crate) fn put_back(&self, messages: impl DoubleEndedIterator<Item = M>) {
        let mut shared = self.lock();
        for message in messages.rev() {
            shared.mail.push_front(message);
        }
        self.count.store(shared.mail.len(), Ordering::Release);
    }

    /// Makes sure a wake message arrives once `deadline` has passed, even if nothing else does
    /// (a run waiting off the thread must still end at its deadline). One timer per inbox is
    /// pending at a time: an earlier one wakes the run, which asks again for its own deadline.
    pub(crate) fn wake_at(self: &Arc<Self>, deadline: Instant) {
        let mut shared = self.lock();
        if shared.armed.is_some_and(|armed| armed <= deadline) {
            return;
        }
        shared.armed = Some(deadline);
        drop(shared);
        let job: Arc<dyn Job> = Arc::clone(self) as Arc<dyn Job>;
        pool::wake_at(deadline, Arc::downgrade(&job));
    }

    /// Whether a message waits.
    pub(crate) fn has_mail(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Closes the inbox for good: every message still in it, and every later one, is dropped,
    /// which answers its reply channel with a closed-channel error.
    pub(crate) fn close(&self) {
        let dropped = {
            let mut shared = self.lock();
            shared.phase = Phase::Closed;
            self.count.store(0, Ordering::Release);
            (std::mem::take(&mut shared.mail), shared.resting.take())
        };
        drop(dropped);
    }

    /// Waits for the next message while holding the engine (a synchronous tool call), polling
    /// first, until `deadline` (forever without one).
    pub(crate) fn receive(&self, deadline: Option<Instant>) -> Result<M, RecvTimeoutError> {
        let start = Instant::now();
        let spin_until = deadline.map_or(start + SPIN, |deadline| deadline.min(start + SPIN));
        // Counted as blocked (another thread may take the pool's queue) once executors wait
        // for a thread, or once this one sleeps; an answer within the poll costs no lock.
        let mut blocked = None;
        Spin::start().until(spin_until, || {
            if blocked.is_none() && pool::others_waiting() {
                blocked = Some(pool::Blocked::now());
            }
            self.has_mail()
        });
        let _blocked = blocked.or_else(|| (!self.has_mail()).then(pool::Blocked::now));
        let mut shared = self.lock();
        loop {
            if let Some(message) = shared.mail.pop_front() {
                self.count.store(shared.mail.len(), Ordering::Release);
                return Ok(message);
            }
            if shared.phase == Phase::Closed {
                return Err(RecvTimeoutError::Disconnected);
            }
            shared.sleeping = true;
            shared = match deadline {
                None => self
                    .arrived
                    .wait(shared)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        shared.sleeping = false;
                        return Err(RecvTimeoutError::Timeout);
                    }
                    self.arrived
                        .wait_timeout(shared, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            shared.sleeping = false;
        }
    }

    /// The next message if one arrives within the poll (and no other executor waits for a
    /// thread meanwhile), without sleeping: a run waiting for an asynchronous tool gives its
    /// thread up rather than sleep on it.
    pub(crate) fn poll(&self, until: Instant) -> Option<M> {
        Spin::start().until(until, || self.has_mail() || pool::others_waiting());
        self.pop()
    }
}

impl<M: Send + 'static, E: Send + 'static> Job for Inbox<M, E> {
    fn serve(self: Arc<Self>) {
        (self.serve)(&self);
    }

    fn abandon(self: Arc<Self>) {
        self.close();
    }

    fn timer(self: Arc<Self>, at: Instant) {
        let mut shared = self.lock();
        // A timer that a later `wake_at` replaced with an earlier one is stale.
        if shared.armed != Some(at) {
            return;
        }
        shared.armed = None;
        drop(shared);
        self.post((self.wake)());
    }

    fn stack_bytes(&self) -> usize {
        self.stack_bytes
    }

    fn account(&self) -> &Account {
        &self.account
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    const TEST_STACK: usize = 64 * 1024;

    /// A test engine: counts the messages it served, on whichever thread.
    type Counter = Inbox<u32, Vec<u32>>;

    fn count_messages(inbox: &Arc<Counter>) {
        let Ok(engine) = inbox.take_up() else { return };
        let mut engine = engine.unwrap_or_default();
        loop {
            match inbox.next(engine) {
                Next::Message(message, mut held) => {
                    held.push(message);
                    engine = held;
                }
                Next::Rested => return,
            }
        }
    }

    #[test]
    fn messages_reach_a_resting_engine_through_the_pool_in_order() {
        let inbox = Counter::start(1, count_messages, || 0, TEST_STACK);
        for message in 2..=100 {
            inbox.post(message);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            {
                let shared = inbox.lock();
                if shared.phase == Phase::Idle && shared.mail.is_empty() {
                    let served = shared.resting.clone().unwrap_or_default();
                    if served.len() == 100 {
                        assert_eq!(served, (1..=100).collect::<Vec<_>>());
                        break;
                    }
                }
            }
            assert!(Instant::now() < deadline, "messages were not all served");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn held_forever(inbox: &Arc<Inbox<mpsc::Sender<()>, ()>>) {
        let _ = inbox.take_up();
        // Keep the engine: later messages stay in the inbox for `receive`.
        let _ = inbox.pop();
    }

    #[test]
    fn a_waiting_thread_is_woken_by_a_message_and_the_deadline_ends_the_wait() {
        let (first, _) = mpsc::channel();
        let inbox = Inbox::start(first, held_forever, || mpsc::channel().0, TEST_STACK);
        while inbox.has_mail() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(matches!(
            inbox.receive(Some(Instant::now() + Duration::from_millis(5))),
            Err(RecvTimeoutError::Timeout)
        ));
        let poster = Arc::clone(&inbox);
        let sending = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let (message, _) = mpsc::channel();
            poster.post(message);
        });
        assert!(inbox.receive(None).is_ok());
        sending.join().unwrap();
    }

    #[test]
    fn a_timer_delivers_the_wake_message_once_and_earlier_deadlines_replace_later_ones() {
        let inbox = Counter::start(1, count_messages, || 7, TEST_STACK);
        let now = Instant::now();
        inbox.wake_at(now + Duration::from_millis(60));
        inbox.wake_at(now + Duration::from_millis(20));
        // Later than the pending one: nothing new is armed.
        inbox.wake_at(now + Duration::from_secs(3600));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let shared = inbox.lock();
            let served = shared.resting.clone().unwrap_or_default();
            if served.len() >= 2 && shared.phase == Phase::Idle {
                // The 20 ms timer delivered one wake; the 60 ms one was stale.
                assert_eq!(served, [1, 7]);
                assert_eq!(shared.armed, None);
                break;
            }
            assert!(Instant::now() < deadline, "no wake message: {served:?}");
        }
    }

    #[test]
    fn a_closed_inbox_drops_what_it_holds_and_what_comes_later() {
        let (first, _) = mpsc::channel();
        let inbox = Inbox::start(first, held_forever, || mpsc::channel().0, TEST_STACK);
        let (reply, answered) = mpsc::channel::<()>();
        inbox.close();
        inbox.post(reply);
        assert_eq!(answered.recv(), Err(mpsc::RecvError));
        assert!(matches!(
            inbox.receive(None),
            Err(RecvTimeoutError::Disconnected)
        ));
    }
}
