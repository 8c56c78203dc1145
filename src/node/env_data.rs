//! What the addon keeps per Node environment (the main thread and each worker thread get their
//! own; napi has one instance-data slot per addon and environment): the `ExecutorError` class,
//! the `SESExecutor` class (to tell `new SESExecutor()` from a plain call), the JS helpers
//! that look at hostile host values without ever throwing, the ones that build run results, and
//! the executors' one threadsafe function with their tool dispatchers (`queue.rs`).
//!
//! The helpers are a few lines of JS compiled once, when the addon is loaded: JS's own
//! `try`/`catch` is what can look at a value whose every property, trap and conversion may
//! throw, and it takes the built-ins they use (`String`, `JSON.stringify`,
//! `Promise.prototype.then`) as they were then, as Node's primordials do.
//!
//! Run results (`CodeOutput`, its `stats`, `LogEntry`s) are object literals of those helpers
//! rather than objects whose properties napi defines one by one: V8 makes every such literal with
//! the same hidden class from a boilerplate, where `napi_define_properties` internalizes each
//! name and takes the generic define path per property (bench/README.md, "Run results as object
//! literals").
//!
//! Spec: §7.4 (tool failures), §8.1 (errors as JS objects), §3.1 (`CodeOutput`, `LogEntry`).

use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, JsObjectValue, Unknown, ValueType};
use napi::{sys, Env, JsValue, Result};
use serde_json::Value as Json;

use super::guarded::{self, Thrown};
use super::queue::{Dispatchers, EnvQueue};
use super::watcher::Watcher;

/// The helpers: `describe(value, isError)` gives `[name, message]` for any thrown value;
/// `handle(promise)` marks a promise's rejection as handled. Neither ever throws.
/// `bindMethod(object, method)` is `method` called on `object` with the arguments it is given.
/// `json(value)` is `JSON.stringify(value)` (a BigInt as `12n`), or `undefined` when that throws
/// or gives nothing.
/// `codeOutput(...)` and `logEntry(level, message, ts)` build run results (see the module
/// docs); the order of their properties is the order `index.d.ts` documents.
const HELPERS_SOURCE: &str = r#"(() => {
  "use strict";
  const toText = String;
  const stringify = JSON.stringify;
  const then = Promise.prototype.then;
  const call = Function.prototype.call.bind(Function.prototype.call);
  const ignore = () => {};
  const NO_TEXT = "a value that has no string form";
  const UNREADABLE = {};
  // value[key]; UNREADABLE when reading it threw.
  const read = (value, key) => {
    try { return value[key]; } catch { return UNREADABLE; }
  };
  const text = (value) => {
    try { return toText(value); } catch { return undefined; }
  };
  const json = (value) => {
    try {
      const shown = stringify(value, (_key, part) => typeof part === "bigint" ? `${part}n` : part);
      return typeof shown === "string" ? shown : undefined;
    } catch {
      return undefined;
    }
  };
  const describe = (value, isError) => {
    try {
      switch (typeof value) {
        case "string": return ["Error", value];
        case "bigint": return ["Error", `${toText(value)}n`];
        case "object": case "function": break;
        default: return ["Error", toText(value)];
      }
      if (value === null) return ["Error", "null"];
      if (isError) {
        const name = read(value, "name");
        const message = read(value, "message");
        return [
          typeof name === "string" && name !== "" ? name : "Error",
          message === UNREADABLE ? "(reading its message threw)"
            : message === undefined || message === null ? ""
            : typeof message === "string" ? message
            : typeof message === "object" || typeof message === "function"
              ? (text(message) ?? NO_TEXT)
              : toText(message),
        ];
      }
      const shown = text(value);
      if (shown !== undefined && !shown.startsWith("[object ")) return ["Error", shown];
      const data = json(value);
      if (data !== undefined && data !== "{}") return ["Error", data];
      return ["Error", shown === undefined ? NO_TEXT : shown];
    } catch {
      return ["Error", NO_TEXT];
    }
  };
  const handle = (promise) => {
    try { call(then, promise, undefined, ignore); } catch {}
  };
  const codeOutput = (output, logs, isFinalAnswer, logEntries, diagnostics, images, trace,
      wallTimeMs, cpuTimeMs, toolTimeMs, toolCalls, operations, peakHeapBytes,
      timersCancelled, paused) => {
    const stats = timersCancelled === undefined
      ? { wallTimeMs, cpuTimeMs, toolTimeMs, toolCalls, operations, peakHeapBytes }
      : { wallTimeMs, cpuTimeMs, toolTimeMs, toolCalls, operations, peakHeapBytes,
          timersCancelled };
    const result = {
      output,
      logs,
      is_final_answer: isFinalAnswer,
      logEntries: logEntries ?? [],
      stats,
      diagnostics: diagnostics ?? [],
      images: images ?? [],
    };
    // A spread defines its properties: never an assignment, which would run a setter on
    // Object.prototype.
    const traced = trace === undefined ? result : { ...result, trace };
    return paused === undefined ? traced : { ...traced, paused };
  };
  const logEntry = (level, message, ts) => ({ level, message, ts });
  const apply = Reflect.apply;
  const bindMethod = (object, method) => (...args) => apply(method, object, args);
  return [describe, handle, codeOutput, logEntry, bindMethod, json];
})()"#;

