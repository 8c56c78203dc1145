//! Out of memory in the engine: whatever runs out of heap — agent code,
//! QuickJS's compiler, the copies into the sandbox — ends as the memory-limit error, told by the
//! heap's count of refused allocations (vendor/quickjs-patches/0101), never by what was thrown.
//! tests/allocation_failures.rs refuses every allocation of representative operations in turn.

use crate::engine::testing::{engine_with, run_on, sync, FakeHost};
use crate::engine::*;

const MIB: usize = 1024 * 1024;

fn small_heap(mebibytes: usize) -> Options {
    Options {
        memory_limit_bytes: mebibytes * MIB,
        max_operations: u64::MAX,
        timeout_ms: 60_000,
        ..Options::default()
    }
}

fn is_memory_limit(report: &RunReport) -> bool {
    matches!(
        &report.result,
        Err(EngineError::Limit {
            limit: "memoryLimitBytes",
            ..
        })
    )
}

#[test]
fn a_property_flood_up_to_the_memory_limit_is_a_limit_error() {
    // Crashed the process (vendor/quickjs-patches/0100) at 16 and 36 MiB.
    for mebibytes in [16, 36] {
        let options = small_heap(mebibytes);
        let engine = engine_with(FakeHost::default(), &options);
        let code = "const o = {}; let i = 0; while (true) { o['key' + i] = i; i++ }";
        let report = run_on(&engine, code, &options);
        assert!(is_memory_limit(&report), "{:?}", report.result);
        assert!(report.dirty);
    }
}

#[test]
fn an_out_of_memory_error_the_code_catches_still_fails_the_run() {
    let options = small_heap(16);
    let engine = engine_with(FakeHost::default(), &options);
    let code = "let caught = false; try { 'x'.repeat(2 ** 28) } catch (e) { caught = true } caught";
    let report = run_on(&engine, code, &options);
    assert!(is_memory_limit(&report), "{:?}", report.result);
    assert!(report.dirty);
}

#[test]
fn throw_null_is_a_runtime_error_not_the_memory_limit() {
    let options = Options::default();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(&engine, "throw null", &options);
    match report.result {
        Err(EngineError::Runtime { message, .. }) => assert_eq!(message, "Uncaught null"),
        other => panic!("{other:?}"),
    }
    assert!(!report.dirty);
}

#[test]
fn a_tool_result_too_large_for_the_heap_fails_the_run_at_the_limit() {
    let options = small_heap(16);
    let wide = || {
        Value::Object(
            (0..300_000)
                .map(|i| (format!("key{i}"), Value::Number(f64::from(i))))
                .collect(),
        )
    };
    // Caught or not, the copy's failure fails the run at the limit.
    for code in ["wide()", "try { wide() } catch (e) { 'caught' }"] {
        let host = FakeHost::default().with("wide", sync(move |_| Ok(wide())));
        let engine = engine_with(host, &options);
        let report = run_on(&engine, code, &options);
        assert!(is_memory_limit(&report), "{code}: {:?}", report.result);
    }
}

#[test]
fn variables_too_large_for_the_heap_are_refused_at_the_limit_and_the_engine_goes_on() {
    let options = small_heap(16);
    let engine = engine_with(FakeHost::default(), &options);
    let wide = Value::Object(
        (0..300_000)
            .map(|i| (format!("key{i}"), Value::Number(f64::from(i))))
            .collect(),
    );
    let refused = engine
        .set_variables(vec![("wide".into(), wide)])
        .blocking_recv()
        .unwrap();
    assert!(
        matches!(
            refused,
            Err(EngineError::Limit {
                limit: "memoryLimitBytes",
                ..
            })
        ),
        "{refused:?}"
    );
    let report = run_on(&engine, "typeof wide", &options);
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::String("undefined".into()))
    );
}

#[test]
fn a_heap_too_small_for_a_context_fails_the_start_at_the_limit() {
    let options = Options {
        memory_limit_bytes: 64 * 1024,
        ..Options::default()
    };
    let (_engine, ready) =
        Engine::start(EngineConfig::from(&options), Arc::new(FakeHost::default()));
    match ready.blocking_recv().unwrap() {
        Err(EngineError::Start(message)) => assert!(message.contains("out of memory"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// The per-size-class program: for each size class of QuickJS's arena allocator, it fills fresh
/// arenas with strings, then keeps one string in each arena and drops the others. QuickJS counts
/// the few blocks kept; the process pays for whole arenas. Under a 32 MiB limit it ended with
/// `peakHeapBytes` at 114 MiB (and the process's RSS 124 MiB higher) when only QuickJS's count
/// was limited.
const ONE_STRING_PER_ARENA: &str = "
    const keep = []
    let counter = 0
    for (let n = 1; n <= 480; n += 8) {
      const pad = 'x'.repeat(n)
      const every = Math.max(1, Math.floor(4096 / (n + 32)))
      let temp = new Array(Math.floor(4 * 2 ** 20 / (n + 48)))
      for (let i = 0; i < temp.length; i++) temp[i] = (counter++ + 1e9).toString(36) + pad
      for (let i = 0; i < temp.length; i += every) keep.push(temp[i])
      temp = null
    }
    keep.length";

#[test]
fn the_memory_limit_bounds_the_arenas_a_program_keeps_alive() {
    let options = small_heap(32);
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(&engine, ONE_STRING_PER_ARENA, &options);
    let peak = usize::try_from(report.stats.peak_heap_bytes).unwrap();
    assert!(peak <= 32 * MIB, "peak {peak} bytes");
    assert!(
        report.result.is_ok() || is_memory_limit(&report),
        "{:?}",
        report.result
    );
}

/// What the engine keeps for the answer outside QuickJS's heap counts against the limit too:
/// the run's logs end (marked as truncated) and its trace drops events once the limit has no
/// room for them, however large `maxLogBytes` and `maxTraceBytes` are.
#[test]
fn logs_and_kept_trace_events_count_against_the_memory_limit() {
    let options = Options {
        max_log_bytes: 64 * MIB,
        max_trace_bytes: 64 * MIB,
        ..small_heap(8)
    };
    let host = FakeHost::default().with("echo", sync(|_| Ok(Value::Null)));
    let engine = engine_with(host, &options);
    let report = run_on(
        &engine,
        "const line = 'x'.repeat(1 << 20); for (let i = 0; i < 20; i++) console.log(line)",
        &options,
    );
    assert!(report.result.is_ok(), "{:?}", report.result);
    assert!(report.logs.text.len() < 8 * MIB);
    assert!(report.logs.text.ends_with(TRUNCATION_MARKER));
    assert!(usize::try_from(report.stats.peak_heap_bytes).unwrap() <= 8 * MIB);

    let mut request = RunRequest::new(
        "const arg = 'y'.repeat(1 << 20); for (let i = 0; i < 20; i++) echo(arg)".into(),
        &options,
        RunAbort::new(),
    );
    request.trace.record = true;
    let report = engine.run(request).blocking_recv().unwrap();
    assert!(report.result.is_ok(), "{:?}", report.result);
    let trace = report.trace.unwrap();
    assert!(trace.dropped_events > 0);
    assert!(usize::try_from(report.stats.peak_heap_bytes).unwrap() <= 8 * MIB);
}
