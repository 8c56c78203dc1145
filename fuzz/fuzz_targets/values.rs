//! Arbitrary values into a sandbox and back (see `values.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::on_deep_stack;
use ses_executor_fuzz::values::{check_round_trip, ArbValue};

fuzz_target!(|value: ArbValue| {
    let value = value.to_value();
    on_deep_stack(|| check_round_trip(value));
});
