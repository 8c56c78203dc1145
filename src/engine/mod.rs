//! The engine: one QuickJS runtime + context per executor, run on a shared pool of engine threads
//! (docs/contract.md "What we are building"; `scheduler/pool.rs`). Sandbox code never runs on
//! Node's thread; a run is a message to the executor's inbox, answered on a oneshot channel, and an
//! idle executor owns no thread. The engine knows nothing of napi.

pub mod host;
mod quickjs;
mod realm;
mod run;
pub mod session;
#[cfg(test)]
pub mod testing;
mod values;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::diagnostic::{Diagnostic, Location};
use crate::options::{LogLevel, Options};
use crate::scheduler::inbox::Inbox;
use crate::value::Value;
use host::{Host, ToolAnswer, ToolResult};

pub use quickjs::heap::memory_freed;
pub use realm::console::{LogEntry, Logs, TRUNCATION_MARKER};
pub use run::recorder::TraceRecord;
pub use run::worker::live as live_engines;

/// Whether runs compile the loop guard into their loops; only [`loop_guards_for_benchmarks`]
/// clears it.
#[cfg(feature = "bench-internals")]
static LOOP_GUARDS: AtomicBool = AtomicBool::new(true);

/// Benchmark-only (the guard's overhead on the counting loop, W5 in bench/workloads.mjs): whether
/// the engine compiles the loop guard (§6.3, QuickJS patch 0600) into the loops of the runs that
/// start from now on, for the whole process. `examples/guard_overhead.rs` turns it off to time the
/// same program without guards. Not part of the API: nothing in the napi layer calls it, so it is
/// never reachable from JavaScript, and without guards `maxOperations` is not enforced; it exists
/// only in builds with the `bench-internals` feature, which the addon never has.
#[doc(hidden)]
#[cfg(feature = "bench-internals")]
pub fn loop_guards_for_benchmarks(enabled: bool) {
    LOOP_GUARDS.store(enabled, Ordering::Relaxed);
}

/// What the engine thread is built with: the executor's checked options (the engine reads its
/// limits, imports, modules and timers from them; runs take their own limits from
/// [`RunRequest`]).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub options: Options,
    /// The options a session's state depends on, which a snapshot carries and a restore checks.
    pub terms: crate::session::Terms,
}

impl From<&Options> for EngineConfig {
    fn from(options: &Options) -> Self {
        Self {
            options: options.clone(),
            terms: crate::session::Terms::of(options),
        }
    }
}

/// One run: the code, the limits it runs under, and the handle that aborts it.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub code: String,
    pub max_operations: u64,
    pub timeout_ms: u64,
    pub log_levels: Vec<LogLevel>,
    pub max_log_bytes: usize,
    pub abort: RunAbort,
    /// Whether to record and stream the run's events (off by default).
    pub trace: crate::trace::TraceRequest,
    /// The run's input, bound as the global `input` for this run only (`input.rs`); `None`
    /// binds nothing.
    pub input: Option<Value>,
    /// When the run was asked for: its deadline counts from here (or from the end of the run it
    /// was queued behind on the same executor, if that is later).
    pub called_at: Instant,
}

impl RunRequest {
    /// A request for `code` under `options`' limits, aborted through `abort`.
    pub fn new(code: String, options: &Options, abort: RunAbort) -> Self {
        Self {
            code,
            max_operations: options.max_operations,
            timeout_ms: options.timeout_ms,
            log_levels: options.collect_console_levels.clone(),
            max_log_bytes: options.max_log_bytes,
            abort,
            trace: crate::trace::TraceRequest {
                max_bytes: options.max_trace_bytes,
                ..crate::trace::TraceRequest::default()
            },
            input: None,
            called_at: Instant::now(),
        }
    }

    /// The same request with `input` bound for the run.
    pub fn with_input(self, input: Option<Value>) -> Self {
        Self { input, ..self }
    }
}

/// Aborts one run from any thread (`run(code, { signal })`): a running run stops as it would at
/// its deadline; a run still queued never starts.
#[derive(Debug, Clone, Default)]
pub struct RunAbort(Arc<AbortShared>);

#[derive(Debug, Default)]
struct AbortShared {
    aborted: AtomicBool,
    /// The engine's inbox, once the run is queued: aborting wakes a run waiting for a tool.
    wake: Mutex<Option<Weak<EngineInbox>>>,
    /// When the run's deadline began (see [`RunRequest::called_at`]): it is `timeoutMs` from
    /// here.
    started: OnceLock<Instant>,
    /// Set once the run's code is over: what the engine still does for it (encoding its
    /// images) is outside its deadline.
    finished: AtomicBool,
}

