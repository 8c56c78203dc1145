//! The engine: builds the runtime and context on the first pool thread that takes the executor
//! up, then serves its messages on whichever pool thread holds it (`scheduler/pool.rs`, `scheduler/inbox.rs`).
//!
//! A run that waits for an asynchronous tool gives its thread up: its promise stays in the
//! runtime, the engine rests in its inbox, and the answer (or a timer at the run's deadline, or
//! an abort) queues it again; the next thread resumes driving the promise where it stopped.
//!
//! Spec: §7.2 (run algorithm) and §4 (a context per executor lifetime).

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Persistent, Promise, Runtime, Value as JsValue};
use tokio::sync::oneshot;

use super::bridge::{Bridge, Next as BridgeNext};
use super::failure::{
    endowed, never_settles, out_of_memory, result_too_large, runtime_error, tool_error,
};
use super::recorder::Recorder;
use super::script;
use super::state::{RunResult, RunState, Stop};
use crate::canvas::{CanvasError, CanvasErrorKind};
use crate::engine::host::{Host, ToolResult, ToolSpec};
use crate::engine::quickjs::heap::{self, LimitedAllocator};
use crate::engine::quickjs::reflect::{self, refused_allocations, RuntimeLimit};
use crate::engine::quickjs::session as quickjs_session;
use crate::engine::realm::canvas::{self, CanvasHost};
use crate::engine::realm::console::LogBuffer;
use crate::engine::realm::endowments::{define_tools, set_variables};
use crate::engine::realm::globals::{self, copy_promised};
use crate::engine::realm::input;
use crate::engine::realm::lockdown;
use crate::engine::realm::modules::{self, Registry, SandboxLoader, SandboxResolver};
use crate::engine::realm::timers::{self, Fired, Timers};
use crate::engine::session::{self, External, Tape};
use crate::engine::{
    Command, Completion, EngineConfig, EngineError, EngineInbox, PausedRun, RunAbort, RunReport,
    RunRequest, RunStats,
};
use crate::memory::MemoryAccount;
use crate::program::{self, PreparedProgram, ProgramContext};
use crate::scheduler::inbox::{Closed, Next};
use crate::scheduler::stack::{self, PROGRAM_STACK_BYTES};
use crate::scheduler::{pool, slice};
use crate::session::{Origin, RunRecord, SnapshotError, SnapshotProblem, Step, Terms};
use crate::value::Value;

mod durable;

/// Jobs still queued after user code was stopped are run (each is stopped at its first guard,
/// console, tool or output call, or by the interrupt handler) so that none of them survives into
/// the next run; past this many the context is reported dirty instead.
const MAX_JOBS_AFTER_STOP: usize = 10_000;

/// A run that gave its thread up while it waits for a tool.
struct InFlight {
    /// When it gave the thread up: the time until it resumes is not its CPU time.
    left: Instant,
    /// The script's promise, kept in the runtime.
    promise: Persistent<Promise<'static>>,
    /// The heap's refused allocations when the run began (see [`refused_allocations`]).
    refused: u64,
    program: PreparedProgram,
    request: RunRequest,
    /// Whether the run bound an `input` (unbound when it ends).
    input_bound: bool,
    reply: oneshot::Sender<RunReport>,
    started: Instant,
    /// When the engine took the run up.
    taken_up: Instant,
}

/// The engine and what it owns. Fields drop in order: everything that holds QuickJS values
/// goes before the runtime.
struct Worker {
    in_flight: Option<InFlight>,
    context: Context,
    state: Rc<RunState>,
    bridge: Rc<Bridge>,
    /// What the runtime takes from the system and what the engine holds for it, against
    /// `memoryLimitBytes`.
    memory: Rc<MemoryAccount>,
    /// The sandbox's canvases, whose drawings a run returns as images.
    canvas: CanvasHost,
    /// The run's timers, when the executor has them (`timers: true`).
    timers: Option<Rc<Timers>>,
    /// What validation knows besides the code: the authorized imports (fixed at start) and the
    /// tools installed so far.
    program_context: ProgramContext,
    /// Set once a run left the context untrustworthy (§7.6): later runs are refused.
    dirty: bool,
    /// The options the session's state depends on (what a snapshot carries).
    terms: Terms,
    /// What the engine was built with (a checkpoint compares with a context built so).
    config: EngineConfig,
    /// Set once a run paused: the runtime is dropped (the paused run is resumed by replay).
    gone: bool,
    /// When the last run was answered: a run queued behind it (`runConcurrency: "queue"`)
    /// starts its deadline no earlier.
    last_answered: Option<Instant>,
    _runtime: Runtime,
}

/// Engines alive in the process (built and not yet freed).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How many engines (QuickJS runtimes) are alive in the process.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

