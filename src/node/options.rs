//! `ExecutorOptions` as JS passes it: read property by property, so that a wrong type is
//! reported as a structured `ERR_VALIDATION_FAILED` naming the option instead of napi's generic
//! conversion error, and numbers reach the option rules exactly as given (`NaN`, `-1`, `1.5`).

use napi::bindgen_prelude::JsObjectValue;
use std::collections::HashMap;

use napi::bindgen_prelude::{Array, FromNapiValue, Object, Unknown, ValueType};
use napi::{Env, JsValue};

use crate::diagnostic::Diagnostic;
use crate::options::RawOptions;

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
    /// Stack limit of the executor's QuickJS runtime in bytes (default 1 MiB).
    pub max_stack_bytes: Option<f64>,
    /// The largest width or height of a sandbox canvas in pixels (default 8192, at most 32768);
    /// `getCanvas` and `new OffscreenCanvas` throw a `RangeError` above it. Pixels also count
    /// against `memoryLimitBytes`.
    pub max_canvas_size: Option<f64>,
    /// Modules `await import(name)` can load, for names in `authorizedImports`: ES module source
    /// text (run inside the sandbox, under the same guards), or an object whose functions become
    /// exports that call the host like tools and whose other values are copied.
    #[napi(ts_type = "Record<string, string | Record<string, unknown>>")]
    pub modules: Option<HashMap<String, String>>,
    /// Called with each log entry while the run goes on (§10.2), in call order and before the
    /// run's promise settles; what it throws is ignored.
    #[napi(ts_type = "(entry: LogEntry) => void")]
    pub on_log: Option<String>,
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

fn invalid(name: &str, expected: &str) -> Diagnostic {
    Diagnostic::error("options_valid", format!("{name} must be {expected}")).with_fix(format!(
        "Pass {name} as {expected}, or leave it out for the default."
    ))
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
