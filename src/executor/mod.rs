//! The executor: the lifecycle of §4 over one engine thread, and the one place where engine
//! failures become the spec's error codes (§8.2). It knows neither napi nor QuickJS.
//!
//! Every method checks and moves the state synchronously, when it is called, so that the
//! `state` getter and a second concurrent call see the new state at once (§2.3); the returned
//! future only waits for the engine thread.

mod state;

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{json, Value as Json};

use crate::diagnostic::Diagnostic;
use crate::engine::{Completion, Engine, EngineConfig, EngineError, RunReport, RunRequest};
use crate::error::{ErrorCode, ExecutorError};
use crate::options::Options;
use crate::value::Value;

pub use state::ExecutorState;

/// A successful run (§3.1 `CodeOutput`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    pub output: Value,
    pub logs: String,
    pub is_final_answer: bool,
}

struct Inner {
    state: ExecutorState,
    engine: Option<Engine>,
}

/// One executor: checked options, a state, and (between `init` and `cleanup`) an engine.
pub struct Executor {
    options: Arc<Options>,
    inner: Arc<Mutex<Inner>>,
}

/// Locks the shared state. The lock is never held across user code or an await, so poisoning
/// can only follow a bug elsewhere; the state itself is still consistent then.
fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Executor {
    /// A `NEW` executor (§4.1).
    pub fn new(options: Options) -> Self {
        Self {
            options: Arc::new(options),
            inner: Arc::new(Mutex::new(Inner {
                state: ExecutorState::New,
                engine: None,
            })),
        }
    }

    /// The options the executor runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The current state.
    pub fn state(&self) -> ExecutorState {
        lock(&self.inner).state
    }

    /// `init()` (§4.3.1): builds the engine from nothing in `NEW` or `DEAD`, is a no-op in
    /// `READY`, and is refused in any other state.
    pub fn init(&self) -> impl Future<Output = Result<(), ExecutorError>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let started = {
            let mut guard = lock(&inner);
            match guard.state {
                ExecutorState::Ready => Ok(None),
                ExecutorState::New | ExecutorState::Dead => {
                    match Engine::start(EngineConfig::from(self.options.as_ref())) {
                        Ok((engine, ready)) => {
                            guard.state = ExecutorState::Initializing;
                            guard.engine = Some(engine);
                            Ok(Some(ready))
                        }
                        Err(error) => {
                            guard.state = ExecutorState::Dead;
                            Err(init_failed(&error))
                        }
                    }
                }
                state => Err(ExecutorError::invalid_state(state, "init")),
            }
        };
        async move {
            let Some(ready) = started? else {
                return Ok(());
            };
            let outcome = ready.await.unwrap_or(Err(EngineError::Stopped));
            let mut guard = lock(&inner);
            match outcome {
                Ok(()) => {
                    guard.state = ExecutorState::Ready;
                    Ok(())
                }
                Err(error) => {
                    guard.state = ExecutorState::Dead;
                    guard.engine = None;
                    Err(init_failed(&error))
                }
            }
        }
    }

    /// `run(code)` (§4.3.4, §7.2): `READY` → `RUNNING` → `READY`, or `DIRTY` after a timeout or
    /// when the context can no longer be trusted (§7.6).
    pub fn run(
        &self,
        code: String,
    ) -> impl Future<Output = Result<RunOutput, ExecutorError>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        let submitted = {
            let mut guard = lock(&inner);
            match (guard.state, guard.engine.as_ref()) {
                (ExecutorState::Ready, Some(engine)) => {
                    let reply = engine.run(RunRequest::new(code, &self.options));
                    guard.state = ExecutorState::Running;
                    Ok(reply)
                }
                (state, _) => Err(ExecutorError::invalid_state(state, "run")),
            }
        };
        async move {
            let report = submitted?.await.unwrap_or_else(|_| RunReport {
                result: Err(EngineError::Stopped),
                logs: String::new(),
                dirty: true,
            });
            {
                let mut guard = lock(&inner);
                if guard.state == ExecutorState::Running {
                    guard.state = if report.dirty {
                        ExecutorState::Dirty
                    } else {
                        ExecutorState::Ready
                    };
                }
            }
            match report.result {
                Ok(Completion {
                    output,
                    is_final_answer,
                }) => Ok(RunOutput {
                    output,
                    logs: report.logs,
                    is_final_answer,
                }),
                Err(error) => Err(run_failed(error, report.logs)),
            }
        }
    }

    /// `cleanup()` (§4.3.5): `READY`/`DIRTY` → `DEAD`, releasing the engine and joining its
    /// thread (off the caller's thread); a no-op in `DEAD`; refused otherwise.
    pub fn cleanup(&self) -> impl Future<Output = Result<(), ExecutorError>> + Send + 'static {
        let stopped = {
            let mut guard = lock(&self.inner);
            match guard.state {
                ExecutorState::Dead => Ok(None),
                ExecutorState::Ready | ExecutorState::Dirty => {
                    guard.state = ExecutorState::Dead;
                    Ok(guard.engine.take().and_then(Engine::stop))
                }
                state => Err(ExecutorError::invalid_state(state, "cleanup")),
            }
        };
        async move {
            let Some(thread) = stopped? else {
                return Ok(());
            };
            let joined = tokio::task::spawn_blocking(move || thread.join()).await;
            match joined {
                Ok(Ok(())) => Ok(()),
                Ok(Err(_)) => Err(ExecutorError::new(
                    ErrorCode::CleanupFailed,
                    "the engine thread panicked",
                )),
                Err(error) => Err(ExecutorError::new(ErrorCode::CleanupFailed, error)),
            }
        }
    }
}