/// `new ExecutorError(message, fields)`.
pub type ErrorClass = FunctionRef<FnArgs<(String, Json)>, ()>;

/// What the addon keeps per environment.
pub struct EnvData {
    pub executor_error: ErrorClass,
    /// `SESExecutor`, once the module's exports exist.
    pub executor_class: Option<FunctionRef<(), ()>>,
    describe: FunctionRef<FnArgs<(Unknown<'static>, bool)>, Unknown<'static>>,
    handle: FunctionRef<Unknown<'static>, Unknown<'static>>,
    code_output: BuilderRef,
    log_entry: BuilderRef,
    bind_method: FunctionRef<(), Unknown<'static>>,
    json: FunctionRef<(), Unknown<'static>>,
    /// What the threadsafe function nominally calls (see `queue.rs`).
    tool_bridge: FunctionRef<(), ()>,
    /// The executors' threadsafe function, made with the first executor.
    queue: Option<Arc<EnvQueue>>,
    /// Where the threadsafe function hands each executor's tool calls.
    pub dispatchers: Dispatchers,
    /// The watcher of the promises tools return, made at the first one.
    watcher: Option<Rc<Watcher>>,
}

/// A result builder of the helpers, called with raw arguments (see [`build`]).
type BuilderRef = FunctionRef<(), Unknown<'static>>;

/// The result builders of the helpers.
#[derive(Clone, Copy)]
pub enum Builder {
    /// `codeOutput(output, logs, isFinalAnswer, logEntries, diagnostics, images, trace,
    /// wallTimeMs, cpuTimeMs, toolTimeMs, toolCalls, operations, peakHeapBytes, timersCancelled,
    /// paused)`, where an `undefined` array is an empty one and an `undefined` `trace`,
    /// `timersCancelled` or `paused` is left out.
    CodeOutput,
    /// `logEntry(level, message, ts)`.
    LogEntry,
}

/// Compiles the helpers and keeps them, with the `ExecutorError` class, for `env`.
pub fn install(env: &Env, executor_error: ErrorClass) -> Result<()> {
    let helpers: Unknown = env.run_script(HELPERS_SOURCE)?;
    let helpers = helpers.coerce_to_object()?;
    let describe: Function<FnArgs<(Unknown<'static>, bool)>, Unknown<'static>> =
        helpers.get_element(0)?;
    let handle: Function<Unknown<'static>, Unknown<'static>> = helpers.get_element(1)?;
    let code_output: Function<(), Unknown<'static>> = helpers.get_element(2)?;
    let log_entry: Function<(), Unknown<'static>> = helpers.get_element(3)?;
    let bind_method: Function<(), Unknown<'static>> = helpers.get_element(4)?;
    let json: Function<(), Unknown<'static>> = helpers.get_element(5)?;
    let tool_bridge: Function<(), ()> = env.create_function("toolBridge", noop)?;
    env.set_instance_data(
        EnvData {
            executor_error,
            executor_class: None,
            describe: describe.create_ref()?,
            handle: handle.create_ref()?,
            code_output: code_output.create_ref()?,
            log_entry: log_entry.create_ref()?,
            bind_method: bind_method.create_ref()?,
            json: json.create_ref()?,
            tool_bridge: tool_bridge.create_ref()?,
            queue: None,
            dispatchers: Dispatchers::default(),
            watcher: None,
        },
        (),
        |_| {},
    )
}

/// The function the threadsafe function nominally calls: native, so that creating it compiles no
/// script, and doing nothing, since the work happens in its callback.
unsafe extern "C" fn noop(_env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    std::ptr::null_mut()
}

impl EnvData {
    /// The executors' threadsafe function, made on first use.
    pub fn queue(&mut self, env: &Env) -> Result<Arc<EnvQueue>> {
        if let Some(queue) = &self.queue {
            return Ok(Arc::clone(queue));
        }
        let bridge = self.tool_bridge.borrow_back(env)?;
        let queue = Arc::new(EnvQueue::new(bridge, Rc::clone(&self.dispatchers))?);
        self.queue = Some(Arc::clone(&queue));
        Ok(queue)
    }

    /// The watcher of the promises tools return, made on first use.
    pub fn watcher(&mut self, env: &Env) -> Result<Rc<Watcher>> {
        if let Some(watcher) = &self.watcher {
            return Ok(Rc::clone(watcher));
        }
        let watcher = Rc::new(Watcher::new(env)?);
        self.watcher = Some(Rc::clone(&watcher));
        Ok(watcher)
    }
}

/// The environment's data (set when the addon was loaded in it).
pub fn get(env: &Env) -> Option<&'static mut EnvData> {
    env.get_instance_data::<EnvData>().ok().flatten()
}

/// [`get`], for a caller that cannot go on without it.
pub fn require(env: &Env) -> Result<&'static mut EnvData> {
    get(env).ok_or_else(|| napi::Error::from_reason("the addon's environment data is missing"))
}

