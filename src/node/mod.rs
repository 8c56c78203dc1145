//! The Node.js boundary (napi): converts arguments and results and forwards to the executor.
//! Nothing here decides behaviour.
//!
//! Spec: §3.2 (API contract), §8.1 (errors as JS objects).

mod arguments;
mod dispose;
mod env_data;
mod error;
mod executor;
mod guarded;
mod host;
mod log_stream;
mod options;
mod pool;
mod program;
mod prompt;
mod queue;
mod session;
mod settle;
mod teardown;
mod trace_events;
mod value;
mod watcher;

use napi::bindgen_prelude::JsObjectValue;
use napi::bindgen_prelude::{Function, Object};
use napi::{Env, JsValue, Result};

/// Module initialisation: defines and exports the `ExecutorError` class for this environment
/// (keeping it, the `SESExecutor` class and the helpers of `env_data` for the environment),
/// exports the prompt templates, makes executors disposable, and watches for the environment's
/// teardown.
#[napi(module_exports)]
pub fn init(mut exports: Object, env: Env) -> Result<()> {
    teardown::watch(&env)?;
    let class = error::define_class(&env)?;
    exports.set_named_property("ExecutorError", class)?;
    prompt::export_templates(&env, &mut exports)?;
    let executor: Function<(), ()> = exports.get_named_property("SESExecutor")?;
    if let Some(data) = env_data::get(&env) {
        data.executor_class = Some(executor.create_ref()?);
    }
    dispose::install(&env, executor.to_unknown())
}
