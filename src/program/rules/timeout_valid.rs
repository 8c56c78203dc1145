//! `timeout_valid` (ERROR): `timeoutMs` must be a whole number of milliseconds, at least 1
//! (§3.3, §7.5).

use crate::diagnostic::Diagnostic;
use crate::options::integer;

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
