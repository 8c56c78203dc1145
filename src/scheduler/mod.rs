//! The engine threads and how work reaches them: one bounded pool of threads for the process
//! (`pool`), each executor's inbox, where its messages wait and its engine rests while no thread
//! holds it (`inbox`), the short waits threads make for each other's answers (`spin`), and the
//! threads' native stacks (`stack`).
//!
//! None of it knows QuickJS, napi or what a run is: the engine hands the pool jobs (its inboxes)
//! and timers, and Node's thread uses the same waits for the engine's answers.

pub mod inbox;
pub mod pool;
pub mod spin;
pub mod stack;
