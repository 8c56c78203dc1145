//! The one way the addon touches what host code hands it (§7.4 tools and their results,
//! `onLog`, options, variables, tool records, `AbortSignal`s): every operation that can run host
//! code — a getter, a Proxy trap, `toString`, the host function itself — gives its value or the
//! value it threw, caught and cleared here, never left pending on Node's thread. A pending
//! exception would be raised by Node when our callback returns (an `uncaughtException`, or the
//! rejection of a promise no one handles) and makes every later napi call of the callback fail.
//!
//! napi-rs's own calls are not used for these reads: most of them leave the exception pending
//! on failure (`check_status!`), and the ones that clear it build their error by converting the
//! thrown value with `String()` — more host code, which may throw again — and lose a thrown
//! primitive (`throw 5n`). A thrown value is described only by `Thrown::describe`
//! (`env_data.rs`), which cannot throw.
//!
//! Spec: §7.4 (a tool's failure is `ERR_TOOL_PROXY_FAIL`, nothing else), §8.1.

use std::ptr;

use napi::bindgen_prelude::{
    Array, FromNapiValue, Function, JsValuesTupleIntoVec, Object, Uint8Array, Unknown, ValueType,
};
use napi::{sys, Env, JsValue};

/// What host code threw (the exception already cleared), or why a napi call failed without
/// throwing. `env_data` says what it was (`Thrown::describe`), by means that cannot throw.
pub enum Thrown<'env> {
    Value(Unknown<'env>),
    Failed(String),
}

/// The outcome of an operation that may run host code.
pub type Guarded<'env, T> = Result<T, Thrown<'env>>;

/// `Ok` for `napi_ok`; otherwise what the call threw, cleared.
fn check<'env>(env: &'env Env, status: sys::napi_status) -> Guarded<'env, ()> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    Err(take_exception(env).map_or_else(
        || Thrown::Failed(format!("napi status {status}")),
        Thrown::Value,
    ))
}

/// Clears the pending exception, if any, and hands it back.
pub fn take_exception(env: &Env) -> Option<Unknown<'_>> {
    let mut pending = false;
    let mut exception = ptr::null_mut();
    // SAFETY: `env` is the live env of the current call; the calls only inspect and clear its
    // exception slot, and the exception handed back is a handle in the current scope.
    unsafe {
        if sys::napi_is_exception_pending(env.raw(), &mut pending) != sys::Status::napi_ok
            || !pending
            || sys::napi_get_and_clear_last_exception(env.raw(), &mut exception)
                != sys::Status::napi_ok
        {
            return None;
        }
        Some(Unknown::from_raw_unchecked(env.raw(), exception))
    }
}

/// A value napi made for `env`.
fn unknown(env: &Env, raw: sys::napi_value) -> Unknown<'_> {
    // SAFETY: `raw` was just produced by napi for this environment, in the current scope.
    unsafe { Unknown::from_raw_unchecked(env.raw(), raw) }
}

/// `object[name]`: runs a getter or Proxy trap if there is one (`object` may be any value; a
/// primitive is boxed, `null` and `undefined` throw).
pub fn get<'env>(env: &'env Env, object: &Unknown, name: &str) -> Guarded<'env, Unknown<'env>> {
    let key = std::ffi::CString::new(name)
        .map_err(|_| Thrown::Failed(format!("{name:?} is no property name")))?;
    let mut value = ptr::null_mut();
    // SAFETY: live env and value of the current scope; `key` is NUL-terminated.
    let status =
        unsafe { sys::napi_get_named_property(env.raw(), object.raw(), key.as_ptr(), &mut value) };
    check(env, status).map(|()| unknown(env, value))
}

