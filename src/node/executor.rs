//! The `SESExecutor` class (§3.2): converts arguments, forwards to [`Executor`], and turns its
//! results into `CodeOutput` objects and `ExecutorError`s. It decides nothing.

use std::future::Future;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{
    FromNapiValue, Function, JsObjectValue, Object, PromiseRaw, ToNapiValue, Unknown, ValueType,
};
use napi::{Env, JsValue, Result};

use super::error::to_napi_error;
use super::host::{JsArgs, NodeHost, NodeTool, ToolTable};
use super::options::read;
use super::settle::{settle, Outcome};
use super::value::{from_js, Copied};
use crate::diagnostic::Diagnostic;
use crate::engine::host::Host;
use crate::error::ExecutorError;
use crate::executor::{validation_failed, Executor, RunOutput};
use crate::modules::{bridged_name, ModuleExport, ModuleSpec};
use crate::options::Options;
use crate::program::rules::code_non_empty;

/// The result of a successful `run()` (§3.1).
#[napi(object, object_from_js = false)]
pub struct CodeOutput {
    /// The value of the code's last expression statement or top-level `return`, or the value
    /// passed to `final_answer()`; a copy (structured-clone semantics).
    #[napi(ts_type = "unknown")]
    pub output: Copied,
    /// The run's console output, entries joined by `\n` (§7.3).
    pub logs: String,
    /// `true` when the run ended by `final_answer()` (§5.4).
    #[napi(js_name = "is_final_answer")]
    pub is_final_answer: bool,
}

impl From<RunOutput> for CodeOutput {
    fn from(run: RunOutput) -> Self {
        Self {
            output: Copied(run.output),
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
    /// The tools sent so far; only touched on Node's thread.
    tools: ToolTable,
    /// Node's side of the executor: its tool calls and the settling of its promises.
    node: Arc<NodeHost>,
}

#[napi]
impl SesExecutor {
    /// A `NEW` executor. Throws `ExecutorError` (`ERR_VALIDATION_FAILED`) when an option is
    /// invalid, with the rule (`max_operations_valid`, `timeout_valid`, `options_valid`) in
    /// `details.diagnostics`.
    #[napi(constructor, ts_args_type = "options?: ExecutorOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        let (options, module_tools) =
            resolve(&env, options).map_err(|error| to_napi_error(&env, error))?;
        Self::with_options(&env, options, module_tools)
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
        let created = match resolve(env, options) {
            Ok((options, module_tools)) => Ok(Self::with_options(env, options, module_tools)?),
            Err(error) => Err(error),
        };
        let ready = created.as_ref().ok().map(|created| created.executor.init());
        let node = created
            .as_ref()
            .ok()
            .map(|created| Arc::clone(&created.node));
        let creating = async move {
            let created = created?;
            if let Some(ready) = ready {
                ready.await.finish()?;
            }
            Ok(created)
        };
        match node {
            Some(node) => settle(env, &node, creating, |_, created| Ok(created)),
            None => settle_on_runtime(env, creating, |_, created| Ok(created)),
        }
    }

    /// Sets each entry as a global of the sandbox holding a copy of the value (§4.3.2);
    /// functions are refused with the path to them. Requires `READY`.
    #[napi(
        ts_args_type = "variables: Record<string, unknown>",
        ts_return_type = "Promise<void>"
    )]
    pub fn send_variables<'env>(
        &self,
        env: &'env Env,
        variables: Unknown,
    ) -> Result<PromiseRaw<'env, ()>> {
        let copied = entries(env, variables, "variables").and_then(|entries| {
            entries
                .into_iter()
                .map(|(name, value)| {
                    from_js(env, value, &format!("variables.{name}"))
                        .map(|value| (name, value))
                        .map_err(|error| clone_refused(&error))
                })
                .collect::<std::result::Result<Vec<_>, _>>()
        });
        let sent = copied.map(|variables| self.executor.send_variables(variables));
        settle(env, &self.node, async move { sent?.await }, |_, ()| Ok(()))
    }

    /// Makes each entry callable from the sandbox under its key (§4.3.3): a function, or a
    /// smolagents tool object `{ inputs, forward(args) }`. Merges with earlier tools (a name sent
    /// again is replaced); further arguments are ignored. Requires `READY`.
    #[napi(
        ts_args_type = "tools: Record<string, ((...args: any[]) => unknown) | SmolagentsTool>",
        ts_return_type = "Promise<void>"
    )]
    pub fn send_tools<'env>(&self, env: &'env Env, tools: Unknown) -> Result<PromiseRaw<'env, ()>> {
        let parsed = entries(env, tools, "tools").and_then(|entries| {
            entries
                .into_iter()
                .map(|(name, value)| {
                    node_tool(env, &format!("tools.{name}"), value).map(|tool| (name, tool))
                })
                .collect::<std::result::Result<Vec<_>, _>>()
        });
        let sent = parsed.map(|tools| {
            let names = tools.iter().map(|(name, _)| name.clone()).collect();
            let table = Arc::clone(&self.tools);
            self.executor.send_tools(names, move || {
                table
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .extend(tools);
            })
        });
        settle(env, &self.node, async move { sent?.await }, |_, ()| Ok(()))
    }

    /// The lifecycle state (§4.1).
    #[napi(getter, ts_return_type = "ExecutorState")]
    pub fn state(&self) -> &'static str {
        self.executor.state().as_str()
    }

    /// Builds the sandbox (§4.3.1): `NEW`/`DEAD` → `READY`; a no-op when `READY`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn init<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, &self.node, self.executor.init(), |_, ()| Ok(()))
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
                return settle(
                    env,
                    &self.node,
                    async move { Err(error) },
                    |_, output: RunOutput| Ok(output.into()),
                );
            }
        };
        settle(env, &self.node, self.executor.run(code), |_, output| {
            Ok(output.into())
        })
    }

    /// Releases the sandbox and joins its thread (§4.3.5): `READY`/`DIRTY` → `DEAD`; a no-op
    /// when `DEAD`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cleanup<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        // Joining the engine thread blocks: that takes tokio's blocking pool.
        settle_on_runtime(env, self.executor.cleanup(), |_, ()| Ok(()))
    }
}

