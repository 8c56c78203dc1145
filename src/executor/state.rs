//! The six states of §4.1, and `PAUSED` (a run waiting for `resume()`).

use std::fmt;

/// An executor's lifecycle state (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutorState {
    New,
    Initializing,
    Ready,
    Running,
    /// A run paused at a tool's request (`pauseRun`) and waits for `resume()`.
    Paused,
    Dirty,
    Dead,
}

impl ExecutorState {
    /// The spelling of §3.1 (`"NEW"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "NEW",
            Self::Initializing => "INITIALIZING",
            Self::Ready => "READY",
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Dirty => "DIRTY",
            Self::Dead => "DEAD",
        }
    }
}

impl fmt::Display for ExecutorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
