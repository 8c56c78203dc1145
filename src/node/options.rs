//! The one reader of what JS passes besides code (§3.1 `ExecutorOptions`, `run()`'s options,
//! `sendVariables`' and `sendTools`' records): property by property, so that a wrong type is
//! reported as a structured `ERR_VALIDATION_FAILED` naming the option instead of napi's generic
//! conversion error, and numbers reach the option rules exactly as given (`NaN`, `-1`, `1.5`).
//! Every read goes through `guarded`: an options object that is a Proxy, or a getter that
//! throws, is refused as `options_valid` naming the option, with nothing left pending on Node's
//! thread. The options are declared once, in `crate::options` (the value options' reads follow
//! from that table through [`ReadOptions`]); the rules and their messages are
//! `crate::options::rules`'.

use napi::bindgen_prelude::{
    Function, FunctionRef, JsObjectValue, JsValuesTupleIntoVec, Object, Unknown, ValueType,
};
use napi::{Env, JsValue};

use super::env_data;
use super::guarded::{self, Thrown};
use super::host::{NodeTool, ToolFunction};
use super::log_stream::JsLogEntry;
use super::trace_events::Listener;
use super::value::from_js;
use crate::diagnostic::Diagnostic;
use crate::error::ExecutorError;
use crate::executor::RunAbort;
use crate::modules::{bridged_name, ModuleExport, ModuleSpec};
use crate::options::declare::ReadOptions;
use crate::options::rules::{self, invalid};
use crate::options::{Options, RawOptions};
use crate::value::CloneError;

/// Reads `options` (`undefined` or an object) into [`RawOptions`].
pub fn read(env: &Env, options: Option<Unknown>) -> Result<RawOptions, Diagnostic> {
    let Some(options) = options else {
        return Ok(RawOptions::default());
    };
    match guarded::type_of(&options) {
        ValueType::Undefined | ValueType::Null => return Ok(RawOptions::default()),
        ValueType::Object => {}
        _ => return Err(invalid("options", "an object")),
    }
    RawOptions::read(&mut Reader {
        env,
        object: &options,
    })
}

/// Reads options from one object, each property through the guarded path.
struct Reader<'a, 'env> {
    env: &'env Env,
    object: &'a Unknown<'env>,
}

impl ReadOptions for Reader<'_, '_> {
    fn number(&mut self, name: &str) -> Result<Option<f64>, Diagnostic> {
        number(self.env, self.object, name)
    }

    fn boolean(&mut self, name: &str) -> Result<Option<bool>, Diagnostic> {
        boolean(self.env, self.object, name)
    }

    fn string(&mut self, name: &str) -> Result<Option<String>, Diagnostic> {
        string(self.env, self.object, name)
    }

    fn strings(&mut self, name: &str) -> Result<Option<Vec<String>>, Diagnostic> {
        strings(self.env, self.object, name)
    }
}

/// `toolNames` of the options given to `validateCode` / `prepareProgram`: the tools the code
/// will run with, for `tool_name_shadowing` (`run()` knows its executor's tools itself).
pub fn read_tool_names(env: &Env, options: Option<Unknown>) -> Result<Vec<String>, Diagnostic> {
    match options {
        Some(options) if guarded::type_of(&options) == ValueType::Object => {
            Ok(strings(env, &options, "toolNames")?.unwrap_or_default())
        }
        _ => Ok(Vec::new()),
    }
}

/// `options_valid` for a read that threw.
fn unreadable(env: &Env, name: &str, thrown: &Thrown) -> Diagnostic {
    rules::unreadable(name, &thrown.describe(env))
}

/// The property, or `None` when it is absent or `undefined`.
fn property<'env>(
    env: &'env Env,
    object: &Unknown,
    name: &str,
) -> Result<Option<Unknown<'env>>, Diagnostic> {
    match guarded::get(env, object, name) {
        Ok(value) if guarded::type_of(&value) == ValueType::Undefined => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(thrown) => Err(unreadable(env, name, &thrown)),
    }
}

