//! The executor: the lifecycle of §4 over one engine, and the one place where engine failures
//! become the spec's error codes (§8.2). It knows neither napi nor QuickJS.
//!
//! Every method checks and moves the state synchronously, when it is called, so that the
//! `state` getter and a second concurrent call see the new state at once (§2.3); the returned
//! future only waits for the engine thread.

mod alarm;
mod state;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::diagnostic::Diagnostic;
use crate::engine::host::{Host, ToolResult, ToolSpec};
use crate::engine::session::{ReplayLimits, Restored, Source};
use crate::engine::{
    Completion, Engine, EngineConfig, EngineError, LogEntry, PausedRun, RunReport, RunRequest,
    SourcePosition, TraceRecord,
};
use crate::error::ExecutorError;
use crate::options::rules::log_budget_too_small;
use crate::options::{Options, RunConcurrency};
use crate::program::rules::{import_allowed, static_import_in_script_mode};
use crate::program::{FINAL_ANSWER, INTERNAL_PREFIX};
use crate::session::{Journal, Origin, PausedCall, Step};
use crate::trace::{EventSink, RunEnd, RunOutcome, RunStream, TraceEvent, TraceKind};
use crate::value::Value;

pub use state::ExecutorState;

// What the napi layer needs of the engine beyond the host port: it reaches the engine only
// through this module and `engine::host`.
pub use crate::engine::{live_engines, memory_freed, RunAbort, RunStats};

/// A successful run (§3.1 `CodeOutput`, with the optional extensions of §10.2).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    pub output: Value,
    pub logs: String,
    pub is_final_answer: bool,
    /// The same logs as structured entries.
    pub log_entries: Vec<LogEntry>,
    pub stats: RunStats,
    /// What validation noted without blocking the run (§8.3): `WARNING`s and `INFO`s about the
    /// code, and about the options the executor runs with.
    pub diagnostics: Vec<Diagnostic>,
    /// The canvases the run drew on, as PNG images in creation order.
    pub images: Vec<crate::canvas::Image>,
    /// The run's events, its end last, when it was traced.
    pub trace: Option<Vec<TraceEvent>>,
    /// The call the run paused at, when a tool asked it to pause (`pauseRun`): the executor is
    /// `PAUSED` until `resume()`.
    pub paused: Option<PausedCall>,
}

/// What a run's trace should do: keep the events for the result, stream them, both
/// or neither.
#[derive(Clone, Default)]
pub struct Tracing {
    /// Keep the events (`CodeOutput.trace`); `None` follows the `trace` option.
    pub record: Option<bool>,
    /// Receives each event as it happens (`onEvent`).
    pub sink: Option<Arc<dyn EventSink>>,
}

/// The outcome of `init()` or `run()` together with the state change it brings. The caller
/// applies the change by calling [`Settled::finish`] at the moment it reports the outcome (on
/// Node's thread, as the promise settles), so that `state` never moves ahead of the promise.
#[must_use]
pub struct Settled<T> {
    result: Result<T, ExecutorError>,
    transition: Option<Box<dyn FnOnce() + Send>>,
}

impl<T> Settled<T> {
    fn now(result: Result<T, ExecutorError>) -> Self {
        Self {
            result,
            transition: None,
        }
    }

    fn then(result: Result<T, ExecutorError>, transition: impl FnOnce() + Send + 'static) -> Self {
        Self {
            result,
            transition: Some(Box::new(transition)),
        }
    }

    /// An outcome that changes no state: a call refused before it started.
    pub fn refused(error: ExecutorError) -> Self {
        Self::now(Err(error))
    }

    /// Applies the state change and hands over the outcome.
    pub fn finish(self) -> Result<T, ExecutorError> {
        if let Some(transition) = self.transition {
            transition();
        }
        self.result
    }
}

struct Inner {
    state: ExecutorState,
    engine: Option<Engine>,
    /// Runs handed to the engine and not answered yet: the running one and the queued ones
    /// (§2.3; the engine thread runs them in order).
    in_flight: usize,
    /// While `PAUSED`: the run's pause, and its session.
    paused: Option<Paused>,
}

