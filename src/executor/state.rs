//! The six states of §4.1.

use std::fmt;

/// An executor's lifecycle state (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutorState {
    New,
    Initializing,
    Ready,
    Running,
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
