//! `await using executor = await SESExecutor.create()`: explicit resource management.
//!
//! napi cannot name a method by a symbol, so `[Symbol.asyncDispose]` is a few lines of JS
//! installed on the class's prototype once per Node environment. Disposal is `cleanup()` made
//! total: a `NEW` executor has nothing to release, and a `DEAD` one was already released.
//!
//! Spec: §4.3.5 (`cleanup()`).

use napi::bindgen_prelude::{Function, Unknown};
use napi::{Env, Result};

const INSTALL_SOURCE: &str = r#"(function (SESExecutor) {
  if (typeof Symbol.asyncDispose !== "symbol") return;
  Object.defineProperty(SESExecutor.prototype, Symbol.asyncDispose, {
    value: function asyncDispose() {
      return this.state === "NEW" ? Promise.resolve() : this.cleanup();
    },
    writable: true, configurable: true, enumerable: false,
  });
})"#;

/// Installs `[Symbol.asyncDispose]` on `class`'s prototype.
pub fn install(env: &Env, class: Unknown) -> Result<()> {
    let install: Function<Unknown, ()> = env.run_script(INSTALL_SOURCE)?;
    install.call(class)
}