impl Drop for Worker {
    fn drop(&mut self) {
        // The reclaim hook points into the runtime, which goes with the fields below.
        self.memory.set_reclaim(None);
        self.memory.set_on_refused(None);
        self.memory.set_evict(None);
        // The hook points into the run state, which goes before the runtime.
        self.context
            .with(|ctx| quickjs_session::set_hook::<Tape>(&ctx, None));
        // The timer functions inside the runtime share the registry: its QuickJS values must go
        // before the runtime frees those functions.
        if let Some(timers) = &self.timers {
            timers.cancel_all();
        }
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A worker at rest in its inbox, or on its way to a pool thread.
pub(crate) struct Resting(Box<Worker>);

// SAFETY: a `Worker` is a closed world of `!Send` parts: the rquickjs `Runtime` and `Context`
// (`Rc`s around QuickJS's runtime and context), the `Rc<RunState>`, `Rc<Bridge>`,
// `Rc<MemoryAccount>` (with the charges that point to it) and the canvas host's `Rc` it shares
// with the native functions, classes and allocator inside that runtime, the
// `Persistent` handles of an in-flight run, and the `Cell`s and `RefCell`s inside them. Every
// clone of those `Rc`s is owned by the worker itself or by the QuickJS runtime it owns (native
// closures, the allocator, the module loader, the interrupt handler, the context's opaque slot),
// and nothing the engine hands out holds one: what leaves it is plain data (`Value`s, reports,
// log entries) or `Send` handles (`Arc<dyn Host>`, the inbox's `Weak`, oneshot senders, the
// `Arc<AtomicBool>` shutdown flag). So moving the whole worker moves every reference to its
// non-atomic counters and cells together, and they are only ever touched by the one thread that
// holds the worker. That thread is unique: the worker moves only through its inbox's mutex (the
// thread that takes it up has it alone until it puts it back, and the lock orders everything the
// previous holder wrote before what the next one reads), or is dropped by the thread holding it.
// QuickJS itself keeps no per-thread state (no thread-locals in quickjs-ng; rquickjs has none
// either); its one tie to a thread, the stack top it measures recursion from, is reset by
// `Worker::enter` each time a thread takes the worker up.
unsafe impl Send for Resting {}

/// The stack depth QuickJS checks an engine's runs against (`maxStackBytes`, within the bounds
/// every engine is held to): the pool sizes the coroutine stack its runs compute on from it.
pub(crate) fn checked_stack_bytes(config: &EngineConfig) -> usize {
    config
        .options
        .max_stack_bytes
        .clamp(crate::options::MIN_STACK_BYTES, stack::MAX_STACK_BYTES)
}

/// Serves an engine's inbox on the calling pool thread until the engine rests, is handed to
/// others, or is gone.
pub(crate) fn serve(inbox: &Arc<EngineInbox>) {
    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve_inbox(inbox)));
    if served.is_err() {
        // A bug: answer everything still queued (and the caller of every later message) with
        // "the engine has stopped" rather than leave it waiting.
        inbox.close();
    }
}

