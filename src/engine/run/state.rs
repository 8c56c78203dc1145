//! What one run shares between the engine thread's run loop and the native functions it installs
//! in the sandbox (guard, output, `final_answer`, console). Lives on the engine thread only.
//!
//! Spec: §7.2 (run algorithm), §6.3 (guard), §5.4 (final answer), §7.3 (logs).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::recorder::Recorder;
use crate::engine::host::Host;
use crate::engine::quickjs::loop_guard::LoopGuard;
use crate::engine::realm::console::LogBuffer;
use crate::engine::session::Tape;
use crate::engine::RunAbort;
use crate::options::LogLevel;
use crate::scheduler::slice;
use crate::session::PausedCall;
use crate::trace::{ToolOutcome, TraceKind};
use crate::value::Value;

/// Why user code must stop running. Once set, every guard, console and output call throws an
/// uncatchable error and QuickJS's interrupt handler stops whatever else runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `final_answer()` was called (§5.4).
    FinalAnswer,
    /// The loop guard counted past `maxOperations` (§6.3).
    MaxOperations,
    /// The run passed its deadline (`timeoutMs`).
    Timeout,
    /// The caller aborted the run (`run(code, { signal })`).
    Aborted,
    /// The executor is being torn down.
    Shutdown,
    /// A tool asked the run to pause (`pauseRun`): the run is abandoned where it is, to be
    /// replayed up to that call and resumed (`engine::session`).
    Paused,
    /// A replayed run went another way than its record: the restore fails.
    Diverged,
}

/// What a run's script gave as its result (`__smol_result`, called by the rewrite with the
/// last expression's value or a top-level `return`'s).
#[derive(Debug, Clone, PartialEq)]
pub enum RunResult {
    /// Nothing: the output is `undefined`.
    None,
    /// A value, copied when it was given (the output).
    Value(Value),
    /// A Promise, which the script returns and so awaits: the output is what it resolves to.
    /// `site` is the stack where it was returned, which locates its rejection when the reason
    /// carries no position of its own.
    Promise { site: Option<String> },
}

impl RunResult {
    /// Where a returned Promise came from.
    pub fn site(&self) -> Option<&str> {
        match self {
            Self::Promise { site } => site.as_deref(),
            _ => None,
        }
    }
}

/// A call a run paused at, and where in the run's script it was made (line and column): the
/// engine places it on the user's line.
pub type PauseSite = (PausedCall, Option<(u32, u32)>);

/// Per-run state.
pub struct RunState {
    /// Loop-body entries of the run, counted by QuickJS itself (§6.3, patch 0600); it calls
    /// the guard's trip (`globals`) once the count passes `max_operations` or a stop is set.
    pub loop_guard: LoopGuard,
    pub max_operations: Cell<u64>,
    pub deadline: Cell<Option<Instant>>,
    pub stop: Cell<Option<Stop>>,
    /// What the script handed to `__smol_result`.
    pub result: RefCell<RunResult>,
    pub final_answer: RefCell<Option<Value>>,
    pub logs: RefCell<LogBuffer>,
    /// The current run's abort handle.
    pub abort: RefCell<Option<RunAbort>>,
    /// The current run's trace, when it asked for one.
    pub trace: RefCell<Option<Recorder>>,
    /// The host, when it wants log entries as they are written.
    log_stream: Option<Arc<dyn Host>>,
    /// Set from other threads when the executor is dropped or cleaned up.
    pub shutdown: Arc<AtomicBool>,
    /// `maxValueBytes`: the most one value copied out of the sandbox may take.
    pub max_value_bytes: Cell<u64>,
    /// The session's record: what runs see from outside the sandbox (durable sessions).
    pub tape: Tape,
    /// The call the run paused at, once a tool asked it to pause.
    pub paused: RefCell<Option<PauseSite>>,
    /// Time the current run spent without a thread since the engine took it up: suspended at
    /// the end of a time slice, or waiting off the thread for a tool or a timer.
    away: Cell<Duration>,
}

impl RunState {
    /// State between runs; `host` receives log entries as they are written if it asks for them;
    /// `tape` records the session.
    pub fn new(shutdown: Arc<AtomicBool>, host: &Arc<dyn Host>, tape: Tape) -> Self {
        Self {
            loop_guard: LoopGuard::new(),
            max_operations: Cell::new(u64::MAX),
            deadline: Cell::new(None),
            stop: Cell::new(None),
            result: RefCell::new(RunResult::None),
            final_answer: RefCell::new(None),
            logs: RefCell::new(LogBuffer::new(LogLevel::ALL.to_vec(), 0)),
            abort: RefCell::new(None),
            trace: RefCell::new(None),
            log_stream: host.streams_logs().then(|| Arc::clone(host)),
            shutdown,
            max_value_bytes: Cell::new(crate::options::DEFAULT_MAX_VALUE_BYTES),
            tape,
            paused: RefCell::new(None),
            away: Cell::new(Duration::ZERO),
        }
    }

