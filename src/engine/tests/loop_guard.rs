//! The loop guard inside QuickJS (patch 0600, §6.3, §9.3): exact counts of loop-body entries
//! for every loop kind, the stop it raises, and the patched C API on a bare runtime.
//!
//! The count must be what an injected `__smol_guard();` as each body's first statement counted
//! (the AST guard of §6.3): `__test__/guards.property.test.ts` checks the same against a model.

use std::cell::Cell;
use std::rc::Rc;

use rquickjs::{Context, Ctx, Runtime};

use crate::engine::quickjs::loop_guard::{install_loop_guard, set_loop_guard, LoopGuard, LoopTrip};
use crate::engine::testing::{engine_with, run_on, FakeHost};
use crate::engine::*;

fn options(max_operations: u64) -> Options {
    Options {
        timeout_ms: 5_000,
        max_operations,
        ..Options::default()
    }
}

/// Runs `code` without a limit and gives its output and the loop-body entries counted.
fn counted(code: &str) -> (Value, u64) {
    let options = options(u64::MAX);
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(&engine, code, &options);
    let operations = report.stats.operations;
    match report.result {
        Ok(completion) => (completion.output, operations),
        Err(error) => panic!("{code}: {error:?} (logs: {})", report.logs.text),
    }
}

#[test]
fn patch_0600_every_loop_kind_counts_each_body_entry_once() {
    let cases: &[(&str, u64)] = &[
        ("for (let i = 0; i < 5; i++) {}", 5),
        ("for (let i = 0; i < 5; i++);", 5),
        ("for (;;) { break; }", 1),
        ("let i = 0; while (i < 4) i++;", 4),
        ("while (false) {}", 0),
        // A do-while body runs before its test.
        ("do {} while (false);", 1),
        ("let i = 0; do { i++ } while (i < 3);", 3),
        ("for (const k in { a: 1, b: 2, c: 3 }) {}", 3),
        ("for (const v of [1, 2]) {}", 2),
        ("for (const v of []) {}", 0),
        ("for await (const v of [Promise.resolve(1), 2]) {}", 2),
        // `continue` re-enters the body through its top; `break` leaves after the entry.
        (
            "for (let i = 0; i < 6; i++) { if (i % 2) continue; }",
            6,
        ),
        (
            "outer: for (let i = 0; i < 3; i++) { for (let j = 0; j < 5; j++) { if (j === 1) continue outer; } }",
            3 * (1 + 2),
        ),
        ("for (let i = 0; i < 9; i++) { if (i === 4) break; }", 5),
        // Loops in functions count each time the function runs them.
        (
            "function f(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s } f(3) + f(4)",
            7,
        ),
        ("const g = () => { let k = 0; while (k < 2) k++; }; g(); g();", 4),
        (
            "class C { m() { for (const x of [1, 2, 3]) {} } static { for (;;) break; } } new C().m();",
            4,
        ),
        (
            "function* gen() { for (let i = 0; i < 3; i++) yield i } [...gen()]",
            3,
        ),
        (
            "async function a() { for (let i = 0; i < 3; i++) await null } await a()",
            3,
        ),
        // Per-iteration `let` bindings and closures are those of an unguarded loop.
        (
            "const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); fs.map((f) => f()).join()",
            3,
        ),
        // Callbacks of built-ins are not loops: only loop statements count (§6.3).
        ("[1, 2, 3].map((x) => x * 2); [1, 2].forEach(() => {})", 0),
    ];
    for &(code, expected) in cases {
        assert_eq!(counted(code).1, expected, "{code}");
    }
}

#[test]
fn patch_0600_guarded_loops_compute_what_unguarded_ones_do() {
    assert_eq!(
        counted("const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); fs.map((f) => f()).join()").0,
        Value::String("0,1,2".into())
    );
    assert_eq!(
        counted("let s = ''; outer: for (const a of 'xy') { for (const b in [0, 1]) { if (b === '1') continue outer; s += a + b } } s").0,
        Value::String("x0y0".into())
    );
    assert_eq!(
        counted("function* gen() { let i = 0; while (true) yield i++ } const it = gen(); [it.next().value, it.next().value]").0,
        Value::Array(vec![Some(Value::Number(0.0)), Some(Value::Number(1.0))])
    );
}