fn serve_inbox(inbox: &Arc<EngineInbox>) {
    let mut worker = match inbox.take_up() {
        Ok(Some(Resting(worker))) => worker,
        Ok(None) => match start(inbox) {
            Some(worker) => worker,
            None => return,
        },
        Err(Closed) => return,
    };
    worker.enter();
    loop {
        let (command, held) = match inbox.next(Resting(worker)) {
            Next::Message(command, Resting(held)) => (command, held),
            Next::Rested => return,
        };
        worker = held;
        let handled = match worker.handle(inbox, command) {
            Handled::Continue if worker.gone => Handled::Stop(None),
            handled => handled,
        };
        match handled {
            Handled::Continue => {}
            Handled::Stop(done) => {
                // Everything held by the runtime goes with it, on this thread.
                drop(worker);
                heap::memory_freed();
                inbox.close();
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
        }
        // Fairness: an engine with more work than the run it just finished lets executors
        // that waited meanwhile go first.
        if worker.in_flight.is_none() && inbox.has_mail() && pool::others_waiting() {
            inbox.requeue(Resting(worker));
            return;
        }
    }
}

/// Builds the engine from its first message; `None` if it could not be built (the inbox is
/// closed then).
fn start(inbox: &Arc<EngineInbox>) -> Option<Box<Worker>> {
    let (config, host, shutdown, ready) = match inbox.pop() {
        Some(Command::Start(config, host, shutdown, ready)) => (config, host, shutdown, ready),
        Some(Command::Restore(restore)) => return durable::restore(inbox, *restore),
        _ => {
            inbox.close();
            return None;
        }
    };
    let tape = Tape::new(Origin::Fresh {
        random_seed: session::fresh_seed(),
        time_origin: f64::NAN,
    });
    match Worker::build(config, host, shutdown, Arc::downgrade(inbox), tape) {
        Ok(worker) => {
            if ready.send(Ok(())).is_err() {
                drop(worker);
                inbox.close();
                return None;
            }
            Some(worker)
        }
        Err(error) => {
            let _ = ready.send(Err(error));
            inbox.close();
            None
        }
    }
}

/// What handling a message led to.
enum Handled {
    Continue,
    /// The engine must be freed; the sender (if any) hears when it is.
    Stop(Option<oneshot::Sender<()>>),
}

impl Worker {
    pub(super) fn build(
        config: EngineConfig,
        host: Arc<dyn Host>,
        shutdown: Arc<AtomicBool>,
        inbox: Weak<EngineInbox>,
        tape: Tape,
    ) -> Result<Box<Worker>, EngineError> {
        let terms = config.terms.clone();
        let kept = config.clone();
        let state = Rc::new(RunState::new(shutdown, &host, tape));
        let bridge = Rc::new(Bridge::new(inbox, host));
        let memory = MemoryAccount::new(config.options.memory_limit_bytes);
        let program_context = ProgramContext {
            authorized_imports: config.options.authorized_imports.clone(),
            tool_names: Vec::new(),
            timers: config.options.timers,
        };
        let timers = config.options.timers.then(|| Rc::new(Timers::default()));
        let (runtime, context, canvas) = build(config, &state, &bridge, &memory, timers.as_ref())?;
        // Before a charge is refused, dropped canvases waiting for the cycle collector (a canvas
        // and its context refer to each other) are collected.
        let collector = context.with(|ctx| RuntimeLimit::of(&ctx));
        memory.set_reclaim(Some(Rc::new(move || collector.collect_garbage())));
        // Whether a charge fits depends on what the heap holds, which a restore does not repeat.
        let refusals = Rc::clone(&state);
        memory.set_on_refused(Some(Rc::new(move || refusals.tape.charge_refused())));
        // The journal is memory the process pays for the session too, and the first to go when
        // the sandbox needs its room.
        state.tape.charge_to(&memory);
        let evicting = Rc::downgrade(&state);
        memory.set_evict(Some(Rc::new(move |missing| {
            if let Some(state) = evicting.upgrade() {
                state.tape.give_way_for(missing);
            }
        })));
        let fresh = state.tape.fresh_origin();
        if let Some((random_state, _)) = fresh {
            context.with(|ctx| quickjs_session::set_random_state(&ctx, random_state));
        }
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(Worker {
            in_flight: None,
            context,
            state,
            bridge,
            memory,
            canvas,
            timers,
            program_context,
            dirty: false,
            terms,
            config: kept,
            gone: false,
            last_answered: None,
            _runtime: runtime,
        }))
    }

    /// Makes the runtime measure recursion from the current thread's stack: the stack top it
    /// recorded belongs to whichever thread held it before.
    fn enter(&self) {
        self.context
            .with(|ctx| reflect::RuntimeLimit::of(&ctx).update_stack_top());
    }

    fn handle(&mut self, inbox: &Arc<EngineInbox>, command: Command) -> Handled {
        if self.in_flight.is_some() {
            self.bridge.receive_while_waiting(&self.state, command);
            self.resume(inbox);
            return Handled::Continue;
        }
        match command {
            Command::Run(request, reply) => self.run(inbox, request, reply, None),
            Command::DefineTools(tools, reply) => {
                let _ = reply.send(self.define_tools(tools));
            }
            Command::SetVariables(variables, reply) => {
                let _ = reply.send(self.set_variables(variables));
            }
            Command::Snapshot(key, reply) => {
                let _ = reply.send(self.snapshot(key.as_deref()));
            }
            Command::Resume(request, answer, reply) => match self.state.tape.take_run() {
                Some(record) => self.replay_run(inbox, request, record, Some(answer), reply),
                None => {
                    let _ = reply.send(RunReport::refused(EngineError::Stopped, false));
                }
            },
            Command::Shutdown(done) => return Handled::Stop(done),
            // Answers and wake-ups for runs that are over; a second start cannot happen.
            Command::Tool(..) | Command::Wake | Command::Start(..) | Command::Restore(..) => {}
        }
        Handled::Continue
    }

    pub(super) fn define_tools(&mut self, tools: Vec<ToolSpec>) -> Result<(), EngineError> {
        let defined = self.install_tools(&tools);
        self.state.tape.endowed(Step::Tools(tools), &defined);
        defined
    }

    /// Installs `tools` without recording it (a checkpoint's tools are part of it).
    fn install_tools(&mut self, tools: &[ToolSpec]) -> Result<(), EngineError> {
        let (bridge, state, installed) = (
            &self.bridge,
            &self.state,
            &mut self.program_context.tool_names,
        );
        self.context.with(|ctx| {
            let refused = refused_allocations(&ctx);
            let defined = define_tools(&ctx, tools, installed, bridge, state);
            endowed(&ctx, refused, defined)
        })
    }

    pub(super) fn set_variables(
        &mut self,
        variables: Vec<(String, Value)>,
    ) -> Result<(), EngineError> {
        let tools = &self.program_context.tool_names;
        if let Some((name, _)) = variables.iter().find(|(name, _)| tools.contains(name)) {
            return Err(EngineError::ToolName(name.clone()));
        }
        let set = self.context.with(|ctx| {
            let refused = refused_allocations(&ctx);
            let set = set_variables(&ctx, &variables);
            endowed(&ctx, refused, set)
        });
        self.state.tape.endowed(Step::Variables(variables), &set);
        set
    }

    /// Runs `request`, or with `replay` plays a recorded run back (see [`Worker::replay_run`]).
    fn run(
        &mut self,
        inbox: &Arc<EngineInbox>,
        mut request: RunRequest,
        reply: oneshot::Sender<RunReport>,
        replay: Option<(RunRecord, Option<ToolResult>)>,
    ) {
        let taken_up = Instant::now();
        // The deadline counts from the call, waits for a thread included, or from the end of
        // the run it was queued behind on this executor (docs/limits-and-errors.md).
        let started = self.last_answered.map_or(request.called_at, |answered| {
            answered.max(request.called_at)
        });
        request.abort.mark_started(started);
        *self.state.trace.borrow_mut() =
            Recorder::start(&request.trace, started, request.code.len(), &self.memory);
        let deadline = started + Duration::from_millis(request.timeout_ms);
        let replaying = replay.is_some();
        if let Some((record, resumption)) = replay {
            self.state.tape.begin_replay(record, resumption);
        }
        let tape = &self.state.tape;
        let refuse = |error: EngineError, dirty: bool| {
            // A recorded run ran: refused now, the replay has gone another way.
            let error = if replaying {
                tape.take_run();
                EngineError::Snapshot(SnapshotError::new(
                    SnapshotProblem::Diverged,
                    format!("a run of the session was refused when replayed: {error}"),
                ))
            } else {
                error
            };
            let mut report = RunReport::refused(error, dirty);
            report.stats.wall_time = started.elapsed();
            report.trace = self.state.trace.take().map(Recorder::finish);
            report
        };
        let refused = if request.abort.is_aborted() {
            Some(refuse(EngineError::Aborted { started: false }, self.dirty))
        } else if self.dirty {
            Some(refuse(EngineError::Dirty, true))
        } else if taken_up >= deadline {
            // Its whole time went by before any of its code could run: nothing ran, so the
            // context is as it was.
            Some(refuse(
                EngineError::Timeout {
                    timeout_ms: request.timeout_ms,
                },
                false,
            ))
        } else {
            None
        };
        if let Some(report) = refused {
            self.last_answered = Some(Instant::now());
            let _ = reply.send(report);
            return;
        }
        // On the pool thread's own stack: this coroutine's stack is sized for QuickJS.
        let context = &self.program_context;
        let program = slice::on_thread_stack(|| {
            program::prepare_safely(&request.code, context, PROGRAM_STACK_BYTES)
        });
        if program.is_blocked() {
            let _ = reply.send(refuse(EngineError::Invalid(program.diagnostics), false));
            self.last_answered = Some(Instant::now());
            return;
        }
        if let Some(value) = &request.input {
            if let Err(message) = self.context.with(|ctx| input::bind(&ctx, value)) {
                let _ = reply.send(refuse(EngineError::Endowment(message), false));
                self.last_answered = Some(Instant::now());
                return;
            }
        }
        let input_bound = request.input.is_some();
        if !replaying {
            self.state.tape.begin_run(
                std::mem::take(&mut request.code),
                request.input.take(),
                request.max_operations,
            );
        }
        if let Some(recorder) = self.state.trace.borrow_mut().as_mut() {
            recorder.set_positions(program.positions.clone());
        }
        self.state.begin(
            request.max_operations,
            deadline,
            LogBuffer::new(request.log_levels.clone(), request.max_log_bytes)
                .charged_to(&self.memory),
            request.abort.clone(),
        );
        self.bridge.begin_run();
        self.memory.begin_run();
        let (state, bridge, timers) = (&self.state, &self.bridge, self.timers.as_deref());
        let progress = self.context.with(|ctx| {
            quickjs_session::reset_interrupt_counter(&ctx);
            let refused = refused_allocations(&ctx);
            match execute(&ctx, state, bridge, timers, &program) {
                ScriptEnd::Waiting(promise) => Err((Persistent::save(&ctx, promise), refused)),
                settled => Ok(conclude(
                    &ctx,
                    state,
                    bridge,
                    &program,
                    &request,
                    input_bound,
                    settled,
                    refused,
                )),
            }
        });
        match progress {
            Ok(concluded) => self.answer(
                inbox,
                concluded,
                &program,
                reply,
                (started, taken_up, &request.abort),
            ),
            Err((promise, refused)) => {
                self.in_flight = Some(InFlight {
                    left: Instant::now(),
                    promise,
                    refused,
                    program,
                    request,
                    input_bound,
                    reply,
                    started,
                    taken_up,
                });
                self.wait_off_thread(inbox);
            }
        }
    }

    /// Drives the in-flight run on: it settles, or waits again.
    fn resume(&mut self, inbox: &Arc<EngineInbox>) {
        let Some(mut in_flight) = self.in_flight.take() else {
            return;
        };
        self.state.away_for(in_flight.left.elapsed());
        let (state, bridge, timers) = (&self.state, &self.bridge, self.timers.as_deref());
        let progress = self.context.with(|ctx| {
            let promise = match in_flight.promise.clone().restore(&ctx) {
                Ok(promise) => promise,
                // The promise is this runtime's own: restoring cannot fail, but if it did the
                // run could only be stopped.
                Err(_) => {
                    state.stop_with(Stop::Shutdown);
                    return Ok(conclude(
                        &ctx,
                        state,
                        bridge,
                        &in_flight.program,
                        &in_flight.request,
                        in_flight.input_bound,
                        ScriptEnd::Stopped,
                        in_flight.refused,
                    ));
                }
            };
            match drive(&ctx, state, bridge, timers, &promise) {
                ScriptEnd::Waiting(_) => Err(()),
                settled => Ok(conclude(
                    &ctx,
                    state,
                    bridge,
                    &in_flight.program,
                    &in_flight.request,
                    in_flight.input_bound,
                    settled,
                    in_flight.refused,
                )),
            }
        });
        match progress {
            Ok(concluded) => self.answer(
                inbox,
                concluded,
                &in_flight.program,
                in_flight.reply,
                (
                    in_flight.started,
                    in_flight.taken_up,
                    &in_flight.request.abort,
                ),
            ),
            Err(()) => {
                in_flight.left = Instant::now();
                self.in_flight = Some(in_flight);
                self.wait_off_thread(inbox);
            }
        }
    }

    /// The in-flight run waits for an answer (or its next timer) without a thread: make sure
    /// its next timer, or else its deadline, wakes it even if no answer ever comes.
    fn wait_off_thread(&self, inbox: &Arc<EngineInbox>) {
        if let Some(in_flight) = &self.in_flight {
            let deadline = in_flight.started + Duration::from_millis(in_flight.request.timeout_ms);
            let timer = self.timers.as_ref().and_then(|timers| timers.next_due());
            inbox.wake_at(timer.map_or(deadline, |due| due.min(deadline)));
        }
    }

    /// Ends the run and answers it. What arrived during the run and was set aside comes next,
    /// before newer messages. `started` is when its deadline began, `taken_up` when the
    /// engine took it up.
    fn answer(
        &mut self,
        inbox: &EngineInbox,
        (mut result, dirty): (Result<Completion, EngineError>, bool),
        program: &PreparedProgram,
        reply: oneshot::Sender<RunReport>,
        (started, taken_up, abort): (Instant, Instant, &RunAbort),
    ) {
        // The run's code is over: encoding its images is outside its deadline (docs/canvas.md
        // "Canvas: agents that draw"), bounded by the pixels the memory limit allows and
        // stopped by a shutdown.
        abort.mark_finished();
        let shutdown = Arc::clone(&self.state.shutdown);
        let shutting_down = move || shutdown.load(Ordering::Relaxed);
        let diagnostics = program.diagnostics.clone();
        let paused = self.state.paused.borrow_mut().take();
        // Encoded only for runs that drew and succeeded: other runs pay one empty-list check.
        // The files stay charged until the answer has left.
        let (images, _files) = match self.canvas.take_images(result.is_ok(), &shutting_down) {
            Ok(taken) => taken,
            Err(error) => {
                result = Err(images_failed(error));
                (Vec::new(), Vec::new())
            }
        };
        let (tool_calls, tool_time) = self.bridge.end_run();
        let timers_cancelled = self.timers.as_ref().map(|timers| timers.cancel_all());
        let cpu_time = taken_up.elapsed().saturating_sub(self.state.away());
        self.state.end();
        let paused = match paused {
            Some((mut call, site)) => {
                call.line = site
                    .and_then(|(line, column)| program.positions.original(line, column))
                    .map(|location| location.line);
                self.state.tape.paused(call.clone());
                // The runtime is left mid-run: it goes, and `resume()` replays the run.
                self.gone = true;
                Some(Box::new(PausedRun {
                    call,
                    journal: self.state.tape.take_journal(),
                }))
            }
            None => {
                result = self.end_recorded(result);
                None
            }
        };
        self.dirty |= dirty;
        let report = RunReport {
            result,
            images,
            logs: self.state.logs.borrow_mut().take(),
            dirty,
            diagnostics,
            trace: self.state.trace.take().map(Recorder::finish),
            stats: RunStats {
                wall_time: started.elapsed(),
                cpu_time,
                tool_time,
                tool_calls,
                operations: self.state.operations(),
                peak_heap_bytes: u64::try_from(self.memory.peak()).unwrap_or(u64::MAX),
                timers_cancelled,
            },
            paused,
        };
        let set_aside = self.bridge.take_set_aside();
        if self.gone {
            // Runs queued behind the paused one do not start: the executor is paused.
            for command in set_aside {
                if let Command::Run(_, queued) = command {
                    let _ = queued.send(RunReport::refused(EngineError::Paused, false));
                }
            }
        } else {
            inbox.put_back(set_aside.into_iter());
        }
        self.last_answered = Some(Instant::now());
        let _ = reply.send(report);
    }
}

