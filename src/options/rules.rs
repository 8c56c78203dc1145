//! The option rules of §6.2 and Appendix B (`max_operations_valid`, `timeout_valid`,
//! `log_budget_too_small`) and `options_valid`, the rule every other option and argument check
//! reports under, with every message they give. Their diagnostics are what `validateCode`,
//! `prepareProgram` and `ERR_VALIDATION_FAILED` carry.

use crate::diagnostic::{Diagnostic, DiagnosticSeverity};

/// The rule id of every option and argument check that has no rule of its own in §6.2.
pub const OPTIONS_VALID: &str = "options_valid";

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
        // The range check above makes the conversion exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
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

/// `options_valid`: a `maxCanvasSize` above what the canvas allows.
pub fn canvas_size_too_large(got: u64, max: u32) -> Diagnostic {
    refused(format!("maxCanvasSize must be at most {max}, got {got}")).with_fix(format!(
        "Pass maxCanvasSize as a whole number from 1 to {max}."
    ))
}

/// `options_valid`: a `maxStackBytes` above the stack every engine thread keeps for QuickJS.
pub fn stack_too_large(got: u64, max: usize) -> Diagnostic {
    refused(format!(
        "maxStackBytes must be at most {max} (16 MiB, the stack every engine thread keeps for QuickJS), got {got}"
    ))
    .with_fix(format!("Pass maxStackBytes of at most {max}."))
}

/// `options_valid`: an unknown `runConcurrency`.
pub fn run_concurrency(got: &str) -> Diagnostic {
    refused(format!(
        "runConcurrency must be \"reject\" or \"queue\", got {got:?}"
    ))
    .with_fix("Use runConcurrency: \"reject\" or \"queue\".")
}

/// `options_valid`: an empty name in `authorizedImports`.
pub fn empty_import_name() -> Diagnostic {
    refused("authorizedImports must hold non-empty module names")
        .with_fix("Remove the empty entries from authorizedImports.")
}

/// `options_valid`: an unknown console level.
pub fn console_level(name: &str) -> Diagnostic {
    refused(format!(
        "collectConsoleLevels holds {name:?}; allowed: log, info, warn, error"
    ))
    .with_fix("Use only \"log\", \"info\", \"warn\" and \"error\".")
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
    //! `log_budget_too_small` (INFO): a `maxLogBytes` below the recommended minimum is allowed, but
    //! logs will be cut after a line or two (§3.3, §7.3). Whether the value is valid at all is
    //! `options_valid`'s concern.

    use super::*;

    /// The rule id.
    pub const RULE: &str = "log_budget_too_small";

    /// Below this log budget the rule reports.
    pub const RECOMMENDED_MIN_LOG_BYTES: f64 = 1024.0;

    /// Reports a `maxLogBytes` in `0..RECOMMENDED_MIN_LOG_BYTES`.
    pub fn check(max_log_bytes: Option<f64>) -> Option<Diagnostic> {
        let bytes =
            max_log_bytes.filter(|bytes| (0.0..RECOMMENDED_MIN_LOG_BYTES).contains(bytes))?;
        Some(
            Diagnostic::error(
                RULE,
                format!(
                    "maxLogBytes is {}, below the recommended minimum of 1024; logs will be truncated early",
                    js_number(bytes)
                ),
            )
            .with_severity(DiagnosticSeverity::Info)
            .with_fix("Raise maxLogBytes to at least 1024."),
        )
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_small_budget_is_an_info() {
            for small in [0.0, 100.0, 1023.0] {
                let diagnostic = check(Some(small)).expect("reported");
                assert_eq!(diagnostic.rule, RULE);
                assert_eq!(diagnostic.severity, DiagnosticSeverity::Info);
            }
            assert_eq!(
                check(Some(100.0)).map(|d| d.message),
                Some("maxLogBytes is 100, below the recommended minimum of 1024; logs will be truncated early".into())
            );
        }

        #[test]
        fn absent_recommended_or_invalid_budgets_are_not_its_concern() {
            for value in [
                None,
                Some(1024.0),
                Some(262_144.0),
                Some(-1.0),
                Some(f64::NAN),
            ] {
                assert!(check(value).is_none(), "{value:?}");
            }
        }
    }
}
