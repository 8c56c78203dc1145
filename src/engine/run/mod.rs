//! One run, from the message that asks for it to its report: the worker that serves an
//! executor's messages on a pool thread and drives a run's promise, the evaluation of the
//! program as a global script, tool calls through the bridge, what one run shares with the
//! bindings it calls, failures mapped back to the user's line, and the run's trace.

pub(super) mod bridge;
pub(super) mod failure;
pub(super) mod frames;
pub(super) mod recorder;
pub(super) mod script;
pub(super) mod state;
pub(super) mod worker;