/// The failure of a run whose images could not be encoded.
fn images_failed(error: CanvasError) -> EngineError {
    match error.kind {
        CanvasErrorKind::Interrupted => EngineError::Stopped,
        CanvasErrorKind::Limit(limit) => EngineError::CanvasLimit {
            limit,
            message: format!("RangeError: the run's images: {}", error.message),
            at: None,
        },
        _ => EngineError::Runtime {
            message: error.message,
            at: None,
            error_name: None,
        },
    }
}

fn build(
    config: EngineConfig,
    state: &Rc<RunState>,
    bridge: &Rc<Bridge>,
    memory: &Rc<MemoryAccount>,
    timers: Option<&Rc<Timers>>,
) -> Result<(Runtime, Context, CanvasHost), EngineError> {
    let start_error = |error: rquickjs::Error| match error {
        // The runtime or context could not be allocated (a heap too small to hold a context).
        rquickjs::Error::Allocation => EngineError::Start(out_of_memory().to_string()),
        error => EngineError::Start(error.to_string()),
    };
    // The allocator refuses what would pass the limit; QuickJS's own check of the blocks it
    // uses (never more than the allocator counts) stays, for its early refusal of a string
    // that cannot fit.
    let runtime =
        Runtime::new_with_alloc(LimitedAllocator(Rc::clone(memory))).map_err(start_error)?;
    runtime.set_memory_limit(config.options.memory_limit_bytes);
    state.max_value_bytes.set(config.options.max_value_bytes);
    // Options never ask for more than the threads have (`options::MAX_STACK_BYTES`), nor for 0,
    // which QuickJS (and rquickjs, for anything past that ceiling) takes as "no limit": an engine
    // built by other means is held to the same bounds, so no value can let recursion run off the
    // thread's stack.
    runtime.set_max_stack_size(checked_stack_bytes(&config));
    let interrupt_state = Rc::clone(state);
    runtime.set_interrupt_handler(Some(Box::new(move || interrupt_state.interrupt_poll())));
    let max_canvas_size = config.options.max_canvas_size;
    let registry = Registry::new(config.options.authorized_imports, config.options.modules);
    runtime.set_loader(
        SandboxResolver(Rc::clone(&registry)),
        SandboxLoader(Rc::clone(&registry)),
    );
    // Clock reads go through the session's tape from the context's first (its time origin).
    let context = reflect::new_context(&runtime, |ctx| {
        quickjs_session::set_hook(ctx, Some(&state.tape));
    })
    .map_err(start_error)?;
    let canvas = context
        .with(|ctx| {
            globals::install(&ctx, state)?;
            modules::install_hook(&ctx, &registry, bridge, state)?;
            if let Some(timers) = timers {
                timers::install(&ctx, timers, state)?;
            }
            lockdown::lock_down(&ctx)?;
            canvas::install(&ctx, state, memory, max_canvas_size)
        })
        .map_err(start_error)?;
    // QuickJS leaves out a built-in it could not allocate without failing: a context built
    // while the heap refused memory may lack parts, and is not used.
    if context.with(|ctx| refused_allocations(&ctx)) != 0 {
        return Err(EngineError::Start(out_of_memory().to_string()));
    }
    Ok((runtime, context, canvas))
}

