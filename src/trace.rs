//! The execution trace of one run (docs/contract.md "Where we go beyond SES"): its start and end,
//! each tool call with its copied arguments and its result or error, `final_answer`, and the
//! console entries it wrote (by their index in `logEntries`), each at a time relative to the
//! run's start. The engine records the events as they happen ([`TraceBudget`] bounds what a run
//! keeps), the executor adds the run's end with its error code, and the napi layer turns them
//! into plain JS objects (`CodeOutput.trace`, `onEvent`).
//!
//! Shared by the engine, the executor and the napi layer, like [`crate::value`]: plain owned
//! data that moves between threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::diagnostic::Location;
use crate::options::LogLevel;
use crate::value::Value;

/// One event of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEvent {
    /// Time since the run's deadline began (its call, or the end of the run it was queued
    /// behind on the same executor), as the run's wall time counts.
    pub at: Duration,
    pub kind: TraceKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceKind {
    /// The engine took the run up.
    RunStart {
        /// The wall-clock time the run's times count from, so that they can be placed.
        time: SystemTime,
        /// The size of the code in UTF-8 bytes.
        code_bytes: usize,
    },
    /// The sandbox called a host tool (or a function of an object module).
    ToolCall {
        /// The call's number within the run, from 0; its result carries the same number.
        call: u64,
        tool: String,
        /// The arguments as the tool received them (copies); `None` when the trace's budget
        /// had no room for them.
        args: Option<Vec<Value>>,
        /// The user's line and column of the call.
        at: Option<Location>,
    },
    /// A tool call was answered: its value or error reached the sandbox.
    ToolResult {
        call: u64,
        tool: String,
        outcome: ToolOutcome,
        /// From the call to its answer (to the settlement of its promise for an async tool).
        duration: Duration,
        /// Whether the tool returned a promise.
        asynchronous: bool,
    },
    /// A `console.*` call that `logEntries` kept; `entry` is its index there.
    Console { level: LogLevel, entry: usize },
    /// `final_answer()` was called (the value is the run's `output`).
    FinalAnswer { at: Option<Location> },
    /// The run ended; always the last event.
    RunEnd(RunEnd),
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// Its value (a copy; `None` when the budget had no room for it).
    Returned(Option<Value>),
    /// It failed: the error's name and message as the sandbox saw them.
    Failed { name: String, message: String },
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    pub outcome: RunOutcome,
    /// The error's code (`ERR_…`, §8.2) and message when the run failed.
    pub error: Option<(&'static str, String)>,
    pub tool_calls: u64,
    pub operations: u64,
    pub peak_heap_bytes: u64,
    /// Events the budget had no room for at all (counted, not kept).
    pub dropped_events: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    Completed,
    FinalAnswer,
    Failed,
}

impl RunOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::FinalAnswer => "final_answer",
            Self::Failed => "error",
        }
    }
}

/// Receives each event of a run as it happens (`onEvent`), in order, before the run's answer.
/// Must not block on the engine.
pub trait EventSink: Send + Sync {
    fn event(&self, event: TraceEvent);
}

/// A run's stream: passes events on until the run's end, and nothing after it. A run answered
/// without its engine (stuck past its deadline, `executor::answer_by_deadline`) has its end
/// streamed while the engine may still record; what it records later is not streamed.
pub struct RunStream {
    sink: Arc<dyn EventSink>,
    ended: AtomicBool,
}

impl RunStream {
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        Self {
            sink,
            ended: AtomicBool::new(false),
        }
    }
}

impl EventSink for RunStream {
    fn event(&self, event: TraceEvent) {
        if self.ended.load(Ordering::Acquire) {
            return;
        }
        if matches!(event.kind, TraceKind::RunEnd(_)) {
            self.ended.store(true, Ordering::Release);
        }
        self.sink.event(event);
    }
}

/// What a run asks of the trace: to keep its events for the result, to stream them, or both.
#[derive(Clone, Default)]
pub struct TraceRequest {
    /// Keep the events for `CodeOutput.trace`.
    pub record: bool,
    /// Stream them as they happen.
    pub sink: Option<Arc<dyn EventSink>>,
    /// The budget of kept (and streamed) events, in approximate bytes.
    pub max_bytes: usize,
}

impl std::fmt::Debug for TraceRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceRequest")
            .field("record", &self.record)
            .field("streams", &self.sink.is_some())
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

impl TraceRequest {
    /// Whether the run produces events at all.
    pub fn is_on(&self) -> bool {
        self.record || self.sink.is_some()
    }
}

/// The bounded part of a trace: an event whose values do not fit in what is left of the budget
/// loses its values (`args` / the result become `None`); an event that does not fit even so is
/// dropped and counted. The run's end is never dropped, and does not count.
#[derive(Debug)]
pub struct TraceBudget {
    left: usize,
    dropped: u64,
}

