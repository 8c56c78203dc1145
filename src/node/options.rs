//! The one reader of what JS passes besides code (§3.1 `ExecutorOptions`, `run()`'s options,
//! `sendVariables`' and `sendTools`' records): property by property, so that a wrong type is
//! reported as a structured `ERR_VALIDATION_FAILED` naming the option instead of napi's generic
//! conversion error, and numbers reach the option rules exactly as given (`NaN`, `-1`, `1.5`).
//! The rules and their messages are `crate::options::rules`'.

use std::collections::HashMap;

use napi::bindgen_prelude::{
    Array, FnArgs, FromNapiValue, Function, FunctionRef, JsObjectValue, JsValuesTupleIntoVec,
    Object, ObjectRef, Unknown, ValueType,
};
use napi::{Env, JsValue};

use super::host::{JsArgs, NodeTool};
use super::log_stream::JsLogEntry;
use super::trace::Listener;
use super::value::from_js;
use crate::diagnostic::Diagnostic;
use crate::engine::RunAbort;
use crate::error::ExecutorError;
use crate::modules::{bridged_name, ModuleExport, ModuleSpec};
use crate::options::rules::{self, invalid};
use crate::options::{Options, RawOptions};
use crate::value::CloneError;

/// Options of §3.1 plus the resource limits of DESIGN.md (all optional).
#[napi(object, object_to_js = false)]
#[allow(
    dead_code,
    reason = "declares the TypeScript interface; values are read property by property in `read`"
)]
pub struct ExecutorOptions {
    /// Loop iterations a run may make before `ERR_MAX_OPS_EXCEEDED` (default 50000, min 1).
    pub max_operations: Option<f64>,
    /// Wall-clock budget of a run in milliseconds (default 10000, min 1).
    pub timeout_ms: Option<f64>,
    /// What a `run()` does while another runs (default `"reject"`).
    #[napi(ts_type = "\"reject\" | \"queue\"")]
    pub run_concurrency: Option<String>,
    /// Queue capacity when `runConcurrency` is `"queue"` (default 0).
    pub max_queued_runs: Option<f64>,
    /// Module names `import()` may load (default none).
    pub authorized_imports: Option<Vec<String>>,
    /// Budget of a run's `logs` in bytes; later output is cut and marked `...[TRUNCATED]`
    /// (default 262144).
    pub max_log_bytes: Option<f64>,
    /// Console levels collected into `logs` (default all four).
    #[napi(ts_type = "Array<\"log\" | \"info\" | \"warn\" | \"error\">")]
    pub collect_console_levels: Option<Vec<String>>,
    /// Heap limit of the executor's QuickJS runtime in bytes (default 256 MiB).
    pub memory_limit_bytes: Option<f64>,
    /// Stack limit of the executor's QuickJS runtime in bytes (default 1 MiB, at most 16 MiB:
    /// the stack every engine thread has for QuickJS).
    pub max_stack_bytes: Option<f64>,
    /// The largest width or height of a sandbox canvas in pixels (default 8192, at most 32768);
    /// `getCanvas` and `new OffscreenCanvas` throw a `RangeError` above it. Pixels also count
    /// against `memoryLimitBytes`.
    pub max_canvas_size: Option<f64>,
    /// Gives the sandbox `setTimeout`, `clearTimeout`, `setInterval` and `clearInterval`
    /// (default `false`: spec §5.2 injects no timers, and code using them gets a
    /// `forbidden_global_access` warning and a `ReferenceError`). They run on the executor's own
    /// clock, never past the run's deadline; a run waiting for a timer holds no engine thread;
    /// the run waits for the Promise its code returns (not for timers), and timers still pending
    /// when it ends are cancelled (`stats.timersCancelled`). A delay below 1 ms or above
    /// 2147483647 ms is 1 ms (as in Node); at most 10000 timers are pending at once.
    pub timers: Option<bool>,
    /// Modules `await import(name)` can load, for names in `authorizedImports`: ES module source
    /// text (run inside the sandbox, under the same guards), or an object whose functions become
    /// exports that call the host like tools and whose other values are copied.
    #[napi(ts_type = "Record<string, string | Record<string, unknown>>")]
    pub modules: Option<HashMap<String, String>>,
    /// Called with each log entry while the run goes on (§10.2), in call order and before the
    /// run's promise settles; what it throws is ignored.
    #[napi(ts_type = "(entry: LogEntry) => void")]
    pub on_log: Option<String>,
    /// Record every run's events in `CodeOutput.trace` (and `ExecutorError.trace`): its start
    /// and end, each tool call with its arguments and result, `final_answer`, console entries
    /// (default `false`; `run(code, { trace })` decides per run).
    pub trace: Option<bool>,
    /// Budget of one run's trace in bytes (approximate, values included; default 1048576, min
    /// 1024). A call or result whose values do not fit is kept without them (`truncated:
    /// true`); an event that does not fit at all is dropped and counted in the run's
    /// `run_end.droppedEvents`. `run_end` is always kept.
    pub max_trace_bytes: Option<f64>,
    /// Called with each trace event of every run as it happens, in order and before the run's
    /// promise settles (the same events `trace` records, under the same budget); what it throws
    /// is ignored. Does not by itself fill `CodeOutput.trace`.
    #[napi(ts_type = "(event: TraceEvent) => void")]
    pub on_event: Option<String>,
    /// An OpenTelemetry tracer (`trace.getTracer(…)` of `@opentelemetry/api`): each run becomes
    /// a span, each tool call a child span (`execute_tool {name}`). Without it, the global
    /// tracer is used when `@opentelemetry/api` is installed and an SDK registered. Read by the
    /// package's JS entry (`lib/tracing.cjs`).
    #[napi(ts_type = "SpanTracer")]
    pub tracer: Option<String>,
}

