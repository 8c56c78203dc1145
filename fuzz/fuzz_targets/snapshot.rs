//! Snapshots and session payloads from untrusted bytes (see `snapshot.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ses_executor_fuzz::on_deep_stack;
use ses_executor_fuzz::snapshot::check_snapshot;

fuzz_target!(|input: &[u8]| {
    on_deep_stack(|| check_snapshot(input));
});
