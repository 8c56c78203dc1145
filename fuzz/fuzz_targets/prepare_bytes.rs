//! Arbitrary bytes (as UTF-8, invalid sequences replaced) through validation and the rewrite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::{check_prepared, on_deep_stack};

fuzz_target!(|data: &[u8]| {
    let code = String::from_utf8_lossy(data);
    on_deep_stack(|| check_prepared(&code));
});
