//! Every run stops at its deadline, whatever built-in it is in: one test per
//! loop that vendor/quickjs-patches/0110–0113 taught to ask QuickJS's interrupt handler. Each
//! builds its input in a first run (state persists across runs), then runs the one built-in
//! call with a short `timeoutMs`: unpatched, the call runs to its end (seconds to minutes; this
//! suite's QuickJS is compiled without optimisation), patched it stops within milliseconds.
//! [`LATE`] is generous for loaded machines and far below what any of these calls takes.

use std::time::{Duration, Instant};

use crate::engine::testing::{engine_with, run_on, FakeHost};
use crate::engine::*;

/// The deadline of the measured call.
const TIMEOUT_MS: u64 = 50;
/// How long after the deadline the run must have stopped.
const LATE: Duration = Duration::from_millis(1000);
const GIB: usize = 1024 * 1024 * 1024;

fn options(timeout_ms: u64) -> Options {
    Options {
        timeout_ms,
        max_operations: u64::MAX,
        memory_limit_bytes: 2 * GIB,
        ..Options::default()
    }
}

/// Runs `setup` without hurry, then `call` with a deadline of [`TIMEOUT_MS`]: the call must end
/// with `ERR_EXEC_TIMEOUT` within [`LATE`] of its deadline.
fn stops_at_the_deadline(setup: &str, call: &str) {
    let engine = engine_with(FakeHost::default(), &options(600_000));
    if !setup.is_empty() {
        let report = run_on(&engine, setup, &options(600_000));
        assert!(report.result.is_ok(), "setup: {:?}", report.result);
    }
    let report = run_on(&engine, call, &options(TIMEOUT_MS));
    // From the call, where its deadline counts from (waits for a thread included).
    let took = report.stats.wall_time;
    assert_eq!(
        report.result.as_ref().map(|_| ()),
        Err(&EngineError::Timeout {
            timeout_ms: TIMEOUT_MS
        }),
        "{call}"
    );
    assert!(report.dirty);
    assert!(
        took < Duration::from_millis(TIMEOUT_MS) + LATE,
        "{call}: stopped {took:?} after it started"
    );
}

/// `call` ends at once with `expected` (a refusal before any long loop).
fn refused_at_once(call: &str, expected: &str) {
    let small_heap = Options {
        memory_limit_bytes: 256 * 1024 * 1024,
        ..options(60_000)
    };
    let engine = engine_with(FakeHost::default(), &small_heap);
    let started = Instant::now();
    let report = run_on(&engine, call, &small_heap);
    let message = match report.result {
        Err(EngineError::Runtime { message, .. } | EngineError::Limit { message, .. }) => message,
        other => panic!("{call}: {other:?}"),
    };
    assert!(message.contains(expected), "{call}: {message}");
    assert!(
        started.elapsed() < LATE,
        "{call}: took {:?}",
        started.elapsed()
    );
}

// Patch 0110: loops over an array-like's length.

#[test]
fn join_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.prototype.join.call({ length: 2 ** 53 - 1 }, '')");
}

#[test]
fn to_string_of_a_huge_sparse_array_stops_at_the_deadline() {
    // 10^9 - 1 commas fit a 2 GiB heap: nothing refuses them up front.
    stops_at_the_deadline("", "new Array(1e9) + ''");
}

#[test]
fn join_refuses_at_once_what_its_separators_make_too_long() {
    refused_at_once("Array(1e9).join('x')", "out of memory");
    refused_at_once(
        "Array.prototype.join.call({ length: 2 ** 32 - 1 })",
        "RangeError: invalid string length",
    );
}

#[test]
fn fill_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.prototype.fill.call({ length: 2 ** 32 - 1 }, 1)");
}

#[test]
fn slice_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.prototype.slice.call({ length: 2 ** 32 - 1 })");
}

#[test]
fn splice_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.splice.call({ length: 2 ** 53 - 1 }, 0, 1)",
    );
}

#[test]
fn copy_within_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)",
    );
}

#[test]
fn reverse_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.prototype.reverse.call({ length: 2 ** 32 - 1 })");
}

#[test]
fn unshift_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.unshift.call({ length: 2 ** 53 - 2 }, 1)",
    );
}

#[test]
fn flat_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.prototype.flat.call({ length: 2 ** 53 - 1 })");
}

#[test]
fn last_index_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)",
    );
}

