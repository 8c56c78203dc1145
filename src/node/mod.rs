//! The Node.js boundary (napi): converts arguments and results and forwards to the executor.
//! Nothing here decides behaviour.

mod error;
mod executor;
mod host;
mod options;
mod program;
mod settle;
mod value;

use napi::bindgen_prelude::JsObjectValue;
use napi::bindgen_prelude::Object;
use napi::{Env, Result};

/// Module initialisation: defines and exports the `ExecutorError` class for this environment.
#[napi(module_exports)]
pub fn init(mut exports: Object, env: Env) -> Result<()> {
    let class = error::define_class(&env)?;
    exports.set_named_property("ExecutorError", class)
}
