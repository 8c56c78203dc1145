//! `code_size_valid` (ERROR): code larger than [`MAX_CODE_BYTES`] is not run.
//!
//! oxc's parser, semantic analysis and code generator recurse over the syntax tree, and a tree
//! can be about as deep as the code is long (`((((…))))`, `!!!!…x`, `else if` chains). The
//! bound on size is what lets `super::super::deep_stack` give that recursion a stack it cannot
//! overflow: a stack overflow would abort the host process, not fail the run.
//!
//! Spec: §6.2 and Appendix B (built-in rules, extended).

use crate::diagnostic::Diagnostic;

/// The rule id.
pub const RULE: &str = "code_size_valid";

/// The largest code accepted, in bytes of UTF-8: far above what a model writes in one step.
pub const MAX_CODE_BYTES: usize = 128 * 1024;

/// Reports code larger than [`MAX_CODE_BYTES`].
pub fn check(code: &str) -> Option<Diagnostic> {
    (code.len() > MAX_CODE_BYTES).then(|| {
        Diagnostic::error(
            RULE,
            format!(
                "Code is {} bytes, more than the {MAX_CODE_BYTES} bytes one run accepts",
                code.len()
            ),
        )
        .with_fix("Split the work into several runs; pass large data with sendVariables or a tool.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_up_to_the_limit_passes() {
        assert!(check(&"a".repeat(MAX_CODE_BYTES)).is_none());
    }

    #[test]
    fn larger_code_is_reported_with_its_size() {
        let diagnostic = check(&"a".repeat(MAX_CODE_BYTES + 1)).unwrap();
        assert_eq!(diagnostic.rule, RULE);
        assert!(diagnostic.message.starts_with("Code is 131073 bytes"));
    }
}