/// How the script's promise ended.
enum ScriptEnd<'js> {
    /// With this value: the run's output if the script gave it as its result.
    Resolved(JsValue<'js>),
    Threw(JsValue<'js>),
    /// Pending with no job left to run, no tool call in flight and no timer pending: nothing
    /// can settle it.
    Stuck,
    /// User code was stopped (see [`RunState::stop`]).
    Stopped,
    /// Pending on tool answers that have not arrived, or timers not yet due: the run waits off
    /// the thread.
    Waiting(Promise<'js>),
}

/// Evaluates the program and drives its promise as far as it goes without waiting for a tool.
fn execute<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    timers: Option<&Timers>,
    program: &PreparedProgram,
) -> ScriptEnd<'js> {
    #[cfg(feature = "bench-internals")]
    crate::engine::quickjs::loop_guard::set_loop_guard(
        ctx,
        crate::engine::LOOP_GUARDS
            .load(std::sync::atomic::Ordering::Relaxed)
            .then_some(&state.loop_guard),
    );
    match start_script(ctx, &program.transformed_code) {
        Ok(promise) => drive(ctx, state, bridge, timers, &promise),
        Err(rquickjs::Error::Exception) => ScriptEnd::Threw(ctx.catch()),
        Err(other) => ScriptEnd::Threw(
            rquickjs::String::from_str(ctx.clone(), &other.to_string())
                .map(rquickjs::String::into_value)
                .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone())),
        ),
    }
}

