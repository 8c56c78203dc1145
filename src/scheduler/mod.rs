//! The engine threads and how work reaches them: one bounded pool of threads for the process
//! (`pool`), the jobs it runs (`job`), the order in which waiting jobs get a thread (`fair`), the time slices and the
//! coroutines jobs run on so that a spinning guest gives its thread up (`slice`) and their
//! stacks (`stack_pool`), each executor's inbox, where its messages wait and its engine rests
//! while no thread holds it (`inbox`), the short waits threads make for each other's answers
//! (`spin`), and the threads' own native stacks (`stack`).
//!
//! None of it knows QuickJS, napi or what a run is: the engine hands the pool jobs (its inboxes)
//! and timers, calls [`slice::yield_if_due`] at its interrupt polls, and Node's thread uses the
//! same waits for the engine's answers.

pub mod fair;
pub mod inbox;
pub mod job;
pub mod pool;
pub mod slice;
pub mod spin;
pub mod stack;
pub mod stack_pool;
