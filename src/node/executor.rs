//! The `SESExecutor` class (§3.2): converts arguments, forwards to [`Executor`], and turns its
//! results into `CodeOutput` objects and `ExecutorError`s. It decides nothing.

use std::future::Future;

use napi::bindgen_prelude::{PromiseRaw, ToNapiValue, Unknown, ValueType};
use napi::{Env, JsValue, Result};

use super::error::to_napi_error;
use super::options::read;
use super::value::ToJs;
use crate::diagnostic::Diagnostic;
use crate::error::ExecutorError;
use crate::executor::{validation_failed, Executor, RunOutput};
use crate::options::Options;
use crate::program::rules::code_non_empty;

/// The result of a successful `run()` (§3.1).
#[napi(object, object_from_js = false)]
pub struct CodeOutput {
    /// The value of the code's last expression statement or top-level `return`, or the value
    /// passed to `final_answer()`; a copy (structured-clone semantics).
    #[napi(ts_type = "unknown")]
    pub output: JsOutput,
    /// The run's console output, entries joined by `\n` (§7.3).
    pub logs: String,
    /// `true` when the run ended by `final_answer()` (§5.4).
    #[napi(js_name = "is_final_answer")]
    pub is_final_answer: bool,
}

/// The output value, converted to JS when the result object is built.
pub struct JsOutput(crate::value::Value);

impl napi::bindgen_prelude::TypeName for JsOutput {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for JsOutput {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        ToJs::to_napi_value(env, ToJs(&val.0))
    }
}

impl From<RunOutput> for CodeOutput {
    fn from(run: RunOutput) -> Self {
        Self {
            output: JsOutput(run.output),
            logs: run.logs,
            is_final_answer: run.is_final_answer,
        }
    }
}

/// Runs agent code in an isolated QuickJS runtime on a thread of its own (§3.2
/// `ICodeExecutor`). Construct it, `init()` it (or use `SESExecutor.create()`), `run()` code,
/// and `cleanup()` when done.
#[napi(js_name = "SESExecutor")]
pub struct SesExecutor {
    executor: Executor,
}

#[napi]
impl SesExecutor {
    /// A `NEW` executor. Throws `ExecutorError` (`ERR_VALIDATION_FAILED`) when an option is
    /// invalid, with the rule (`max_operations_valid`, `timeout_valid`, `options_valid`) in
    /// `details.diagnostics`.
    #[napi(constructor, ts_args_type = "options?: ExecutorOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        let options = resolve(&env, options).map_err(|error| to_napi_error(&env, error))?;
        Ok(Self {
            executor: Executor::new(options),
        })
    }

    /// Creates an executor and `init()`s it: a drop-in for clients that never call `init()`.
    #[napi(
        ts_args_type = "options?: ExecutorOptions",
        ts_return_type = "Promise<SESExecutor>"
    )]
    pub fn create<'env>(
        env: &'env Env,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, SesExecutor>> {
        let created = resolve(env, options).map(|options| SesExecutor {
            executor: Executor::new(options),
        });
        let ready = created.as_ref().ok().map(|created| created.executor.init());
        settle(
            env,
            async move {
                let created = created?;
                if let Some(ready) = ready {
                    ready.await?;
                }
                Ok(created)
            },
            |_, created| Ok(created),
        )
    }

    /// The lifecycle state (§4.1).
    #[napi(getter, ts_return_type = "ExecutorState")]
    pub fn state(&self) -> &'static str {
        self.executor.state().as_str()
    }

    /// Builds the sandbox (§4.3.1): `NEW`/`DEAD` → `READY`; a no-op when `READY`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn init<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, self.executor.init(), |_, ()| Ok(()))
    }

    /// Validates, rewrites and runs `code` (§7.2).
    #[napi(ts_args_type = "code: string", ts_return_type = "Promise<CodeOutput>")]
    pub fn run<'env>(&self, env: &'env Env, code: Unknown) -> Result<PromiseRaw<'env, CodeOutput>> {
        let code = match code.get_type() {
            Ok(ValueType::String) => code
                .coerce_to_string()
                .and_then(|s| s.into_utf8())
                .and_then(|s| s.into_owned())?,
            _ => {
                let error = validation_failed(&[Diagnostic::error(
                    code_non_empty::RULE,
                    "code must be a string",
                )]);
                return settle(env, async move { Err(error) }, |_, output: RunOutput| {
                    Ok(output.into())
                });
            }
        };
        settle(env, self.executor.run(code), |_, output| Ok(output.into()))
    }

    /// Releases the sandbox and joins its thread (§4.3.5): `READY`/`DIRTY` → `DEAD`; a no-op
    /// when `DEAD`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cleanup<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, self.executor.cleanup(), |_, ()| Ok(()))
    }
}

/// Reads and checks the constructor's options.
fn resolve(env: &Env, options: Option<Unknown>) -> std::result::Result<Options, ExecutorError> {
    let raw = read(env, options).map_err(|diagnostic| validation_failed(&[diagnostic]))?;
    Options::resolve(&raw)
        .map(|(options, _notices)| options)
        .map_err(|diagnostics| validation_failed(&diagnostics))
}

/// Resolves a promise with `convert(value)` or rejects it with the `ExecutorError`, on Node's
/// thread.
fn settle<'env, T, V, F, C>(env: &'env Env, future: F, convert: C) -> Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue + 'static,
    F: Future<Output = std::result::Result<T, ExecutorError>> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(future.await) }, move |env, outcome| {
        match outcome {
            Ok(value) => convert(env, value),
            Err(error) => Err(to_napi_error(env, error)),
        }
    })
}