    /// Resets everything for a new run.
    pub fn begin(&self, max_operations: u64, deadline: Instant, logs: LogBuffer, abort: RunAbort) {
        self.loop_guard.restart(max_operations);
        self.max_operations.set(max_operations);
        self.deadline.set(Some(deadline));
        self.stop.set(None);
        *self.result.borrow_mut() = RunResult::None;
        *self.final_answer.borrow_mut() = None;
        *self.logs.borrow_mut() = logs;
        *self.abort.borrow_mut() = Some(abort);
        self.away.set(Duration::ZERO);
    }

    /// Counts time the run spent without a thread.
    pub fn away_for(&self, time: Duration) {
        self.away.set(self.away.get() + time);
    }

    /// Time the run spent without a thread so far.
    pub fn away(&self) -> Duration {
        self.away.get()
    }

    /// Clears the deadline and abort handle once the run is over, so nothing is interrupted
    /// between runs.
    pub fn end(&self) {
        self.deadline.set(None);
        *self.abort.borrow_mut() = None;
    }

    /// Records one `console.*` call (§7.3), streaming it to the host if it asked.
    pub fn log(&self, level: LogLevel, message: &str) {
        let mut logs = self.logs.borrow_mut();
        if !logs.push(level, message) {
            return;
        }
        // A replayed run's logs were the original run's: they are not streamed again.
        if let Some(host) = self.log_stream.as_ref().filter(|_| !self.tape.replaying()) {
            if let Some(entry) = logs.last_entry() {
                host.log(entry);
            }
        }
        let entry = logs.kept() - 1;
        drop(logs);
        self.record(|| TraceKind::Console { level, entry });
    }

    /// Adds an event to the run's trace, if it has one; `event` is only made then.
    pub fn record(&self, event: impl FnOnce() -> TraceKind) {
        if let Some(recorder) = self.trace.borrow_mut().as_mut() {
            recorder.push(event());
        }
    }

    /// Records a tool call with its arguments (copied again for the trace); returns its number
    /// in the trace, or `None` when the run is not traced.
    pub fn record_call(&self, ctx: &rquickjs::Ctx<'_>, tool: &str, args: &[Value]) -> Option<u64> {
        let mut trace = self.trace.borrow_mut();
        let recorder = trace.as_mut()?;
        let call = recorder.next_call();
        let at = recorder.caller(ctx);
        let args = recorder.copy_args(args);
        recorder.push(TraceKind::ToolCall {
            call,
            tool: tool.to_owned(),
            args,
            at,
        });
        Some(call)
    }

    /// Records the answer to traced call `call` (made at `started`); `outcome` is only made
    /// for a traced call.
    pub fn record_result(
        &self,
        call: Option<u64>,
        tool: &str,
        started: Instant,
        asynchronous: bool,
        outcome: impl FnOnce() -> ToolOutcome,
    ) {
        let Some(call) = call else {
            return;
        };
        self.record(|| TraceKind::ToolResult {
            call,
            tool: tool.to_owned(),
            outcome: outcome(),
            duration: started.elapsed(),
            asynchronous,
        });
    }

    /// Adds an event that names the user's line of the calling sandbox code.
    pub fn record_here(
        &self,
        ctx: &rquickjs::Ctx<'_>,
        event: impl FnOnce(Option<crate::diagnostic::Location>) -> TraceKind,
    ) {
        if let Some(recorder) = self.trace.borrow_mut().as_mut() {
            let at = recorder.caller(ctx);
            recorder.push(event(at));
        }
    }

    /// Records the first reason to stop; later ones do not replace it. From now on every
    /// loop-body entry trips the loop guard, which throws the uncatchable stop.
    pub fn stop_with(&self, reason: Stop) {
        if self.stop.get().is_none() {
            self.stop.set(Some(reason));
        }
        self.loop_guard.trip_at_next_entry();
    }

    /// Loop-body entries of the run so far (§6.3).
    pub fn operations(&self) -> u64 {
        self.loop_guard.count()
    }

    /// QuickJS's interrupt handler, polled every few thousand operations: whether user code
    /// must stop, and otherwise the time slice (once the run has computed for one while other
    /// runs wait for a thread, it is suspended here and resumed later, on any pool thread,
    /// exactly here: `scheduler::slice`). A run that must stop never gives its thread up first;
    /// one resumed after its deadline, an abort or a shutdown stops at once.
    pub fn interrupt_poll(&self) -> bool {
        if self.should_interrupt() {
            return true;
        }
        let away = slice::yield_if_due(self.deadline.get());
        if away.is_zero() {
            return false;
        }
        self.away_for(away);
        self.should_interrupt()
    }

    /// Whether user code must stop: it ends code no guard counts (recursion, regexes,
    /// swallowed signals) at the deadline, on an abort or a shutdown.
    pub fn should_interrupt(&self) -> bool {
        if self.shutdown.load(Ordering::Relaxed) {
            self.stop_with(Stop::Shutdown);
        }
        if self
            .abort
            .borrow()
            .as_ref()
            .is_some_and(RunAbort::is_aborted)
        {
            self.stop_with(Stop::Aborted);
        }
        if self
            .deadline
            .get()
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            self.stop_with(Stop::Timeout);
        }
        self.stop.get().is_some()
    }
}