/// A paused run and where its session is: in the executor (the run paused here: its engine is
/// gone, and `resume()` replays the session), or in the engine (restored from a snapshot of a
/// paused session: the engine holds the state before the run, and the run).
struct Paused {
    call: PausedCall,
    /// The session (the paused run its last step), when no engine holds it.
    journal: Option<Journal>,
    /// The tools the session has: a paused executor takes these again, and no others.
    tools: Vec<String>,
}

/// One executor: checked options, a state, the host its tools call, and (between `init` and
/// `cleanup`) an engine.
pub struct Executor {
    options: Arc<Options>,
    host: Arc<dyn Host>,
    inner: Arc<Mutex<Inner>>,
}

/// Globals the executor itself provides; neither tools nor variables may take their names.
const RESERVED_GLOBALS: [&str; 2] = [FINAL_ANSWER, "console"];

/// How long past its deadline a run waits for the engine thread before it is answered without
/// it (docs/limits-and-errors.md "Limits and what they guarantee"). The engine stops a run within milliseconds of its deadline; a thread
/// still busy after this grace is stuck in work that cannot be interrupted.
pub const DEADLINE_GRACE: Duration = Duration::from_millis(500);

/// Locks the shared state. The lock is never held across user code or an await, so poisoning
/// can only follow a bug elsewhere; the state itself is still consistent then.
fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Executor {
    /// A `NEW` executor (§4.1) whose tools are served by `host`.
    pub fn new(options: Options, host: Arc<dyn Host>) -> Self {
        Self {
            options: Arc::new(options),
            host,
            inner: Arc::new(Mutex::new(Inner {
                state: ExecutorState::New,
                engine: None,
                in_flight: 0,
                paused: None,
            })),
        }
    }

    /// The current state.
    pub fn state(&self) -> ExecutorState {
        lock(&self.inner).state
    }

    /// `init()` (§4.3.1): builds the engine from nothing in `NEW` or `DEAD`, is a no-op in
    /// `READY`, and is refused in any other state.
    pub fn init(&self) -> impl Future<Output = Settled<()>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let started = {
            let mut guard = lock(&inner);
            match guard.state {
                ExecutorState::Ready => Ok(None),
                ExecutorState::New | ExecutorState::Dead => {
                    let config = EngineConfig::from(self.options.as_ref());
                    let (engine, ready) = Engine::start(config, Arc::clone(&self.host));
                    guard.state = ExecutorState::Initializing;
                    guard.engine = Some(engine);
                    Ok(Some(ready))
                }
                state => Err(ExecutorError::invalid_state(state, "init")),
            }
        };
        async move {
            let ready = match started {
                Ok(Some(ready)) => ready,
                Ok(None) => return Settled::now(Ok(())),
                Err(error) => return Settled::now(Err(error)),
            };
            match ready.await.unwrap_or(Err(EngineError::Stopped)) {
                Ok(()) => Settled::then(Ok(()), move || {
                    lock(&inner).state = ExecutorState::Ready;
                }),
                Err(error) => Settled::then(Err(init_failed(&error)), move || {
                    let mut guard = lock(&inner);
                    guard.state = ExecutorState::Dead;
                    guard.engine = None;
                }),
            }
        }
    }

    /// `sendVariables` (§4.3.2): sets globals holding copies of `variables`, replacing earlier
    /// values of the same names.
    pub fn send_variables(
        &self,
        variables: Vec<(String, Value)>,
    ) -> impl Future<Output = Result<(), ExecutorError>> + Send + 'static {
        let sent = {
            let guard = lock(&self.inner);
            match (guard.state, guard.engine.as_ref()) {
                // A tool's name is refused by the engine, which keeps the names of the tools
                // installed (sendTools before sendVariables reaches it first: one queue).
                (ExecutorState::Ready, Some(engine)) => variables
                    .iter()
                    .find_map(|(name, _)| reserved(name))
                    .map_or_else(|| Ok(engine.set_variables(variables)), Err),
                (state, _) => Err(ExecutorError::invalid_state(state, "sendVariables")),
            }
        };
        async move { endowed(sent?.await) }
    }

    /// `sendTools` (§4.3.3): makes each tool callable from the sandbox under its name. `register`
    /// hands the tools to the host, and runs only once the call is accepted, before any later run
    /// can call them.
    pub fn send_tools(
        &self,
        tools: Vec<ToolSpec>,
        register: impl FnOnce(),
    ) -> impl Future<Output = Result<(), ExecutorError>> + Send + 'static {
        let sent = {
            let guard = lock(&self.inner);
            match guard.state {
                ExecutorState::Ready if guard.engine.is_some() => {
                    match tools.iter().find_map(|tool| reserved(&tool.name)) {
                        Some(refused) => Err(refused),
                        None => {
                            register();
                            guard
                                .engine
                                .as_ref()
                                .map(|engine| engine.define_tools(tools))
                                .ok_or_else(|| {
                                    ExecutorError::invalid_state(ExecutorState::Ready, "sendTools")
                                })
                        }
                    }
                }
                // A paused session takes its tools' functions again (after a restore, or to
                // replace them), for the run it resumes; that run has no use for others.
                ExecutorState::Paused => {
                    let known = guard
                        .paused
                        .as_ref()
                        .map_or(&[][..], |paused| &paused.tools[..]);
                    match tools.iter().find(|tool| !known.contains(&tool.name)) {
                        Some(unknown) => Err(ExecutorError::not_a_paused_tool(&unknown.name)),
                        None => {
                            register();
                            let (reply, answered) = tokio::sync::oneshot::channel();
                            let _ = reply.send(Ok(()));
                            Ok(answered)
                        }
                    }
                }
                state => Err(ExecutorError::invalid_state(state, "sendTools")),
            }
        };
        async move { endowed(sent?.await) }
    }

    /// `run(code)` (§4.3.4, §7.2): `READY` → `RUNNING` → `READY`, or `DIRTY` after a timeout or
    /// when the context can no longer be trusted (§7.6). With `runConcurrency: "queue"`, a run
    /// started while another runs waits its turn (FIFO, at most `maxQueuedRuns` waiting).
    /// `abort` stops the run like a timeout would (`ERR_EXEC_TIMEOUT`, reason `aborted`,
    /// `DIRTY`), or, while it still waits in the queue, keeps it from starting (state unchanged).
    /// `input`, when given, is bound as the global `input` for this run only.
    /// `tracing` says whether the run records its events and where it streams them.
    pub fn run(
        &self,
        code: String,
        abort: RunAbort,
        input: Option<Value>,
        tracing: Tracing,
    ) -> impl Future<Output = Settled<RunOutput>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let (watched, timeout_ms) = (abort.clone(), self.options.timeout_ms);
        let sink = tracing
            .sink
            .map(|sink| Arc::new(RunStream::new(sink)) as Arc<dyn EventSink>);
        let record = tracing.record.unwrap_or(self.options.trace);
        let traced = record || sink.is_some();
        let request = |code: String, options: &Options| {
            let mut request = RunRequest::new(code, options, abort).with_input(input);
            request.trace.record = record;
            request.trace.sink = sink.clone();
            request
        };
        // The options' own notes (§8.3), reported with every run like the code's.
        #[allow(
            clippy::cast_precision_loss,
            reason = "a byte budget far below 2^53; the rule reads JS numbers"
        )]
        let notices: Vec<Diagnostic> =
            log_budget_too_small::check(Some(self.options.max_log_bytes as f64))
                .into_iter()
                .collect();
        let submitted = {
            let mut guard = lock(&inner);
            let queue = self.options.run_concurrency == RunConcurrency::Queue;
            let waiting = guard.in_flight.saturating_sub(1);
            match (guard.state, guard.engine.as_ref()) {
                (ExecutorState::Ready, Some(engine)) => {
                    // No run of this executor ahead of it: its deadline counts from now.
                    let request = request(code, &self.options);
                    let called_at = request.called_at;
                    Ok((engine.run(request), Some(called_at)))
                }
                (ExecutorState::Running, Some(engine))
                    if queue && waiting < self.options.max_queued_runs =>
                {
                    // Its deadline starts when the runs ahead of it end: the engine says when.
                    Ok((engine.run(request(code, &self.options)), None))
                }
                (ExecutorState::Running, Some(_)) if queue => Err(ExecutorError::queue_full(
                    waiting,
                    self.options.max_queued_runs,
                )),
                (state, _) => Err(ExecutorError::invalid_state(state, "run")),
            }
            .inspect(|_| {
                guard.in_flight += 1;
                guard.state = ExecutorState::Running;
            })
        };
        let ending = RunEnding {
            inner,
            watched,
            timeout_ms,
            notices,
            record,
            traced,
            sink,
        };
        async move {
            match submitted {
                Ok((reply, started)) => ending.finish(reply, started).await,
                Err(error) => Settled::now(Err(error)),
            }
        }
    }

    /// The call the executor's run paused at, while it is `PAUSED`.
    pub fn paused(&self) -> Option<PausedCall> {
        lock(&self.inner)
            .paused
            .as_ref()
            .map(|paused| paused.call.clone())
    }

    /// `snapshot()`: the session as bytes that [`Executor::restore`] takes back, in this process
    /// or another; `READY` or `PAUSED` only (a run in flight, or a `DIRTY` context, has no state
    /// at rest to write). Signed with `snapshotKey` when the executor has one.
    pub fn snapshot(
        &self,
    ) -> impl Future<Output = Result<Vec<u8>, ExecutorError>> + Send + 'static {
        let key = self.options.snapshot_key.clone();
        let terms = crate::session::Terms::of(&self.options);
        let started = {
            let guard = lock(&self.inner);
            match (guard.state, guard.engine.as_ref(), guard.paused.as_ref()) {
                (ExecutorState::Ready | ExecutorState::Paused, Some(engine), _) => {
                    Ok(Ok(engine.snapshot(key.clone())))
                }
                (
                    ExecutorState::Paused,
                    None,
                    Some(Paused {
                        journal: Some(journal),
                        ..
                    }),
                ) => Ok(Err(journal.clone())),
                (state, ..) => Err(ExecutorError::invalid_state(state, "snapshot")),
            }
        };
        async move {
            match started? {
                Ok(written) => match written.await {
                    Ok(Ok(bytes)) => Ok(bytes),
                    Ok(Err(error)) => Err(run_failed(error, String::new())),
                    Err(_) => Err(run_failed(EngineError::Stopped, String::new())),
                },
                Err(journal) => Ok(crate::session::seal::seal(&terms, &journal, key.as_deref())),
            }
        }
    }

    /// `SESExecutor.restore(bytes, options)`: this `NEW` executor takes the session a snapshot
    /// holds (`INITIALIZING` → `READY`, or `PAUSED` for a session paused in a run). The snapshot
    /// is untrusted input: it is checked (format, versions, checksum, HMAC with `snapshotKey`),
    /// its terms must be this executor's options, and its runs are validated again and replayed
    /// under this executor's limits. Refused with `ERR_SNAPSHOT_INVALID` (`DEAD` then).
    pub fn restore(&self, bytes: Vec<u8>) -> impl Future<Output = Settled<()>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let started = {
            let mut guard = lock(&inner);
            match guard.state {
                ExecutorState::New => {
                    let (engine, ready) = Engine::restore(
                        EngineConfig::from(self.options.as_ref()),
                        Arc::clone(&self.host),
                        Source::Bytes(bytes, self.options.snapshot_key.clone()),
                        self.replay_limits(),
                        None,
                    );
                    guard.state = ExecutorState::Initializing;
                    guard.engine = Some(engine);
                    Ok(ready)
                }
                state => Err(ExecutorError::invalid_state(state, "restore")),
            }
        };
        async move {
            let ready = match started {
                Ok(ready) => ready,
                Err(error) => return Settled::now(Err(error)),
            };
            match ready.await.unwrap_or(Err(EngineError::Stopped)) {
                Ok(restored) => Settled::then(Ok(()), move || {
                    let mut guard = lock(&inner);
                    match restored {
                        Restored::Paused(call, tools) => {
                            guard.state = ExecutorState::Paused;
                            guard.paused = Some(Paused {
                                call,
                                journal: None,
                                tools,
                            });
                        }
                        Restored::Ready | Restored::Resumed => guard.state = ExecutorState::Ready,
                    }
                }),
                Err(error) => Settled::then(Err(restore_failed(error)), move || {
                    let mut guard = lock(&inner);
                    guard.state = ExecutorState::Dead;
                    guard.engine = None;
                }),
            }
        }
    }

    /// `resume(answer)`: continues the paused run from the call it paused at, which gets
    /// `answer` (a value, or a failure the call throws): `PAUSED` → `RUNNING` → as `run()` ends
    /// (`READY`, `DIRTY`, or `PAUSED` again). The run is replayed up to that call first, under
    /// this executor's limits; a replay that fails rejects with `ERR_SNAPSHOT_INVALID` and leaves
    /// the executor `PAUSED`.
    pub fn resume(
        &self,
        answer: ToolResult,
    ) -> impl Future<Output = Settled<RunOutput>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let abort = RunAbort::new();
        let request = RunRequest::new(String::new(), &self.options, abort.clone());
        let ending = RunEnding {
            inner: Arc::clone(&inner),
            watched: abort,
            timeout_ms: self.options.timeout_ms,
            notices: Vec::new(),
            record: false,
            traced: false,
            sink: None,
        };
        let started = {
            let mut guard = lock(&inner);
            match (guard.state, guard.paused.take()) {
                (ExecutorState::Paused, Some(paused)) => match (&guard.engine, &paused.journal) {
                    (Some(engine), _) => {
                        let reply = engine.resume(request, answer);
                        guard.state = ExecutorState::Running;
                        guard.in_flight += 1;
                        Ok((reply, None, paused))
                    }
                    (None, Some(journal)) => {
                        let (reply, receiver) = tokio::sync::oneshot::channel();
                        let (engine, ready) = Engine::restore(
                            EngineConfig::from(self.options.as_ref()),
                            Arc::clone(&self.host),
                            Source::Journal(journal.clone()),
                            self.replay_limits(),
                            Some((request, answer, reply)),
                        );
                        guard.engine = Some(engine);
                        guard.state = ExecutorState::Running;
                        guard.in_flight += 1;
                        Ok((receiver, Some(ready), paused))
                    }
                    (None, None) => Err(ExecutorError::invalid_state(
                        ExecutorState::Paused,
                        "resume",
                    )),
                },
                (state, paused) => {
                    guard.paused = paused;
                    Err(ExecutorError::invalid_state(state, "resume"))
                }
            }
        };
        async move {
            let (reply, ready, paused) = match started {
                Ok(started) => started,
                Err(error) => return Settled::now(Err(error)),
            };
            if let Some(ready) = ready {
                if let Err(error) = ready.await.unwrap_or(Err(EngineError::Stopped)) {
                    // The session is still there to resume with other limits, or to snapshot.
                    return Settled::then(Err(restore_failed(error)), move || {
                        let mut guard = lock(&inner);
                        guard.engine = None;
                        guard.in_flight = guard.in_flight.saturating_sub(1);
                        guard.state = ExecutorState::Paused;
                        guard.paused = Some(paused);
                    });
                }
            }
            // The runs of the session before the paused one are replayed first, each under its
            // own deadline: the resumed run's counts from when the engine takes it up.
            ending.finish(reply, None).await
        }
    }

    /// The limits a restore replays under: this executor's.
    fn replay_limits(&self) -> ReplayLimits {
        ReplayLimits {
            max_operations: self.options.max_operations,
            timeout_ms: self.options.timeout_ms,
        }
    }

    /// `cleanup()` (§4.3.5): `READY`/`DIRTY` → `DEAD`, releasing the engine (the future
    /// completes once its runtime is freed); a no-op in `DEAD`; refused otherwise.
    pub fn cleanup(&self) -> impl Future<Output = Result<(), ExecutorError>> + Send + 'static {
        let stopped = {
            let mut guard = lock(&self.inner);
            match guard.state {
                ExecutorState::Dead => Ok(None),
                ExecutorState::Ready | ExecutorState::Dirty | ExecutorState::Paused => {
                    guard.state = ExecutorState::Dead;
                    guard.paused = None;
                    Ok(guard.engine.take().map(Engine::stop))
                }
                state => Err(ExecutorError::invalid_state(state, "cleanup")),
            }
        };
        async move {
            let Some(freed) = stopped? else {
                return Ok(());
            };
            freed
                .await
                .map_err(|_| ExecutorError::cleanup_failed("the engine failed (a panic)"))
        }
    }

    /// Stops the engine at once, whatever the state: a run in flight ends with "the executor was
    /// shut down" and the runtime is freed. For an executor nobody can call again (its host is
    /// going away); the state becomes `DEAD`.
    pub fn stop_now(&self) {
        let engine = {
            let mut guard = lock(&self.inner);
            guard.state = ExecutorState::Dead;
            guard.engine.take()
        };
        drop(engine);
    }
}