fn number(env: &Env, object: &Unknown, name: &str) -> Result<Option<f64>, Diagnostic> {
    let Some(value) = property(env, object, name)? else {
        return Ok(None);
    };
    if guarded::type_of(&value) != ValueType::Number {
        return Err(invalid(name, "a number"));
    }
    // SAFETY: `value` is a number, which the conversion reads without running code.
    unsafe { value.cast::<f64>() }
        .map(Some)
        .map_err(|_| invalid(name, "a number"))
}

fn boolean(env: &Env, object: &Unknown, name: &str) -> Result<Option<bool>, Diagnostic> {
    let Some(value) = property(env, object, name)? else {
        return Ok(None);
    };
    guarded::boolean_value(&value)
        .map(Some)
        .ok_or_else(|| invalid(name, "a boolean"))
}

fn string(env: &Env, object: &Unknown, name: &str) -> Result<Option<String>, Diagnostic> {
    let Some(value) = property(env, object, name)? else {
        return Ok(None);
    };
    guarded::string_value(&value)
        .map(Some)
        .ok_or_else(|| invalid(name, "a string"))
}

fn strings(env: &Env, object: &Unknown, name: &str) -> Result<Option<Vec<String>>, Diagnostic> {
    let Some(value) = property(env, object, name)? else {
        return Ok(None);
    };
    let expected = || invalid(name, "an array of strings");
    if !guarded::is_array(&value) {
        return Err(expected());
    }
    // SAFETY: `value` was just checked to be an array; reading its length runs no code.
    let length = unsafe { value.cast::<Object>() }
        .and_then(|array| array.get_array_length())
        .map_err(|_| expected())?;
    (0..length)
        .map(|index| match guarded::get_element(env, &value, index) {
            Ok(item) => guarded::string_value(&item).ok_or_else(expected),
            Err(thrown) => Err(unreadable(env, &format!("{name}[{index}]"), &thrown)),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
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
    /// `onEvent`); what it throws, or a promise it returns rejects with, is ignored.
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

/// `options.input` of `run()`, copied within `max_value_bytes`: `None` when the options have no
/// `input` property (a property set to `undefined` binds `input` to `undefined`). Read as the
/// other run options are (`guarded`): a `has` trap or getter that throws refuses the run.
pub fn run_input(
    env: &Env,
    options: Option<Unknown>,
    max_value_bytes: u64,
) -> std::result::Result<Option<crate::value::Value>, ExecutorError> {
    let refused =
        |thrown: &Thrown| ExecutorError::validation(&[unreadable(env, "options.input", thrown)]);
    let Some(options) = options else {
        return Ok(None);
    };
    if guarded::type_of(&options) != ValueType::Object {
        return Ok(None);
    }
    if !guarded::has(env, &options, "input").map_err(|thrown| refused(&thrown))? {
        return Ok(None);
    }
    let value = guarded::get(env, &options, "input").map_err(|thrown| refused(&thrown))?;
    from_js(env, value, "input", max_value_bytes)
        .map(Some)
        .map_err(|error| clone_refused(&error))
}

/// The own enumerable entries of `value`, which must be an object (`what` names it in
/// refusals: `variables`, `tools`, `modules.geo`). A getter or trap that throws refuses the
/// whole record, naming the entry.
pub fn entries<'env>(
    env: &'env Env,
    value: Unknown<'env>,
    what: &str,
) -> std::result::Result<Vec<(String, Unknown<'env>)>, ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    if guarded::type_of(&value) != ValueType::Object || guarded::is_array(&value) {
        return Err(refused(rules::not_an_object(what)));
    }
    let (keys, count) =
        guarded::own_keys(env, &value).map_err(|thrown| refused(unreadable(env, what, &thrown)))?;
    (0..count)
        .map(|index| {
            let key = guarded::get_element(env, &keys, index)
                .ok()
                .and_then(|key| guarded::string_value(&key).map(|name| (key, name)));
            let Some((key, name)) = key else {
                return Err(refused(rules::not_an_object(what)));
            };
            match guarded::get_key(env, &value, &key) {
                Ok(entry) => Ok((name, entry)),
                Err(thrown) => Err(refused(unreadable(env, &format!("{what}.{name}"), &thrown))),
            }
        })
        .collect()
}

/// A tool as sent: a function, or an object with a `forward` function (and `inputs`). Each of
/// the object's properties is read once, here.
pub fn node_tool(
    env: &Env,
    name: &str,
    value: Unknown,
) -> std::result::Result<NodeTool, ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    let not_a_tool = || refused(rules::not_a_tool(name));
    let function_ref = |function: &Unknown| -> std::result::Result<ToolFunction, ExecutorError> {
        guarded::view::<Function<(), Unknown<'static>>>(function)
            .and_then(|function| function.create_ref())
            .map_err(|_| not_a_tool())
    };
    match guarded::type_of(&value) {
        ValueType::Function => Ok(NodeTool {
            function: function_ref(&value)?,
            inputs: None,
        }),
        ValueType::Object => {
            let read = |key: &str| {
                guarded::get(env, &value, key)
                    .map_err(|thrown| refused(unreadable(env, &format!("{name}.{key}"), &thrown)))
            };
            let forward = read("forward")?;
            if guarded::type_of(&forward) != ValueType::Function {
                return Err(not_a_tool());
            }
            let inputs = read("inputs")?;
            let inputs = if guarded::type_of(&inputs) == ValueType::Object {
                let (keys, count) = guarded::own_keys(env, &inputs).map_err(|thrown| {
                    refused(unreadable(env, &format!("{name}.inputs"), &thrown))
                })?;
                (0..count)
                    .filter_map(|index| guarded::get_element(env, &keys, index).ok())
                    .filter_map(|key| guarded::string_value(&key))
                    .collect()
            } else {
                Vec::new()
            };
            let bound = env_data::bind_method(env, &value, &forward).map_err(|_| not_a_tool())?;
            Ok(NodeTool {
                function: function_ref(&bound)?,
                inputs: Some(inputs),
            })
        }
        _ => Err(not_a_tool()),
    }
}

