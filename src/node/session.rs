//! Durable sessions at the napi boundary: `snapshot()`, `restore(bytes)` (which
//! `SESExecutor.restore(bytes, options)` calls on a new executor), `resume(answer)`, the
//! `paused` getter, and `pauseRun(reason)` with the check that recognises what it returns.
//! It converts and forwards; the executor decides.

use napi::bindgen_prelude::{FromNapiValue, PromiseRaw, TypeTag, Uint8Array, Unknown, ValueType};
use napi::{sys, Env, JsValue, Result};

use super::error::to_napi_error;
use super::executor::{CodeOutput, SesExecutor};
use super::guarded::{self, Thrown};
use super::host::failure_of;
use super::options::clone_refused;
use super::settle::settle;
use super::value::{from_js, Copied};
use crate::engine::host::ToolResult;
use crate::error::ExecutorError;
use crate::executor::ExecutorState;
use crate::session::{PausedCall, SnapshotError, SnapshotProblem};
use crate::value::{CloneError, Value};

/// What a tool returns (or its promise resolves to) to pause the run at its call: made by
/// `pauseRun(reason)`, which copies the reason at once.
#[napi]
pub struct PauseRequest {
    reason: Value,
}

#[napi]
impl PauseRequest {
    /// The reason given to `pauseRun` (a copy).
    #[napi(getter, ts_return_type = "unknown")]
    pub fn reason(&self) -> Copied {
        Copied(self.reason.clone())
    }
}

/// `pauseRun(reason)`: what a tool returns to pause the run at its call until the host calls
/// `executor.resume(answer)`; the run's `CodeOutput.paused` names the call and carries a copy of
/// `reason` (any value structured clone copies). Only a tool's answer pauses: thrown, it fails
/// the call; anywhere else it is an object like any other.
#[napi(ts_args_type = "reason?: unknown")]
pub fn pause_run(env: &Env, reason: Option<Unknown>) -> Result<PauseRequest> {
    let reason = match reason {
        Some(reason) => from_js(
            env,
            reason,
            "pauseRun(reason)",
            crate::options::DEFAULT_MAX_VALUE_BYTES,
        )
        .map_err(|error| to_napi_error(env, clone_refused(&error)))?,
        None => Value::Undefined,
    };
    Ok(PauseRequest { reason })
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

#[napi]
impl SesExecutor {
    /// The session as bytes (`READY` or `PAUSED`; signed with `snapshotKey` when the executor
    /// has one): what `SESExecutor.restore(bytes, options)` takes back, in this process or
    /// another running the same package version. Rejects with `ERR_INVALID_STATE` while a run is
    /// in flight, after a timeout (`DIRTY`), or when the session cannot be written.
    #[napi(ts_return_type = "Promise<Uint8Array>")]
    pub fn snapshot<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Uint8Array>> {
        settle(env, &self.node, self.executor.snapshot(), |_, bytes| {
            Ok(Uint8Array::new(bytes))
        })
    }

    /// Takes the session of a snapshot (`NEW` → `READY`, or `PAUSED` for a session paused in a
    /// run): what `SESExecutor.restore(bytes, options)` does after making the executor. The
    /// snapshot is checked and replayed under this executor's options and limits; the host then
    /// sends its tools again. Rejects with `ERR_SNAPSHOT_INVALID` (`details.reason`).
    #[napi(
        ts_args_type = "snapshot: Uint8Array",
        ts_return_type = "Promise<void>"
    )]
    pub fn restore<'env>(&self, env: &'env Env, snapshot: Unknown) -> Result<PromiseRaw<'env, ()>> {
        let bytes = snapshot_bytes(env, &snapshot);
        let restored = bytes.map(|bytes| self.executor.restore(bytes));
        settle(
            env,
            &self.node,
            async move {
                match restored {
                    Ok(restoring) => restoring.await.finish(),
                    Err(error) => Err(error),
                }
            },
            |_, ()| Ok(()),
        )
    }

    /// Continues the paused run from the call it paused at, which returns `answer` to the code
    /// (`{ error }` — an object with that one key — makes the call throw `error` instead);
    /// resolves to that run's `CodeOutput`, or rejects as `run()` would. `PAUSED` only.
    #[napi(
        ts_args_type = "answer?: unknown",
        ts_return_type = "Promise<CodeOutput>"
    )]
    pub fn resume<'env>(
        &self,
        env: &'env Env,
        answer: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, CodeOutput>> {
        // The state decides first: only a paused run has a call to answer.
        let state = self.executor.state();
        let answer = if state == ExecutorState::Paused {
            resume_answer(env, answer, self.max_value_bytes)
        } else {
            Err(ExecutorError::invalid_state(state, "resume"))
        };
        let resumed = answer.map(|answer| self.executor.resume(answer));
        settle(
            env,
            &self.node,
            async move {
                match resumed {
                    Ok(resuming) => resuming.await.finish(),
                    Err(error) => Err(error),
                }
            },
            |_, output| Ok(output.into()),
        )
    }

    /// The call the run paused at while the executor is `PAUSED` (`{ tool, args, line, reason
    /// }`, as `CodeOutput.paused` gave it), else `undefined`.
    #[napi(getter, ts_return_type = "PausedCall | undefined")]
    pub fn paused(&self) -> Copied {
        paused_output(self.executor.paused()).unwrap_or(Copied(Value::Undefined))
    }
}

/// A snapshot's bytes: a `Uint8Array` (a `Buffer` is one).
pub(super) fn snapshot_bytes(
    env: &Env,
    snapshot: &Unknown,
) -> std::result::Result<Vec<u8>, ExecutorError> {
    let refused = || {
        ExecutorError::snapshot_invalid(&SnapshotError::new(
            SnapshotProblem::Malformed,
            "a snapshot is the Uint8Array that snapshot() resolved to",
        ))
    };
    if guarded::type_of(snapshot) != ValueType::Object {
        return Err(refused());
    }
    // SAFETY: on Node's thread with a live value; napi-rs checks that it is a Uint8Array and
    // fails otherwise.
    match unsafe { Uint8Array::from_napi_value(env.raw(), snapshot.raw()) } {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(_) => {
            guarded::clear(env);
            Err(refused())
        }
    }
}

/// What `resume(answer)` gives the paused call: `answer` copied, or the failure of `{ error }`.
fn resume_answer(
    env: &Env,
    answer: Option<Unknown>,
    max_value_bytes: u64,
) -> std::result::Result<ToolResult, ExecutorError> {
    let Some(answer) = answer else {
        return Ok(Ok(Value::Undefined));
    };
    if pause_reason(env, &answer).is_some() {
        // A tool returns pauseRun() to pause; the answer to a paused call is a value.
        return Err(clone_refused(&CloneError::at(
            "resume(answer)",
            &[],
            "a pauseRun() request".into(),
        )));
    }
    if let Some(error) = only_error(env, &answer) {
        return Ok(Err(failure_of(env, &Thrown::Value(error))));
    }
    from_js(env, answer, "resume(answer)", max_value_bytes)
        .map(Ok)
        .map_err(|error| clone_refused(&error))
}

/// The `error` of an answer that is an object with that one own key.
fn only_error<'env>(env: &'env Env, answer: &Unknown<'env>) -> Option<Unknown<'env>> {
    if guarded::type_of(answer) != ValueType::Object || guarded::is_array(answer) {
        return None;
    }
    let (keys, count) = guarded::own_keys(env, answer).ok()?;
    let only = guarded::get_element(env, &keys, 0).ok()?;
    if count != 1 || guarded::string_value(&only).as_deref() != Some("error") {
        return None;
    }
    guarded::get(env, answer, "error").ok()
}
