//! The engine thread: builds the runtime and context, then serves commands until told to stop.
//!
//! Spec: §7.2 (run algorithm) and §4 (a context per executor lifetime).

use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Promise, Runtime, Value as JsValue};
use tokio::sync::oneshot;

use super::bridge::Bridge;
use super::canvas::{self, CanvasHost};
use super::console::LogBuffer;
use super::endowments::{define_tools, set_variables};
use super::failure::{endowed, out_of_memory, runtime_error, tool_error};
use super::globals;
use super::heap::{HeapMeter, MeteredAllocator};
use super::host::Host;
use super::lockdown;
use super::modules::{self, Registry, SandboxLoader, SandboxResolver};
use super::reflect::refused_allocations;
use super::state::{RunState, Stop};
use super::{
    Command, Completion, EngineConfig, EngineError, RunReport, RunRequest, RunStats,
    PROGRAM_STACK_BYTES,
};
use crate::program::{self, PreparedProgram, ProgramContext, SCRIPT_NAME};
use crate::value::Value;

/// Jobs still queued after user code was stopped are run (each is stopped at its first guard,
/// console, tool or output call, or by the interrupt handler) so that none of them survives into
/// the next run; past this many the context is reported dirty instead.
const MAX_JOBS_AFTER_STOP: usize = 10_000;

/// The engine thread and what it owns.
struct Worker {
    context: Context,
    state: Rc<RunState>,
    bridge: Rc<Bridge>,
    heap: Rc<HeapMeter>,
    /// The sandbox's canvases, whose drawings a run returns as images.
    canvas: CanvasHost,
    /// What validation knows besides the code: the authorized imports (fixed at start) and the
    /// tools installed so far.
    program_context: ProgramContext,
    /// Set once a run left the context untrustworthy (§7.6): later runs are refused.
    dirty: bool,
}

