//! Durable sessions: the record of what made an executor's state, from which a fresh runtime in
//! any process rebuilds exactly that state (docs/sessions.md "How a session is kept").
//!
//! A session is a [`Journal`]: where it began ([`Origin`]: a fresh context, whose random seed and
//! clock origin it keeps, or a checkpoint image of the state at some point) and every step since
//! ([`Step`]: tools and variables sent, runs). A run keeps its code and input and everything
//! from outside the sandbox it saw, in the order it saw it ([`Event`]: clock reads, tool answers,
//! which promise the event loop settled and which timer it fired next), so that replaying the
//! code against those events, with tools answered from the journal, repeats what the run did
//! without asking the host anything. Replay checks each run's end against the record
//! ([`RunEnd`]) and refuses a journal that went another way.
//!
//! This module is data only (no QuickJS, no napi): the engine records into it and replays from
//! it, the executor keeps it while a run is paused, and [`codec`] and [`seal`] turn it into the
//! bytes of `executor.snapshot()` and back, treating those bytes as untrusted input.

pub mod codec;
pub mod image;
pub mod seal;

use std::sync::Arc;

use crate::options::LogLevel;
use crate::tools::{ToolResult, ToolSpec};
use crate::value::Value;

pub use seal::{SnapshotError, SnapshotProblem};

/// Everything that made a session's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Journal {
    /// What the steps start from.
    pub origin: Origin,
    /// What happened since, in order.
    pub steps: Vec<Step>,
}

impl Journal {
    /// A session that starts from a fresh context made with these values.
    pub fn fresh(random_seed: u64, time_origin: f64) -> Self {
        Self {
            origin: Origin::Fresh {
                random_seed,
                time_origin,
            },
            steps: Vec::new(),
        }
    }

    /// The run the session is paused in: its last step, when that run has no end yet.
    pub fn paused_run(&self) -> Option<&RunRecord> {
        match self.steps.last() {
            Some(Step::Run(run)) if run.end.is_none() => Some(run),
            _ => None,
        }
    }
}

/// Where a session's steps start.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// A context as `init()` makes it, with the seed of its `Math.random` and the origin of its
    /// `performance` clock (`performance.timeOrigin`).
    Fresh { random_seed: u64, time_origin: f64 },
    /// The state a checkpoint captured.
    Checkpoint(Arc<image::Image>),
}

/// One thing that changed the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `sendTools`: the names (and inputs) of the tools sent; functions do not travel.
    Tools(Vec<ToolSpec>),
    /// `sendVariables`: copies of the values sent.
    Variables(Vec<(String, Value)>),
    /// A run whose code ran (a run refused before any code ran changed nothing and is not kept).
    Run(RunRecord),
}

/// One run: what it was given and what it saw.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// The code as the caller gave it: replay validates and rewrites it again, so a journal
    /// holds nothing that skips validation.
    pub code: String,
    /// `run(code, { input })`.
    pub input: Option<Value>,
    /// The run's `maxOperations`, at which replay stops it again.
    pub max_operations: u64,
    /// What the run saw from outside the sandbox, in order.
    pub events: Vec<Event>,
    /// How it ended; `None` while it is paused (its last event is then [`Event::Paused`]).
    pub end: Option<RunEnd>,
}

/// Something from outside the sandbox that a run saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A read of the clock (`Date.now()`, `new Date()`, `Date()`, `performance.now()`): the
    /// value it gave.
    Clock(f64),
    /// A tool call answered at once, with its value or failure.
    Returned(ToolResult),
    /// A tool call answered with a promise: the run's calls are numbered from 0 in call
    /// order, and [`Event::Settled`] names the call by that number.
    Pending,
    /// The promise of a call settled, and the run's event loop took that settlement next.
    Settled(u32, ToolResult),
    /// The run's event loop fired the timer made with this sequence number next.
    Timer(u64),
    /// A tool asked the run to pause (`pauseRun(reason)`) at a call (a synchronous call where
    /// the run was in it, else the promise the event loop settled): the call is answered by
    /// `resume()`. Always a run's last event.
    Paused(Box<PausedCall>),
}

/// The call a run paused at (`CodeOutput.paused`).
#[derive(Debug, Clone, PartialEq)]
pub struct PausedCall {
    /// The call's number in the run.
    pub call: u32,
    /// The tool called.
    pub tool: String,
    /// Its arguments (as the tool received them).
    pub args: Vec<Value>,
    /// The line of the user's code that made the call.
    pub line: Option<u32>,
    /// What the tool gave `pauseRun(reason)`.
    pub reason: Value,
}

/// How a run ended, as replay must see it end again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnd {
    pub outcome: Outcome,
    /// Loop iterations the run's guard counted.
    pub operations: u64,
    /// Tool calls it made.
    pub calls: u32,
}

/// The kind of a run's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It completed with an output.
    Completed,
    /// It ended by `final_answer()`.
    FinalAnswer,
    /// It failed after its code started (the code threw, a tool failed uncaught, a limit).
    Failed,
}

/// The options a session's state depends on: a restore must be given the same ones
/// (docs/sessions.md "Snapshot and restore"). Limits that only bound a run (`timeoutMs`,
/// `memoryLimitBytes`, `maxOperations`) are not among them: they hold during a restore as the
/// restoring executor sets them.
#[derive(Debug, Clone, PartialEq)]
pub struct Terms {
    pub timers: bool,
    pub authorized_imports: Vec<String>,
    /// Each registered module's name and the SHA-256 of its canonical encoding.
    pub modules: Vec<(String, [u8; 32])>,
    pub max_canvas_size: u32,
    pub max_value_bytes: u64,
    pub max_stack_bytes: usize,
    /// `collectConsoleLevels`: a console call of a level not collected formats nothing.
    pub log_levels: Vec<LogLevel>,
}

impl Terms {
    /// The terms of an executor made with `options`.
    pub fn of(options: &crate::options::Options) -> Self {
        Self {
            timers: options.timers,
            authorized_imports: options.authorized_imports.clone(),
            modules: options
                .modules
                .iter()
                .map(|(name, spec)| (name.clone(), codec::module_digest(spec)))
                .collect(),
            max_canvas_size: options.max_canvas_size,
            max_value_bytes: options.max_value_bytes,
            max_stack_bytes: options.max_stack_bytes,
            log_levels: options.collect_console_levels.clone(),
        }
    }

    /// The first option (by its name in `ExecutorOptions`) in which `other` differs.
    pub fn first_difference(&self, other: &Terms) -> Option<&'static str> {
        if self.timers != other.timers {
            Some("timers")
        } else if self.authorized_imports != other.authorized_imports {
            Some("authorizedImports")
        } else if self.modules != other.modules {
            Some("modules")
        } else if self.max_canvas_size != other.max_canvas_size {
            Some("maxCanvasSize")
        } else if self.max_value_bytes != other.max_value_bytes {
            Some("maxValueBytes")
        } else if self.max_stack_bytes != other.max_stack_bytes {
            Some("maxStackBytes")
        } else if self.log_levels != other.log_levels {
            Some("collectConsoleLevels")
        } else {
            None
        }
    }
}

/// A snapshot's content: the terms its state was made under, and the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub terms: Terms,
    pub journal: Journal,
}