/// What ends a run the executor handed to its engine (`run()`, `resume()`): the answer (or
/// the deadline's, when the engine thread is stuck), its trace's end, and the state it leaves.
struct RunEnding {
    inner: Arc<Mutex<Inner>>,
    watched: RunAbort,
    timeout_ms: u64,
    /// The options' own diagnostics, reported with the run.
    notices: Vec<Diagnostic>,
    /// Whether the run keeps its trace, and whether it is traced at all.
    record: bool,
    traced: bool,
    sink: Option<Arc<dyn EventSink>>,
}

impl RunEnding {
    /// `started`: when the run's deadline began, if no run of the executor is ahead of it.
    async fn finish(
        self,
        reply: tokio::sync::oneshot::Receiver<RunReport>,
        started: Option<Instant>,
    ) -> Settled<RunOutput> {
        let RunEnding {
            inner,
            watched,
            timeout_ms,
            notices,
            record,
            traced,
            sink,
        } = self;
        let (report, overdue) = match answer_by_deadline(reply, &watched, started, timeout_ms).await
        {
            Some(answer) => (
                answer.unwrap_or_else(|_| RunReport::refused(EngineError::Stopped, true)),
                false,
            ),
            None => (
                RunReport::refused(EngineError::Timeout { timeout_ms }, true),
                true,
            ),
        };
        let dirty = report.dirty;
        let mut diagnostics = report.diagnostics;
        diagnostics.extend(notices);
        let paused = report.paused;
        let result = match report.result {
            Ok(Completion {
                output,
                is_final_answer,
            }) => Ok(RunOutput {
                output,
                logs: report.logs.text,
                is_final_answer,
                log_entries: report.logs.entries,
                stats: report.stats,
                diagnostics,
                images: report.images,
                trace: None,
                paused: paused.as_ref().map(|paused| paused.call.clone()),
            }),
            Err(error) if overdue => Err(with_notes(
                run_failed(error, report.logs.text)
                    .with_detail("graceMs", DEADLINE_GRACE.as_millis() as u64)
                    .with_detail("stillRunning", true),
                &diagnostics,
            )),
            Err(error) => Err(with_notes(
                run_failed(error, report.logs.text),
                &diagnostics,
            )),
        };
        // A run answered without the engine (overdue) still ends its trace and its stream.
        let trace = report.trace.or_else(|| {
            (overdue && traced).then(|| TraceRecord {
                events: record.then(Vec::new),
                dropped_events: 0,
            })
        });
        let result = match trace {
            Some(record) => end_trace(result, record, &report.stats, sink.as_deref()),
            None => result,
        };
        Settled::then(result, move || {
            let mut guard = lock(&inner);
            guard.in_flight = guard.in_flight.saturating_sub(1);
            if let Some(paused) = paused {
                // The engine is gone with the paused run's runtime; the session is here.
                let PausedRun { call, journal } = *paused;
                guard.engine = None;
                guard.in_flight = 0;
                guard.state = ExecutorState::Paused;
                guard.paused = Some(Paused {
                    call,
                    tools: tool_names(&journal),
                    journal: Some(journal),
                });
            } else if dirty && guard.state == ExecutorState::Running {
                guard.state = ExecutorState::Dirty;
            } else if guard.in_flight == 0 && guard.state == ExecutorState::Running {
                guard.state = ExecutorState::Ready;
            }
        })
    }
}

