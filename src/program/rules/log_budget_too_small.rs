//! `log_budget_too_small` (INFO): a `maxLogBytes` below the recommended minimum is allowed, but
//! logs will be cut after a line or two (§3.3, §7.3). Whether the value is valid at all is
//! `options_valid`'s concern.

use crate::diagnostic::{Diagnostic, DiagnosticSeverity};
use crate::options::js_number;

/// The rule id.
pub const RULE: &str = "log_budget_too_small";

/// Below this log budget the rule reports.
pub const RECOMMENDED_MIN_LOG_BYTES: f64 = 1024.0;

/// Reports a `maxLogBytes` in `0..RECOMMENDED_MIN_LOG_BYTES`.
pub fn check(max_log_bytes: Option<f64>) -> Option<Diagnostic> {
    let bytes = max_log_bytes.filter(|bytes| (0.0..RECOMMENDED_MIN_LOG_BYTES).contains(bytes))?;
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
