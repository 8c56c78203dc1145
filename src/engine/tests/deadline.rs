//! Every run stops at its deadline, whatever built-in it is in: one test per loop that
//! vendor/quickjs-patches/0110–0118 taught to ask QuickJS's interrupt handler, and per loop the
//! inventory of QuickJS's loops (vendor/quickjs-loops.md) says polls; the engine must then stop
//! (`cleanup()`) promptly too, its thread free again. Each
//! builds its input in a first run (state persists across runs), then runs the one built-in
//! call with a short `timeoutMs`: unpatched, the call runs to its end (seconds to minutes; this
//! suite's QuickJS is compiled without optimisation), patched it stops within milliseconds.
//! [`late`] is generous for loaded machines and far below what any of these calls takes.

use std::time::{Duration, Instant};

use crate::engine::testing::{engine_with, run_on, slowdown, FakeHost};
use crate::engine::*;

/// The deadline of the measured call: it counts from the call, so a build that prepares the
/// call slowly (a sanitizer's) needs a longer one for the call to start before it.
fn timeout_ms() -> u64 {
    50 * u64::from(slowdown())
}
/// How long after the deadline the run must have stopped (and the engine then take to stop).
fn late() -> Duration {
    Duration::from_millis(1000) * slowdown()
}
const GIB: usize = 1024 * 1024 * 1024;

fn options(timeout_ms: u64) -> Options {
    Options {
        timeout_ms,
        max_operations: u64::MAX,
        memory_limit_bytes: 2 * GIB,
        ..Options::default()
    }
}

/// Runs `setup` without hurry, then `call` with a deadline of [`timeout_ms`]: the call must end
/// with `ERR_EXEC_TIMEOUT` within [`late`] of its deadline, reported by the engine thread itself
/// (so the thread was free again, not answered for while still busy), and the engine must then
/// stop (`cleanup()`) within [`late`].
fn stops_at_the_deadline(setup: &str, call: &str) {
    let engine = engine_with(FakeHost::default(), &options(600_000));
    if !setup.is_empty() {
        let report = run_on(&engine, setup, &options(600_000));
        assert!(report.result.is_ok(), "setup: {:?}", report.result);
    }
    let report = run_on(&engine, call, &options(timeout_ms()));
    // From the call, where its deadline counts from (waits for a thread included).
    let took = report.stats.wall_time;
    assert_eq!(
        report.result.as_ref().map(|_| ()),
        Err(&EngineError::Timeout {
            timeout_ms: timeout_ms()
        }),
        "{call}"
    );
    assert!(report.dirty);
    assert!(
        took < Duration::from_millis(timeout_ms()) + late(),
        "{call}: stopped {took:?} after it started"
    );
    let stopping = Instant::now();
    engine.stop().blocking_recv().expect("the engine stops");
    assert!(
        stopping.elapsed() < late(),
        "{call}: cleanup took {:?}",
        stopping.elapsed()
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
        started.elapsed() < late(),
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
fn index_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)",
    );
}

#[test]
fn includes_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)",
    );
}

#[test]
fn every_some_for_each_map_filter_of_a_huge_array_like_stop_at_the_deadline() {
    // Holes all: the callback is never called, only the loop runs.
    for method in ["every", "some", "forEach", "map", "filter"] {
        stops_at_the_deadline(
            "",
            &format!("Array.prototype.{method}.call({{ length: 2 ** 32 - 1 }}, Number.isFinite)"),
        );
    }
}

#[test]
fn reduce_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.reduce.call({ length: 2 ** 53 - 1 }, Math.max, 0)",
    );
}

#[test]
fn find_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "Array.prototype.find.call({ length: 2 ** 53 - 1 }, Number.isFinite)",
    );
}

#[test]
fn concat_of_a_huge_spreadable_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "",
        "[].concat({ length: 2 ** 32 - 1, [Symbol.isConcatSpreadable]: true })",
    );
}

#[test]
fn json_stringify_replacer_list_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var list = []; list.length = 2 ** 32 - 1",
        "JSON.stringify({}, list)",
    );
}

#[test]
fn string_raw_of_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", "String.raw({ raw: { length: 2 ** 32 - 1 } })");
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

// Patch 0114: loops over built-in iterators.

