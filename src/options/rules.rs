//! The option rules of §6.2 and Appendix B (`max_operations_valid`, `timeout_valid`,
//! `log_budget_too_small`) and `options_valid`, the rule every other option and argument check
//! reports under, with every message they give. Their diagnostics are what `validateCode`,
//! `prepareProgram` and `ERR_VALIDATION_FAILED` carry.

use crate::diagnostic::{Diagnostic, DiagnosticSeverity};

/// The rule id of every option and argument check that has no rule of its own in §6.2.
pub const OPTIONS_VALID: &str = "options_valid";

/// The smallest `maxLogBytes` (§3.3: `>= 1024`).
pub const MIN_LOG_BYTES: f64 = 1024.0;

/// The largest integer a JS number holds exactly; larger option values are refused rather than
/// silently rounded.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Checks one integer option: `Ok(None)` when absent, `Err` with the rule's diagnostic when it is
/// not an integer in `min..=MAX_SAFE_INTEGER`.
pub fn integer(
    value: Option<f64>,
    name: &str,
    min: f64,
    rule: &'static str,
) -> Result<Option<u64>, Diagnostic> {
    let Some(value) = value else { return Ok(None) };
    if value.is_finite() && value.fract() == 0.0 && (min..=MAX_SAFE_INTEGER).contains(&value) {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "the range check above makes the conversion exact"
        )]
        return Ok(Some(value as u64));
    }
    Err(Diagnostic::error(
        rule,
        format!(
            "{name} must be an integer >= {min}, got {}",
            js_number(value)
        ),
    )
    .with_fix(format!("Pass {name} as a whole number of at least {min}.")))
}

/// Formats a number the way JS prints it in messages (`NaN`, `Infinity`, `1.5`, `3`).
pub fn js_number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        value.to_string()
    }
}

/// `options_valid`: `name` is not `expected` (a type check of the napi layer).
pub fn invalid(name: &str, expected: &str) -> Diagnostic {
    Diagnostic::error(OPTIONS_VALID, format!("{name} must be {expected}")).with_fix(format!(
        "Pass {name} as {expected}, or leave it out for the default."
    ))
}

/// `options_valid`: `name` (an option, an entry of `variables` or `tools`, a property of a tool
/// object or signal) could not be read: reading it threw `thrown` (`Error: nope`).
pub fn unreadable(name: &str, thrown: &str) -> Diagnostic {
    refused(format!("{name} cannot be read (reading it threw {thrown})")).with_fix(format!(
        "Pass {name} as a plain value: its getter, or a Proxy trap, threw."
    ))
}

/// `options_valid`: a message with no fix to suggest beyond itself.
fn refused(message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(OPTIONS_VALID, message)
}

/// `options_valid`: an argument that must be an object (`variables`, `tools`, `modules`).
pub fn not_an_object(what: &str) -> Diagnostic {
    refused(format!("{what} must be an object"))
}

/// `options_valid`: a tool that is neither a function nor a smolagents tool object.
pub fn not_a_tool(path: &str) -> Diagnostic {
    refused(format!(
        "{path} must be a function or a tool object with a forward() method"
    ))
}

/// `options_valid`: `onEvent` (of the executor or of a run) is not a function.
pub fn on_event_not_a_function() -> Diagnostic {
    refused("onEvent must be a function")
}

/// `options_valid`: `tracer` is not an OpenTelemetry tracer.
pub fn not_a_tracer() -> Diagnostic {
    refused("tracer must be an OpenTelemetry Tracer (an object with a startSpan method)")
}

/// `options_valid`: `onLog` is not a function.
pub fn on_log_not_a_function() -> Diagnostic {
    refused("onLog must be a function")
}

/// The fewest bytes a `snapshotKey` may have: an HMAC key much shorter is easy to guess.
pub const MIN_SNAPSHOT_KEY_BYTES: usize = 16;