impl<'env> Thrown<'env> {
    /// The thrown value's `name` and message, as a tool failure carries them: an error's own
    /// `name` and `message`, a primitive's string form, another object's `String()` (or its
    /// JSON when that says only `[object Object]`). Never fails, never leaves an exception.
    pub fn name_and_message(&self, env: &Env) -> (String, String) {
        match self {
            Thrown::Value(value) => {
                let (name, message) = describe_thrown(env, *value);
                // An error named "" would read ": message": it is an Error like any other.
                let name = if name.is_empty() {
                    "Error".into()
                } else {
                    name
                };
                (name, message)
            }
            Thrown::Failed(reason) => ("Error".into(), reason.clone()),
        }
    }

    /// One line, as Node prints an uncaught exception: `Name: message`, or the message alone
    /// for a value that is no error.
    pub fn describe(&self, env: &Env) -> String {
        let (name, message) = self.name_and_message(env);
        let is_error = matches!(self, Thrown::Value(value) if guarded::is_error(value));
        match (name.as_str(), message.is_empty()) {
            (_, true) => name,
            ("Error", false) if !is_error => message,
            _ => format!("{name}: {message}"),
        }
    }
}

/// `[name, message]` of any thrown value (see [`Thrown::name_and_message`]).
pub fn describe_thrown(env: &Env, value: Unknown) -> (String, String) {
    let described = get(env)
        .and_then(|data| data.describe.borrow_back(env).ok())
        .and_then(|describe| {
            let is_error = guarded::boolean(env, guarded::is_error(&value))?;
            let pair = guarded::call(
                env,
                &describe.to_unknown(),
                &guarded::undefined(env),
                &[value.raw(), is_error.raw()],
            )
            .ok()?;
            let part = |index| {
                guarded::get_element(env, &pair, index)
                    .ok()
                    .and_then(|part| guarded::string_value(&part))
            };
            Some((part(0)?, part(1)?))
        });
    guarded::clear(env);
    described.unwrap_or_else(|| ("Error".into(), "a value that has no string form".into()))
}

