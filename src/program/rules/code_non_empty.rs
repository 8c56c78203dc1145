//! `code_non_empty` (ERROR): empty or whitespace-only code is not run (Appendix B).

use crate::diagnostic::Diagnostic;

/// The rule id.
pub const RULE: &str = "code_non_empty";

/// Reports code that is empty or holds only whitespace.
pub fn check(code: &str) -> Option<Diagnostic> {
    code.trim().is_empty().then(|| {
        Diagnostic::error(RULE, "Code is empty")
            .with_fix("Write at least one JavaScript statement.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_whitespace_only_code_is_reported() {
        assert!(check("").is_some());
        assert!(check(" \n\t\r\n").is_some());
    }

    #[test]
    fn any_statement_passes() {
        assert!(check(";").is_none());
        assert!(check("  1  ").is_none());
    }
}
