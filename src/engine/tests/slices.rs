//! Runs on time slices (`scheduler/slice.rs`): a run suspended at an interrupt poll resumes
//! exactly where it stopped, whatever lies on its coroutine's stack between the poll and the
//! run's start (C frames of a sort or a Proxy trap, the engine's own frames reading a tool's
//! arguments, deep recursion), and a suspended run still stops at its deadline, on an abort,
//! at a shutdown and when its heap runs out.
//!
//! Each test keeps more spinning executors than the pool has threads, so other runs always wait
//! and every run is suspended at the end of each slice. The guest code measures the longest
//! pause between two consecutive steps of its own (`gap`): a pause of a whole slice or more
//! means it was suspended there, in the middle of that frame.

use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::testing::{engine_with, run_abortable, run_on, sync, FakeHost};
use super::*;
use crate::scheduler::pool;
use crate::scheduler::slice;

fn options() -> Options {
    Options {
        timeout_ms: 60_000,
        max_operations: u64::MAX,
        ..Options::default()
    }
}

/// Engines spinning until stopped, one more than the pool has threads.
struct Spinners(Vec<(Engine, oneshot::Receiver<RunReport>)>);

impl Spinners {
    fn start() -> Self {
        // One more than the threads keeps a run waiting at every slice's end, and takes as
        // little as that from the other tests sharing the pool.
        let count = pool::stats().size + 1;
        Self(
            (0..count)
                .map(|_| {
                    let engine = engine_with(FakeHost::default(), &options());
                    let spinning = engine.run(RunRequest::new(
                        "while (true) {}".into(),
                        &options(),
                        RunAbort::new(),
                    ));
                    (engine, spinning)
                })
                .collect(),
        )
    }

    /// Stops every spinner; each run ends as stopped, once resumed.
    fn stop(self) {
        for (engine, spinning) in self.0 {
            let freed = engine.stop();
            let report = spinning.blocking_recv().expect("the spinner's report");
            assert_eq!(report.result.map(|_| ()), Err(EngineError::Stopped));
            freed.blocking_recv().expect("the engine is freed");
        }
    }
}

/// Guest code that records the longest pause between two calls of `tick()`.
const GAP: &str = "let last = Date.now(), gap = 0;
    const tick = () => { const now = Date.now(); gap = Math.max(gap, now - last); last = now; };";

fn output(report: RunReport) -> Value {
    report.result.expect("the run succeeds").output
}

/// `[result, gap]` of a run, with the gap checked to be at least half a slice (it was suspended
/// where `tick()` runs: between two ticks the run computes for microseconds). Not a whole slice:
/// the thread that takes it up again may be the other one, whose turn began earlier, and
/// `Date.now()` counts whole milliseconds.
fn suspended_inside(report: RunReport) -> Value {
    let Value::Array(parts) = output(report) else {
        panic!("an array")
    };
    let gap = match &parts[1] {
        Some(Value::Number(gap)) => *gap,
        other => panic!("a gap: {other:?}"),
    };
    let slice = slice::slice().as_secs_f64() * 1000.0;
    assert!(
        gap >= slice / 2.0,
        "never suspended inside the frame (gap {gap} ms)"
    );
    parts[0].clone().expect("a result")
}

#[test]
fn a_run_suspended_inside_a_sort_comparator_resumes_with_the_sorts_c_frames_intact() {
    let spinners = Spinners::start();
    let engine = engine_with(FakeHost::default(), &options());
    let code = format!(
        "{GAP}
        const a = Array.from({{ length: 3000 }}, (_, i) => (i * 7919) % 3000);
        a.sort((x, y) => {{ tick(); for (let i = 0; i < 200; i++); return x - y; }});
        [a.every((v, i) => v === i), gap]"
    );
    assert_eq!(
        suspended_inside(run_on(&engine, &code, &options())),
        Value::Bool(true)
    );
    spinners.stop();
}

#[test]
fn a_run_suspended_inside_a_proxy_trap_called_from_c_resumes_there() {
    let spinners = Spinners::start();
    let engine = engine_with(FakeHost::default(), &options());
    let code = format!(
        "{GAP}
        const target = {{ a: 1 }};
        const spin = () => {{ const end = Date.now() + 150; while (Date.now() < end) tick(); }};
        const p = new Proxy(target, {{
          ownKeys(t) {{ spin(); return Reflect.ownKeys(t); }},
          getOwnPropertyDescriptor(t, k) {{ spin(); return Reflect.getOwnPropertyDescriptor(t, k); }},
        }});
        [Object.keys(p).join(), gap]"
    );
    assert_eq!(
        suspended_inside(run_on(&engine, &code, &options())),
        Value::String("a".into())
    );
    spinners.stop();
}

#[test]
fn a_run_suspended_while_the_engine_reads_a_sync_tools_arguments_resumes_there() {
    let spinners = Spinners::start();
    let host = FakeHost::default().with(
        "echo",
        sync(|args| Ok(args.into_iter().next().unwrap_or(Value::Undefined))),
    );
    let engine = engine_with(host, &options());
    // The getter runs while the engine copies the argument (its frames lie between the poll
    // and the run's start); the tool itself answers synchronously.
    let code = format!(
        "{GAP}
        const arg = {{ get x() {{ const end = Date.now() + 150; while (Date.now() < end) tick(); return 7; }} }};
        [echo(arg).x, gap]"
    );
    assert_eq!(
        suspended_inside(run_on(&engine, &code, &options())),
        Value::Number(7.0)
    );
    spinners.stop();
}