/// A result object made by the environment's `builder` from `args` (raw values of the current
/// scope). The builders are object literals and cannot throw but for lack of memory, which
/// napi reports as the failure.
pub fn build(env: &Env, builder: Builder, args: &[sys::napi_value]) -> Result<sys::napi_value> {
    let data = get(env).ok_or_else(|| {
        napi::Error::new(
            napi::Status::GenericFailure,
            "the addon was not initialised in this environment",
        )
    })?;
    let function = match builder {
        Builder::CodeOutput => &data.code_output,
        Builder::LogEntry => &data.log_entry,
    }
    .borrow_back(env)?;
    guarded::call(env, &function.to_unknown(), &guarded::undefined(env), args)
        .map(|built| built.raw())
        .map_err(|thrown| {
            let reason = thrown.describe(env);
            napi::Error::new(napi::Status::GenericFailure, reason)
        })
}

/// `method` bound to `object` (see `bindMethod` in the helpers): a function, which the caller
/// keeps by a `FunctionRef` where it would otherwise keep the object and the method apart.
pub fn bind_method<'env>(
    env: &'env Env,
    object: &Unknown,
    method: &Unknown,
) -> Result<Unknown<'env>> {
    let bind = require(env)?.bind_method.borrow_back(env)?;
    let bound = guarded::call(
        env,
        &bind.to_unknown(),
        &guarded::undefined(env),
        &[object.raw(), method.raw()],
    );
    guarded::clear(env);
    bound.map_err(|thrown| napi::Error::from_reason(thrown.describe(env)))
}

/// `JSON.stringify(value)` of any host value, `None` when it has no JSON text or making it threw
/// (what it threw is cleared).
pub fn json_text(env: &Env, value: &Unknown) -> Option<String> {
    let json = get(env)?.json.borrow_back(env).ok()?;
    let text = guarded::call(
        env,
        &json.to_unknown(),
        &guarded::undefined(env),
        &[value.raw()],
    );
    guarded::clear(env);
    text.ok().and_then(|text| guarded::string_value(&text))
}

/// Marks `promise`'s rejection as handled (for promises the addon gets and drops, such as what
/// an async `onLog` returns), so that Node never reports it as unhandled.
pub fn handle_rejection(env: &Env, promise: &Unknown) {
    if let Some(data) = get(env) {
        if let Ok(handle) = data.handle.borrow_back(env) {
            let _ = guarded::call(
                env,
                &handle.to_unknown(),
                &guarded::undefined(env),
                &[promise.raw()],
            );
        }
    }
    guarded::clear(env);
}

/// Whether `this` is an object made by `new SESExecutor()` (or a subclass): `this instanceof
/// SESExecutor`. A throw (from a Proxy's `getPrototypeOf` trap) counts as no, and is cleared.
pub fn constructed(env: &Env, this: &Unknown) -> bool {
    let Some(class) = get(env)
        .and_then(|data| data.executor_class.as_ref())
        .and_then(|class| class.borrow_back(env).ok())
    else {
        return false;
    };
    if guarded::type_of(this) != ValueType::Object {
        return false;
    }
    let mut result = false;
    // SAFETY: live values of this environment's current scope.
    let status =
        unsafe { napi::sys::napi_instanceof(env.raw(), this.raw(), class.raw(), &mut result) };
    guarded::clear(env);
    status == napi::sys::Status::napi_ok && result
}
