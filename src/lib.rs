//! `@smolagents-ts/ses-executor`: a sandboxed JavaScript executor for smolagents-ts agents.
//!
//! Layers (DESIGN.md "Shape of the code"): `napi` converts and forwards; `executor` owns the
//! lifecycle (§4); `engine` owns the QuickJS thread; `program` validates and rewrites code with
//! oxc. `error`, `diagnostic`, `options` and `value` are shared by all of them.

pub mod diagnostic;
pub mod error;
pub mod executor;
pub mod options;
pub mod engine;
pub mod program;
pub mod value;
mod node;

#[macro_use]
extern crate napi_derive;