/// `object[key]` for a key that is a JS value (a string from a key listing).
pub fn get_key<'env>(
    env: &'env Env,
    object: &Unknown,
    key: &Unknown,
) -> Guarded<'env, Unknown<'env>> {
    let mut value = ptr::null_mut();
    // SAFETY: live env and values of the current scope.
    let status = unsafe { sys::napi_get_property(env.raw(), object.raw(), key.raw(), &mut value) };
    check(env, status).map(|()| unknown(env, value))
}

/// `object[index]`.
pub fn get_element<'env>(
    env: &'env Env,
    object: &Unknown,
    index: u32,
) -> Guarded<'env, Unknown<'env>> {
    let mut value = ptr::null_mut();
    // SAFETY: live env and value of the current scope.
    let status = unsafe { sys::napi_get_element(env.raw(), object.raw(), index, &mut value) };
    check(env, status).map(|()| unknown(env, value))
}

/// `name in object`: runs a Proxy's `has` trap if there is one.
pub fn has<'env>(env: &'env Env, object: &Unknown, name: &str) -> Guarded<'env, bool> {
    let key = std::ffi::CString::new(name)
        .map_err(|_| Thrown::Failed(format!("{name:?} is no property name")))?;
    let mut has = false;
    // SAFETY: live env and value of the current scope; `key` is NUL-terminated.
    let status =
        unsafe { sys::napi_has_named_property(env.raw(), object.raw(), key.as_ptr(), &mut has) };
    check(env, status).map(|()| has)
}

/// `Object.hasOwn(object, name)`: runs a Proxy's `getOwnPropertyDescriptor` trap if there is
/// one.
pub fn has_own<'env>(env: &'env Env, object: &Unknown, name: &str) -> Guarded<'env, bool> {
    let key = env
        .create_string(name)
        .map_err(|error| Thrown::Failed(error.reason))?;
    let mut has = false;
    // SAFETY: live env and values of the current scope.
    let status =
        unsafe { sys::napi_has_own_property(env.raw(), object.raw(), key.raw(), &mut has) };
    check(env, status).map(|()| has)
}

/// `index in object`.
pub fn has_element<'env>(env: &'env Env, object: &Unknown, index: u32) -> Guarded<'env, bool> {
    let mut has = false;
    // SAFETY: live env and value of the current scope.
    let status = unsafe { sys::napi_has_element(env.raw(), object.raw(), index, &mut has) };
    check(env, status).map(|()| has)
}

/// `object`'s own enumerable string keys (numbers as strings), as `Object.keys` lists them (a
/// Proxy's `ownKeys` and `getOwnPropertyDescriptor` traps run): the array and its length.
pub fn own_keys<'env>(env: &'env Env, object: &Unknown) -> Guarded<'env, (Unknown<'env>, u32)> {
    let mut keys = ptr::null_mut();
    // SAFETY: live env and value of the current scope.
    let status = unsafe {
        sys::napi_get_all_property_names(
            env.raw(),
            object.raw(),
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut keys,
        )
    };
    check(env, status)?;
    let mut length = 0;
    // SAFETY: `keys` is the array napi just made.
    let status = unsafe { sys::napi_get_array_length(env.raw(), keys, &mut length) };
    check(env, status).map(|()| (unknown(env, keys), length))
}

/// `function.apply(this, args)`.
pub fn call<'env>(
    env: &'env Env,
    function: &Unknown,
    this: &Unknown,
    args: &[sys::napi_value],
) -> Guarded<'env, Unknown<'env>> {
    let mut result = ptr::null_mut();
    // SAFETY: live env and values of the current scope; `args` holds `args.len()` values.
    let status = unsafe {
        sys::napi_call_function(
            env.raw(),
            this.raw(),
            function.raw(),
            args.len(),
            args.as_ptr(),
            &mut result,
        )
    };
    check(env, status).map(|()| unknown(env, result))
}

/// A JS boolean.
pub fn boolean(env: &Env, value: bool) -> Option<Unknown<'_>> {
    let mut raw = ptr::null_mut();
    // SAFETY: live env; the result is a handle in the current scope.
    let status = unsafe { sys::napi_get_boolean(env.raw(), value, &mut raw) };
    (status == sys::Status::napi_ok).then(|| unknown(env, raw))
}