/// The engine thread's answer to a run, or `None` once [`DEADLINE_GRACE`] has passed since the
/// run's deadline without one: the thread is then stuck in work that cannot be interrupted, and
/// the run is answered without it (a timeout; the executor becomes `DIRTY`, and `cleanup()`
/// waits for the thread). The deadline counts from `started` (the call), or, for a run queued
/// behind others of the same executor, from when the engine says it began; a run whose code is
/// over (its images being encoded) has none any more.
async fn answer_by_deadline(
    mut reply: tokio::sync::oneshot::Receiver<RunReport>,
    watched: &RunAbort,
    started: Option<Instant>,
    timeout_ms: u64,
) -> Option<Result<RunReport, tokio::sync::oneshot::error::RecvError>> {
    let late = Duration::from_millis(timeout_ms).saturating_add(DEADLINE_GRACE);
    let overdue = |started: Instant| started.checked_add(late);
    let began = || watched.started_at().or(started);
    loop {
        // Until a queued run's deadline begins, it is at least `late` from now: look again then.
        let Some(give_up) = overdue(began().unwrap_or_else(Instant::now)) else {
            return Some(reply.await);
        };
        let mut alarm = alarm::Alarm::at(give_up);
        let answered = poll_fn(|cx| match Pin::new(&mut reply).poll(cx) {
            Poll::Ready(answer) => Poll::Ready(Some(answer)),
            Poll::Pending => Pin::new(&mut alarm).poll(cx).map(|()| None),
        })
        .await;
        if answered.is_some() {
            return answered;
        }
        // A run whose code is over is only having its images encoded: bounded work outside
        // its deadline (docs/canvas.md "Canvas: agents that draw"), answered whenever it is done.
        if watched.is_finished() {
            return Some(reply.await);
        }
        if began()
            .and_then(overdue)
            .is_some_and(|at| at <= Instant::now())
        {
            return None;
        }
    }
}

