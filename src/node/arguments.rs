//! The one way an exported function that throws (rather than rejecting with an `ExecutorError`)
//! refuses its arguments: a `TypeError` for a value of the wrong type or one that cannot be
//! read, a `RangeError` for a number out of its range, as `index.d.ts` and docs/api.md promise.
//! Arguments are taken as `Unknown` and checked here, never by napi's own conversions, whose
//! failures are plain `Error`s (`NumberExpected`) and may leave a host exception pending.

use napi::bindgen_prelude::{Unknown, ValueType};
use napi::{sys, Env, JsValue};

use super::guarded::{self, Thrown};

/// A `TypeError` with `message`, to return from an exported function (napi throws it).
pub fn type_error(env: &Env, message: &str) -> napi::Error {
    error(env, message, Kind::Type)
}

/// A `RangeError` with `message`, to return from an exported function (napi throws it).
pub fn range_error(env: &Env, message: &str) -> napi::Error {
    error(env, message, Kind::Range)
}

enum Kind {
    Type,
    Range,
}

fn error(env: &Env, message: &str, kind: Kind) -> napi::Error {
    let made = (|| -> napi::Result<Unknown> {
        let text = env.create_string(message)?;
        let mut error = std::ptr::null_mut();
        let code = std::ptr::null_mut();
        // SAFETY: live env and string; the result is a handle in the current scope.
        napi::check_status!(unsafe {
            match kind {
                Kind::Type => sys::napi_create_type_error(env.raw(), code, text.raw(), &mut error),
                Kind::Range => {
                    sys::napi_create_range_error(env.raw(), code, text.raw(), &mut error)
                }
            }
        })?;
        // SAFETY: made by napi for this environment just now.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), error) })
    })();
    guarded::clear(env);
    match made {
        Ok(error) => napi::Error::from(error),
        Err(_) => napi::Error::new(napi::Status::InvalidArg, message),
    }
}

/// The `TypeError` for a host value that threw as it was read: `what cannot be read (reading it
/// threw …)`, with the thrown value described by means that cannot throw.
pub fn unreadable(env: &Env, what: &str, thrown: &Thrown) -> napi::Error {
    let described = thrown.describe(env);
    type_error(
        env,
        &format!("{what} cannot be read (reading it threw {described})"),
    )
}

/// An integer from `min` to `max`: a `TypeError` for anything but a number (`"2"`, `2n`,
/// `null`, `undefined` are not converted), a `RangeError` for a number that is not such an
/// integer. `what` names the argument in the messages.
pub fn integer(env: &Env, value: &Unknown, what: &str, min: u32, max: u32) -> napi::Result<u32> {
    if guarded::type_of(value) != ValueType::Number {
        return Err(type_error(env, &format!("{what} must be a number")));
    }
    // SAFETY: `value` is a number, which the conversion reads without running code.
    let number = unsafe { value.cast::<f64>() }.unwrap_or(f64::NAN);
    if number.fract() == 0.0 && (f64::from(min)..=f64::from(max)).contains(&number) {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked above to be an integer from min to max"
        )]
        return Ok(number as u32);
    }
    Err(range_error(
        env,
        &format!("{what} must be an integer from {min} to {max}"),
    ))
}