/// Compiles and starts the run's script. QuickJS measures its stack limit from the top this
/// sets: here, and in [`drive`] and [`drain`], which run everything else of a run, so that
/// recursion reaches `maxStackBytes` at the same depth in a run and in its replay, whatever
/// path led to them.
#[inline(never)]
fn start_script<'js>(ctx: &Ctx<'js>, code: &str) -> rquickjs::Result<Promise<'js>> {
    reflect::RuntimeLimit::of(ctx).update_stack_top();
    script::evaluate(ctx, code)
}

/// Ends a run whose promise settled (or that was stopped): runs what is left of its jobs and
/// reads its outcome. Returns the outcome and whether the context can no longer be trusted.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one run, borrowed from two places"
)]
fn conclude<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    program: &PreparedProgram,
    request: &RunRequest,
    input_bound: bool,
    settled: ScriptEnd<'js>,
    refused: u64,
) -> (Result<Completion, EngineError>, bool) {
    // A paused run's runtime is dropped (it is resumed by replay), as is a replay that went
    // another way: nothing of either is read or finished.
    match state.stop.get() {
        Some(Stop::Paused) => {
            return (
                Ok(Completion {
                    output: Value::Undefined,
                    is_final_answer: false,
                }),
                false,
            )
        }
        Some(Stop::Diverged) => {
            let why = state.tape.divergence().unwrap_or_default();
            return (
                Err(EngineError::Snapshot(SnapshotError::new(
                    SnapshotProblem::Diverged,
                    format!("replaying the session went another way than it went: {why}"),
                ))),
                true,
            );
        }
        _ => {}
    }
    // A promised result is copied before anything else runs, under the run's deadline (a
    // getter is sandbox code).
    let result = std::mem::replace(&mut *state.result.borrow_mut(), RunResult::None);
    let site = result.site().map(str::to_owned);
    let site = site.as_deref();
    let output = match (result, &settled) {
        (RunResult::Value(value), _) => Ok(value),
        (RunResult::Promise { .. }, ScriptEnd::Resolved(value)) => {
            copy_promised(ctx, value, state).map_err(|error| result_too_large(error, program, site))
        }
        _ => Ok(Value::Undefined),
    };
    let drained = drain(ctx, state);
    if input_bound {
        input::unbind(ctx);
    }

    let result = match state.stop.get() {
        Some(Stop::FinalAnswer) => Ok(Completion {
            output: state
                .final_answer
                .borrow_mut()
                .take()
                .unwrap_or(Value::Undefined),
            is_final_answer: true,
        }),
        Some(Stop::MaxOperations) => Err(EngineError::MaxOperations {
            limit: request.max_operations,
        }),
        Some(Stop::Timeout) => Err(EngineError::Timeout {
            timeout_ms: request.timeout_ms,
        }),
        Some(Stop::Aborted) => Err(EngineError::Aborted { started: true }),
        Some(Stop::Shutdown | Stop::Paused | Stop::Diverged) => Err(EngineError::Stopped),
        None => match settled {
            ScriptEnd::Resolved(_) => output.map(|output| Completion {
                output,
                is_final_answer: false,
            }),
            ScriptEnd::Threw(thrown) => Err(match bridge.tool_failure_of(ctx, &thrown) {
                Some((tool, failure)) => tool_error(ctx, &thrown, tool, &failure, program, site),
                None => runtime_error(ctx, &thrown, program, site),
            }),
            ScriptEnd::Stuck => Err(never_settles(program, site)),
            ScriptEnd::Stopped | ScriptEnd::Waiting(_) => Err(EngineError::Stopped),
        },
    };
    // The heap refused memory during the run (or while its failure was described): whatever the
    // run did next may rest on a part QuickJS silently left out (an error without its message,
    // a property not set, a copy read as empty), so it fails at the limit even if the code
    // caught the error (docs/limits-and-errors.md "Limits and what they guarantee"). A deadline or an abort still says why the run ended.
    let stopped_from_outside = matches!(
        state.stop.get(),
        Some(Stop::Timeout | Stop::Aborted | Stop::Shutdown)
    );
    let result = if refused_allocations(ctx) != refused && !stopped_from_outside {
        Err(out_of_memory())
    } else {
        result
    };
    let untrusted = matches!(
        result,
        Err(EngineError::Timeout { .. }
            | EngineError::Aborted { .. }
            | EngineError::Stopped
            | EngineError::Limit {
                limit: "memoryLimitBytes",
                ..
            })
    );
    (result, untrusted || !drained)
}

