//! `onLog` (§10.2): log entries streamed to a host callback while a run goes on.
//!
//! Entries travel as work on the executor's queue (`queue.rs`), the one that also settles its
//! promises (`settle.rs`): queued on the engine thread before the run's answer, every entry
//! reaches `onLog` before the run's promise settles, with nothing to wait for.

use std::sync::Arc;

use napi::bindgen_prelude::{FunctionRef, Unknown};
use napi::Env;

use super::queue::OnNode;
use crate::engine::LogEntry;

/// One console call of a run (§3.1 `LogEntry`).
#[napi(object, object_from_js = false, js_name = "LogEntry")]
pub struct JsLogEntry {
    #[napi(ts_type = "\"log\" | \"info\" | \"warn\" | \"error\"")]
    pub level: &'static str,
    pub message: String,
    /// ISO-8601 time of the call (UTC, milliseconds).
    pub ts: String,
}

impl From<LogEntry> for JsLogEntry {
    fn from(entry: LogEntry) -> Self {
        Self {
            level: entry.level.as_str(),
            message: entry.message,
            ts: humantime::format_rfc3339_millis(entry.at).to_string(),
        }
    }
}

/// An executor's `onLog` callback.
#[derive(Clone)]
pub struct LogStream(Arc<FunctionRef<JsLogEntry, Unknown<'static>>>);

impl LogStream {
    /// A stream calling `on_log`.
    pub fn new(on_log: FunctionRef<JsLogEntry, Unknown<'static>>) -> Self {
        Self(Arc::new(on_log))
    }

    /// The work that hands `entry` to `onLog` on Node's thread.
    pub fn deliver(&self, entry: LogEntry) -> OnNode {
        let on_log = Arc::clone(&self.0);
        Box::new(move |env: &Env| {
            // A logging callback must not change a run's outcome, nor crash Node: what it throws
            // is dropped.
            if let Ok(on_log) = on_log.borrow_back(env) {
                let _ = on_log.call(entry.into());
            }
        })
    }
}
