//! `max_operations_valid` (ERROR): `maxOperations`, the loop guard's budget (§6.3), must be a
//! whole number of at least 1; anything else would make the guard meaningless (§3.3).

use crate::diagnostic::Diagnostic;
use crate::options::integer;

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