/// Runs the job queue, fires timers as they fall due, and settles tool promises as the host
/// answers, until the script's promise settles, or it waits for answers or timers that are not
/// there yet. A replayed run fires the timers and settles the promises its record names, in
/// its order.
#[inline(never)]
fn drive<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    timers: Option<&Timers>,
    promise: &Promise<'js>,
) -> ScriptEnd<'js> {
    reflect::RuntimeLimit::of(ctx).update_stack_top();
    loop {
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<JsValue>() {
                    Some(Ok(value)) => ScriptEnd::Resolved(value),
                    Some(Err(_)) => ScriptEnd::Threw(ctx.catch()),
                    None => ScriptEnd::Resolved(JsValue::new_undefined(ctx.clone())),
                };
            }
            PromiseState::Rejected => {
                // `result` throws the rejection reason into the context; take it back out.
                let _ = promise.result::<JsValue>();
                return ScriptEnd::Threw(ctx.catch());
            }
            PromiseState::Pending => {
                if state.stop.get().is_some() {
                    return ScriptEnd::Stopped;
                }
                if ctx.execute_pending_job() {
                    continue;
                }
                if state.tape.replaying() {
                    match replay_external(ctx, state, bridge, timers) {
                        Some(settled) => return settled,
                        None => continue,
                    }
                }
                if let Some(timers) = timers.filter(|timers| timers.is_pending()) {
                    // A callback this loop calls may never reach a guard or the interrupt
                    // handler's poll: the deadline and abort are checked before each one.
                    if state.should_interrupt() {
                        return ScriptEnd::Stopped;
                    }
                    match timers.fire_due(ctx, &state.tape) {
                        Fired::Ran => continue,
                        Fired::Threw(thrown) => return ScriptEnd::Threw(thrown),
                        Fired::NotYet if !bridge.has_pending_calls() => {
                            return ScriptEnd::Waiting(promise.clone())
                        }
                        Fired::NotYet => {}
                    }
                } else if !bridge.has_pending_calls() {
                    return ScriptEnd::Stuck;
                }
                match bridge.settle_next(ctx, state) {
                    BridgeNext::Settled => {}
                    BridgeNext::Stopped => return ScriptEnd::Stopped,
                    BridgeNext::Waiting => return ScriptEnd::Waiting(promise.clone()),
                }
            }
        }
    }
}