/// Reads `options` (`undefined` or an object) into [`RawOptions`].
pub fn read(env: &Env, options: Option<Unknown>) -> Result<RawOptions, Diagnostic> {
    let Some(options) = options else {
        return Ok(RawOptions::default());
    };
    match options.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(RawOptions::default()),
        Ok(ValueType::Object) => {}
        _ => return Err(invalid("options", "an object")),
    }
    // SAFETY: the value was just checked to be an object of this environment.
    let object = unsafe { Object::from_napi_value(env.raw(), options.raw()) }
        .map_err(|_| invalid("options", "an object"))?;
    Ok(RawOptions {
        max_operations: number(&object, "maxOperations")?,
        timeout_ms: number(&object, "timeoutMs")?,
        run_concurrency: string(&object, "runConcurrency")?,
        max_queued_runs: number(&object, "maxQueuedRuns")?,
        authorized_imports: strings(&object, "authorizedImports")?,
        max_log_bytes: number(&object, "maxLogBytes")?,
        collect_console_levels: strings(&object, "collectConsoleLevels")?,
        memory_limit_bytes: number(&object, "memoryLimitBytes")?,
        max_stack_bytes: number(&object, "maxStackBytes")?,
        max_canvas_size: number(&object, "maxCanvasSize")?,
        trace: boolean(&object, "trace")?,
        max_trace_bytes: number(&object, "maxTraceBytes")?,
        timers: boolean(&object, "timers")?,
    })
}

/// `toolNames` of the options given to `validateCode` / `prepareProgram`: the tools the code
/// will run with, for `tool_name_shadowing` (`run()` knows its executor's tools itself).
pub fn read_tool_names(env: &Env, options: Option<Unknown>) -> Result<Vec<String>, Diagnostic> {
    let Some(options) = options else {
        return Ok(Vec::new());
    };
    if options.get_type().ok() != Some(ValueType::Object) {
        return Ok(Vec::new());
    }
    // SAFETY: the value was just checked to be an object of this environment.
    let object = unsafe { Object::from_napi_value(env.raw(), options.raw()) }
        .map_err(|_| invalid("options", "an object"))?;
    Ok(strings(&object, "toolNames")?.unwrap_or_default())
}

/// The property, or `None` when it is absent or `undefined`.
fn property<'env>(object: &Object<'env>, name: &str) -> Result<Option<Unknown<'env>>, Diagnostic> {
    let value: Unknown = object
        .get_named_property(name)
        .map_err(|_| invalid(name, "readable"))?;
    match value.get_type() {
        Ok(ValueType::Undefined) => Ok(None),
        Ok(_) => Ok(Some(value)),
        Err(_) => Err(invalid(name, "readable")),
    }
}

fn number(object: &Object, name: &str) -> Result<Option<f64>, Diagnostic> {
    let Some(value) = property(object, name)? else {
        return Ok(None);
    };
    match value.get_type() {
        Ok(ValueType::Number) => value
            .coerce_to_number()
            .and_then(|number| number.get_double())
            .map(Some)
            .map_err(|_| invalid(name, "a number")),
        _ => Err(invalid(name, "a number")),
    }
}

fn boolean(object: &Object, name: &str) -> Result<Option<bool>, Diagnostic> {
    let Some(value) = property(object, name)? else {
        return Ok(None);
    };
    match value.get_type() {
        Ok(ValueType::Boolean) => value
            .coerce_to_bool()
            .map(Some)
            .map_err(|_| invalid(name, "a boolean")),
        _ => Err(invalid(name, "a boolean")),
    }
}

