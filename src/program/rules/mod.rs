//! Validation rules over the user's code (§6.2, Appendix B), one module per rule. Option rules
//! (`max_operations_valid`, `timeout_valid`, `log_budget_too_small`) live with the options they
//! check, in `crate::options`; `syntax_valid` is the parse itself (`super::parse`).

pub mod code_non_empty;
pub mod reserved_identifier;