/// A replayed run's next step once its jobs ran dry: what its record names (`None`: go on), or
/// how the run ends when the record holds nothing more (it must then settle by itself: with
/// nothing pending, nothing can settle it, as in the original; with a timer or call pending,
/// the original went on, and the replay has gone another way).
fn replay_external<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    timers: Option<&Timers>,
) -> Option<ScriptEnd<'js>> {
    let diverged = |what: &str| {
        state.tape.diverge(what.to_owned());
        state.stop_with(Stop::Diverged);
        Some(ScriptEnd::Stopped)
    };
    match state.tape.replay_external() {
        External::Timer(sequence) => {
            match timers.and_then(|timers| timers.fire_sequence(ctx, sequence)) {
                Some(Fired::Ran) => None,
                Some(Fired::Threw(thrown)) => Some(ScriptEnd::Threw(thrown)),
                Some(Fired::NotYet) | None => {
                    diverged("its record fires a timer the run does not have")
                }
            }
        }
        External::Settle(call, result) => {
            if bridge.settle_replayed(ctx, state, call, &result) {
                None
            } else {
                diverged("its record settles a call the run is not awaiting")
            }
        }
        External::Resume(call, answer) => {
            // What the run logged before the pause was the original's: the resumed run's logs
            // start here.
            state.logs.borrow_mut().take();
            if bridge.resume_awaiting(ctx, state, call, &answer) {
                None
            } else {
                diverged("the call it paused at is not one the run awaits")
            }
        }
        External::Diverged => {
            state.stop_with(Stop::Diverged);
            Some(ScriptEnd::Stopped)
        }
        External::Exhausted => {
            let pending = timers.is_some_and(Timers::is_pending) || bridge.has_pending_calls();
            if pending {
                diverged("the run waits for more than its record holds")
            } else {
                Some(ScriptEnd::Stuck)
            }
        }
    }
}

/// Runs the jobs left after the script settled (late `.then` callbacks belong to this run, and
/// must not run in the next one). Returns false if the queue could not be emptied.
#[inline(never)]
fn drain(ctx: &Ctx<'_>, state: &RunState) -> bool {
    reflect::RuntimeLimit::of(ctx).update_stack_top();
    let mut after_stop = 0;
    while ctx.execute_pending_job() {
        if state.stop.get().is_some() {
            after_stop += 1;
            if after_stop > MAX_JOBS_AFTER_STOP {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::FakeHost;
    use crate::scheduler::stack::THREAD_STACK_BYTES;

    fn on_engine_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(THREAD_STACK_BYTES)
            .spawn(work)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn a_worker_taken_up_by_another_thread_measures_recursion_on_that_threads_stack() {
        let built = on_engine_thread(|| {
            let host: Arc<dyn Host> = Arc::new(FakeHost::default());
            let config = EngineConfig::from(&crate::options::Options::default());
            let tape = Tape::new(Origin::Fresh {
                random_seed: 1,
                time_origin: f64::NAN,
            });
            Worker::build(config, host, Arc::default(), Weak::new(), tape)
                .map(Resting)
                .map_err(|error| error.to_string())
        })
        .unwrap();
        // The second thread's stack lies elsewhere: measured from the first thread's stack top,
        // recursion would either fail at once or run off the end of the stack.
        let caught = on_engine_thread(move || {
            // The whole `Resting` moves (a closure would otherwise capture only its field).
            let resting = built;
            let Resting(worker) = resting;
            worker.enter();
            worker.context.with(|ctx| {
                ctx.eval::<Vec<bool>, _>(
                    "let depth = 0; function down() { depth++; down() } try { down() } catch (e) { [e instanceof RangeError, depth > 100] }",
                )
                .map_err(|error| error.to_string())
            })
        });
        assert_eq!(caught, Ok(vec![true, true]));
    }
}