#[test]
fn patch_0600_the_entry_past_max_operations_does_not_run_and_cannot_be_caught() {
    let options = options(10);
    let engine = engine_with(FakeHost::default(), &options);
    let code = "try { while (true) { console.log('body') } } catch { console.log('caught') } finally { console.log('finally') }";
    let report = run_on(&engine, code, &options);
    assert_eq!(report.stats.operations, 11);
    assert_eq!(
        report.logs.text.matches("body").count(),
        10,
        "{}",
        report.logs.text
    );
    assert!(!report.logs.text.contains("caught"), "{}", report.logs.text);
    assert!(
        !report.logs.text.contains("finally"),
        "{}",
        report.logs.text
    );
    assert_eq!(
        report.result.expect_err("past maxOperations"),
        EngineError::MaxOperations { limit: 10 }
    );
}

#[test]
fn patch_0600_each_run_counts_from_zero() {
    let options = options(5);
    let engine = engine_with(FakeHost::default(), &options);
    for _ in 0..3 {
        let report = run_on(&engine, "for (let i = 0; i < 5; i++) {} 1", &options);
        assert_eq!(report.stats.operations, 5);
        assert_eq!(
            report.result.map(|done| done.output),
            Ok(Value::Number(1.0))
        );
    }
}

#[test]
fn patch_0600_a_function_compiled_in_an_earlier_run_is_still_guarded() {
    let options = options(100);
    let engine = engine_with(FakeHost::default(), &options);
    let defined = run_on(&engine, "function spin() { while (true) {} } 1", &options);
    assert_eq!(defined.stats.operations, 0);
    assert_eq!(
        run_on(&engine, "spin()", &options)
            .result
            .expect_err("spins"),
        EngineError::MaxOperations { limit: 100 }
    );
}

#[test]
fn patch_0600_after_final_answer_every_loop_entry_stops_queued_code() {
    let options = options(u64::MAX);
    let engine = engine_with(FakeHost::default(), &options);
    // The job queued before `final_answer` runs after it (§7.2 drains jobs) and is stopped at
    // its first loop-body entry; the answer stands.
    let code = "Promise.resolve().then(() => { for (;;) {} }); final_answer('done')";
    let report = run_on(&engine, code, &options);
    assert_eq!(report.stats.operations, 1);
    let completion = report.result.expect("final answer");
    assert!(completion.is_final_answer);
    assert_eq!(completion.output, Value::String("done".into()));
}

/// A loop guard's owner on a bare runtime: counts its trips and stops after `stop_after` of
/// them (or never).
struct Recorder {
    guard: LoopGuard,
    trips: Cell<u32>,
    stop_after: Option<u32>,
}

impl LoopTrip for Recorder {
    fn loop_guard(&self) -> &LoopGuard {
        &self.guard
    }

    fn trip(&self) -> bool {
        self.trips.set(self.trips.get() + 1);
        self.stop_after
            .is_some_and(|after| self.trips.get() > after)
    }

    fn throw(&self, ctx: &Ctx<'_>) {
        let _ = ctx.throw(
            rquickjs::String::from_str(ctx.clone(), "tripped")
                .unwrap()
                .into_value(),
        );
    }
}

fn bare(stop_after: Option<u32>) -> (Runtime, Context, Rc<Recorder>) {
    let runtime = Runtime::new().unwrap();
    let context = Context::full(&runtime).unwrap();
    let recorder = Rc::new(Recorder {
        guard: LoopGuard::new(),
        trips: Cell::new(0),
        stop_after,
    });
    (runtime, context, recorder)
}

#[test]
fn patch_0600_the_c_api_counts_trips_past_the_limit_and_throws_what_trip_threw() {
    let (_runtime, context, recorder) = bare(Some(2));
    context.with(|ctx| {
        install_loop_guard(&ctx, &recorder).unwrap();
        recorder.guard.restart(3);
        // Entries 1-3 are within the limit; 4 and 5 trip without stopping; 6 trips and stops.
        let thrown = ctx
            .eval::<i32, _>("let n = 0; while (true) n++;")
            .unwrap_err();
        assert!(matches!(thrown, rquickjs::Error::Exception));
        assert_eq!(
            ctx.catch().as_string().unwrap().to_string().unwrap(),
            "tripped"
        );
        assert_eq!(recorder.guard.count(), 6);
        assert_eq!(recorder.trips.get(), 3);
        assert_eq!(ctx.eval::<i32, _>("n").unwrap(), 5);
    });
}