impl SesExecutor {
    /// An executor whose host starts with the functions of the registered object modules.
    fn with_options(
        env: &Env,
        options: Options,
        module_tools: Vec<(String, NodeTool)>,
    ) -> Result<Self> {
        let tools: ToolTable = Arc::new(Mutex::new(module_tools.into_iter().collect()));
        let node = Arc::new(NodeHost::new(env, Arc::clone(&tools))?);
        Ok(Self {
            executor: Executor::new(options, Arc::clone(&node) as Arc<dyn Host>),
            tools,
            node,
        })
    }
}

/// The own enumerable entries of `value`, which must be an object.
fn entries<'env>(
    env: &'env Env,
    value: Unknown<'env>,
    what: &str,
) -> std::result::Result<Vec<(String, Unknown<'env>)>, ExecutorError> {
    let not_an_object = || {
        validation_failed(&[Diagnostic::error(
            "options_valid",
            format!("{what} must be an object"),
        )])
    };
    if value.get_type().ok() != Some(ValueType::Object) || value.is_array().unwrap_or(false) {
        return Err(not_an_object());
    }
    // SAFETY: checked to be an object of this environment.
    let object =
        unsafe { Object::from_napi_value(env.raw(), value.raw()) }.map_err(|_| not_an_object())?;
    let keys = Object::keys(&object).map_err(|_| not_an_object())?;
    keys.into_iter()
        .map(|key| {
            object
                .get_named_property::<Unknown>(&key)
                .map(|value| (key, value))
                .map_err(|_| not_an_object())
        })
        .collect()
}