/// The thread's body.
pub(super) fn main(
    config: EngineConfig,
    (inbox, replies): (mpsc::Receiver<Command>, mpsc::Sender<Command>),
    host: Arc<dyn Host>,
    ready: oneshot::Sender<Result<(), EngineError>>,
    shutdown: Arc<AtomicBool>,
) {
    let state = Rc::new(RunState::new(shutdown, &host));
    let bridge = Rc::new(Bridge::new(inbox, replies, host));
    let heap = Rc::new(HeapMeter::default());
    let program_context = ProgramContext {
        authorized_imports: config.authorized_imports.clone(),
        tool_names: Vec::new(),
    };
    let (runtime, context, canvas) = match build(config, &state, &bridge, &heap) {
        Ok(built) => built,
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    let mut worker = Worker {
        context,
        state,
        bridge,
        heap,
        canvas,
        program_context,
        dirty: false,
    };
    while let Some(command) = worker.bridge.next_command() {
        match command {
            Command::Run(request, reply) => {
                let report = worker.run(request);
                let _ = reply.send(report);
            }
            Command::DefineTools(names, reply) => {
                let _ = reply.send(worker.define_tools(&names));
            }
            Command::SetVariables(variables, reply) => {
                let _ = reply.send(worker.set_variables(&variables));
            }
            Command::Tool(..) | Command::Wake => {}
            Command::Shutdown => break,
        }
    }
    // The context holds the native functions, which hold the state and bridge (and their
    // persistent handles): everything goes before the runtime.
    drop(worker);
    drop(runtime);
}

fn build(
    config: EngineConfig,
    state: &Rc<RunState>,
    bridge: &Rc<Bridge>,
    heap: &Rc<HeapMeter>,
) -> Result<(Runtime, Context, CanvasHost), EngineError> {
    let start_error = |error: rquickjs::Error| match error {
        // The runtime or context could not be allocated (a heap too small to hold a context).
        rquickjs::Error::Allocation => EngineError::Start(out_of_memory().to_string()),
        error => EngineError::Start(error.to_string()),
    };
    let runtime =
        Runtime::new_with_alloc(MeteredAllocator(Rc::clone(heap))).map_err(start_error)?;
    runtime.set_memory_limit(config.memory_limit_bytes);
    runtime.set_max_stack_size(config.max_stack_bytes);
    let interrupt_state = Rc::clone(state);
    runtime.set_interrupt_handler(Some(Box::new(move || interrupt_state.should_interrupt())));
    let (max_canvas_size, memory_limit) = (config.max_canvas_size, config.memory_limit_bytes);
    let registry = Registry::new(config.authorized_imports, config.modules);
    runtime.set_loader(
        SandboxResolver(Rc::clone(&registry)),
        SandboxLoader(Rc::clone(&registry)),
    );
    let context = Context::full(&runtime).map_err(start_error)?;
    let canvas = context
        .with(|ctx| {
            globals::install(&ctx, state)?;
            modules::install_hook(&ctx, &registry, bridge, state)?;
            lockdown::lock_down(&ctx)?;
            canvas::install(&ctx, state, heap, max_canvas_size, memory_limit)
        })
        .map_err(start_error)?;
    // QuickJS leaves out a built-in it could not allocate without failing: a context built
    // while the heap refused memory may lack parts, and is not used.
    if context.with(|ctx| refused_allocations(&ctx)) != 0 {
        return Err(EngineError::Start(out_of_memory().to_string()));
    }
    Ok((runtime, context, canvas))
}

impl Worker {
    fn define_tools(&mut self, names: &[String]) -> Result<(), EngineError> {
        let (bridge, state, tools) = (
            &self.bridge,
            &self.state,
            &mut self.program_context.tool_names,
        );
        self.context.with(|ctx| {
            let refused = refused_allocations(&ctx);
            let defined = define_tools(&ctx, names, tools, bridge, state);
            endowed(&ctx, refused, defined)
        })
    }

    fn set_variables(&mut self, variables: &[(String, Value)]) -> Result<(), EngineError> {
        self.context.with(|ctx| {
            let refused = refused_allocations(&ctx);
            let set = set_variables(&ctx, variables);
            endowed(&ctx, refused, set)
        })
    }

    fn run(&mut self, request: RunRequest) -> RunReport {
        let started = Instant::now();
        request.abort.mark_started(started);
        if request.abort.is_aborted() {
            return RunReport::refused(EngineError::Aborted { started: false }, self.dirty);
        }
        if self.dirty {
            return RunReport::refused(EngineError::Dirty, true);
        }
        let program =
            program::prepare_safely(&request.code, &self.program_context, PROGRAM_STACK_BYTES);
        if program.is_blocked() {
            return RunReport::refused(EngineError::Invalid(program.diagnostics), false);
        }
        let deadline = started + Duration::from_millis(request.timeout_ms);
        self.state.begin(
            request.max_operations,
            deadline,
            LogBuffer::new(request.log_levels.clone(), request.max_log_bytes),
            request.abort.clone(),
        );
        self.bridge.begin_run();
        self.heap.begin_run();
        let (state, bridge) = (&self.state, &self.bridge);
        let (mut result, dirty) = self
            .context
            .with(|ctx| execute(&ctx, state, bridge, &program, &request));
        // Encoded only for runs that drew and succeeded: other runs pay one empty-list check.
        let images = match self.canvas.take_images(result.is_ok()) {
            Ok(images) => images,
            Err(message) => {
                result = Err(EngineError::Runtime { message, at: None });
                Vec::new()
            }
        };
        let (tool_calls, tool_time) = self.bridge.end_run();
        self.state.end();
        self.dirty |= dirty;
        RunReport {
            result,
            images,
            logs: self.state.logs.borrow_mut().take(),
            dirty,
            stats: RunStats {
                wall_time: started.elapsed(),
                tool_time,
                tool_calls,
                operations: self.state.operations.get(),
                peak_heap_bytes: u64::try_from(self.heap.peak()).unwrap_or(u64::MAX),
            },
        }
    }
}

/// How the script's promise ended.
enum Settled<'js> {
    Resolved,
    Threw(JsValue<'js>),
    /// Pending with no job left to run and no tool call in flight: nothing can settle it.
    Stuck,
    /// User code was stopped (see [`RunState::stop`]).
    Stopped,
}

fn execute<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    program: &PreparedProgram,
    request: &RunRequest,
) -> (Result<Completion, EngineError>, bool) {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.promise = true;
    options.backtrace_barrier = true;
    options.filename = Some(SCRIPT_NAME.into());
    let refused = refused_allocations(ctx);
    let settled =
        match ctx.eval_with_options::<Promise, _>(program.transformed_code.as_str(), options) {
            Ok(promise) => drive(ctx, state, bridge, &promise),
            Err(rquickjs::Error::Exception) => Settled::Threw(ctx.catch()),
            Err(other) => Settled::Threw(
                rquickjs::String::from_str(ctx.clone(), &other.to_string())
                    .map(rquickjs::String::into_value)
                    .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone())),
            ),
        };
    let drained = drain(ctx, state);

    let result = match state.stop.get() {
        Some(Stop::FinalAnswer) => Ok(Completion {
            output: state.final_answer.borrow_mut().take().unwrap_or(Value::Undefined),
            is_final_answer: true,
        }),
        Some(Stop::MaxOperations) => Err(EngineError::MaxOperations {
            limit: request.max_operations,
        }),
        Some(Stop::Timeout) => Err(EngineError::Timeout {
            timeout_ms: request.timeout_ms,
        }),
        Some(Stop::Aborted) => Err(EngineError::Aborted { started: true }),
        Some(Stop::Shutdown) => Err(EngineError::Stopped),
        None => match settled {
            Settled::Resolved => Ok(Completion {
                output: std::mem::replace(&mut *state.output.borrow_mut(), Value::Undefined),
                is_final_answer: false,
            }),
            Settled::Threw(thrown) => Err(match bridge.tool_failure_of(ctx, &thrown) {
                Some((tool, failure)) => tool_error(ctx, &thrown, tool, &failure, program),
                None => runtime_error(ctx, &thrown, program),
            }),
            Settled::Stuck => Err(EngineError::Runtime {
                message: "the code awaits a promise that can never settle (nothing is left to run that could settle it)".into(),
                at: None,
            }),
            Settled::Stopped => Err(EngineError::Stopped),
        },
    };
    // The heap refused memory during the run (or while its failure was described): whatever the
    // run did next may rest on a part QuickJS silently left out (an error without its message,
    // a property not set, a copy read as empty), so it fails at the limit even if the code
    // caught the error (README "Limits"). A deadline or an abort still says why the run ended.
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

/// Runs the job queue, and settles tool promises as the host answers, until the script's
/// promise settles.
fn drive<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    bridge: &Bridge,
    promise: &Promise<'js>,
) -> Settled<'js> {
    loop {
        match promise.state() {
            PromiseState::Resolved => return Settled::Resolved,
            PromiseState::Rejected => {
                // `result` throws the rejection reason into the context; take it back out.
                let _ = promise.result::<JsValue>();
                return Settled::Threw(ctx.catch());
            }
            PromiseState::Pending => {
                if state.stop.get().is_some() {
                    return Settled::Stopped;
                }
                if ctx.execute_pending_job() {
                    continue;
                }
                if !bridge.has_pending_calls() {
                    return Settled::Stuck;
                }
                if !bridge.settle_next(ctx, state) {
                    return Settled::Stopped;
                }
            }
        }
    }
}

/// Runs the jobs left after the script settled (late `.then` callbacks belong to this run, and
/// must not run in the next one). Returns false if the queue could not be emptied.
fn drain(ctx: &Ctx<'_>, state: &RunState) -> bool {
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