#[test]
fn patch_0600_trip_at_next_entry_trips_at_once_and_restart_rearms() {
    let (_runtime, context, recorder) = bare(Some(0));
    context.with(|ctx| {
        install_loop_guard(&ctx, &recorder).unwrap();
        recorder.guard.trip_at_next_entry();
        assert!(ctx.eval::<(), _>("for (;;) {}").is_err());
        let _ = ctx.catch();
        assert_eq!(recorder.guard.count(), 1);
        recorder.guard.restart(u64::MAX);
        assert_eq!(
            ctx.eval::<i32, _>("let k = 0; for (let i = 0; i < 7; i++) k++; k")
                .unwrap(),
            7
        );
        assert_eq!(recorder.guard.count(), 7);
    });
}

#[test]
fn patch_0600_only_code_compiled_while_a_guard_is_installed_counts() {
    let (_runtime, context, recorder) = bare(None);
    context.with(|ctx| {
        ctx.eval::<(), _>("globalThis.before = () => { for (let i = 0; i < 4; i++) {} }")
            .unwrap();
        install_loop_guard(&ctx, &recorder).unwrap();
        ctx.eval::<(), _>("globalThis.after = () => { for (let i = 0; i < 4; i++) {} }; before()")
            .unwrap();
        assert_eq!(recorder.guard.count(), 0);
        ctx.eval::<(), _>("after()").unwrap();
        assert_eq!(recorder.guard.count(), 4);
        // With no guard installed, compiled guards count nothing and new code has none.
        set_loop_guard(&ctx, None);
        ctx.eval::<(), _>(
            "after(); globalThis.unguarded = () => { while (false) {} for (const x of [1]) {} }",
        )
        .unwrap();
        set_loop_guard(&ctx, Some(&recorder.guard));
        ctx.eval::<(), _>("unguarded()").unwrap();
        assert_eq!(recorder.guard.count(), 4);
        assert_eq!(recorder.trips.get(), 0);
    });
}

#[test]
fn patch_0600_builtins_compiled_by_upstream_qjsc_still_run() {
    // Array.fromAsync and Iterator.zip / zipKeyed are bytecode numbered without the new
    // opcode; read as ours they hung or corrupted the heap.
    let (output, operations) = counted(
        "const a = await Array.fromAsync([1, Promise.resolve(2)]);
         const z = [...Iterator.zip([[1, 2], [3, 4]])];
         const k = [...Iterator.zipKeyed({ a: [1, 2], b: [3, 4] })];
         const keys = Reflect.ownKeys(Iterator).map((key) => typeof Iterator[key]);
         JSON.stringify([a, z, k, keys.length > 0])",
    );
    assert_eq!(
        output,
        Value::String(r#"[[1,2],[[1,3],[2,4]],[{"a":1,"b":3},{"a":2,"b":4}],true]"#.into())
    );
    assert_eq!(operations, 0);
}

#[test]
fn patch_0600_a_top_level_loop_holds_one_iterations_value_at_a_time() {
    // The body entry empties the script's completion value, as the injected guard statement
    // did: the previous iteration's 4 MiB string is freed before the next one is built.
    let options = options(u64::MAX);
    let engine = engine_with(FakeHost::default(), &options);
    let peak = |code: &str| {
        let report = run_on(&engine, code, &options);
        assert!(report.result.is_ok(), "{code}: {:?}", report.result);
        report.stats.peak_heap_bytes
    };
    let one = peak("'x'.repeat(2 ** 22); 1");
    let looped = peak("for (let i = 0; i < 4; i++) 'x'.repeat(2 ** 22 + i); 1");
    assert!(
        looped < one + (1 << 21),
        "a loop of 4 MiB strings peaked at {looped} bytes, one string at {one}"
    );
}
