//! The JS `ExecutorError` class (§3.1, §8.1) and the conversion of [`ExecutorError`] into it.
//!
//! napi cannot declare a class that extends `Error`, and the spec requires
//! `error instanceof Error`; so the class is a few lines of JS evaluated once per module instance
//! (per Node environment: the main thread and each worker thread get their own), kept in the
//! environment's instance data and exported.

use napi::bindgen_prelude::{FnArgs, Function, JsObjectValue, Unknown};
use napi::{Env, Error, JsValue, Result};
use serde_json::{json, Value as Json};

use super::env_data;
use crate::error::ExecutorError;
/// The class: fields set as own properties, `name` on the prototype as for built-in errors.
const CLASS_SOURCE: &str = r#"(() => {
  class ExecutorError extends Error {
    constructor(message, fields = {}) {
      super(message);
      const { code, severity, retryable, details, logs } = fields;
      this.code = code;
      this.severity = severity;
      this.retryable = retryable;
      this.details = details;
      if (logs !== undefined) this.logs = logs;
    }
  }
  Object.defineProperty(ExecutorError.prototype, "name", {
    value: "ExecutorError", writable: true, configurable: true, enumerable: false,
  });
  return ExecutorError;
})()"#;

/// `new ExecutorError(message, fields)`.
type Constructor<'env> = Function<'env, FnArgs<(String, Json)>, ()>;

/// Defines the class in `env`, keeps it in the environment's data (with the helpers of
/// `env_data`) and returns it for export.
pub fn define_class(env: &Env) -> Result<Constructor<'_>> {
    let class: Constructor = env.run_script(CLASS_SOURCE)?;
    env_data::install(env, class.create_ref()?)?;
    Ok(class)
}

/// Builds the JS `ExecutorError` for `error`, as a `napi::Error` that carries the object itself:
/// napi throws or rejects with exactly that object.
pub fn to_napi_error(env: &Env, error: ExecutorError) -> Error {
    match build(env, &error) {
        Ok(object) => Error::from(object),
        // Building the object failed (the environment is shutting down): fall back to a plain
        // Error with the same message.
        Err(_) => Error::from_reason(error.message),
    }
}

fn build<'env>(env: &'env Env, error: &ExecutorError) -> Result<Unknown<'env>> {
    let data = env_data::get(env)
        .ok_or_else(|| Error::from_reason("ExecutorError class is not defined"))?;
    let class = data.executor_error.borrow_back(env)?;
    let mut fields = json!({
        "code": error.code.as_str(),
        "severity": error.code.severity().as_str(),
        "retryable": error.retryable,
        "details": Json::Object(error.details.clone()),
    });
    if let Some(logs) = &error.logs {
        fields["logs"] = json!(logs);
    }
    let instance = class.new_instance((error.message.clone(), fields).into())?;
    if let Some(trace) = &error.trace {
        // Defined, not assigned: a setter on the prototype chain cannot take it.
        let mut object = instance.coerce_to_object()?;
        let trace = super::trace_events::trace_array(env, trace)?;
        object.define_properties(&[napi::Property::new()
            .with_utf8_name("trace")?
            .with_value(&trace)])?;
    }
    Ok(instance.to_unknown())
}