/// `undefined`, as a receiver.
pub fn undefined(env: &Env) -> Unknown<'_> {
    let mut value = ptr::null_mut();
    // SAFETY: live env; napi_get_undefined cannot fail on one.
    unsafe { sys::napi_get_undefined(env.raw(), &mut value) };
    unknown(env, value)
}

/// The JS type of `value` (`typeof`, with `null` apart); runs nothing.
pub fn type_of(value: &Unknown) -> ValueType {
    value.get_type().unwrap_or(ValueType::Unknown)
}

/// Whether `value` is an `Error` (a real one: a Proxy is not); runs nothing.
pub fn is_error(value: &Unknown) -> bool {
    value.is_error().unwrap_or(false)
}

/// Whether `value` is an array (a real one: a Proxy over one is not); runs nothing.
pub fn is_array(value: &Unknown) -> bool {
    let mut result = false;
    let env = value.value().env;
    // SAFETY: a live value of its environment's current scope.
    unsafe { sys::napi_is_array(env, value.raw(), &mut result) == sys::Status::napi_ok && result }
}

/// Whether `value` is a native promise; runs nothing.
pub fn is_promise(value: &Unknown) -> bool {
    value.is_promise().unwrap_or(false)
}

/// The text of a string primitive (`None` for anything else); runs nothing.
pub fn string_value(value: &Unknown) -> Option<String> {
    if type_of(value) != ValueType::String {
        return None;
    }
    // SAFETY: `value` is a string, which the conversion reads without running code.
    unsafe { value.cast::<String>() }.ok()
}

/// The value of a boolean primitive (`None` for anything else); runs nothing.
pub fn boolean_value(value: &Unknown) -> Option<bool> {
    if type_of(value) != ValueType::Boolean {
        return None;
    }
    // SAFETY: `value` is a boolean, which the conversion reads without running code.
    unsafe { value.cast::<bool>() }.ok()
}

/// napi-rs's typed views of a JS value whose conversion from any live handle is sound: they
/// only wrap the handle (`Object`, `Function`), or read it through napi calls that check its
/// type (`Array`, a JSON copy), so a value of another type fails later, never unsoundly.
pub trait View<'env>: FromNapiValue {}

impl<'env> View<'env> for Object<'env> {}
impl<'env> View<'env> for Array<'env> {}
impl<'env, Args: JsValuesTupleIntoVec, Return> View<'env> for Function<'env, Args, Return> {}
impl View<'_> for serde_json::Value {}

/// `value` seen as `T` (check its type first where a wrong one matters: a wrapped handle of
/// another type makes napi calls fail, not misbehave).
pub fn view<'env, T: View<'env>>(value: &Unknown<'env>) -> napi::Result<T> {
    // SAFETY: `value` is a live handle of its own environment, within the scope its lifetime
    // names, and converting any such handle to a `View` is sound (see [`View`]).
    unsafe { T::from_napi_value(value.value().env, value.raw()) }
}

/// Clears whatever exception is pending: the last line of every callback of ours that Node
/// returns from, so that nothing raised there can reach the host as an uncaught exception.
pub fn clear(env: &Env) {
    let _ = take_exception(env);
}

/// The bytes of a `Uint8Array` (a `Buffer` is one); `None` for anything else.
pub fn bytes_of(env: &Env, value: &Unknown) -> Option<Vec<u8>> {
    if type_of(value) != ValueType::Object {
        return None;
    }
    // SAFETY: on Node's thread with a live value; napi-rs checks that it is a Uint8Array and
    // fails otherwise.
    match unsafe { Uint8Array::from_napi_value(env.raw(), value.raw()) } {
        Ok(bytes) => Some(bytes.to_vec()),
        Err(_) => {
            clear(env);
            None
        }
    }
}