impl RunAbort {
    /// A handle not aborted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aborts the run. Idempotent; harmless once the run is over.
    pub fn abort(&self) {
        self.0.aborted.store(true, Ordering::SeqCst);
        let inbox = self
            .0
            .wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(Weak::upgrade);
        if let Some(inbox) = inbox {
            inbox.post_urgent(Command::Wake);
        }
    }

    /// Whether [`RunAbort::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.0.aborted.load(Ordering::SeqCst)
    }

    /// When the run's deadline began, once the engine has taken the run up; `None` before.
    pub fn started_at(&self) -> Option<Instant> {
        self.0.started.get().copied()
    }

    fn mark_started(&self, at: Instant) {
        let _ = self.0.started.set(at);
    }

    /// Whether the run's code is over: its answer is on its way (its images being encoded),
    /// and its deadline no longer applies.
    pub fn is_finished(&self) -> bool {
        self.0.finished.load(Ordering::SeqCst)
    }

    fn mark_finished(&self) {
        self.0.finished.store(true, Ordering::SeqCst);
    }

    fn attach(&self, inbox: &Arc<EngineInbox>) {
        *self.0.wake.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::downgrade(inbox));
    }
}

/// Figures about one run (§10.2 optional extensions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// From the moment the run's deadline began (its call, or the end of the run it was queued
    /// behind on the same executor) to its answer: waits for a thread, validation and tool
    /// calls included.
    pub wall_time: Duration,
    /// The time the run held an engine thread: its time slices, synchronous tool calls
    /// included; not the time it waited for a thread, nor for asynchronous tools or timers.
    pub cpu_time: Duration,
    /// Time tool calls took, from call to answer (to settlement for async tools), summed over
    /// calls: overlapping calls each count in full.
    pub tool_time: Duration,
    /// Tool calls made (including calls of object-module functions).
    pub tool_calls: u64,
    /// Loop iterations the guard counted (§6.3).
    pub operations: u64,
    /// The most bytes the executor's memory account held during the run: what QuickJS took
    /// from the system and what the engine held for the runtime (canvases, images, buffers).
    pub peak_heap_bytes: u64,
    /// Timers still pending when the run ended, which were cancelled; `None` when the executor
    /// has no timers (`timers: false`).
    pub timers_cancelled: Option<u64>,
}

/// A run that finished (§3.1 `CodeOutput` minus the logs).
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub output: Value,
    pub is_final_answer: bool,
}

/// The answer to a run: its outcome, its logs (always, §9.5), whether the context can still be
/// trusted (§7.6), its figures, and what validation noted about the code.
#[derive(Debug)]
pub struct RunReport {
    pub result: Result<Completion, EngineError>,
    /// The canvases drawn during a successful run, as PNG, in creation order.
    pub images: Vec<crate::canvas::Image>,
    pub logs: Logs,
    pub dirty: bool,
    pub stats: RunStats,
    /// The `WARNING` and `INFO` diagnostics of the code that ran (§8.3); a refused run carries
    /// all of its diagnostics in its error instead.
    pub diagnostics: Vec<Diagnostic>,
    /// The run's events (all but its end, which the executor adds), when it was traced.
    pub trace: Option<TraceRecord>,
    /// The call the run paused at, when a tool asked it to pause: the engine is gone then, and
    /// the session's journal (the paused run included) is here.
    pub paused: Option<Box<PausedRun>>,
}

/// A run that paused (`pauseRun`): the call it paused at, and the session to resume it from.
#[derive(Debug)]
pub struct PausedRun {
    pub call: crate::session::PausedCall,
    pub journal: crate::session::Journal,
}

impl RunReport {
    /// A run that failed before any code ran.
    pub fn refused(error: EngineError, dirty: bool) -> Self {
        Self {
            result: Err(error),
            images: Vec::new(),
            logs: Logs::default(),
            dirty,
            stats: RunStats::default(),
            diagnostics: Vec::new(),
            trace: None,
            paused: None,
        }
    }
}

/// Where in the user's own code a failure happened.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcePosition {
    pub location: Location,
    /// The line's text, trimmed.
    pub source_line: String,
}

