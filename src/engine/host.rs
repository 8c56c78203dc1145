//! How the engine reaches the host's tools (§7.4): a small trait, so that the napi layer can
//! bridge to Node functions and Rust tests can drive the engine with a fake host.
//!
//! A call is answered exactly once, from any thread, by [`ToolReply`]: either at once
//! (`returned`, the tool gave a plain value or threw — the sandbox sees a value or a catchable
//! error, synchronously) or `pending` (the tool returned a promise — the sandbox gets a promise,
//! settled later through [`ToolSettlement`]). Answers travel to the engine's inbox, which queues
//! the engine on the pool if it rests.

use std::sync::Weak;

use super::{Command, EngineInbox};
pub use crate::tools::{ToolFailure, ToolResult, ToolSpec};
use crate::value::Value;

pub use super::realm::console::LogEntry;

/// What the host provides.
pub trait Host: Send + Sync + 'static {
    /// Starts a call of `call.tool`. Must not block on the engine: answer through `call.reply`
    /// (dropping it unanswered counts as a failure).
    fn call_tool(&self, call: ToolCall);

    /// Whether the host wants each log entry as it is written (`onLog`, §10.2), not only in the
    /// run's result.
    fn streams_logs(&self) -> bool {
        false
    }

    /// Receives one entry while the run goes on, in order, before the run's report: a run's
    /// result must never overtake its streamed logs. Must not block on the engine.
    fn log(&self, _entry: LogEntry) {}
}

/// One tool call from the sandbox.
#[derive(Debug)]
pub struct ToolCall {
    pub tool: String,
    /// The arguments, copied out of the sandbox (named, for a tool with inputs: see
    /// [`ToolSpec`]).
    pub args: Vec<Value>,
    pub reply: ToolReply,
}

/// A tool's request that the run pause at its call (`pauseRun(reason)`): the run settles with
/// the call named in `CodeOutput.paused`, and `resume(answer)` answers the call later.
#[derive(Debug, Clone, PartialEq)]
pub struct PauseRequest {
    /// What the tool gave `pauseRun` (a copy).
    pub reason: Value,
    /// The call's arguments, handed back by the host: the engine does not keep a copy of every
    /// call's arguments for the rare call that pauses.
    pub args: Vec<Value>,
}

/// What the host says about a call.
#[derive(Debug)]
pub(super) enum ToolAnswer {
    /// The tool returned or threw synchronously.
    Returned(ToolResult),
    /// The tool returned a promise.
    Pending,
    /// That promise settled.
    Settled(ToolResult),
    /// The tool (or the promise it returned) asked the run to pause.
    Paused(Box<PauseRequest>),
}

/// The one message a reply or settlement may still send about call `id`.
#[derive(Debug)]
struct Answerer {
    id: u64,
    inbox: Option<Weak<EngineInbox>>,
}

impl Answerer {
    /// Sends `answer` unless one was sent already.
    fn send(&mut self, answer: ToolAnswer) {
        // The engine may be gone (cleanup, timeout): a late answer is dropped harmlessly.
        if let Some(inbox) = self.inbox.take().and_then(|inbox| inbox.upgrade()) {
            inbox.post(Command::Tool(self.id, answer));
        }
    }
}

/// Answers one call, exactly once.
#[derive(Debug)]
pub struct ToolReply(Answerer);

impl ToolReply {
    pub(super) fn new(id: u64, inbox: Weak<EngineInbox>) -> Self {
        Self(Answerer {
            id,
            inbox: Some(inbox),
        })
    }

    /// The tool returned `result` synchronously.
    pub fn returned(mut self, result: ToolResult) {
        self.0.send(ToolAnswer::Returned(result));
    }

    /// The tool asked the run to pause at this call.
    pub fn paused(mut self, pause: PauseRequest) {
        self.0.send(ToolAnswer::Paused(Box::new(pause)));
    }

    /// The tool returned a promise; settle it later through the returned handle.
    pub fn pending(mut self) -> ToolSettlement {
        let settlement = Answerer {
            id: self.0.id,
            inbox: self.0.inbox.clone(),
        };
        self.0.send(ToolAnswer::Pending);
        ToolSettlement(settlement)
    }
}

impl Drop for ToolReply {
    fn drop(&mut self) {
        self.0.send(ToolAnswer::Returned(Err(ToolFailure::new(
            "the host dropped the tool call without answering",
        ))));
    }
}

/// Settles the promise a pending call gave the sandbox, exactly once.
#[derive(Debug)]
pub struct ToolSettlement(Answerer);

impl ToolSettlement {
    /// The tool's promise settled with `result`.
    pub fn settle(mut self, result: ToolResult) {
        self.0.send(ToolAnswer::Settled(result));
    }

    /// The tool's promise resolved with a request to pause the run at this call.
    pub fn paused(mut self, pause: PauseRequest) {
        self.0.send(ToolAnswer::Paused(Box::new(pause)));
    }
}

impl Drop for ToolSettlement {
    fn drop(&mut self) {
        self.0.send(ToolAnswer::Settled(Err(ToolFailure::new(
            "the host dropped the tool call without settling it",
        ))));
    }
}