/// Ends a traced run's events with its end (outcome, error code, figures), streams that end,
/// and hands the events to the result or the error.
fn end_trace(
    result: Result<RunOutput, ExecutorError>,
    record: TraceRecord,
    stats: &RunStats,
    sink: Option<&dyn EventSink>,
) -> Result<RunOutput, ExecutorError> {
    let (outcome, error) = match &result {
        Ok(output) if output.is_final_answer => (RunOutcome::FinalAnswer, None),
        Ok(_) => (RunOutcome::Completed, None),
        Err(error) => (
            RunOutcome::Failed,
            Some((error.code.as_str(), error.message.clone())),
        ),
    };
    let end = TraceEvent {
        at: stats.wall_time,
        kind: TraceKind::RunEnd(RunEnd {
            outcome,
            error,
            tool_calls: stats.tool_calls,
            operations: stats.operations,
            peak_heap_bytes: stats.peak_heap_bytes,
            dropped_events: record.dropped_events,
        }),
    };
    if let Some(sink) = sink {
        sink.event(end.clone());
    }
    let events = record.events.map(|mut events| {
        events.push(end);
        events
    });
    match result {
        Ok(output) => Ok(RunOutput {
            trace: events,
            ..output
        }),
        Err(error) => Err(match events {
            Some(events) => error.with_trace(events),
            None => error,
        }),
    }
}

