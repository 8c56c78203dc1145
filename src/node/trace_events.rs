//! A run's trace in JS: `CodeOutput.trace`, `ExecutorError.trace`, and the events
//! `onEvent` receives as they happen. Events become plain objects with a `type` discriminant
//! (typed as `TraceEvent` in `header.d.ts`); the values they carry are fresh copies.
//!
//! Streamed events travel on the executor's queue (`queue.rs`) like `onLog` entries: queued on
//! the engine thread before the run's answer, each reaches its listeners before the run's promise
//! settles. A listener that throws changes nothing.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use napi::bindgen_prelude::{
    Array, FunctionRef, JsObjectValue, Object, ToNapiValue, TypeName, Unknown, ValueType,
};
use napi::{sys, Env, JsValue, Property, Result};

use super::env_data;
use super::guarded;
use super::queue::NodeQueue;
use super::value::to_js;
use crate::diagnostic::Location;
use crate::trace::{EventSink, RunEnd, ToolOutcome, TraceEvent, TraceKind};

/// An `onEvent` callback.
pub type Listener = FunctionRef<Event, Unknown<'static>>;

/// One event on its way to JS.
pub struct Event(pub TraceEvent);

/// A run's events on their way to JS.
pub struct Trace(pub Vec<TraceEvent>);

impl TypeName for Event {
    fn type_name() -> &'static str {
        "TraceEvent"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for Event {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        Ok(event_object(&env, &val.0)?.raw())
    }
}

impl TypeName for Trace {
    fn type_name() -> &'static str {
        "Array<TraceEvent>"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for Trace {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        Ok(trace_array(&env, &val.0)?.raw())
    }
}

/// The events as a JS array of event objects.
pub fn trace_array<'env>(env: &'env Env, events: &[TraceEvent]) -> Result<Array<'env>> {
    let mut array = env.create_array(u32::try_from(events.len()).unwrap_or(u32::MAX))?;
    for (index, event) in events.iter().enumerate() {
        let Ok(index) = u32::try_from(index) else {
            break;
        };
        array.set(index, event_object(env, event)?)?;
    }
    Ok(array)
}

/// Milliseconds, to the microsecond (what the clocks measure meaningfully).
fn millis(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes stay far below 2^53; JS numbers are f64"
)]
fn number(count: impl TryInto<u64>) -> f64 {
    count.try_into().map_or(f64::MAX, |count: u64| count as f64)
}

/// One event as a plain object: `{ type, at, … }` (see `TraceEvent` in `header.d.ts`).
fn event_object<'env>(env: &'env Env, event: &TraceEvent) -> Result<Object<'env>> {
    let mut object = Fields::new(env);
    let kind = match &event.kind {
        TraceKind::RunStart { .. } => "run_start",
        TraceKind::ToolCall { .. } => "tool_call",
        TraceKind::ToolResult { .. } => "tool_result",
        TraceKind::Console { .. } => "console",
        TraceKind::FinalAnswer { .. } => "final_answer",
        TraceKind::RunEnd(_) => "run_end",
    };
    object.put("type", kind)?;
    object.put("at", millis(event.at))?;
    match &event.kind {
        TraceKind::RunStart { time, code_bytes } => {
            let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
            object.put("time", millis(since_epoch))?;
            object.put("codeBytes", number(*code_bytes))?;
        }
        TraceKind::ToolCall {
            call,
            tool,
            args,
            at,
        } => {
            object.put("call", number(*call))?;
            object.put("tool", tool.as_str())?;
            match args {
                Some(args) => {
                    let mut array =
                        env.create_array(u32::try_from(args.len()).unwrap_or(u32::MAX))?;
                    for (index, arg) in args.iter().enumerate() {
                        let Ok(index) = u32::try_from(index) else {
                            break;
                        };
                        array.set(index, to_js(env, arg)?)?;
                    }
                    object.put("args", array)?;
                }
                None => object.put("truncated", true)?,
            }
            put_location(&mut object, *at)?;
        }
        TraceKind::ToolResult {
            call,
            tool,
            outcome,
            duration,
            asynchronous,
        } => {
            object.put("call", number(*call))?;
            object.put("tool", tool.as_str())?;
            object.put("durationMs", millis(*duration))?;
            object.put("async", *asynchronous)?;
            match outcome {
                ToolOutcome::Returned(value) => {
                    object.put("ok", true)?;
                    match value {
                        Some(value) => object.put("result", to_js(env, value)?)?,
                        None => object.put("truncated", true)?,
                    }
                }
                ToolOutcome::Failed { name, message } => {
                    object.put("ok", false)?;
                    let mut error = Fields::new(env);
                    error.put("name", name.as_str())?;
                    error.put("message", message.as_str())?;
                    object.put("error", error.build()?)?;
                }
            }
        }
        TraceKind::Console { level, entry } => {
            object.put("level", level.as_str())?;
            object.put("entry", number(*entry))?;
        }
        TraceKind::FinalAnswer { at } => put_location(&mut object, *at)?,
        TraceKind::RunEnd(RunEnd {
            outcome,
            error,
            tool_calls,
            operations,
            peak_heap_bytes,
            dropped_events,
        }) => {
            object.put("outcome", outcome.as_str())?;
            if let Some((code, message)) = error {
                let mut error = Fields::new(env);
                error.put("code", *code)?;
                error.put("message", message.as_str())?;
                object.put("error", error.build()?)?;
            }
            object.put("toolCalls", number(*tool_calls))?;
            object.put("operations", number(*operations))?;
            object.put("peakHeapBytes", number(*peak_heap_bytes))?;
            object.put("droppedEvents", number(*dropped_events))?;
        }
    }
    object.build()
}

