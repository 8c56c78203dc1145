//! `pauseRun(reason)` at the napi boundary: the object it makes, the check that recognises it
//! among a tool's results, and a paused call as JS sees it (`CodeOutput.paused`,
//! `executor.paused`). `SESExecutor`'s session methods are in `executor.rs`.

use napi::bindgen_prelude::{TypeTag, Unknown, ValueType};
use napi::{sys, Env, JsValue};

use super::guarded;
use super::value::Copied;
use crate::session::PausedCall;
use crate::value::Value;

/// What a tool returns (or its promise resolves to) to pause the run at its call: made by
/// `pauseRun(reason)`, which copies the reason at once.
#[napi]
pub struct PauseRequest {
    reason: Value,
}

impl PauseRequest {
    /// A request to pause with a copy of the reason.
    pub fn new(reason: Value) -> Self {
        Self { reason }
    }
}

#[napi]
impl PauseRequest {
    /// The reason given to `pauseRun` (a copy).
    #[napi(getter, ts_return_type = "unknown")]
    pub fn reason(&self) -> Copied {
        Copied(self.reason.clone())
    }
}

/// The reason of `value` when it is what `pauseRun()` made. Recognised by its napi type tag,
/// which no JS code can forge or fake with a prototype, and read without running any JS (a
/// Proxy is no object with a tag).
pub fn pause_reason(env: &Env, value: &Unknown) -> Option<Value> {
    if guarded::type_of(value) != ValueType::Object {
        return None;
    }
    let tag = <PauseRequest as TypeTag>::type_tag();
    let mut tagged = false;
    // SAFETY: on Node's thread with a live value of this environment; the call only compares
    // the object's tag.
    let status =
        unsafe { sys::napi_check_object_type_tag(env.raw(), value.raw(), &tag, &mut tagged) };
    if status != sys::Status::napi_ok || !tagged {
        guarded::clear(env);
        return None;
    }
    let mut wrapped = std::ptr::null_mut();
    // SAFETY: the tag says napi-rs wrapped a `PauseRequest` in this object (only its own class
    // code tags objects so), which stays alive while `value` does; it is only read.
    let status = unsafe { sys::napi_unwrap(env.raw(), value.raw(), &mut wrapped) };
    if status != sys::Status::napi_ok || wrapped.is_null() {
        guarded::clear(env);
        return None;
    }
    // SAFETY: as above: the pointer is the wrapped `PauseRequest`.
    let request = unsafe { &*wrapped.cast::<PauseRequest>() };
    Some(request.reason.clone())
}

/// A paused call as JS sees it: `{ tool, args, line, reason }` (`line` absent when unknown).
fn paused_call(call: PausedCall) -> Value {
    let mut fields = vec![
        ("tool".to_owned(), Value::String(call.tool)),
        (
            "args".to_owned(),
            Value::Array(call.args.into_iter().map(Some).collect()),
        ),
    ];
    if let Some(line) = call.line {
        fields.push(("line".to_owned(), Value::Number(f64::from(line))));
    }
    fields.push(("reason".to_owned(), call.reason));
    Value::Object(fields)
}

/// `CodeOutput.paused` of a run that paused.
pub fn paused_output(call: Option<PausedCall>) -> Option<Copied> {
    call.map(|call| Copied(paused_call(call)))
}
