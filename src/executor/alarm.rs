//! One timer thread for the whole process, behind a future that completes at a given instant:
//! what answers a run whose engine thread is still busy past its deadline (docs/limits-and-errors.md "Limits and what they guarantee").
//!
//! The run futures are polled by whichever thread wakes them (the engine thread as it answers,
//! see `node/settle.rs`), never inside a tokio runtime, so tokio's timers are out of reach; a
//! timer of our own costs one sleeping thread, started with the first alarm.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Completes once its instant has passed. Dropping it cancels it.
pub struct Alarm {
    at: Instant,
    shared: Arc<Shared>,
    set: bool,
}

#[derive(Default)]
struct Shared {
    rang: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Alarm {
    /// An alarm for `at`.
    pub fn at(at: Instant) -> Self {
        Self {
            at,
            shared: Arc::default(),
            set: false,
        }
    }
}

impl Future for Alarm {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.shared.rang.load(AtomicOrdering::Acquire) || Instant::now() >= self.at {
            return Poll::Ready(());
        }
        *lock(&self.shared.waker) = Some(cx.waker().clone());
        if !self.set {
            self.set = true;
            set(self.at, Arc::downgrade(&self.shared));
        }
        // The timer may have rung between the first check and the waker being stored.
        if self.shared.rang.load(AtomicOrdering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// A set alarm, earliest first in [`BinaryHeap`]'s max-order.
struct Entry {
    at: Instant,
    alarm: Weak<Shared>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at)
    }
}

struct Alarms {
    queue: BinaryHeap<Entry>,
    /// Past this many entries, dropped alarms (runs answered in time) are purged.
    purge_at: usize,
}

/// Dropped alarms are purged once the queue holds this many entries, then twice what is left.
const FIRST_PURGE: usize = 1024;

static ALARMS: Mutex<Alarms> = Mutex::new(Alarms {
    queue: BinaryHeap::new(),
    purge_at: FIRST_PURGE,
});
static CHANGED: Condvar = Condvar::new();
static TIMER: Once = Once::new();

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held; a poisoned lock still holds consistent data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn set(at: Instant, alarm: Weak<Shared>) {
    TIMER.call_once(|| {
        // If the thread cannot be started, no alarm rings: runs wait for the engine's answer,
        // as they did before there was a timer.
        let _ = std::thread::Builder::new()
            .name("ses-deadline".into())
            .stack_size(64 * 1024)
            .spawn(ring_due_alarms);
    });
    let mut alarms = lock(&ALARMS);
    if alarms.queue.len() >= alarms.purge_at {
        alarms.queue.retain(|entry| entry.alarm.strong_count() > 0);
        alarms.purge_at = (alarms.queue.len() * 2).max(FIRST_PURGE);
    }
    let earliest = alarms.queue.peek().is_none_or(|first| at < first.at);
    alarms.queue.push(Entry { at, alarm });
    if earliest {
        CHANGED.notify_one();
    }
}

/// The timer thread: sleeps until the earliest alarm still set, rings what is due, forever.
/// Idle, it waits on a condition variable and uses no CPU; alarms dropped meanwhile (runs
/// answered in time) cost it at most one wake-up each time it slept until one of them.
fn ring_due_alarms() {
    let mut alarms = lock(&ALARMS);
    loop {
        let now = Instant::now();
        let mut due = Vec::new();
        while let Some(first) = alarms.queue.peek() {
            if first.alarm.strong_count() > 0 && first.at > now {
                break;
            }
            if let Some(entry) = alarms.queue.pop() {
                due.push(entry.alarm);
            }
        }
        let due: Vec<Arc<Shared>> = due.iter().filter_map(Weak::upgrade).collect();
        if !due.is_empty() {
            // Waking runs the woken future on this thread, and it may set another alarm: ring
            // without the lock.
            drop(alarms);
            for alarm in due {
                alarm.rang.store(true, AtomicOrdering::Release);
                if let Some(waker) = lock(&alarm.waker).take() {
                    waker.wake();
                }
            }
            alarms = lock(&ALARMS);
            continue;
        }
        alarms = match alarms.queue.peek().map(|first| first.at - now) {
            Some(wait) => {
                CHANGED
                    .wait_timeout(alarms, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => CHANGED.wait(alarms).unwrap_or_else(PoisonError::into_inner),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn an_alarm_rings_at_its_instant_and_not_before() {
        let started = Instant::now();
        Alarm::at(started + Duration::from_millis(50)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(50), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    }

    #[tokio::test]
    async fn alarms_ring_in_order_whatever_order_they_were_set_in() {
        let started = Instant::now();
        let late = tokio::spawn(Alarm::at(started + Duration::from_millis(120)));
        let early = Alarm::at(started + Duration::from_millis(30));
        early.await;
        assert!(started.elapsed() < Duration::from_millis(120));
        late.await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(120));
    }

    #[test]
    fn dropped_alarms_are_purged() {
        let far = Instant::now() + Duration::from_secs(3600);
        let waker = Waker::noop();
        for _ in 0..3 * FIRST_PURGE {
            let mut alarm = Alarm::at(far);
            assert!(Pin::new(&mut alarm)
                .poll(&mut Context::from_waker(waker))
                .is_pending());
        }
        let alarms = lock(&ALARMS);
        assert!(
            alarms.queue.len() < 2 * FIRST_PURGE + 16,
            "{}",
            alarms.queue.len()
        );
    }
}