/// Refuses a tool or variable name the executor keeps for itself.
fn reserved(name: &str) -> Option<ExecutorError> {
    if name.is_empty() {
        Some(ExecutorError::endowment_refused(name, "is empty"))
    } else if RESERVED_GLOBALS.contains(&name) {
        Some(ExecutorError::endowment_refused(
            name,
            "is provided by the executor",
        ))
    } else if name.starts_with(INTERNAL_PREFIX) {
        Some(ExecutorError::endowment_refused(
            name,
            "uses the executor's internal prefix",
        ))
    } else {
        None
    }
}

/// The outcome of installing tools or variables.
fn endowed(
    answer: Result<Result<(), EngineError>, tokio::sync::oneshot::error::RecvError>,
) -> Result<(), ExecutorError> {
    match answer {
        Ok(Ok(())) => Ok(()),
        Ok(Err(EngineError::Endowment(message))) => Err(ExecutorError::endowment_failed(&message)),
        Ok(Err(EngineError::ToolName(name))) => Err(tool_name_taken(&name)),
        Ok(Err(error)) => Err(run_failed(error, String::new())),
        Err(_) => Err(run_failed(EngineError::Stopped, String::new())),
    }
}

/// A variable refused for taking a tool's name.
fn tool_name_taken(name: &str) -> ExecutorError {
    ExecutorError::endowment_refused(name, "is a tool's name")
}

