//! The engine thread's inbox: a channel whose receiver polls for a few microseconds before it
//! parks.
//!
//! Between a message the engine sends (a tool call, a run's answer) and the reply it waits for
//! (the tool's answer, the next run) lies one round trip through Node's thread, typically
//! 5–40 µs. Parking on a futex for that gap costs a wake-up from idle on the way back, which on
//! these virtual machines is itself 10–20 µs (TOOLCHAIN-NOTES, "Cross-thread hops are dominated
//! by wake-up from idle"). Polling through the gap first makes the usual reply cheap; the poll
//! is bounded by [`SPIN`] and yields the core between polls, so an idle engine parks within
//! microseconds and never holds a core that another thread wants.
//!
//! Spec: §7.4 (tool answers reach the engine thread here) and §2.3 (runs arrive in order).

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// How long a receiver polls before it parks.
const SPIN: Duration = Duration::from_micros(50);

/// Receives the next message, waiting at most until `deadline` (forever without one).
pub(super) fn receive<T>(
    inbox: &Receiver<T>,
    deadline: Option<Instant>,
) -> Result<T, RecvTimeoutError> {
    let start = Instant::now();
    let spin_until = deadline.map_or(start + SPIN, |deadline| deadline.min(start + SPIN));
    loop {
        match inbox.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        if Instant::now() >= spin_until {
            break;
        }
        // Yielding rather than spinning in place: on a machine with more runnable threads than
        // cores (measured: a pure spin made every hop slower there), the thread that will send
        // the reply may need this core.
        std::thread::yield_now();
    }
    match deadline {
        Some(deadline) => inbox.recv_timeout(deadline.saturating_duration_since(Instant::now())),
        None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_message_sent_soon_after_is_received() {
        let (sender, inbox) = mpsc::channel();
        let sending = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(10));
            sender.send(7).unwrap();
        });
        assert_eq!(receive(&inbox, None), Ok(7));
        sending.join().unwrap();
    }

    #[test]
    fn a_message_sent_after_the_poll_wakes_the_parked_receiver() {
        let (sender, inbox) = mpsc::channel();
        let sending = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            sender.send(7).unwrap();
        });
        assert_eq!(receive(&inbox, None), Ok(7));
        sending.join().unwrap();
    }

    #[test]
    fn the_deadline_ends_the_wait_even_inside_the_poll() {
        let (_sender, inbox) = mpsc::channel::<u8>();
        let deadline = Instant::now() + Duration::from_micros(5);
        assert_eq!(
            receive(&inbox, Some(deadline)),
            Err(RecvTimeoutError::Timeout)
        );
        assert!(Instant::now() >= deadline);
    }

    #[test]
    fn a_closed_channel_is_reported_at_once() {
        let (sender, inbox) = mpsc::channel::<u8>();
        drop(sender);
        assert_eq!(receive(&inbox, None), Err(RecvTimeoutError::Disconnected));
    }
}
