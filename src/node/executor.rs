//! The `SESExecutor` class (§3.2): converts arguments, forwards to [`Executor`], and turns its
//! results into `CodeOutput` objects and `ExecutorError`s. It decides nothing.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{
    FnArgs, FromNapiValue, Function, FunctionRef, JsObjectValue, Object, ObjectRef, PromiseRaw,
    Unknown, ValueType,
};
use napi::{Env, JsValue, Result};

use super::error::to_napi_error;
use super::host::{JsArgs, NodeHost, NodeTool, ToolTable};
use super::log_stream::{JsLogEntry, LogStream};
use super::options::read;
use super::program::{read_code, JsDiagnostic, CODE_NOT_A_STRING};
use super::settle::{settle, settle_on_runtime, settle_then};
use super::value::{from_js, Copied};
use crate::diagnostic::Diagnostic;
use crate::engine::host::Host;
use crate::engine::{RunAbort, RunStats};
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
    /// The same console output as structured entries, in call order, under the same
    /// `maxLogBytes` budget (§10.2).
    #[napi(ts_type = "Array<LogEntry>")]
    pub log_entries: Vec<JsLogEntry>,
    /// Figures about the run (§10.2).
    #[napi(ts_type = "RunStats")]
    pub stats: JsRunStats,
    /// What validation noted without blocking the run (§8.3): `WARNING`s and `INFO`s such as
    /// `forbidden_global_access` or `log_budget_too_small`; empty when there is nothing.
    #[napi(ts_type = "Array<Diagnostic>")]
    pub diagnostics: Vec<JsDiagnostic>,
}

/// Figures about one run.
#[napi(object, object_from_js = false, js_name = "RunStats")]
pub struct JsRunStats {
    /// Milliseconds from the moment the executor took the run up (after any queueing) to its
    /// end, validation included.
    pub wall_time_ms: f64,
    /// Milliseconds tool calls took, from call to answer (to settlement for async tools), summed
    /// over calls: overlapping calls each count in full.
    pub tool_time_ms: f64,
    /// Tool calls made (functions of object modules included).
    pub tool_calls: f64,
    /// Loop iterations the guard counted (what `maxOperations` limits).
    pub operations: f64,
    /// The most bytes the executor's QuickJS heap held during the run (the whole runtime,
    /// including what earlier runs left in it).
    pub peak_heap_bytes: f64,
}

impl From<RunStats> for JsRunStats {
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts stay far below 2^53; JS numbers are f64"
    )]
    fn from(stats: RunStats) -> Self {
        Self {
            wall_time_ms: stats.wall_time.as_secs_f64() * 1000.0,
            tool_time_ms: stats.tool_time.as_secs_f64() * 1000.0,
            tool_calls: stats.tool_calls as f64,
            operations: stats.operations as f64,
            peak_heap_bytes: stats.peak_heap_bytes as f64,
        }
    }
}

impl From<RunOutput> for CodeOutput {
    fn from(run: RunOutput) -> Self {
        Self {
            output: Copied(run.output),
            logs: run.logs,
            is_final_answer: run.is_final_answer,
            log_entries: run.log_entries.into_iter().map(JsLogEntry::from).collect(),
            stats: run.stats.into(),
            diagnostics: run.diagnostics.iter().map(JsDiagnostic::from).collect(),
        }
    }
}

/// Options of one `run()`.
#[napi(object, object_to_js = false)]
#[allow(
    dead_code,
    reason = "declares the TypeScript interface; values are read property by property in `watch_signal`"
)]
pub struct RunOptions {
    /// Aborts the run: it stops as at a timeout (`ERR_EXEC_TIMEOUT` with `details.reason:
    /// "aborted"`, state `DIRTY`); a run still queued, or a signal already aborted, never starts
    /// and leaves the state as it was.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<String>,
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
        let resolved = resolve(&env, options).map_err(|error| to_napi_error(&env, error))?;
        Self::with_options(&env, resolved)
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
            Ok(resolved) => Ok(Self::with_options(env, resolved)?),
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