/// A value refused where a copy is required, with the path to the part in `details.path`, and
/// the limit and size in `details` when a size limit refused it.
pub fn clone_refused(error: &CloneError) -> ExecutorError {
    let refused = ExecutorError::validation(&[rules::uncopyable(error)])
        .with_detail("path", error.path.as_str());
    match &error.limit {
        Some(limit) => refused
            .with_detail("limit", limit.name)
            .with_detail("size", limit.size)
            .with_detail("max", limit.max),
        None => refused,
    }
}

/// The constructor's options, checked: what the executor runs with, the host functions of
/// object modules, the `onLog` and `onEvent` callbacks, and the `tracer` with its `startSpan`
/// (for the JS layer, `lib/tracing.cjs`).
pub struct Resolved<'env> {
    pub options: Options,
    pub module_tools: Vec<(String, NodeTool)>,
    pub on_log: Option<FunctionRef<JsLogEntry, Unknown<'static>>>,
    pub on_event: Option<Listener>,
    pub tracer: Option<Tracer<'env>>,
    /// `captureToolContent` as given (`None` when left out: the JS entry then asks the
    /// environment, as OpenTelemetry's GenAI instrumentations do).
    pub capture_tool_content: Option<bool>,
}

/// The `tracer` option and its `startSpan` function, each read once.
pub struct Tracer<'env> {
    pub tracer: Unknown<'env>,
    pub start_span: Unknown<'env>,
}