fn init_failed(error: &EngineError) -> ExecutorError {
    ExecutorError::init_failed(error)
}

/// A restore (or the replay of a resume) that failed: the snapshot's problem, or the failure
/// that stopped the runtime from being built.
fn restore_failed(error: EngineError) -> ExecutorError {
    match error {
        EngineError::Start(_) => init_failed(&error),
        error => run_failed(error, String::new()),
    }
}

/// The tools a session has: those its checkpoint holds and those sent since.
fn tool_names(journal: &Journal) -> Vec<String> {
    let mut names: Vec<String> = match &journal.origin {
        Origin::Checkpoint(image) => image.tools.iter().map(|tool| tool.name.clone()).collect(),
        Origin::Fresh { .. } => Vec::new(),
    };
    for step in &journal.steps {
        if let Step::Tools(tools) = step {
            for tool in tools {
                if !names.contains(&tool.name) {
                    names.push(tool.name.clone());
                }
            }
        }
    }
    names
}

/// Maps an engine failure to its §8.2 code: the one place where that decision is made.
fn run_failed(error: EngineError, logs: String) -> ExecutorError {
    let error = match error {
        EngineError::Invalid(diagnostics) => return code_refused(&diagnostics),
        EngineError::Runtime {
            message,
            at,
            error_name,
        } => {
            let error = at_position(ExecutorError::runtime(message), at);
            match error_name {
                Some(name) => error.with_detail("errorName", name),
                None => error,
            }
        }
        EngineError::ImportNotAllowed { message, at } => {
            at_position(ExecutorError::import_refused(message), at)
        }
        EngineError::Tool {
            tool,
            message,
            at,
            retryable,
        } => at_position(ExecutorError::tool_failed(tool, &message, retryable), at),
        EngineError::Limit { limit, message } => ExecutorError::limit(limit, message),
        EngineError::TooLarge { message, limit, at } => {
            at_position(ExecutorError::too_large(message, &limit), at)
        }
        EngineError::CanvasLimit { limit, message, at } => {
            at_position(ExecutorError::limit(limit, message), at)
        }
        EngineError::MaxOperations { limit } => ExecutorError::max_operations(limit),
        EngineError::Timeout { timeout_ms } => ExecutorError::timeout(timeout_ms),
        EngineError::Aborted { started } => ExecutorError::aborted(started),
        EngineError::Start(message) => ExecutorError::init_failed(message),
        EngineError::Endowment(message) => ExecutorError::endowment_failed(&message),
        EngineError::ToolName(name) => tool_name_taken(&name),
        EngineError::Dirty => ExecutorError::invalid_state(ExecutorState::Dirty, "run"),
        EngineError::Stopped => ExecutorError::shut_down(),
        EngineError::Snapshot(error) => ExecutorError::snapshot_invalid(&error),
        EngineError::NotDurable(why) => ExecutorError::not_durable(&why),
        EngineError::Paused => ExecutorError::invalid_state(ExecutorState::Paused, "run"),
    };
    error.with_logs(logs)
}