    /// Validates, rewrites and runs `code` (§7.2); `options.signal` aborts it.
    #[napi(
        ts_args_type = "code: string, options?: RunOptions",
        ts_return_type = "Promise<CodeOutput>"
    )]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        code: Unknown,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, CodeOutput>> {
        let refuse = |error: ExecutorError| {
            settle(
                env,
                &self.node,
                async move { Err(error) },
                |_, output: RunOutput| Ok(output.into()),
            )
        };
        let code = match read_code(code)? {
            Some(code) => code,
            None => {
                return refuse(validation_failed(&[Diagnostic::error(
                    code_non_empty::RULE,
                    CODE_NOT_A_STRING,
                )]));
            }
        };
        let abort = RunAbort::new();
        let watch = match watch_signal(env, options, &abort) {
            Ok(watch) => watch,
            Err(error) => return refuse(error),
        };
        settle_then(
            env,
            &self.node,
            self.executor.run(code, abort),
            |_, output| Ok(output.into()),
            move |env| {
                if let Some(watch) = watch {
                    watch.detach(env);
                }
            },
        )
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
    fn with_options(env: &Env, resolved: Resolved) -> Result<Self> {
        let Resolved {
            options,
            module_tools,
            on_log,
        } = resolved;
        let tools: ToolTable = Arc::new(Mutex::new(module_tools.into_iter().collect()));
        let logs = on_log.map(LogStream::new);
        let node = Arc::new(NodeHost::new(env, Arc::clone(&tools), logs)?);
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

/// The constructor's options, checked: what the executor runs with, the host functions of
/// object modules, and the `onLog` callback.
struct Resolved {
    options: Options,
    module_tools: Vec<(String, NodeTool)>,
    on_log: Option<FunctionRef<JsLogEntry, Unknown<'static>>>,
}

/// Reads and checks the constructor's options.
fn resolve(env: &Env, options: Option<Unknown>) -> std::result::Result<Resolved, ExecutorError> {
    let raw = read(env, options).map_err(|diagnostic| validation_failed(&[diagnostic]))?;
    let (mut resolved, _notices) =
        Options::resolve(&raw).map_err(|diagnostics| validation_failed(&diagnostics))?;
    let on_log = match options.and_then(|options| option_named(env, options, "onLog")) {
        None => None,
        Some(on_log) if on_log.get_type().ok() == Some(ValueType::Function) => {
            // SAFETY: checked to be a function of this environment.
            let function: Function<JsLogEntry, Unknown<'static>> =
                unsafe { Function::from_napi_value(env.raw(), on_log.raw()) }
                    .map_err(|_| option_refused("onLog must be a function"))?;
            Some(
                function
                    .create_ref()
                    .map_err(|_| option_refused("onLog must be a function"))?,
            )
        }
        Some(_) => return Err(option_refused("onLog must be a function")),
    };
    let mut module_tools = Vec::new();
    if let Some(modules) = options.and_then(|options| option_named(env, options, "modules")) {
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
    Ok(Resolved {
        options: resolved,
        module_tools,
        on_log,
    })
}

/// `options[name]`, when `options` is an object and the property is set.
fn option_named<'env>(env: &'env Env, options: Unknown<'env>, name: &str) -> Option<Unknown<'env>> {
    if options.get_type().ok() != Some(ValueType::Object) {
        return None;
    }
    // SAFETY: checked to be an object of this environment.
    let object = unsafe { Object::from_napi_value(env.raw(), options.raw()) }.ok()?;
    let value: Unknown = object.get_named_property(name).ok()?;
    (value.get_type().ok()? != ValueType::Undefined).then_some(value)
}

fn option_refused(message: &str) -> ExecutorError {
    validation_failed(&[Diagnostic::error("options_valid", message)])
}

/// `signal.addEventListener` / `removeEventListener`, called with `("abort", listener)`.
type ListenerMethod<'env> =
    Function<'env, FnArgs<(&'static str, Function<'env, (), ()>)>, Unknown<'env>>;

/// An `AbortSignal` listened to for the length of one run.
struct SignalWatch {
    signal: ObjectRef<false>,
    listener: FunctionRef<(), ()>,
}

/// Ties `options.signal` (if any) to `abort`: aborts at once if the signal already is, else
/// listens for its `abort` event until [`SignalWatch::detach`].
fn watch_signal(
    env: &Env,
    options: Option<Unknown>,
    abort: &RunAbort,
) -> std::result::Result<Option<SignalWatch>, ExecutorError> {
    let refused = || option_refused("options.signal must be an AbortSignal");
    let Some(options) = options else {
        return Ok(None);
    };
    match options.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(None),
        Ok(ValueType::Object) => {}
        _ => return Err(option_refused("run options must be an object")),
    }
    let Some(signal) = option_named(env, options, "signal") else {
        return Ok(None);
    };
    let attach = || -> Result<Option<SignalWatch>> {
        // SAFETY: an object of this environment (anything else fails the conversion).
        let signal = unsafe { Object::from_napi_value(env.raw(), signal.raw()) }?;
        let aborted: Unknown = signal.get_named_property("aborted")?;
        if aborted.coerce_to_bool()? {
            abort.abort();
            return Ok(None);
        }
        let add: ListenerMethod = signal.get_named_property("addEventListener")?;
        let on_abort = abort.clone();
        let listener = env.create_function_from_closure::<(), (), _>("abortRun", move |_| {
            on_abort.abort();
            Ok(())
        })?;
        add.apply(signal, FnArgs::from(("abort", listener)))?;
        Ok(Some(SignalWatch {
            signal: signal.create_ref()?,
            listener: listener.create_ref()?,
        }))
    };
    match signal.get_type() {
        Ok(ValueType::Object) => attach().map_err(|_| refused()),
        _ => Err(refused()),
    }
}

impl SignalWatch {
    /// Stops listening: a signal may outlive many runs, and must not collect their listeners.
    fn detach(self, env: &Env) {
        let removed = || -> Result<()> {
            let signal = self.signal.get_value(env)?;
            let remove: ListenerMethod = signal.get_named_property("removeEventListener")?;
            remove.apply(
                signal,
                FnArgs::from(("abort", self.listener.borrow_back(env)?)),
            )?;
            Ok(())
        };
        // A signal whose removeEventListener throws keeps a listener that only sets a flag.
        let _ = removed();
        let _ = self.signal.unref(env);
    }
}

fn module_refused(name: &str) -> ExecutorError {
    validation_failed(&[Diagnostic::error(
        "options_valid",
        format!("modules.{name} must be ES module source text or an object"),
    )])
}
