//! `onLog` (§10.2): log entries streamed to a host callback while a run goes on.
//!
//! Entries and flush requests travel on one weak ThreadsafeFunction, in order; a flush is
//! answered on Node's thread once every entry queued before it has been handed to `onLog`, which
//! is how a run's result never overtakes its streamed logs.

use std::sync::mpsc;

use napi::bindgen_prelude::{Function, FunctionRef, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};

use crate::engine::LogEntry;

/// One message for Node's thread.
pub enum LogMessage {
    Entry(LogEntry),
    /// Answered once the entries before it are delivered.
    Flush(mpsc::Sender<()>),
}

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

/// Delivers entries to one executor's `onLog` callback.
pub struct LogStream {
    deliver: ThreadsafeFunction<LogMessage, (), (), Status, false, true>,
}

impl LogStream {
    /// A stream calling `on_log` on `env`'s thread.
    pub fn new(env: &Env, on_log: FunctionRef<JsLogEntry, Unknown<'static>>) -> napi::Result<Self> {
        // As for tool calls, the work happens in the callback, which has the environment; the
        // function itself is a no-op.
        let noop: Function<(), ()> = env.run_script("(function () {})")?;
        let deliver = noop
            .build_threadsafe_function::<LogMessage>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |context| {
                match context.value {
                    LogMessage::Entry(entry) => {
                        // A logging callback must not change a run's outcome, nor crash Node:
                        // what it throws is dropped.
                        if let Ok(on_log) = on_log.borrow_back(&context.env) {
                            let _ = on_log.call(entry.into());
                        }
                    }
                    LogMessage::Flush(done) => {
                        let _ = done.send(());
                    }
                }
                Ok(())
            })?;
        Ok(Self { deliver })
    }

    /// Queues `entry` for `onLog`.
    pub fn log(&self, entry: LogEntry) {
        let _ = self.deliver.call(
            LogMessage::Entry(entry),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }

    /// Returns once every entry queued so far has been delivered, or once Node can no longer
    /// deliver them (the queue is then dropped, and with it the answer's sender).
    pub fn flush(&self) {
        let (done, delivered) = mpsc::channel();
        let queued = self.deliver.call(
            LogMessage::Flush(done),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
        if queued == Status::Ok {
            let _ = delivered.recv();
        }
    }
}