/// `options_valid`: a `snapshotKey` that is neither a string nor a `Uint8Array` of at least
/// [`MIN_SNAPSHOT_KEY_BYTES`] bytes.
pub fn snapshot_key_invalid() -> Diagnostic {
    refused(format!(
        "snapshotKey must be a string or a Uint8Array of at least {MIN_SNAPSHOT_KEY_BYTES} bytes"
    ))
}

/// `options_valid`: a registered module that is neither source text nor an object.
pub fn not_a_module(name: &str) -> Diagnostic {
    refused(format!(
        "modules.{name} must be ES module source text or an object"
    ))
}

/// `options_valid`: `run()`'s second argument is not an object.
pub fn run_options_not_an_object() -> Diagnostic {
    refused("run options must be an object")
}

/// `options_valid`: `options.signal` is not an `AbortSignal`.
pub fn not_an_abort_signal() -> Diagnostic {
    refused("options.signal must be an AbortSignal")
}

/// `options_valid`: a value that cannot be copied where copies are required (variables,
/// module data); the message names the path.
pub fn uncopyable(error: &crate::value::CloneError) -> Diagnostic {
    refused(error.to_string())
}

/// `options_valid`: an integer option above its largest value (`reason` says why it is the
/// largest, where that is not obvious).
pub fn too_large(name: &str, got: u64, min: f64, max: u64, reason: Option<&str>) -> Diagnostic {
    let why = reason
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default();
    refused(format!("{name} must be at most {max}{why}, got {got}")).with_fix(format!(
        "Pass {name} as a whole number from {} to {max}.",
        js_number(min)
    ))
}

/// `options_valid`: an option that must be one of `alternatives` (`"reject" or "queue"`).
pub fn not_one_of(name: &str, alternatives: &str, got: &str) -> Diagnostic {
    refused(format!("{name} must be {alternatives}, got {got:?}"))
        .with_fix(format!("Use {name}: {alternatives}."))
}

/// `options_valid`: a list option holding an empty name (`items` says what they name).
pub fn empty_name(name: &str, items: &str) -> Diagnostic {
    refused(format!("{name} must hold non-empty {items}"))
        .with_fix(format!("Remove the empty entries from {name}."))
}

/// `options_valid`: a list option holding something other than the names it allows.
pub fn not_among(name: &str, allowed: &[&str], got: &str) -> Diagnostic {
    let quoted: Vec<String> = allowed.iter().map(|item| format!("{item:?}")).collect();
    let fix = match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    };
    refused(format!(
        "{name} holds {got:?}; allowed: {}",
        allowed.join(", ")
    ))
    .with_fix(format!("Use only {fix}."))
}

/// `options_valid`: an option declared with a default its own check refuses (a mistake in the
/// declaration, which the options' tests catch).
pub fn bad_default(name: &str) -> Diagnostic {
    refused(format!("{name} has a declared default of the wrong kind"))
}

pub mod max_operations_valid {
    //! `max_operations_valid` (ERROR): `maxOperations`, the loop guard's budget (§6.3), must be a
    //! whole number of at least 1; anything else would make the guard meaningless (§3.3).

    use super::*;

    /// The rule id.
    pub const RULE: &str = "max_operations_valid";

    /// Checks `maxOperations` as the caller gave it: `Ok(None)` when absent, the value when valid.
    pub fn check(max_operations: Option<f64>) -> Result<Option<u64>, Diagnostic> {
        integer(max_operations, "maxOperations", 1.0, RULE)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn absent_or_a_positive_integer_passes() {
            assert_eq!(check(None), Ok(None));
            assert_eq!(check(Some(1.0)), Ok(Some(1)));
            assert_eq!(
                check(Some(9_007_199_254_740_991.0)),
                Ok(Some(9_007_199_254_740_991))
            );
        }

        #[test]
        fn zero_negative_fractional_and_non_finite_values_are_refused() {
            for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 1e300] {
                let diagnostic = check(Some(bad)).expect_err("refused");
                assert_eq!(diagnostic.rule, RULE);
                assert!(diagnostic.is_error());
                assert!(diagnostic.fix.is_some());
            }
            assert_eq!(
                check(Some(f64::NAN)).expect_err("refused").message,
                "maxOperations must be an integer >= 1, got NaN"
            );
        }
    }
}