/// A tool as sent: a function, or an object with a `forward` function (and `inputs`).
fn node_tool(
    env: &Env,
    name: &str,
    value: Unknown,
) -> std::result::Result<NodeTool, ExecutorError> {
    let refused = || {
        validation_failed(&[Diagnostic::error(
            "options_valid",
            format!("{name} must be a function or a tool object with a forward() method"),
        )])
    };
    let attempt = || -> Result<Option<NodeTool>> {
        match value.get_type()? {
            ValueType::Function => {
                // SAFETY: checked to be a function of this environment.
                let function: Function<JsArgs, Unknown<'static>> =
                    unsafe { Function::from_napi_value(env.raw(), value.raw()) }?;
                Ok(Some(NodeTool::Function(function.create_ref()?)))
            }
            ValueType::Object => {
                // SAFETY: checked to be an object of this environment.
                let object = unsafe { Object::from_napi_value(env.raw(), value.raw()) }?;
                let forward: Unknown = object.get_named_property("forward")?;
                if forward.get_type()? != ValueType::Function {
                    return Ok(None);
                }
                // SAFETY: checked to be a function of this environment.
                let forward: Function<JsArgs, Unknown<'static>> =
                    unsafe { Function::from_napi_value(env.raw(), forward.raw()) }?;
                let inputs: Unknown = object.get_named_property("inputs")?;
                let inputs = if inputs.get_type()? == ValueType::Object {
                    // SAFETY: checked to be an object of this environment.
                    Object::keys(&unsafe { Object::from_napi_value(env.raw(), inputs.raw()) }?)?
                } else {
                    Vec::new()
                };
                Ok(Some(NodeTool::Forward {
                    forward: forward.bind(object)?.create_ref()?,
                    inputs,
                }))
            }
            _ => Ok(None),
        }
    };
    attempt().ok().flatten().ok_or_else(refused)
}

fn clone_refused(error: &crate::value::CloneError) -> ExecutorError {
    validation_failed(&[Diagnostic::error("options_valid", error.to_string())])
        .with_detail("path", error.path.as_str())
}

/// Reads and checks the constructor's options, with the host functions of object modules.
fn resolve(
    env: &Env,
    options: Option<Unknown>,
) -> std::result::Result<(Options, Vec<(String, NodeTool)>), ExecutorError> {
    let raw = read(env, options).map_err(|diagnostic| validation_failed(&[diagnostic]))?;
    let (mut resolved, _notices) =
        Options::resolve(&raw).map_err(|diagnostics| validation_failed(&diagnostics))?;
    let mut module_tools = Vec::new();
    if let Some(modules) = options.and_then(|options| module_option(env, options)) {
        for (name, module) in entries(env, modules, "modules")? {
            let spec = match module.get_type() {
                Ok(ValueType::String) => ModuleSpec::Source(
                    module
                        .coerce_to_string()
                        .and_then(|s| s.into_utf8())
                        .and_then(|s| s.into_owned())
                        .map_err(|_| module_refused(&name))?,
                ),
                Ok(ValueType::Object) => {
                    let mut exports = Vec::new();
                    for (export, value) in entries(env, module, &format!("modules.{name}"))? {
                        let path = format!("modules.{name}.{export}");
                        if value.get_type().ok() == Some(ValueType::Function) {
                            module_tools.push((
                                bridged_name(&name, &export),
                                node_tool(env, &path, value)?,
                            ));
                            exports.push((export, ModuleExport::Function));
                        } else {
                            let copy = from_js(env, value, &path)
                                .map_err(|error| clone_refused(&error))?;
                            exports.push((export, ModuleExport::Data(copy)));
                        }
                    }
                    ModuleSpec::Object(exports)
                }
                _ => return Err(module_refused(&name)),
            };
            resolved.modules.push((name, spec));
        }
    }
    Ok((resolved, module_tools))
}

/// `options.modules`, when it is set.
fn module_option<'env>(env: &'env Env, options: Unknown<'env>) -> Option<Unknown<'env>> {
    if options.get_type().ok() != Some(ValueType::Object) {
        return None;
    }
    // SAFETY: checked to be an object of this environment.
    let object = unsafe { Object::from_napi_value(env.raw(), options.raw()) }.ok()?;
    let modules: Unknown = object.get_named_property("modules").ok()?;
    (modules.get_type().ok()? != ValueType::Undefined).then_some(modules)
}

fn module_refused(name: &str) -> ExecutorError {
    validation_failed(&[Diagnostic::error(
        "options_valid",
        format!("modules.{name} must be ES module source text or an object"),
    )])
}

/// Resolves a promise with `convert(value)` or rejects it with the `ExecutorError`, on Node's
/// thread, polling `future` on tokio's runtime (for futures that need it; see `settle.rs`).
fn settle_on_runtime<'env, T, V, O, F, C>(
    env: &'env Env,
    future: F,
    convert: C,
) -> Result<PromiseRaw<'env, V>>
where
    V: ToNapiValue + 'static,
    O: Outcome<T>,
    F: Future<Output = O> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(future.await) }, move |env, outcome| {
        match outcome.finish() {
            Ok(value) => convert(env, value),
            Err(error) => Err(to_napi_error(env, error)),
        }
    })
}