/// What can go wrong in the engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// The code did not pass validation; nothing ran.
    #[error("code validation failed")]
    Invalid(Vec<Diagnostic>),
    /// User code threw (or awaited something that can never settle).
    #[error("{message}")]
    Runtime {
        message: String,
        at: Option<SourcePosition>,
        /// The `name` of the thrown error (`TypeError`, `ReferenceError`, a subclass's own…);
        /// `None` when what was thrown is not an error, or nothing was.
        error_name: Option<String>,
    },
    /// A tool failed and user code did not catch it (§7.4); `retryable` is the tool's say.
    #[error("{tool}: {message}")]
    Tool {
        tool: String,
        message: String,
        at: Option<SourcePosition>,
        retryable: bool,
    },
    /// The module loader refused an `import()` that user code did not catch (§5.3).
    #[error("{message}")]
    ImportNotAllowed {
        message: String,
        at: Option<SourcePosition>,
    },
    /// A value the run handed out (its output or final answer) passed a size limit; user code
    /// did not catch the `RangeError` that said so.
    #[error("{message}")]
    TooLarge {
        message: String,
        limit: crate::value::SizeLimit,
        at: Option<SourcePosition>,
    },
    /// A resource limit ended the run: `limit` names the option (`memoryLimitBytes`,
    /// `maxStackBytes`).
    #[error("{message}")]
    Limit {
        limit: &'static str,
        message: String,
    },
    /// A canvas refused a size or an allocation (`limit` names the option: `maxCanvasSize`,
    /// `memoryLimitBytes`) and user code did not catch the `RangeError`; nothing was allocated,
    /// so the context stays usable.
    #[error("{message}")]
    CanvasLimit {
        limit: &'static str,
        message: String,
        at: Option<SourcePosition>,
    },
    /// The loop guard counted past the limit (§6.3).
    #[error("max operations exceeded ({limit})")]
    MaxOperations { limit: u64 },
    /// The run passed `timeoutMs`.
    #[error("execution timed out after {timeout_ms}ms")]
    Timeout { timeout_ms: u64 },
    /// The caller aborted the run; `started` says whether any of its code ran.
    #[error("the run was aborted")]
    Aborted { started: bool },
    /// The runtime or context could not be created.
    #[error("{0}")]
    Start(String),
    /// Tools or variables could not be installed.
    #[error("{0}")]
    Endowment(String),
    /// A variable would take the name of a tool (§4.3.2). The engine's list of installed tools
    /// is the one record of tool names: the rules read it, and so does this check.
    #[error("the name '{0}' is a tool's name")]
    ToolName(String),
    /// An earlier run left the context untrustworthy (§7.6); nothing more runs in it.
    #[error("the context is dirty after an earlier run")]
    Dirty,
    /// The engine thread is gone (shut down, or it never started).
    #[error("the engine thread has stopped")]
    Stopped,
    /// A snapshot was refused, or its replay failed.
    #[error("{0}")]
    Snapshot(crate::session::SnapshotError),
    /// The session cannot be snapshotted (why).
    #[error("{0}")]
    NotDurable(String),
    /// The run was queued behind a run that paused: it did not start.
    #[error("the executor paused")]
    Paused,
}

/// A message to the engine.
enum Command {
    /// Builds the runtime and context (the first message of every engine).
    Start(
        EngineConfig,
        Arc<dyn Host>,
        Arc<AtomicBool>,
        oneshot::Sender<Result<(), EngineError>>,
    ),
    /// Builds the runtime and context from a session, in place of [`Command::Start`].
    Restore(Box<session::Restore>),
    /// Writes the session as a snapshot, signed with the key if one is given.
    Snapshot(
        Option<Arc<[u8]>>,
        oneshot::Sender<Result<Vec<u8>, EngineError>>,
    ),
    /// Replays the paused run the engine holds and resumes it with the answer.
    Resume(RunRequest, ToolResult, oneshot::Sender<RunReport>),
    Run(RunRequest, oneshot::Sender<RunReport>),
    DefineTools(
        Vec<host::ToolSpec>,
        oneshot::Sender<Result<(), EngineError>>,
    ),
    SetVariables(
        Vec<(String, Value)>,
        oneshot::Sender<Result<(), EngineError>>,
    ),
    /// An answer about tool call `id`.
    Tool(u64, ToolAnswer),
    /// A run's deadline passed, or it was aborted: a run waiting for a tool must look at its
    /// deadline and abort handle.
    Wake,
    /// Frees the runtime; the sender (if any) is answered once it is gone.
    Shutdown(Option<oneshot::Sender<()>>),
}

/// An engine's inbox: its messages, and the engine while no pool thread holds it.
type EngineInbox = Inbox<Command, run::worker::Resting>;

/// The handle to an engine. Dropping it frees the engine without waiting for it.
pub struct Engine {
    inbox: Arc<EngineInbox>,
    shutdown: Arc<AtomicBool>,
    stopped: bool,
}