fn string(object: &Object, name: &str) -> Result<Option<String>, Diagnostic> {
    let Some(value) = property(object, name)? else {
        return Ok(None);
    };
    as_string(&value)
        .map(Some)
        .ok_or_else(|| invalid(name, "a string"))
}

fn strings(object: &Object, name: &str) -> Result<Option<Vec<String>>, Diagnostic> {
    let Some(value) = property(object, name)? else {
        return Ok(None);
    };
    let expected = || invalid(name, "an array of strings");
    if !value.is_array().unwrap_or(false) {
        return Err(expected());
    }
    // SAFETY: `value` was just checked to be an array of this environment.
    let array = unsafe { Array::from_napi_value(value.value().env, value.raw()) }
        .map_err(|_| expected())?;
    (0..array.len())
        .map(|index| {
            array
                .get::<Unknown>(index)
                .ok()
                .flatten()
                .and_then(|item| as_string(&item))
                .ok_or_else(expected)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn as_string(value: &Unknown) -> Option<String> {
    match value.get_type() {
        Ok(ValueType::String) => value
            .coerce_to_string()
            .and_then(|s| s.into_utf8())
            .and_then(|s| s.into_owned())
            .ok(),
        _ => None,
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
    /// Record this run's events in its result (`CodeOutput.trace`, `ExecutorError.trace`);
    /// overrides the executor's `trace` option for this run.
    pub trace: Option<bool>,
    /// Called with each of this run's trace events as it happens (besides the executor's
    /// `onEvent`); what it throws is ignored.
    #[napi(ts_type = "(event: TraceEvent) => void")]
    pub on_event: Option<String>,
    /// A value bound as the global `input` for this run only: a copy (structured-clone
    /// semantics, as `sendVariables` copies), so the run's changes never reach the caller and
    /// the next run has no `input`. A property present with the value `undefined` binds
    /// `input` to `undefined`. The run is refused (`ERR_VALIDATION_FAILED`) if the value cannot
    /// be copied (the path is in `details.path`), or if the sandbox already holds the name `input`
    /// (an earlier run's top-level `let`/`const`/`class`/`var`, or a variable).
    #[napi(ts_type = "unknown")]
    pub input: Option<String>,
}

/// `options.input` of `run()`, copied: `None` when the options have no `input` property (a
/// property set to `undefined` binds `input` to `undefined`).
pub fn run_input(
    env: &Env,
    options: Option<Unknown>,
) -> std::result::Result<Option<crate::value::Value>, ExecutorError> {
    let Some(options) = options else {
        return Ok(None);
    };
    if options.get_type().ok() != Some(ValueType::Object) {
        return Ok(None);
    }
    // SAFETY: checked to be an object of this environment.
    let Ok(object) = (unsafe { Object::from_napi_value(env.raw(), options.raw()) }) else {
        return Ok(None);
    };
    if !object.has_named_property("input").unwrap_or(false) {
        return Ok(None);
    }
    let value: Unknown = object
        .get_named_property("input")
        .map_err(|_| option_refused(invalid("input", "readable")))?;
    from_js(env, value, "input")
        .map(Some)
        .map_err(|error| clone_refused(&error))
}

/// The own enumerable entries of `value`, which must be an object.
pub fn entries<'env>(
    env: &'env Env,
    value: Unknown<'env>,
    what: &str,
) -> std::result::Result<Vec<(String, Unknown<'env>)>, ExecutorError> {
    let not_an_object = || ExecutorError::validation(&[rules::not_an_object(what)]);
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
pub fn node_tool(
    env: &Env,
    name: &str,
    value: Unknown,
) -> std::result::Result<NodeTool, ExecutorError> {
    let refused = || ExecutorError::validation(&[rules::not_a_tool(name)]);
    let attempt = || -> napi::Result<Option<NodeTool>> {
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

/// A value refused where a copy is required, with the path to the part in `details.path`.
pub fn clone_refused(error: &CloneError) -> ExecutorError {
    ExecutorError::validation(&[rules::uncopyable(error)]).with_detail("path", error.path.as_str())
}

/// The constructor's options, checked: what the executor runs with, the host functions of
/// object modules, and the `onLog` callback.
pub struct Resolved {
    pub options: Options,
    pub module_tools: Vec<(String, NodeTool)>,
    pub on_log: Option<FunctionRef<JsLogEntry, Unknown<'static>>>,
    pub on_event: Option<Listener>,
}

/// Reads and checks the constructor's options.
pub fn resolve(
    env: &Env,
    options: Option<Unknown>,
) -> std::result::Result<Resolved, ExecutorError> {
    let raw = read(env, options).map_err(|diagnostic| ExecutorError::validation(&[diagnostic]))?;
    let (mut resolved, _notices) =
        Options::resolve(&raw).map_err(|diagnostics| ExecutorError::validation(&diagnostics))?;
    let on_log = callback(env, options, "onLog", rules::on_log_not_a_function)?;
    let on_event = callback(env, options, "onEvent", rules::on_event_not_a_function)?;
    if let Some(tracer) = options.and_then(|options| option_named(env, options, "tracer")) {
        check_tracer(env, tracer)?;
    }
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
        on_event,
    })
}

/// The callback `options[name]`, if set; anything but a function is refused with `refusal`.
fn callback<Args: JsValuesTupleIntoVec>(
    env: &Env,
    options: Option<Unknown>,
    name: &str,
    refusal: fn() -> Diagnostic,
) -> std::result::Result<Option<FunctionRef<Args, Unknown<'static>>>, ExecutorError> {
    match options.and_then(|options| option_named(env, options, name)) {
        None => Ok(None),
        Some(value) if value.get_type().ok() == Some(ValueType::Function) => {
            // SAFETY: checked to be a function of this environment.
            let function: Function<Args, Unknown<'static>> =
                unsafe { Function::from_napi_value(env.raw(), value.raw()) }
                    .map_err(|_| option_refused(refusal()))?;
            Ok(Some(
                function
                    .create_ref()
                    .map_err(|_| option_refused(refusal()))?,
            ))
        }
        Some(_) => Err(option_refused(refusal())),
    }
}

/// `tracer`, which the JS entry uses (`lib/tracing.cjs`), checked here with every other option:
/// `null` or an object with a `startSpan` function.
fn check_tracer(env: &Env, tracer: Unknown) -> std::result::Result<(), ExecutorError> {
    let refused = || option_refused(rules::not_a_tracer());
    match tracer.get_type() {
        Ok(ValueType::Null) => Ok(()),
        Ok(ValueType::Object) => {
            // SAFETY: checked to be an object of this environment.
            let object = unsafe { Object::from_napi_value(env.raw(), tracer.raw()) }
                .map_err(|_| refused())?;
            let start_span: Unknown = object
                .get_named_property("startSpan")
                .map_err(|_| refused())?;
            if start_span.get_type().ok() == Some(ValueType::Function) {
                Ok(())
            } else {
                Err(refused())
            }
        }
        _ => Err(refused()),
    }
}

/// What `run(code, options)` asks of the run's trace: `trace` and `onEvent`. `options` has
/// been checked to be an object or `undefined` (see [`watch_signal`]).
pub fn run_tracing(
    env: &Env,
    options: Option<Unknown>,
) -> std::result::Result<(Option<bool>, Option<Listener>), ExecutorError> {
    let record = match options.and_then(|options| option_named(env, options, "trace")) {
        None => None,
        Some(value) if value.get_type().ok() == Some(ValueType::Boolean) => Some(
            value
                .coerce_to_bool()
                .map_err(|_| option_refused(invalid("trace", "a boolean")))?,
        ),
        Some(_) => return Err(option_refused(invalid("trace", "a boolean"))),
    };
    let listener = callback(env, options, "onEvent", rules::on_event_not_a_function)?;
    Ok((record, listener))
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

fn option_refused(diagnostic: Diagnostic) -> ExecutorError {
    ExecutorError::validation(&[diagnostic])
}

/// `signal.addEventListener` / `removeEventListener`, called with `("abort", listener)`.
type ListenerMethod<'env> =
    Function<'env, FnArgs<(&'static str, Function<'env, (), ()>)>, Unknown<'env>>;

/// An `AbortSignal` listened to for the length of one run.
pub struct SignalWatch {
    signal: ObjectRef<false>,
    listener: FunctionRef<(), ()>,
}

/// Ties `options.signal` (if any) to `abort`: aborts at once if the signal already is, else
/// listens for its `abort` event until [`SignalWatch::detach`].
pub fn watch_signal(
    env: &Env,
    options: Option<Unknown>,
    abort: &RunAbort,
) -> std::result::Result<Option<SignalWatch>, ExecutorError> {
    let refused = || option_refused(rules::not_an_abort_signal());
    let Some(options) = options else {
        return Ok(None);
    };
    match options.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(None),
        Ok(ValueType::Object) => {}
        _ => return Err(option_refused(rules::run_options_not_an_object())),
    }
    let Some(signal) = option_named(env, options, "signal") else {
        return Ok(None);
    };
    let attach = || -> napi::Result<Option<SignalWatch>> {
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
    pub fn detach(self, env: &Env) {
        let removed = || -> napi::Result<()> {
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
    ExecutorError::validation(&[rules::not_a_module(name)])
}