/// An iterator of 2^32 - 1 steps whose step calls no function and allocates nothing.
const KEYS: &str = "Array.prototype.keys.call({ length: 2 ** 32 - 1 })";

#[test]
fn iterator_drop_over_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", &format!("{KEYS}.drop(2 ** 53 - 1).next()"));
}

#[test]
fn iterator_includes_over_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", &format!("{KEYS}.includes(-1)"));
}

#[test]
fn iterator_some_and_every_over_a_huge_array_like_stop_at_the_deadline() {
    // Their callback is a bound built-in (no bytecode runs): only the steps can ask.
    stops_at_the_deadline("", &format!("{KEYS}.some(Number.isNaN)"));
    stops_at_the_deadline("", &format!("{KEYS}.every(Number.isFinite)"));
}

#[test]
fn math_sum_precise_over_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", &format!("Math.sumPrecise({KEYS})"));
}

#[test]
fn iterator_reduce_over_a_huge_array_like_stops_at_the_deadline() {
    stops_at_the_deadline("", &format!("{KEYS}.reduce(Math.max)"));
}

#[test]
fn iterator_to_array_and_join_over_a_huge_array_like_stop_at_the_deadline() {
    stops_at_the_deadline("", &format!("{KEYS}.toArray()"));
    stops_at_the_deadline("", &format!("{KEYS}.join()"));
}

#[test]
fn collections_built_from_a_huge_iterable_stop_at_the_deadline() {
    let entries = "Array.prototype.entries.call({ length: 2 ** 32 - 1 })";
    for call in [
        format!("new Set({KEYS})"),
        format!("new Map({entries})"),
        format!("Object.fromEntries({entries})"),
        format!("Object.groupBy({KEYS}, Math.sign)"),
        format!("Map.groupBy({KEYS}, Math.sign)"),
        format!("new AggregateError({KEYS})"),
        format!("[...{KEYS}]"),
        format!("new Uint8Array({KEYS})"),
    ] {
        stops_at_the_deadline("", &call);
    }
}

#[test]
fn promise_combinators_over_a_huge_iterable_stop_at_the_deadline() {
    for combinator in ["all", "allSettled", "any", "race"] {
        stops_at_the_deadline("", &format!("Promise.{combinator}({KEYS})"));
    }
}

/// A set-like of one element whose keys() is [`KEYS`]: the Set methods walk its keys when the
/// Set is the larger.
const SET_LIKE: &str = "var big = new Set(['a', 'b', 'c']); \
    var setLike = { size: 1, has() { return false; }, \
    keys() { return Array.prototype.keys.call({ length: 2 ** 32 - 1 }); } }";

#[test]
fn set_is_disjoint_from_a_huge_set_like_stops_at_the_deadline() {
    stops_at_the_deadline(SET_LIKE, "big.isDisjointFrom(setLike)");
}

#[test]
fn set_is_superset_of_a_long_set_like_stops_at_the_deadline() {
    // It stops at the first key the Set lacks: a string's iterator repeats one.
    stops_at_the_deadline(
        "var text = 'a'.repeat(2 ** 26); var big = new Set(['a', 'b']); \
         var setLike = { size: 1, has() { return false; }, keys: () => text[Symbol.iterator]() }",
        "big.isSupersetOf(setLike)",
    );
}

#[test]
fn set_intersection_with_a_huge_set_like_stops_at_the_deadline() {
    stops_at_the_deadline(SET_LIKE, "big.intersection(setLike)");
}

#[test]
fn set_difference_with_a_huge_set_like_stops_at_the_deadline() {
    stops_at_the_deadline(SET_LIKE, "big.difference(setLike)");
}

#[test]
fn set_symmetric_difference_with_a_huge_set_like_stops_at_the_deadline() {
    stops_at_the_deadline(SET_LIKE, "big.symmetricDifference(setLike)");
}

#[test]
fn set_union_with_a_huge_set_like_stops_at_the_deadline() {
    stops_at_the_deadline(SET_LIKE, "big.union(setLike)");
}

// Patch 0115: string searches, quadratic in the worst case.

/// A text of 2^20 `a`s and a pattern of 2^19 `a`s and a `b`: every candidate compares 2^19
/// characters before it fails.
const NEEDLE: &str = "var text = 'a'.repeat(2 ** 20); var needle = 'a'.repeat(2 ** 19) + 'b'";

