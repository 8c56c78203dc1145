//! The Node.js boundary (napi): converts arguments and results and forwards to the executor.
//! Nothing here decides behaviour.
//!
//! Spec: §3.2 (API contract), §8.1 (errors as JS objects).

mod dispose;
mod error;
mod executor;
mod host;
mod log_stream;
mod options;
mod pool;
mod program;
mod prompt;
mod queue;
mod settle;
mod teardown;
mod trace;
mod value;

use napi::bindgen_prelude::JsObjectValue;
use napi::bindgen_prelude::{Object, Unknown};
use napi::{Env, Result};

/// Module initialisation: defines and exports the `ExecutorError` class for this environment,
/// exports the prompt templates, makes executors disposable, and watches for the environment's
/// teardown.
#[napi(module_exports)]
pub fn init(mut exports: Object, env: Env) -> Result<()> {
    teardown::watch(&env)?;
    let class = error::define_class(&env)?;
    exports.set_named_property("ExecutorError", class)?;
    prompt::export_templates(&env, &mut exports)?;
    let executor: Unknown = exports.get_named_property("SESExecutor")?;
    dispose::install(&env, executor)
}
