//! `@smolagents-ts/ses-executor`: a sandboxed JavaScript executor for smolagents-ts agents.
//!
//! Layers (docs/contract.md "Shape of the code"): `node` converts and forwards at the napi
//! boundary; `executor` owns the lifecycle (§4) and maps failures to the spec's codes; `engine`
//! owns the QuickJS thread; `program` validates and rewrites code with oxc. `error`, `diagnostic`,
//! `options` and `value` are shared by all of them.

pub mod canvas;
pub mod diagnostic;
pub mod engine;
pub mod error;
pub mod executor;
pub mod memory;
pub mod modules;
pub mod options;
pub mod program;
pub mod prompt;
pub mod scheduler;
pub mod session;
pub mod tool_args;
pub mod tools;
pub mod trace;
pub mod value;

#[cfg(test)]
mod architecture;

// The napi layer is exercised from JS (`__test__/`); unit tests build without it.
#[cfg(not(test))]
mod node;

#[cfg(not(test))]
#[macro_use]
extern crate napi_derive;