impl TraceBudget {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            left: max_bytes,
            dropped: 0,
        }
    }

    /// The event as it may be kept, or `None` when it must be dropped.
    pub fn admit(&mut self, mut event: TraceEvent) -> Option<TraceEvent> {
        let mut size = approximate_bytes(&event);
        if size > self.left && strip_values(&mut event) {
            size = approximate_bytes(&event);
        }
        if size > self.left {
            self.dropped += 1;
            return None;
        }
        self.left -= size;
        Some(event)
    }

    /// Whether values of about `bytes` can still be kept: copying them for the trace is worth it
    /// only then.
    pub fn has_room_for(&self, bytes: usize) -> bool {
        bytes <= self.left
    }

    /// Events dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// Removes an event's copied values; returns whether it had any.
fn strip_values(event: &mut TraceEvent) -> bool {
    match &mut event.kind {
        TraceKind::ToolCall { args, .. } => args.take().is_some(),
        TraceKind::ToolResult {
            outcome: ToolOutcome::Returned(value),
            ..
        } => value.take().is_some(),
        _ => false,
    }
}

/// Bytes an event is counted for: a fixed part for its fields and the bytes of its strings and
/// values (see [`value_bytes`]).
pub fn approximate_bytes(event: &TraceEvent) -> usize {
    const EVENT: usize = 64;
    EVENT
        + match &event.kind {
            TraceKind::ToolCall { tool, args, .. } => {
                tool.len()
                    + args
                        .as_ref()
                        .map_or(0, |args| args.iter().map(value_bytes).sum())
            }
            TraceKind::ToolResult { tool, outcome, .. } => {
                tool.len()
                    + match outcome {
                        ToolOutcome::Returned(value) => value.as_ref().map_or(0, value_bytes),
                        ToolOutcome::Failed { name, message } => name.len() + message.len(),
                    }
            }
            TraceKind::RunEnd(RunEnd { error, .. }) => {
                error.as_ref().map_or(0, |(_, message)| message.len())
            }
            TraceKind::RunStart { .. }
            | TraceKind::Console { .. }
            | TraceKind::FinalAnswer { .. } => 0,
        }
}

/// About what a value holds in memory: 16 bytes a slot, plus the bytes of its strings and
/// buffers. Values are at most `value::MAX_DEPTH` deep, so recursion is bounded.
pub fn value_bytes(value: &Value) -> usize {
    const SLOT: usize = 16;
    SLOT + match value {
        Value::Undefined
        | Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::Date(_)
        | Value::Ref(_) => 0,
        Value::BigInt(text) | Value::String(text) | Value::Uncloneable(text) => text.len(),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_ref().map_or(SLOT, value_bytes))
            .sum(),
        Value::Object(entries) => entries
            .iter()
            .map(|(key, value)| key.len() + value_bytes(value))
            .sum(),
        Value::RegExp { source, flags } => source.len() + flags.len(),
        Value::Map(entries) => entries
            .iter()
            .map(|(key, value)| value_bytes(key) + value_bytes(value))
            .sum(),
        Value::Set(items) => items.iter().map(value_bytes).sum(),
        Value::Error {
            name,
            message,
            stack,
        } => name.len() + message.len() + stack.as_ref().map_or(0, String::len),
        Value::ArrayBuffer(bytes) => bytes.len(),
        Value::TypedArray { buffer, .. } => value_bytes(buffer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: Vec<Value>) -> TraceEvent {
        TraceEvent {
            at: Duration::ZERO,
            kind: TraceKind::ToolCall {
                call: 0,
                tool: "search".into(),
                args: Some(args),
                at: None,
            },
        }
    }

    #[test]
    fn an_event_that_fits_is_kept_whole() {
        let mut budget = TraceBudget::new(1024);
        let kept = budget.admit(call(vec![Value::String("lyon".into())]));
        assert_eq!(kept, Some(call(vec![Value::String("lyon".into())])));
        assert_eq!(budget.dropped(), 0);
    }

    #[test]
    fn an_event_whose_values_do_not_fit_is_kept_without_them() {
        let mut budget = TraceBudget::new(1024);
        let kept = budget.admit(call(vec![Value::String("x".repeat(4096))]));
        assert!(matches!(
            kept,
            Some(TraceEvent {
                kind: TraceKind::ToolCall { args: None, .. },
                ..
            })
        ));
        assert_eq!(budget.dropped(), 0);
    }

    #[test]
    fn events_past_the_budget_are_dropped_and_counted() {
        let mut budget = TraceBudget::new(200);
        let kept = (0..10)
            .filter_map(|_| budget.admit(call(Vec::new())))
            .count();
        assert_eq!(kept, 2);
        assert_eq!(budget.dropped(), 8);
    }

    #[test]
    fn room_shrinks_as_events_are_kept() {
        let mut budget = TraceBudget::new(1024);
        assert!(budget.has_room_for(1000));
        budget.admit(call(vec![Value::String("x".repeat(500))]));
        assert!(!budget.has_room_for(1000));
        assert!(budget.has_room_for(100));
    }

    #[test]
    fn value_bytes_counts_strings_buffers_and_nesting() {
        let small = value_bytes(&Value::Number(1.0));
        let nested = value_bytes(&Value::Object(vec![(
            "data".into(),
            Value::ArrayBuffer(vec![0; 1000]),
        )]));
        assert!(small < 32);
        assert!(nested > 1000);
    }
}
