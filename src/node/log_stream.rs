//! `onLog` (§10.2): log entries streamed to a host callback while a run goes on.
//!
//! Entries travel as work on the executor's queue (`queue.rs`), the one that also settles its
//! promises (`settle.rs`): queued on the engine thread before the run's answer, every entry
//! reaches `onLog` before the run's promise settles, with nothing to wait for.

use std::sync::Arc;

use napi::bindgen_prelude::{FunctionRef, ToNapiValue, Unknown};
use napi::{sys, Env, JsValue};

use super::env_data::{self, Builder};
use super::guarded;
use super::queue::OnNode;
use crate::engine::host::LogEntry;

/// One console call of a run (§3.1 `LogEntry`).
// Made by the environment's `logEntry` builder (`env_data.rs` says why).
#[napi(
    object,
    object_from_js = false,
    object_to_js = false,
    js_name = "LogEntry"
)]
pub struct JsLogEntry {
    #[napi(ts_type = "\"log\" | \"info\" | \"warn\" | \"error\"")]
    pub level: &'static str,
    pub message: String,
    /// ISO-8601 time of the call (UTC, milliseconds).
    pub ts: String,
}

impl ToNapiValue for JsLogEntry {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: each conversion runs on Node's thread, making values for this environment.
        let args = unsafe {
            [
                <&str>::to_napi_value(raw_env, val.level)?,
                String::to_napi_value(raw_env, val.message)?,
                String::to_napi_value(raw_env, val.ts)?,
            ]
        };
        env_data::build(&Env::from_raw(raw_env), Builder::LogEntry, &args)
    }
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

/// An executor's `onLog` callback: what it throws or rejects with is dropped (README
/// "Observability and control").
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
            // is caught and dropped, and a promise it returns (an async `onLog`) has its
            // rejection handled, so Node reports neither.
            let called = on_log.borrow_back(env).and_then(|on_log| {
                // SAFETY: converting an owned entry for this environment.
                let entry = unsafe { JsLogEntry::to_napi_value(env.raw(), entry.into()) }?;
                Ok(guarded::call(
                    env,
                    &on_log.to_unknown(),
                    &guarded::undefined(env),
                    &[entry],
                ))
            });
            if let Ok(Ok(returned)) = called {
                if guarded::is_promise(&returned) {
                    env_data::handle_rejection(env, &returned);
                }
            }
            guarded::clear(env);
        })
    }
}