#[test]
fn recursion_to_the_largest_max_stack_bytes_stays_on_the_coroutines_stack() {
    let recursion = "let depth = 0;
        function down() { depth++; if (depth % 1000 === 0) tick(); down(); }
        let caught;
        try { down() } catch (e) { caught = e instanceof RangeError }";
    // The depth the default budget reaches in this build (frames are larger under a sanitizer).
    let usual = engine_with(FakeHost::default(), &options());
    let Value::Array(parts) = output(run_on(
        &usual,
        &format!("{GAP} {recursion} [depth, gap]"),
        &options(),
    )) else {
        panic!("an array")
    };
    let Some(Some(Value::Number(usual_depth))) = parts.first().cloned() else {
        panic!("a depth: {parts:?}")
    };
    let spinners = Spinners::start();
    let deepest = Options {
        max_stack_bytes: crate::options::MAX_STACK_BYTES,
        ..options()
    };
    let engine = engine_with(FakeHost::default(), &deepest);
    let code = format!(
        "{GAP} {recursion}
        // Native recursion (the C of Array.prototype.toString) checks the same limit.
        let nested = [];
        for (let i = 0; i < 1e5; i++) nested = [nested];
        let native;
        try {{ String(nested) }} catch (e) {{ native = e instanceof RangeError }}
        [[caught, native, depth > 4 * {usual_depth}], gap]"
    );
    let report = run_on(&engine, &code, &deepest);
    assert_eq!(
        suspended_inside(report),
        Value::Array(vec![Some(Value::Bool(true)); 3])
    );
    // The engine is as usable as before.
    assert_eq!(
        output(run_on(&engine, "1 + 1", &deepest)),
        Value::Number(2.0)
    );
    spinners.stop();
}

#[test]
fn a_suspended_run_stops_at_its_deadline_not_at_its_next_turn() {
    let spinners = Spinners::start();
    let engine = engine_with(FakeHost::default(), &options());
    let short = Options {
        timeout_ms: 300,
        ..options()
    };
    let report = run_on(&engine, "while (true) {}", &short);
    assert_eq!(
        report.result.as_ref().map(|_| ()),
        Err(&EngineError::Timeout { timeout_ms: 300 })
    );
    assert!(report.dirty);
    // Past its deadline it is resumed before the spinners: it stops within a slice or so.
    assert!(
        report.stats.wall_time < Duration::from_millis(300 + 400),
        "{:?}",
        report.stats
    );
    // It computed on a share of the threads, not for its whole time.
    assert!(report.stats.cpu_time < report.stats.wall_time);
    spinners.stop();
}

#[test]
fn a_suspended_run_that_is_aborted_or_whose_engine_stops_answers_at_once() {
    let spinners = Spinners::start();
    let engine = engine_with(FakeHost::default(), &options());
    let abort = RunAbort::new();
    let aborting = abort.clone();
    let aborter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        (Instant::now(), aborting.abort())
    });
    let report = run_abortable(&engine, "while (true) {}", &options(), &abort);
    let (aborted_at, ()) = aborter.join().expect("the aborting thread");
    assert_eq!(
        report.result.map(|_| ()),
        Err(EngineError::Aborted { started: true })
    );
    assert!(aborted_at.elapsed() < Duration::from_millis(500));

    // Stopping the engine of a suspended run frees it once the run has stopped.
    let engine = engine_with(FakeHost::default(), &options());
    let spinning = engine.run(RunRequest::new(
        "while (true) {}".into(),
        &options(),
        RunAbort::new(),
    ));
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    let freed = engine.stop();
    assert_eq!(
        spinning
            .blocking_recv()
            .expect("a report")
            .result
            .map(|_| ()),
        Err(EngineError::Stopped)
    );
    freed.blocking_recv().expect("the engine is freed");
    assert!(asked.elapsed() < Duration::from_millis(500));
    spinners.stop();
}

#[test]
fn a_suspended_run_that_runs_out_of_heap_fails_at_the_limit() {
    let spinners = Spinners::start();
    let small = Options {
        memory_limit_bytes: 8 * 1024 * 1024,
        ..options()
    };
    let engine = engine_with(FakeHost::default(), &small);
    let report = run_on(
        &engine,
        "const kept = []; while (true) kept.push('x'.repeat(1000) + kept.length)",
        &small,
    );
    assert!(
        matches!(
            report.result,
            Err(EngineError::Limit {
                limit: "memoryLimitBytes",
                ..
            })
        ),
        "{:?}",
        report.result
    );
    spinners.stop();
}

#[test]
fn a_run_queued_behind_another_on_the_same_engine_starts_its_deadline_when_that_one_ends() {
    let engine = engine_with(FakeHost::default(), &options());
    let short = Options {
        timeout_ms: 200,
        ..options()
    };
    let first = engine.run(RunRequest::new(
        "const end = Date.now() + 400; while (Date.now() < end) {}".into(),
        &options(),
        RunAbort::new(),
    ));
    let second = engine.run(RunRequest::new(
        "while (true) {}".into(),
        &short,
        RunAbort::new(),
    ));
    assert!(first.blocking_recv().expect("a report").result.is_ok());
    let report = second.blocking_recv().expect("a report");
    assert_eq!(
        report.result.map(|_| ()),
        Err(EngineError::Timeout { timeout_ms: 200 })
    );
    // It ran for its own 200 ms, not refused for the 400 ms it waited.
    assert!(report.dirty);
    assert!(report.stats.wall_time >= Duration::from_millis(200));
}