fn put_location(object: &mut Fields, at: Option<Location>) -> Result<()> {
    if let Some(at) = at {
        object.put("line", at.line)?;
        object.put("column", at.column)?;
    }
    Ok(())
}

/// A plain object's properties, defined all at once when it is built: defined, never assigned,
/// so that no setter the host put on `Object.prototype` can take one (as with `CodeOutput`).
struct Fields<'env> {
    env: &'env Env,
    properties: Vec<Property>,
}

impl<'env> Fields<'env> {
    fn new(env: &'env Env) -> Self {
        Self {
            env,
            properties: Vec::new(),
        }
    }

    /// Adds `key: value` (writable, enumerable, configurable, as an object literal's).
    fn put<V: ToNapiValue>(&mut self, key: &str, value: V) -> Result<()> {
        // SAFETY: on Node's thread, making a value for this environment.
        let value = unsafe { V::to_napi_value(self.env.raw(), value) }?;
        // SAFETY: just made by napi for this environment.
        let value = unsafe { Unknown::from_raw_unchecked(self.env.raw(), value) };
        self.properties
            .push(Property::new().with_utf8_name(key)?.with_value(&value));
        Ok(())
    }

    fn build(self) -> Result<Object<'env>> {
        let mut object = Object::new(self.env)?;
        object.define_properties(&self.properties)?;
        Ok(object)
    }
}

/// Streams a run's events to its listeners (the executor's `onEvent` and the run's own) on
/// Node's thread.
pub struct EventStream {
    queue: Arc<NodeQueue>,
    listeners: Vec<Arc<Listener>>,
}

impl EventStream {
    /// A stream to `listeners` through `queue`; `None` when there are none.
    pub fn new(queue: Arc<NodeQueue>, listeners: Vec<Arc<Listener>>) -> Option<Self> {
        (!listeners.is_empty()).then_some(Self { queue, listeners })
    }
}

impl EventSink for EventStream {
    fn event(&self, event: TraceEvent) {
        let listeners = self.listeners.clone();
        self.queue.on_node(Box::new(move |env: &Env| {
            for listener in &listeners {
                deliver(env, listener, &event);
            }
        }));
    }
}

/// Hands one listener its own copy of `event`. A listener must not change a run's outcome, keep
/// the next listener from its events, nor crash Node: what it throws is caught and dropped
/// (`guarded`), and a promise it returns (an async listener) has its rejection handled, so
/// Node reports neither (as for `onLog`).
fn deliver(env: &Env, listener: &Listener, event: &TraceEvent) {
    let called = listener.borrow_back(env).and_then(|listener| {
        // SAFETY: converting an owned event for this environment.
        let event = unsafe { Event::to_napi_value(env.raw(), Event(event.clone())) }?;
        Ok(guarded::call(
            env,
            &listener.to_unknown(),
            &guarded::undefined(env),
            &[event],
        ))
    });
    if let Ok(Ok(returned)) = called {
        if guarded::is_promise(&returned) {
            env_data::handle_rejection(env, &returned);
        }
    }
    guarded::clear(env);
}