fn init_failed(error: &EngineError) -> ExecutorError {
    ExecutorError::new(ErrorCode::SesInitFailed, error)
}

/// Maps an engine failure to its §8.2 code: the one place where that decision is made.
fn run_failed(error: EngineError, logs: String) -> ExecutorError {
    let error = match error {
        EngineError::Invalid(diagnostics) => return validation_failed(&diagnostics),
        EngineError::Runtime {
            message,
            location,
            source_line,
        } => {
            let mut error = ExecutorError::new(ErrorCode::RuntimeException, message);
            if let Some(location) = location {
                error = error
                    .with_detail("line", location.line)
                    .with_detail("column", location.column);
            }
            if let Some(line) = source_line {
                error = error.with_detail("sourceLine", line);
            }
            error
        }
        EngineError::MaxOperations { limit } => {
            ExecutorError::new(ErrorCode::MaxOpsExceeded, limit).with_detail("maxOperations", limit)
        }
        EngineError::Timeout { timeout_ms } => {
            ExecutorError::new(ErrorCode::ExecTimeout, timeout_ms)
                .with_detail("timeoutMs", timeout_ms)
        }
        EngineError::Start(message) => ExecutorError::new(ErrorCode::SesInitFailed, message),
        EngineError::Stopped => ExecutorError::new(
            ErrorCode::RuntimeException,
            "the executor was shut down during the run",
        ),
    };
    error.with_logs(logs)
}

/// `ERR_VALIDATION_FAILED` listing each blocking diagnostic as `line:col rule: message`
/// (§6.1, §8.3), with every diagnostic in `details.diagnostics`.
pub fn validation_failed(diagnostics: &[Diagnostic]) -> ExecutorError {
    let listing: String = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .map(|diagnostic| format!("\n{}", diagnostic.summary()))
        .collect();
    let all: Vec<Json> = diagnostics.iter().map(Diagnostic::to_json).collect();
    ExecutorError::new(ErrorCode::ValidationFailed, format!(":{listing}"))
        .with_detail("diagnostics", json!(all))
}

#[cfg(test)]
mod tests;