/// Reads and checks the constructor's options.
pub fn resolve<'env>(
    env: &'env Env,
    options: Option<Unknown<'env>>,
) -> std::result::Result<Resolved<'env>, ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    let raw = read(env, options).map_err(refused)?;
    let (mut resolved, _notices) =
        Options::resolve(&raw).map_err(|diagnostics| ExecutorError::validation(&diagnostics))?;
    let options = options.filter(|options| guarded::type_of(options) == ValueType::Object);
    let named = |name: &str| match options {
        Some(options) => property(env, &options, name).map_err(refused),
        None => Ok(None),
    };
    let on_log = callback(named("onLog")?, rules::on_log_not_a_function)?;
    let on_event = callback(named("onEvent")?, rules::on_event_not_a_function)?;
    let tracer = match named("tracer")? {
        Some(tracer) => check_tracer(env, tracer)?,
        None => None,
    };
    let mut module_tools = Vec::new();
    if let Some(modules) = named("modules")? {
        for (name, module) in entries(env, modules, "modules")? {
            let spec = match guarded::type_of(&module) {
                ValueType::String => ModuleSpec::Source(
                    guarded::string_value(&module).ok_or_else(|| module_refused(&name))?,
                ),
                ValueType::Object => {
                    let mut exports = Vec::new();
                    for (export, value) in entries(env, module, &format!("modules.{name}"))? {
                        let path = format!("modules.{name}.{export}");
                        if guarded::type_of(&value) == ValueType::Function {
                            module_tools.push((
                                bridged_name(&name, &export),
                                node_tool(env, &path, value)?,
                            ));
                            exports.push((export, ModuleExport::Function));
                        } else {
                            let copy = from_js(env, value, &path, resolved.max_value_bytes)
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
    if let Some(key) = named("snapshotKey")? {
        let bytes = match guarded::type_of(&key) {
            ValueType::String => guarded::string_value(&key).map(String::into_bytes),
            _ => guarded::bytes_of(env, &key),
        };
        match bytes {
            Some(bytes) if bytes.len() >= rules::MIN_SNAPSHOT_KEY_BYTES => {
                resolved.snapshot_key = Some(bytes.into());
            }
            _ => return Err(refused(rules::snapshot_key_invalid())),
        }
    }
    Ok(Resolved {
        options: resolved,
        module_tools,
        on_log,
        on_event,
        tracer,
        capture_tool_content: raw.capture_tool_content,
    })
}

/// A callback option's value (`None` when unset) as a reference; anything but a function is
/// refused with `refusal`.
fn callback<Args: JsValuesTupleIntoVec>(
    value: Option<Unknown>,
    refusal: fn() -> Diagnostic,
) -> std::result::Result<Option<FunctionRef<Args, Unknown<'static>>>, ExecutorError> {
    let refused = || ExecutorError::validation(&[refusal()]);
    match value {
        None => Ok(None),
        Some(value) if guarded::type_of(&value) == ValueType::Function => {
            let function: Function<Args, Unknown<'static>> =
                guarded::view(&value).map_err(|_| refused())?;
            Ok(Some(function.create_ref().map_err(|_| refused())?))
        }
        Some(_) => Err(refused()),
    }
}

/// `tracer`, which the JS entry uses (`lib/tracing.cjs`), checked here with every other option:
/// `null` (none) or an object with a `startSpan` function, read as other options are
/// (`guarded`).
fn check_tracer<'env>(
    env: &'env Env,
    tracer: Unknown<'env>,
) -> std::result::Result<Option<Tracer<'env>>, ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    match guarded::type_of(&tracer) {
        ValueType::Null => Ok(None),
        ValueType::Object => {
            let start_span = guarded::get(env, &tracer, "startSpan")
                .map_err(|thrown| refused(unreadable(env, "tracer.startSpan", &thrown)))?;
            if guarded::type_of(&start_span) == ValueType::Function {
                Ok(Some(Tracer { tracer, start_span }))
            } else {
                Err(refused(rules::not_a_tracer()))
            }
        }
        _ => Err(refused(rules::not_a_tracer())),
    }
}

/// What `run(code, options)` asks of the run's trace: `trace` and `onEvent`, read as the other
/// run options are (`guarded`). `options` has been checked to be an object or `undefined` (see
/// [`watch_signal`]).
pub fn run_tracing(
    env: &Env,
    options: Option<Unknown>,
) -> std::result::Result<(Option<bool>, Option<Listener>), ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    let Some(options) = options.filter(|options| guarded::type_of(options) == ValueType::Object)
    else {
        return Ok((None, None));
    };
    let named = |name: &str| match guarded::get(env, &options, name) {
        Ok(value) if guarded::type_of(&value) == ValueType::Undefined => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(thrown) => Err(refused(unreadable(
            env,
            &format!("options.{name}"),
            &thrown,
        ))),
    };
    let record = match named("trace")? {
        None => None,
        Some(value) => Some(
            guarded::boolean_value(&value).ok_or_else(|| refused(invalid("trace", "a boolean")))?,
        ),
    };
    let listener = callback(named("onEvent")?, rules::on_event_not_a_function)?;
    Ok((record, listener))
}