pub mod timeout_valid {
    //! `timeout_valid` (ERROR): `timeoutMs` must be a whole number of milliseconds, at least 1
    //! (§3.3, §7.5).

    use super::*;

    /// The rule id.
    pub const RULE: &str = "timeout_valid";

    /// Checks `timeoutMs` as the caller gave it: `Ok(None)` when absent, the value when valid.
    pub fn check(timeout_ms: Option<f64>) -> Result<Option<u64>, Diagnostic> {
        integer(timeout_ms, "timeoutMs", 1.0, RULE)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn absent_or_a_positive_integer_passes() {
            assert_eq!(check(None), Ok(None));
            assert_eq!(check(Some(250.0)), Ok(Some(250)));
        }

        #[test]
        fn zero_negative_fractional_and_non_finite_values_are_refused() {
            for bad in [0.0, -5.0, 0.5, f64::NAN, f64::NEG_INFINITY] {
                let diagnostic = check(Some(bad)).expect_err("refused");
                assert_eq!(diagnostic.rule, RULE);
                assert!(diagnostic.is_error());
            }
            assert_eq!(
                check(Some(-5.0)).expect_err("refused").message,
                "timeoutMs must be an integer >= 1, got -5"
            );
        }
    }
}

pub mod log_budget_too_small {
    //! `log_budget_too_small` (INFO, Appendix B): a `maxLogBytes` the caller may choose but that
    //! is below the recommended budget: logs will be cut after a few lines (§7.3). Below
    //! [`MIN_LOG_BYTES`](super::MIN_LOG_BYTES) the value is not valid at all (§3.3: `>= 1024`),
    //! which is `options_valid`'s concern.

    use super::*;

    /// The rule id.
    pub const RULE: &str = "log_budget_too_small";

    /// Below this log budget the rule reports: a model's observation of one step often needs
    /// a few screens of output.
    pub const RECOMMENDED_MIN_LOG_BYTES: f64 = 16.0 * 1024.0;

    /// Reports a valid `maxLogBytes` (at least 1024) below [`RECOMMENDED_MIN_LOG_BYTES`].
    pub fn check(max_log_bytes: Option<f64>) -> Option<Diagnostic> {
        let bytes = max_log_bytes
            .filter(|bytes| (MIN_LOG_BYTES..RECOMMENDED_MIN_LOG_BYTES).contains(bytes))?;
        Some(
            Diagnostic::error(
                RULE,
                format!(
                    "maxLogBytes is {}, below the recommended minimum of 16384; logs will be truncated early",
                    js_number(bytes)
                ),
            )
            .with_severity(DiagnosticSeverity::Info)
            .with_fix("Raise maxLogBytes to at least 16384."),
        )
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_valid_but_small_budget_is_an_info() {
            for small in [1024.0, 4096.0, 16383.0] {
                let diagnostic = check(Some(small)).expect("reported");
                assert_eq!(diagnostic.rule, RULE);
                assert_eq!(diagnostic.severity, DiagnosticSeverity::Info);
            }
            assert_eq!(
                check(Some(1024.0)).map(|d| d.message),
                Some("maxLogBytes is 1024, below the recommended minimum of 16384; logs will be truncated early".into())
            );
        }

        #[test]
        fn absent_recommended_or_invalid_budgets_are_not_its_concern() {
            for value in [
                None,
                Some(16384.0),
                Some(262_144.0),
                Some(1023.0),
                Some(0.0),
                Some(-1.0),
                Some(f64::NAN),
            ] {
                assert!(check(value).is_none(), "{value:?}");
            }
        }
    }
}
