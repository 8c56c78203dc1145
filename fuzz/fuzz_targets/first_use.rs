//! Built-ins made on first use and the patched fast paths, in a tampered realm, with failures
//! injected (see `first_use.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::first_use::{check_case, Case};
use ses_executor_fuzz::on_deep_stack;

fuzz_target!(|case: Case| {
    on_deep_stack(|| check_case(&case));
});
