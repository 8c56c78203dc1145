//! Validation rules (§6.2, Appendix B), one module per rule. `syntax_valid` is the parse itself
//! (`super::parse`); the option rules (`max_operations_valid`, `timeout_valid`,
//! `log_budget_too_small`) are called by `crate::options`, which owns the option values.

pub mod code_non_empty;
pub mod log_budget_too_small;
pub mod max_operations_valid;
pub mod reserved_identifier;
pub mod timeout_valid;
