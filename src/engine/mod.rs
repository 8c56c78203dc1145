//! The engine: one QuickJS runtime + context per executor, owned by a thread of its own
//! (DESIGN.md "What we are building"). Sandbox code never runs on Node's thread; a run is a
//! message to this thread, answered on a oneshot channel. The engine knows nothing of napi.

mod bridge;
mod canvas;
mod console;
mod convert;
mod endowments;
mod failure;
mod globals;
mod heap;
pub mod host;
mod inbox;
pub mod inspect;
mod lockdown;
mod modules;
mod reflect;
mod state;
#[cfg(test)]
pub mod testing;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::diagnostic::{Diagnostic, Location};
use crate::options::{LogLevel, Options};
use crate::value::Value;
use host::{Host, ToolAnswer};

pub use console::{LogEntry, Logs, TRUNCATION_MARKER};

/// What the engine thread is built with.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub memory_limit_bytes: usize,
    pub max_stack_bytes: usize,
    /// The largest side of a sandbox canvas (`maxCanvasSize`).
    pub max_canvas_size: u32,
    /// What `import()` may load (§5.3), and the modules the host registered.
    pub authorized_imports: Vec<String>,
    pub modules: Vec<(String, crate::modules::ModuleSpec)>,
}

impl From<&Options> for EngineConfig {
    fn from(options: &Options) -> Self {
        Self {
            memory_limit_bytes: options.memory_limit_bytes,
            max_stack_bytes: options.max_stack_bytes,
            max_canvas_size: options.max_canvas_size,
            authorized_imports: options.authorized_imports.clone(),
            modules: options.modules.clone(),
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
        }
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
    wake: Mutex<Option<mpsc::Sender<Command>>>,
    /// When the engine took the run up: its deadline is `timeoutMs` from here.
    started: OnceLock<Instant>,
}

impl RunAbort {
    /// A handle not aborted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aborts the run. Idempotent; harmless once the run is over.
    pub fn abort(&self) {
        self.0.aborted.store(true, Ordering::SeqCst);
        let wake = self.0.wake.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(inbox) = wake.as_ref() {
            let _ = inbox.send(Command::Wake);
        }
    }

    /// Whether [`RunAbort::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.0.aborted.load(Ordering::SeqCst)
    }

    /// When the engine took the run up (its deadline counts from there); `None` while it waits
    /// in the queue.
    pub fn started_at(&self) -> Option<Instant> {
        self.0.started.get().copied()
    }

    fn mark_started(&self, at: Instant) {
        let _ = self.0.started.set(at);
    }

    fn attach(&self, inbox: mpsc::Sender<Command>) {
        *self.0.wake.lock().unwrap_or_else(PoisonError::into_inner) = Some(inbox);
    }
}

/// Figures about one run (§10.2 optional extensions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// From the moment the engine took the run up (after any queueing) to its answer, including
    /// validation.
    pub wall_time: Duration,
    /// Time tool calls took, from call to answer (to settlement for async tools), summed over
    /// calls: overlapping calls each count in full.
    pub tool_time: Duration,
    /// Tool calls made (including calls of object-module functions).
    pub tool_calls: u64,
    /// Loop iterations the guard counted (§6.3).
    pub operations: u64,
    /// The most bytes the QuickJS heap held during the run.
    pub peak_heap_bytes: u64,
}

/// A run that finished (§3.1 `CodeOutput` minus the logs).
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub output: Value,
    pub is_final_answer: bool,
}

/// The answer to a run: its outcome, its logs (always, §9.5), whether the context can still be
/// trusted (§7.6), and its figures.
#[derive(Debug)]
pub struct RunReport {
    pub result: Result<Completion, EngineError>,
    /// The canvases drawn during a successful run, as PNG, in creation order.
    pub images: Vec<crate::canvas::Image>,
    pub logs: Logs,
    pub dirty: bool,
    pub stats: RunStats,
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
    },
    /// A tool failed and user code did not catch it (§7.4).
    #[error("{tool}: {message}")]
    Tool {
        tool: String,
        message: String,
        at: Option<SourcePosition>,
    },
    /// The module loader refused an `import()` that user code did not catch (§5.3).
    #[error("{message}")]
    ImportNotAllowed {
        message: String,
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
    /// An earlier run left the context untrustworthy (§7.6); nothing more runs in it.
    #[error("the context is dirty after an earlier run")]
    Dirty,
    /// The engine thread is gone (shut down, or it never started).
    #[error("the engine thread has stopped")]
    Stopped,
}