/// An `AbortSignal` listened to for the length of one run: its `removeEventListener` bound to
/// it (read once, as the run starts), and the listener to remove. Both are function references,
/// which napi-rs releases wherever they are dropped.
pub struct SignalWatch {
    remove: Option<FunctionRef<(), Unknown<'static>>>,
    listener: FunctionRef<(), ()>,
}

/// Ties `options.signal` (if any) to `abort`: aborts at once if the signal already is, else
/// listens for its `abort` event until [`SignalWatch::detach`]. Called before the run is
/// handed to the executor: options that cannot be read refuse the run, which then never
/// starts (and leaves the state as it was).
pub fn watch_signal(
    env: &Env,
    options: Option<Unknown>,
    abort: &RunAbort,
) -> std::result::Result<Option<SignalWatch>, ExecutorError> {
    let refused = |diagnostic| ExecutorError::validation(&[diagnostic]);
    let Some(options) = options else {
        return Ok(None);
    };
    match guarded::type_of(&options) {
        ValueType::Undefined | ValueType::Null => return Ok(None),
        ValueType::Object => {}
        _ => return Err(refused(rules::run_options_not_an_object())),
    }
    let signal = guarded::get(env, &options, "signal")
        .map_err(|thrown| refused(unreadable(env, "options.signal", &thrown)))?;
    if guarded::type_of(&signal) == ValueType::Undefined {
        return Ok(None);
    }
    if guarded::type_of(&signal) != ValueType::Object {
        return Err(refused(rules::not_an_abort_signal()));
    }
    let read = |key: &str| {
        guarded::get(env, &signal, key)
            .map_err(|thrown| refused(unreadable(env, &format!("options.signal.{key}"), &thrown)))
    };
    let aborted = read("aborted")?;
    // ToBoolean runs no code.
    if aborted.coerce_to_bool().unwrap_or(false) {
        abort.abort();
        return Ok(None);
    }
    let add = read("addEventListener")?;
    if guarded::type_of(&add) != ValueType::Function {
        return Err(refused(rules::not_an_abort_signal()));
    }
    let on_abort = abort.clone();
    let attached = (|| -> napi::Result<(Function<(), ()>, Unknown)> {
        let listener = env.create_function_from_closure::<(), (), _>("abortRun", move |_| {
            on_abort.abort();
            Ok(())
        })?;
        let event = env.create_string("abort")?.to_unknown();
        Ok((listener, event))
    })();
    guarded::clear(env);
    let (listener, event) = attached.map_err(|_| refused(rules::not_an_abort_signal()))?;
    guarded::call(env, &add, &signal, &[event.raw(), listener.raw()]).map_err(|thrown| {
        refused(unreadable(
            env,
            "options.signal.addEventListener(\"abort\")",
            &thrown,
        ))
    })?;
    // A signal whose removeEventListener cannot be read or bound keeps a listener that only
    // sets a flag of a finished run.
    let remove = guarded::get(env, &signal, "removeEventListener")
        .ok()
        .filter(|remove| guarded::type_of(remove) == ValueType::Function)
        .and_then(|remove| env_data::bind_method(env, &signal, &remove).ok())
        .and_then(|bound| {
            guarded::view::<Function<(), Unknown<'static>>>(&bound)
                .and_then(|bound| bound.create_ref())
                .ok()
        });
    let listener = listener.create_ref();
    guarded::clear(env);
    listener
        .map(|listener| Some(SignalWatch { remove, listener }))
        .map_err(|_| refused(rules::not_an_abort_signal()))
}

impl SignalWatch {
    /// Stops listening: a signal may outlive many runs, and must not collect their listeners.
    /// What `removeEventListener` throws is dropped.
    pub fn detach(self, env: &Env) {
        let Self { remove, listener } = self;
        if let (Some(remove), Ok(listener)) = (remove, listener.borrow_back(env)) {
            if let (Ok(remove), Ok(event)) = (remove.borrow_back(env), env.create_string("abort")) {
                let _ = guarded::call(
                    env,
                    &remove.to_unknown(),
                    &guarded::undefined(env),
                    &[event.raw(), listener.raw()],
                );
            }
        }
        guarded::clear(env);
    }
}

fn module_refused(name: &str) -> ExecutorError {
    ExecutorError::validation(&[rules::not_a_module(name)])
}
