//! The engine thread: builds the runtime and context, then serves runs until told to stop.

use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Promise, Runtime, Value as JsValue};
use tokio::sync::oneshot;

use super::console::LogBuffer;
use super::failure::runtime_error;
use super::globals;
use super::state::{RunState, Stop};
use super::{Command, Completion, EngineConfig, EngineError, RunReport, RunRequest};
use crate::program::{self, PreparedProgram, SCRIPT_NAME};
use crate::value::Value;

/// Jobs still queued after user code was stopped are run (each is stopped at its first guard,
/// console or output call, or by the interrupt handler) so that none of them survives into the
/// next run; past this many the context is reported dirty instead.
const MAX_JOBS_AFTER_STOP: usize = 10_000;

/// The thread's body.
pub(super) fn main(
    config: EngineConfig,
    inbox: mpsc::Receiver<Command>,
    ready: oneshot::Sender<Result<(), EngineError>>,
    shutdown: Arc<AtomicBool>,
) {
    let state = Rc::new(RunState::new(shutdown));
    let (runtime, context) = match build(&config, &state) {
        Ok(built) => built,
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    while let Ok(Command::Run(request, reply)) = inbox.recv() {
        let report = run(&context, &state, request);
        let _ = reply.send(report);
    }
    // The context holds the native functions, which hold `state`: drop it before the runtime.
    drop(context);
    drop(runtime);
}

fn build(config: &EngineConfig, state: &Rc<RunState>) -> Result<(Runtime, Context), EngineError> {
    let start_error = |error: rquickjs::Error| EngineError::Start(error.to_string());
    let runtime = Runtime::new().map_err(start_error)?;
    runtime.set_memory_limit(config.memory_limit_bytes);
    runtime.set_max_stack_size(config.max_stack_bytes);
    let interrupt_state = Rc::clone(state);
    runtime.set_interrupt_handler(Some(Box::new(move || interrupt_state.should_interrupt())));
    let context = Context::full(&runtime).map_err(start_error)?;
    context
        .with(|ctx| globals::install(&ctx, state))
        .map_err(start_error)?;
    Ok((runtime, context))
}

fn run(context: &Context, state: &RunState, request: RunRequest) -> RunReport {
    let program = program::prepare(&request.code);
    if program.is_blocked() {
        return RunReport {
            result: Err(EngineError::Invalid(program.diagnostics)),
            logs: String::new(),
            dirty: false,
        };
    }
    let deadline = Instant::now() + Duration::from_millis(request.timeout_ms);
    state.begin(
        request.max_operations,
        deadline,
        LogBuffer::new(request.log_levels.clone(), request.max_log_bytes),
    );
    let (result, dirty) = context.with(|ctx| execute(&ctx, state, &program, &request));
    state.end();
    RunReport {
        result,
        logs: state.logs.borrow_mut().take(),
        dirty,
    }
}

/// How the script's promise ended.
enum Settled<'js> {
    Resolved,
    Threw(JsValue<'js>),
    /// Pending with no job left to run: nothing can ever settle it.
    Stuck,
    /// User code was stopped (see [`RunState::stop`]).
    Stopped,
}

fn execute<'js>(
    ctx: &Ctx<'js>,
    state: &RunState,
    program: &PreparedProgram,
    request: &RunRequest,
) -> (Result<Completion, EngineError>, bool) {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.promise = true;
    options.backtrace_barrier = true;
    options.filename = Some(SCRIPT_NAME.into());
    let settled =
        match ctx.eval_with_options::<Promise, _>(program.transformed_code.as_str(), options) {
            Ok(promise) => drive(ctx, state, &promise),
            Err(rquickjs::Error::Exception) => Settled::Threw(ctx.catch()),
            Err(other) => {
                return (
                    Err(EngineError::Runtime {
                        message: other.to_string(),
                        location: None,
                        source_line: None,
                    }),
                    false,
                )
            }
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
        Some(Stop::Shutdown) => Err(EngineError::Stopped),
        None => match settled {
            Settled::Resolved => Ok(Completion {
                output: std::mem::replace(&mut *state.output.borrow_mut(), Value::Undefined),
                is_final_answer: false,
            }),
            Settled::Threw(thrown) => Err(runtime_error(ctx, &thrown, program)),
            Settled::Stuck => Err(EngineError::Runtime {
                message: "the code awaits a promise that can never settle (nothing is left to run that could settle it)".into(),
                location: None,
                source_line: None,
            }),
            Settled::Stopped => Err(EngineError::Stopped),
        },
    };
    let timed_out = matches!(result, Err(EngineError::Timeout { .. }));
    (result, timed_out || !drained)
}

/// Runs the job queue until the script's promise settles.
fn drive<'js>(ctx: &Ctx<'js>, state: &RunState, promise: &Promise<'js>) -> Settled<'js> {
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
                if !ctx.execute_pending_job() {
                    return Settled::Stuck;
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