/// The engine thread's stack beyond QuickJS's own budget, which oxc uses while preparing code.
const PROGRAM_STACK_BYTES: usize = 32 * 1024 * 1024;

/// A message to the engine thread.
enum Command {
    Run(RunRequest, oneshot::Sender<RunReport>),
    DefineTools(Vec<String>, oneshot::Sender<Result<(), EngineError>>),
    SetVariables(
        Vec<(String, Value)>,
        oneshot::Sender<Result<(), EngineError>>,
    ),
    /// An answer about tool call `id`.
    Tool(u64, ToolAnswer),
    /// A run was aborted: a run waiting for a tool must look at its abort handle.
    Wake,
    Shutdown,
}

/// The handle to an engine thread. Dropping it stops the thread without waiting for it.
pub struct Engine {
    commands: mpsc::Sender<Command>,
    shutdown: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Spawns the engine thread, whose tool calls go to `host`. The receiver answers once the
    /// runtime and context exist.
    pub fn start(
        config: EngineConfig,
        host: Arc<dyn Host>,
    ) -> Result<(Engine, oneshot::Receiver<Result<(), EngineError>>), EngineError> {
        let (commands, inbox) = mpsc::channel();
        let (ready, ready_rx) = oneshot::channel();
        let shutdown = Arc::new(AtomicBool::new(false));
        let thread_shutdown = Arc::clone(&shutdown);
        let replies = commands.clone();
        // The thread's own stack must stay well above QuickJS's limit (TOOLCHAIN-NOTES); the
        // rest carries oxc's recursion over the code of typical runs (larger code is prepared
        // on a deeper stack: `program::prepare_safely`). Only touched pages cost memory.
        let stack_size = config.max_stack_bytes.saturating_add(PROGRAM_STACK_BYTES);
        let thread = std::thread::Builder::new()
            .name("ses-executor".into())
            .stack_size(stack_size)
            .spawn(move || worker::main(config, (inbox, replies), host, ready, thread_shutdown))
            .map_err(|error| {
                EngineError::Start(format!("cannot spawn the engine thread: {error}"))
            })?;
        Ok((
            Engine {
                commands,
                shutdown,
                thread: Some(thread),
            },
            ready_rx,
        ))
    }

    /// Queues a run on the engine thread. If the thread is gone, the receiver reports a closed
    /// channel.
    pub fn run(&self, request: RunRequest) -> oneshot::Receiver<RunReport> {
        let (reply, receiver) = oneshot::channel();
        request.abort.attach(self.commands.clone());
        // A send error drops `reply`, which is exactly the "thread is gone" signal.
        let _ = self.commands.send(Command::Run(request, reply));
        receiver
    }

    /// Installs the named tools as sandbox globals that call the host (§7.4).
    pub fn define_tools(&self, names: Vec<String>) -> oneshot::Receiver<Result<(), EngineError>> {
        let (reply, receiver) = oneshot::channel();
        let _ = self.commands.send(Command::DefineTools(names, reply));
        receiver
    }

    /// Sets globals holding copies of `variables` (§4.3.2).
    pub fn set_variables(
        &self,
        variables: Vec<(String, Value)>,
    ) -> oneshot::Receiver<Result<(), EngineError>> {
        let (reply, receiver) = oneshot::channel();
        let _ = self.commands.send(Command::SetVariables(variables, reply));
        receiver
    }

    /// Asks the thread to stop (interrupting any user code still running) and hands back the
    /// thread so the caller can join it off Node's thread.
    pub fn stop(mut self) -> Option<JoinHandle<()>> {
        self.signal_stop();
        self.thread.take()
    }

    fn signal_stop(&self) {
        self.shutdown.store(true, Ordering::Relaxed);
        let _ = self.commands.send(Command::Shutdown);
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Garbage-collected without cleanup(): stop the thread, but never block the caller
        // (Node's thread) on a join.
        if self.thread.is_some() {
            self.signal_stop();
        }
    }
}

#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod oom_tests;
#[cfg(test)]
mod tests;