#[test]
fn string_search_index_of_a_long_near_match_stops_at_the_deadline() {
    stops_at_the_deadline(NEEDLE, "text.indexOf(needle)");
}

#[test]
fn string_search_last_index_of_a_long_near_match_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var text = 'a'.repeat(2 ** 20); var needle = 'b' + 'a'.repeat(2 ** 19)",
        "text.lastIndexOf(needle)",
    );
}

#[test]
fn string_search_includes_of_a_long_near_match_stops_at_the_deadline() {
    stops_at_the_deadline(NEEDLE, "text.includes(needle)");
}

#[test]
fn string_search_in_split_stops_at_the_deadline() {
    stops_at_the_deadline(NEEDLE, "text.split(needle)");
}

#[test]
fn string_search_in_replace_and_replace_all_stops_at_the_deadline() {
    stops_at_the_deadline(NEEDLE, "text.replace(needle, '')");
    stops_at_the_deadline(NEEDLE, "text.replaceAll(needle, '')");
}

// Patch 0116: the checks of a Proxy's ownKeys result.

#[test]
fn proxy_own_keys_duplicate_check_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var keys = []; for (let i = 0; i < 2 ** 19; i++) keys.push(Symbol()); \
         var proxy = new Proxy({}, { ownKeys: () => keys })",
        "Reflect.ownKeys(proxy)",
    );
}

#[test]
fn proxy_own_keys_check_against_a_frozen_target_stops_at_the_deadline() {
    // Each of the target's non-configurable keys is looked for among the trap's.
    stops_at_the_deadline(
        "var target = {}; for (let i = 0; i < 2 ** 17; i++) target['k' + i] = i; \
         Object.freeze(target); var keys = Reflect.ownKeys(target).reverse(); \
         var handler = { ownKeys: () => keys }",
        "Reflect.ownKeys(new Proxy(target, handler))",
    );
}

// Patch 0117: compiling a RegExp of many forward group references.

#[test]
fn regexp_forward_references_compile_stops_at_the_deadline() {
    stops_at_the_deadline(
        "var pattern = '\\\\k<a>'.repeat(2 ** 16) + '(?<a>x)'",
        "new RegExp(pattern)",
    );
}

// Patch 0118: normalization of long runs of combining marks.

#[test]
fn normalize_of_a_long_run_of_combining_marks_ends_well_within_the_deadline() {
    // Insertion sort took minutes here; counting takes milliseconds. The answer is the marks in
    // canonical order: every U+0316 (class 220) before every U+0301 (class 230).
    let engine = engine_with(FakeHost::default(), &options(600_000));
    let report = run_on(
        &engine,
        "const marks = '\\u0316\\u0301'.repeat(2 ** 18); \
         const nfd = marks.normalize('NFD'); \
         [nfd === '\\u0316'.repeat(2 ** 18) + '\\u0301'.repeat(2 ** 18), \
          ('a' + marks).normalize('NFC').length, marks.localeCompare(nfd)]",
        &options(5_000),
    );
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::Array(vec![
            Some(Value::Bool(true)),
            Some(Value::Number(f64::from(2 * (1 << 18)))),
            Some(Value::Number(0.0)),
        ]))
    );
    // Counting keeps the order of marks of one class, as the insertion sort of short runs does:
    // a stable sort by class, in runs of every length around the switch (32).
    let report = run_on(
        &engine,
        "const classes = { '\\u0301': 230, '\\u0300': 230, '\\u0316': 220, '\\u0327': 202 }; \
         const marks = Object.keys(classes); \
         const runs = []; \
         for (let length = 1; length < 80; length++) { \
           let run = ''; \
           for (let i = 0; i < length; i++) run += marks[(i * 7 + length) % 4]; \
           runs.push(run); \
         } \
         const text = 'a' + runs.join('b'); \
         const sorted = runs.map((run) => [...run] \
           .map((mark, index) => [classes[mark], index, mark]) \
           .sort((x, y) => x[0] - y[0] || x[1] - y[1]) \
           .map((entry) => entry[2]).join('')); \
         text.normalize('NFD') === 'a' + sorted.join('b')",
        &options(5_000),
    );
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::Bool(true))
    );
}