/// Adds the `WARNING`s and `INFO`s of a run that failed at run time to `details.diagnostics`
/// (§8.3): a warning such as `forbidden_global_access` often says why it failed.
fn with_notes(error: ExecutorError, diagnostics: &[Diagnostic]) -> ExecutorError {
    if diagnostics.is_empty() || error.details.contains_key("diagnostics") {
        return error;
    }
    error.with_diagnostics(diagnostics)
}

/// Adds the user's line, column and source line to `details` (docs/contract.md "Errors").
fn at_position(error: ExecutorError, at: Option<SourcePosition>) -> ExecutorError {
    match at {
        Some(at) => error
            .with_detail("line", at.location.line)
            .with_detail("column", at.location.column)
            .with_detail("sourceLine", at.source_line),
        None => error,
    }
}

/// The rules whose findings are import refusals (§5.3, CF-05, CF-06).
const IMPORT_RULES: [&str; 2] = [import_allowed::RULE, static_import_in_script_mode::RULE];

/// Code that did not pass validation: `ERR_IMPORT_NOT_ALLOWED` when an import rule refused it,
/// `ERR_VALIDATION_FAILED` otherwise; every diagnostic in `details.diagnostics` either way.
fn code_refused(diagnostics: &[Diagnostic]) -> ExecutorError {
    let imports: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error() && IMPORT_RULES.contains(&diagnostic.rule))
        .collect();
    match imports.as_slice() {
        [] => ExecutorError::validation(diagnostics),
        // The rule's message is already the template's (`Import not allowed: 'fs'. …`).
        [only] if only.rule == import_allowed::RULE => {
            ExecutorError::import_refused(only.message.clone()).with_diagnostics(diagnostics)
        }
        several => ExecutorError::imports_refused(several, diagnostics),
    }
}

#[cfg(test)]
mod tests;
