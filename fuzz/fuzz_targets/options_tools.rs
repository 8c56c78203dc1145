//! Option values and what a tool returns or throws (see `options_tools.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::on_deep_stack;
use ses_executor_fuzz::options_tools::{check_case, Case};

fuzz_target!(|case: Case| {
    on_deep_stack(|| check_case(&case));
});
