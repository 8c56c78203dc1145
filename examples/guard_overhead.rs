//! The loop guard's overhead on the counting loop (W5 in bench/workloads.mjs) for `npm run bench`
//! (bench/RESULTS.md): our engine runs that loop as agent code with the loop guard (§6.3, QuickJS
//! patch 0600) and without it, alternating, and prints JSON `{ n, samples, guardedMs, unguardedMs,
//! overheadPct }` on stdout.
//!
//! `cargo run --release --features bench-internals --example guard_overhead [-- --quick]`. Only
//! the guard differs between the two series: both go through `Engine::run` (parse, rewrite,
//! QuickJS evaluation on the engine thread); the guard's opcode is left out of the compiled
//! loops with the benchmark-only `engine::loop_guards_for_benchmarks`, which nothing reachable
//! from JavaScript calls. Each run's operation count proves which series it belongs to.
//!
//! For instruction counts, `-- --once guarded|unguarded [--n N]` runs the loop once, in one
//! mode, and prints `{ n, guards }`: under `valgrind --tool=callgrind`, the difference between
//! the two modes' totals is what the guard costs for `n` iterations.

use std::sync::Arc;
use std::time::Instant;

use ses_executor::engine::host::{Host, ToolCall, ToolFailure};
use ses_executor::engine::{self, Engine, EngineConfig, RunAbort, RunRequest};
use ses_executor::options::Options;
use ses_executor::value::Value;

/// W5 calls no tool.
struct NoTools;

impl Host for NoTools {
    fn call_tool(&self, call: ToolCall) {
        call.reply
            .returned(Err(ToolFailure::new("the guard benchmark has no tools")));
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let quick = args.iter().any(|a| a == "--quick");
    let (mut n, samples): (u64, usize) = if quick { (100_000, 3) } else { (3_000_000, 15) };
    if let Some(bound) = value("--n") {
        n = bound
            .parse()
            .map_err(|_| format!("--n {bound}: not a count"))?;
    }
    let once = match value("--once").map(String::as_str) {
        None => None,
        Some("guarded") => Some(true),
        Some("unguarded") => Some(false),
        Some(other) => return Err(format!("--once {other}: guarded or unguarded")),
    };
    // The same source as bench/workloads.mjs W5.
    let code =
        format!("(() => {{ let s = 0; for (let i = 1; i <= {n}; i++) {{ s += i; }} return s }})()");
    let expected = (n * (n + 1) / 2) as f64;

    let options = Options {
        max_operations: u64::MAX,
        timeout_ms: 600_000,
        ..Options::default()
    };
    let (engine, ready) = Engine::start(EngineConfig::from(&options), Arc::new(NoTools));
    ready
        .blocking_recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("engine init: {e:?}"))?;

    let run = |guards: bool| -> Result<f64, String> {
        engine::loop_guards_for_benchmarks(guards);
        let start = Instant::now();
        let report = engine
            .run(RunRequest::new(code.clone(), &options, RunAbort::new()))
            .blocking_recv()
            .map_err(|e| e.to_string())?;
        let elapsed = start.elapsed().as_secs_f64() * 1e3;
        let counted = report.stats.operations;
        match report.result {
            Ok(done)
                if done.output == Value::Number(expected)
                    && counted == if guards { n } else { 0 } =>
            {
                Ok(elapsed)
            }
            other => Err(format!(
                "W5 (guards: {guards}) gave {other:?} after {counted} operations"
            )),
        }
    };

    if let Some(guards) = once {
        run(guards)?;
        println!("{}", serde_json::json!({ "n": n, "guards": guards }));
        return Ok(());
    }

    // Warm-up, then alternate so that drift and other processes' load hit both series alike.
    run(true)?;
    run(false)?;
    let (mut guarded, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        guarded.push(run(true)?);
        plain.push(run(false)?);
    }
    engine::loop_guards_for_benchmarks(true);
    let (guarded, plain) = (stats(guarded), stats(plain));
    let overhead = 100.0 * (guarded.0 - plain.0) / plain.0;
    let summary = |(median, p95): (f64, f64)| serde_json::json!({ "median": median, "p95": p95 });
    println!(
        "{}",
        serde_json::json!({
            "n": n,
            "samples": samples,
            "guardedMs": summary(guarded),
            "unguardedMs": summary(plain),
            "overheadPct": overhead,
        })
    );
    Ok(())
}

/// Median and nearest-rank 95th percentile.
fn stats(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let rank =
        |p: f64| values[((p * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
    (rank(0.5), rank(0.95))
}