impl Engine {
    /// Creates an engine whose tool calls go to `host`; a pool thread builds its runtime and
    /// context. The receiver answers once they exist.
    pub fn start(
        config: EngineConfig,
        host: Arc<dyn Host>,
    ) -> (Engine, oneshot::Receiver<Result<(), EngineError>>) {
        let (ready, ready_rx) = oneshot::channel();
        let shutdown = Arc::new(AtomicBool::new(false));
        let stack_bytes = run::worker::checked_stack_bytes(&config);
        let inbox = EngineInbox::start(
            Command::Start(config, host, Arc::clone(&shutdown), ready),
            run::worker::serve,
            || Command::Wake,
            stack_bytes,
        );
        (
            Engine {
                inbox,
                shutdown,
                stopped: false,
            },
            ready_rx,
        )
    }

    /// Creates an engine from a session (`session::Source`): a pool thread builds its runtime
    /// and replays the session into it. The receiver answers with what the engine holds then;
    /// with `resume`, the paused run is resumed with the answer and its report goes to the
    /// sender given.
    pub fn restore(
        config: EngineConfig,
        host: Arc<dyn Host>,
        source: session::Source,
        limits: session::ReplayLimits,
        resume: Option<(RunRequest, ToolResult, oneshot::Sender<RunReport>)>,
    ) -> (
        Engine,
        oneshot::Receiver<Result<session::Restored, EngineError>>,
    ) {
        let (ready, ready_rx) = oneshot::channel();
        let shutdown = Arc::new(AtomicBool::new(false));
        let abort = resume.as_ref().map(|(request, ..)| request.abort.clone());
        let stack_bytes = run::worker::checked_stack_bytes(&config);
        let restore = session::Restore {
            config,
            host,
            shutdown: Arc::clone(&shutdown),
            source,
            limits,
            resume,
            ready,
        };
        let inbox = EngineInbox::start(
            Command::Restore(Box::new(restore)),
            run::worker::serve,
            || Command::Wake,
            stack_bytes,
        );
        if let Some(abort) = abort {
            abort.attach(&inbox);
        }
        (
            Engine {
                inbox,
                shutdown,
                stopped: false,
            },
            ready_rx,
        )
    }

    /// Writes the session as a snapshot (signed with `key` when given).
    pub fn snapshot(
        &self,
        key: Option<Arc<[u8]>>,
    ) -> oneshot::Receiver<Result<Vec<u8>, EngineError>> {
        let (reply, receiver) = oneshot::channel();
        self.inbox.post(Command::Snapshot(key, reply));
        receiver
    }

    /// Resumes the paused run this engine holds (a restored session paused in a run): replays
    /// it up to the call it paused at, which gets `answer`. `request` carries the limits.
    pub fn resume(&self, request: RunRequest, answer: ToolResult) -> oneshot::Receiver<RunReport> {
        let (reply, receiver) = oneshot::channel();
        request.abort.attach(&self.inbox);
        self.inbox.post(Command::Resume(request, answer, reply));
        receiver
    }

    /// Queues a run. If the engine is gone, the receiver reports a closed channel.
    pub fn run(&self, request: RunRequest) -> oneshot::Receiver<RunReport> {
        let (reply, receiver) = oneshot::channel();
        request.abort.attach(&self.inbox);
        // A closed inbox drops `reply`, which is exactly the "engine is gone" signal.
        self.inbox.post(Command::Run(request, reply));
        receiver
    }

    /// Installs the tools as sandbox globals that call the host (§7.4).
    pub fn define_tools(
        &self,
        tools: Vec<host::ToolSpec>,
    ) -> oneshot::Receiver<Result<(), EngineError>> {
        let (reply, receiver) = oneshot::channel();
        self.inbox.post(Command::DefineTools(tools, reply));
        receiver
    }

    /// Sets globals holding copies of `variables` (§4.3.2).
    pub fn set_variables(
        &self,
        variables: Vec<(String, Value)>,
    ) -> oneshot::Receiver<Result<(), EngineError>> {
        let (reply, receiver) = oneshot::channel();
        self.inbox.post(Command::SetVariables(variables, reply));
        receiver
    }

    /// Stops the engine, interrupting any user code still running; the receiver answers once
    /// the runtime is freed (a closed channel means the engine failed rather than stopped).
    pub fn stop(mut self) -> oneshot::Receiver<()> {
        let (done, receiver) = oneshot::channel();
        self.signal_stop(Some(done));
        receiver
    }

    fn signal_stop(&mut self, done: Option<oneshot::Sender<()>>) {
        self.stopped = true;
        self.shutdown.store(true, Ordering::Relaxed);
        self.inbox.post_urgent(Command::Shutdown(done));
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Garbage-collected without cleanup(): free the engine, without waiting for it.
        if !self.stopped {
            self.signal_stop(None);
        }
    }
}

#[cfg(test)]
mod tests;