#[test]
fn array_from_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Array.from({ length: 2 ** 32 - 1 })");
}

#[test]
fn typed_array_from_a_large_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "Uint8Array.from({ length: 2 ** 28 })");
}

#[test]
fn json_stringify_of_a_huge_sparse_array_stops_at_the_deadline() {
    stops_at_the_deadline("var a = []; a.length = 2 ** 32 - 1", "JSON.stringify(a)");
}

// Patch 0111: BigInt arithmetic.

const BIG: &str = "var big = (1n << 1000000n) - 1n; var half = (1n << 500000n) - 1n; \
    var digits = big.toString(16)";

#[test]
fn bigint_to_decimal_string_stops_at_the_deadline() {
    stops_at_the_deadline(BIG, "big.toString()");
}

#[test]
fn bigint_multiplication_stops_at_the_deadline() {
    stops_at_the_deadline(BIG, "half * half * 3n");
}

#[test]
fn bigint_division_stops_at_the_deadline() {
    // Four divisions in one expression: no interpreter check comes between them.
    stops_at_the_deadline(
        BIG,
        "big / half + big / (half - 2n) + big / (half - 4n) + big / (half - 6n)",
    );
}

#[test]
fn bigint_parsing_of_a_decimal_string_stops_at_the_deadline() {
    stops_at_the_deadline("var nines = '9'.repeat(300000)", "BigInt(nines)");
}

// Patch 0112: sorts without a comparator.

#[test]
fn sort_of_an_array_without_a_comparator_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var a = Array.from({ length: 2 ** 21 }, (_, i) => (i * 7919) % 1000003)",
        "a.sort()",
    );
}

#[test]
fn sort_of_a_typed_array_without_a_comparator_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var t = new Float64Array(2 ** 23); for (let i = 0; i < t.length; i++) t[i] = (i * 7919) % 1000003",
        "t.sort()",
    );
}

// Patch 0113: strings and JSON.

const LONG: &str = "var s = 'x'.repeat(2 ** 26)";

#[test]
fn replace_all_with_a_string_pattern_stops_at_the_deadline() {
    stops_at_the_deadline(LONG, "s.replaceAll('x', 'yy')");
}

// Patches 0610 and 0611: split and replace with a plain RegExp loop over matches in C.

#[test]
fn patch_0610_split_with_a_regexp_of_many_matches_stops_at_the_deadline() {
    stops_at_the_deadline(LONG, "s.split(/x/)");
}

#[test]
fn patch_0611_replace_with_a_regexp_of_many_matches_stops_at_the_deadline() {
    stops_at_the_deadline(LONG, "s.replace(/x/g, '$&$&')");
}

#[test]
fn json_stringify_of_a_long_string_stops_at_the_deadline() {
    stops_at_the_deadline(LONG, "JSON.stringify(s)");
}

#[test]
fn json_stringify_of_a_large_array_stops_at_the_deadline() {
    stops_at_the_deadline("var a = new Array(2 ** 22).fill(1.5)", "JSON.stringify(a)");
}

#[test]
fn to_upper_case_of_a_long_string_stops_at_the_deadline() {
    stops_at_the_deadline(LONG, "s.toUpperCase()");
}

#[test]
fn encode_uri_component_of_a_long_string_stops_at_the_deadline() {
    stops_at_the_deadline("var e = 'é'.repeat(2 ** 24)", "encodeURIComponent(e)");
}

#[test]
fn decode_uri_component_of_a_long_string_stops_at_the_deadline() {
    stops_at_the_deadline("var d = '%41'.repeat(2 ** 25)", "decodeURIComponent(d)");
}

#[test]
fn escape_and_unescape_of_long_strings_stop_at_the_deadline() {
    stops_at_the_deadline("var e = 'é'.repeat(2 ** 24)", "escape(e)");
    stops_at_the_deadline("var u = '%41'.repeat(2 ** 25)", "unescape(u)");
}

#[test]
fn repeat_of_a_two_character_string_stops_at_the_deadline() {
    stops_at_the_deadline("", "'ab'.repeat(2 ** 27)");
}

#[test]
fn pad_end_with_a_two_character_filler_stops_at_the_deadline() {
    stops_at_the_deadline("", "''.padEnd(2 ** 28, 'ab')");
}

#[test]
fn typed_array_join_stops_at_the_deadline() {
    stops_at_the_deadline("var bytes = new Uint8Array(2 ** 24)", "bytes.join()");
}
