//! Grammar-shaped agent code (see `grammar.rs`) through validation and the rewrite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::grammar::Program;
use ses_executor_fuzz::{check_prepared, on_deep_stack};

fuzz_target!(|program: Program| {
    let code = program.to_string();
    on_deep_stack(|| check_prepared(&code));
});
