//! Engine tests without Node: a real engine thread driven through its channel, with a fake host.
//! The suites of one behaviour each (deadlines in built-ins, out of memory, the loop guard, lazy
//! intrinsics, the fast RegExp paths, script semantics, differential conformance) are the
//! submodules.
//!
//! Spec: §7 (execution semantics), §9.4 and §9.7.

mod conformance;
mod deadline;
mod first_use;
mod intrinsics;
mod loop_guard;
mod loop_inventory;
mod oom;
mod regexp;
mod semantics;
mod slices;

use std::time::Duration;
use std::time::Instant;

use super::testing::{after, engine_with, run_abortable, run_on, sync, FakeHost, FakeTool};
use super::*;
use crate::engine::host::ToolFailure;

fn options() -> Options {
    Options {
        timeout_ms: 2_000,
        ..Options::default()
    }
}

fn number(args: &[Value], index: usize) -> f64 {
    match args.get(index) {
        Some(Value::Number(n)) => *n,
        _ => f64::NAN,
    }
}

fn host() -> FakeHost {
    FakeHost::default()
        .with(
            "add",
            sync(|args| Ok(Value::Number(number(&args, 0) + number(&args, 1)))),
        )
        .with(
            "slowAdd",
            after(50, |args| Ok(Value::Number(number(&args, 0) + 1.0))),
        )
        .with(
            "boom",
            sync(|_| {
                Err(ToolFailure {
                    name: "TypeError".into(),
                    message: "kaput".into(),
                    retryable: true,
                })
            }),
        )
        .with(
            "slowBoom",
            after(10, |_| Err(ToolFailure::new("late failure"))),
        )
        .with("never", FakeTool::Never)
}

fn output(report: RunReport) -> Value {
    match report.result {
        Ok(completion) => completion.output,
        Err(error) => panic!("run failed: {error:?} (logs: {})", report.logs.text),
    }
}

fn error(report: RunReport) -> EngineError {
    report.result.expect_err("expected a failure")
}

#[test]
fn a_sync_tool_returns_its_value_synchronously() {
    let engine = engine_with(host(), &options());
    assert_eq!(
        output(run_on(&engine, "const n = add(1, 2); n", &options())),
        Value::Number(3.0)
    );
}

#[test]
fn an_async_tool_returns_a_promise_and_await_works_on_both() {
    let engine = engine_with(host(), &options());
    let code = "const p = slowAdd(1); [p instanceof Promise, await p, await add(2, 2)]";
    assert_eq!(
        output(run_on(&engine, code, &options())),
        Value::Array(vec![
            Some(Value::Bool(true)),
            Some(Value::Number(2.0)),
            Some(Value::Number(4.0))
        ])
    );
}

#[test]
fn async_calls_overlap() {
    let engine = engine_with(host(), &options());
    let started = Instant::now();
    let code = "await Promise.all([slowAdd(1), slowAdd(2), slowAdd(3), slowAdd(4)])";
    output(run_on(&engine, code, &options()));
    // Four 50 ms calls in sequence would take 200 ms.
    assert!(
        started.elapsed().as_millis() < 150,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_tool_failure_is_a_catchable_error_with_the_tools_name_and_message() {
    let engine = engine_with(host(), &options());
    let code = "let seen; try { boom() } catch (e) { seen = [e instanceof Error, e.name, e.message] } seen";
    assert_eq!(
        output(run_on(&engine, code, &options())),
        Value::Array(vec![
            Some(Value::Bool(true)),
            Some(Value::String("TypeError".into())),
            Some(Value::String("kaput".into()))
        ])
    );
}

#[test]
fn an_uncaught_tool_failure_is_a_tool_error_at_the_calling_line() {
    let engine = engine_with(host(), &options());
    match error(run_on(&engine, "const a = 1;\nboom(a)", &options())) {
        EngineError::Tool {
            tool, message, at, ..
        } => {
            assert_eq!(tool, "boom");
            assert_eq!(message, "TypeError: kaput");
            let at = at.expect("the calling line");
            assert_eq!(at.location.line, 2);
            assert_eq!(at.source_line, "boom(a)");
        }
        other => panic!("expected a tool error, got {other:?}"),
    }
}

#[test]
fn an_uncaught_rejection_from_a_tool_is_a_tool_error() {
    let engine = engine_with(host(), &options());
    assert!(matches!(
        error(run_on(&engine, "await slowBoom()", &options())),
        EngineError::Tool { tool, .. } if tool == "slowBoom"
    ));
}

#[test]
fn an_error_thrown_after_a_tool_returned_is_a_runtime_error() {
    let engine = engine_with(host(), &options());
    assert!(matches!(
        error(run_on(
            &engine,
            "const n = add(1, 2); n.foo.bar",
            &options()
        )),
        EngineError::Runtime { .. }
    ));
}

#[test]
fn a_tool_that_never_settles_times_out_and_leaves_the_context_dirty() {
    let options = Options {
        timeout_ms: 100,
        ..Options::default()
    };
    let engine = engine_with(host(), &options);
    let started = Instant::now();
    let report = run_on(&engine, "await never()", &options);
    assert!(report.dirty);
    assert_eq!(error(report), EngineError::Timeout { timeout_ms: 100 });
    assert!(
        started.elapsed().as_millis() < 200,
        "{:?}",
        started.elapsed()
    );
    assert_eq!(error(run_on(&engine, "1", &options)), EngineError::Dirty);
}

#[test]
fn cpu_loops_the_guard_does_not_count_are_stopped_at_the_deadline() {
    let options = Options {
        timeout_ms: 100,
        max_operations: u64::MAX,
        ..Options::default()
    };
    for code in [
        "while (true) {}",
        "function f() { try { f() } catch {} try { f() } catch {} } f()",
        "/^(a+)+$/.test('a'.repeat(40) + 'b')",
        "Promise.resolve().then(function f() { Promise.resolve().then(f) }); await new Promise(() => {})",
        "while (true) { await null }",
    ] {
        let engine = engine_with(host(), &options);
        let started = Instant::now();
        let report = run_on(&engine, code, &options);
        assert_eq!(error(report), EngineError::Timeout { timeout_ms: 100 }, "{code}");
        // Unstopped, each of these runs for minutes or forever; how close to the deadline they
        // stop is a benchmark figure (the runaway loop, W8 in bench/workloads.mjs), not something
        // a loaded test machine can time.
        assert!(started.elapsed().as_secs() < 5, "{code}: {:?}", started.elapsed());
    }
}

#[test]
fn a_memory_bomb_hits_the_heap_limit_and_the_context_is_dirty() {
    let options = Options {
        memory_limit_bytes: 16 * 1024 * 1024,
        ..options()
    };
    let engine = engine_with(host(), &options);
    let report = run_on(
        &engine,
        "const keep = []; while (true) keep.push(new Array(100000).fill(1))",
        &Options {
            max_operations: u64::MAX,
            ..options.clone()
        },
    );
    assert!(report.dirty);
    assert!(matches!(
        error(report),
        EngineError::Limit {
            limit: "memoryLimitBytes",
            ..
        }
    ));
}

#[test]
fn runaway_recursion_hits_the_stack_limit_and_the_context_stays_usable() {
    let engine = engine_with(host(), &options());
    let report = run_on(
        &engine,
        "function down(n) { return down(n + 1) + 1 }\ndown(0)",
        &options(),
    );
    assert!(!report.dirty);
    assert!(matches!(
        error(report),
        EngineError::Limit {
            limit: "maxStackBytes",
            ..
        }
    ));
    assert_eq!(
        output(run_on(&engine, "1 + 1", &options())),
        Value::Number(2.0)
    );
}

#[test]
fn final_answer_and_tools_after_it_do_not_run() {
    let engine = engine_with(host(), &options());
    let report = run_on(
        &engine,
        "try { final_answer(1) } catch {} add(1, 2)",
        &options(),
    );
    assert_eq!(
        report.result,
        Ok(Completion {
            output: Value::Number(1.0),
            is_final_answer: true
        })
    );
}

#[test]
fn variables_are_globals_holding_copies() {
    let engine = engine_with(host(), &options());
    let variables = vec![("answer".to_string(), Value::Number(42.0))];
    engine
        .set_variables(variables)
        .blocking_recv()
        .unwrap()
        .unwrap();
    assert_eq!(
        output(run_on(&engine, "answer = answer + 1; answer", &options())),
        Value::Number(43.0)
    );
}

#[test]
fn tools_are_frozen_non_writable_globals() {
    let engine = engine_with(host(), &options());
    // Through `globalThis`, because validation already refuses `add = …` (tool_name_shadowing):
    // this checks the runtime's own defence.
    let code = r#"
        try { globalThis.add = () => 0 } catch {}
        try { delete globalThis.add } catch {}
        try { add.call = null } catch {}
        [add(1, 1), Object.isFrozen(add), Object.getOwnPropertyDescriptor(globalThis, "add").writable]"#;
    assert_eq!(
        output(run_on(&engine, code, &options())),
        Value::Array(vec![
            Some(Value::Number(2.0)),
            Some(Value::Bool(true)),
            Some(Value::Bool(false))
        ])
    );
}

#[test]
fn a_run_with_nothing_left_to_settle_its_promise_fails_at_once() {
    let engine = engine_with(host(), &options());
    assert!(matches!(
        error(run_on(&engine, "await new Promise(() => {})", &options())),
        EngineError::Runtime { message, .. } if message.contains("never settle")
    ));
}

#[test]
fn eval_and_every_function_constructor_are_unavailable() {
    let engine = engine_with(host(), &options());
    for code in [
        "eval('1')",
        "(0, eval)('1')",
        "Function('return 1')()",
        "new Function('while (true) {}')",
        "(() => {}).constructor('return 1')",
        "(async () => {}).constructor('return 1')",
        "(function* () {}).constructor('yield 1')",
        "(async function* () {}).constructor('yield 1')",
        "Reflect.construct(Object.getPrototypeOf(function () {}).constructor, ['return 1'])",
    ] {
        match error(run_on(&engine, code, &options())) {
            EngineError::Runtime { message, .. } => {
                assert!(
                    message.starts_with(
                        "EvalError: eval() and the Function constructors are not available"
                    ),
                    "{code}: {message}"
                );
            }
            other => panic!("{code}: {other:?}"),
        }
    }
}

#[test]
fn the_refusal_is_a_real_eval_error_and_eval_is_no_constructor() {
    let engine = engine_with(host(), &options());
    // Taken before the global is replaced: the refusal is the realm's own EvalError all the
    // same. `Promise.all.call(C, [])` constructs `C`, so a constructor `eval` would be called.
    let code = "const RealEvalError = EvalError; globalThis.EvalError = function () {};
        const refusal = (call) => { try { call(); return 'no error' } catch (e) { return e } };
        const a = refusal(() => eval('1'));
        const b = refusal(() => new Function('return 1'));
        const c = refusal(() => Promise.all.call(eval, []));
        [a instanceof RealEvalError, Object.getPrototypeOf(a) === RealEvalError.prototype,
         a.constructor === RealEvalError, typeof a.stack,
         b instanceof RealEvalError, c instanceof TypeError, c.message]";
    let Value::Array(items) = output(run_on(&engine, code, &options())) else {
        panic!("not an array");
    };
    let items: Vec<Value> = items.into_iter().map(Option::unwrap).collect();
    assert_eq!(
        items[..6],
        [
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(true),
            Value::String("string".into()),
            Value::Bool(true),
            Value::Bool(true),
        ]
    );
    assert!(
        matches!(&items[6], Value::String(message) if message.contains("not a constructor")),
        "{:?}",
        items[6]
    );
}

#[test]
fn functions_still_behave_as_functions_after_the_lockdown() {
    let engine = engine_with(host(), &options());
    let code = "const f = function (a) { return a }; [f instanceof Function, f.call(null, 7), typeof Function.prototype.bind, (async () => 1) instanceof Function]";
    assert_eq!(
        output(run_on(&engine, code, &options())),
        Value::Array(vec![
            Some(Value::Bool(true)),
            Some(Value::Number(7.0)),
            Some(Value::String("function".into())),
            Some(Value::Bool(true))
        ])
    );
}

fn with_modules() -> Options {
    use crate::modules::{ModuleExport, ModuleSpec};
    Options {
        authorized_imports: vec!["x-ok".into(), "math".into(), "ghost".into(), "chain".into()],
        modules: vec![
            ("x-ok".into(), ModuleSpec::Source("export const answer = 42;\nexport function spin() { while (true) {} }\nexport default 'x-ok';".into())),
            ("math".into(), ModuleSpec::Object(vec![
                ("pi".into(), ModuleExport::Data(Value::Number(3.0))),
                ("double".into(), ModuleExport::Function),
            ])),
            ("x-denied".into(), ModuleSpec::Source("export const secret = 1".into())),
            ("chain".into(), ModuleSpec::Source("export * from 'x-denied';".into())),
        ],
        max_operations: 1000,
        ..options()
    }
}

fn module_host() -> FakeHost {
    host().with(
        "math#double",
        sync(|args| Ok(Value::Number(number(&args, 0) * 2.0))),
    )
}

#[test]
fn an_authorized_source_module_loads_and_its_loops_are_guarded() {
    let options = with_modules();
    let engine = engine_with(module_host(), &options);
    let code = "const m = await import('x-ok'); [m.answer, m.default]";
    assert_eq!(
        output(run_on(&engine, code, &options)),
        Value::Array(vec![
            Some(Value::Number(42.0)),
            Some(Value::String("x-ok".into()))
        ])
    );
    assert_eq!(
        error(run_on(&engine, "(await import('x-ok')).spin()", &options)),
        EngineError::MaxOperations { limit: 1000 }
    );
}

#[test]
fn an_object_module_exports_copies_and_host_functions() {
    let options = with_modules();
    let engine = engine_with(module_host(), &options);
    let code = "const { pi, double, default: all } = await import('math'); [pi, double(21), typeof all.double]";
    assert_eq!(
        output(run_on(&engine, code, &options)),
        Value::Array(vec![
            Some(Value::Number(3.0)),
            Some(Value::Number(42.0)),
            Some(Value::String("function".into()))
        ])
    );
}

#[test]
fn the_loader_refuses_unauthorized_names_even_when_registered() {
    let options = with_modules();
    let engine = engine_with(module_host(), &options);
    // Validation sees agent code only: a registered module importing another is checked by
    // the loader.
    let report = run_on(&engine, "await import('chain')", &options);
    assert_eq!(
        error(report),
        EngineError::ImportNotAllowed {
            message: "Import not allowed: 'x-denied'. Allowed: x-ok, math, ghost, chain".into(),
            at: None,
        }
    );
}

#[test]
fn an_authorized_name_nobody_registered_cannot_be_found() {
    let options = with_modules();
    let engine = engine_with(module_host(), &options);
    assert!(matches!(
        error(run_on(&engine, "await import('ghost')", &options)),
        EngineError::Runtime { message, .. } if message.starts_with("Error: Cannot find module 'ghost'")
    ));
}

#[test]
fn the_module_hook_checks_the_policy_too() {
    let options = with_modules();
    let engine = engine_with(module_host(), &options);
    let code = "globalThis['__smol_' + 'module']('x-denied')";
    assert!(matches!(
        error(run_on(&engine, code, &options)),
        EngineError::ImportNotAllowed { .. }
    ));
}

#[test]
fn tools_sent_after_sandbox_code_replaced_object_freeze_are_still_frozen() {
    let engine = engine_with(host(), &options());
    output(run_on(
        &engine,
        "Object.freeze = (x) => x; globalThis.Object = null; 1",
        &options(),
    ));
    engine
        .define_tools(vec![String::from("fresh").into()])
        .blocking_recv()
        .unwrap()
        .unwrap();
    assert_eq!(
        output(run_on(&engine, "Reflect.isExtensible(fresh)", &options())),
        Value::Bool(false)
    );
}

#[test]
fn stats_count_operations_tool_calls_and_tool_time() {
    let options = options();
    let engine = engine_with(host(), &options);
    let report = run_on(
        &engine,
        "let n = 0; for (let i = 0; i < 40; i++) n = add(n, 1); await slowAdd(1); await slowAdd(2); n",
        &options,
    );
    let stats = report.stats;
    assert_eq!(output(report), Value::Number(40.0));
    assert_eq!(stats.operations, 40);
    assert_eq!(stats.tool_calls, 42);
    // Two sequential 50 ms async tools.
    assert!(stats.tool_time >= Duration::from_millis(100), "{stats:?}");
    assert!(stats.wall_time >= stats.tool_time, "{stats:?}");
}

#[test]
fn the_peak_heap_follows_what_the_run_allocates_and_restarts_each_run() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let big = run_on(
        &engine,
        "let big = new Array(100000).fill(0).map((_, i) => [i]); big.length",
        &options,
    );
    let after_release = run_on(&engine, "big = null; 1", &options);
    let small = run_on(&engine, "2", &options);
    assert!(big.stats.peak_heap_bytes > small.stats.peak_heap_bytes + 1_000_000);
    assert!(after_release.stats.peak_heap_bytes >= small.stats.peak_heap_bytes);
    assert!(small.stats.peak_heap_bytes > 0);
}

#[test]
fn an_abort_stops_a_busy_run_and_leaves_the_context_dirty() {
    let options = Options {
        max_operations: u64::MAX,
        timeout_ms: 60_000,
        ..Options::default()
    };
    let engine = engine_with(FakeHost::default(), &options);
    let abort = RunAbort::new();
    let aborter = abort.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        aborter.abort();
    });
    let started = Instant::now();
    let report = run_abortable(&engine, "while (true) {}", &options, &abort);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(report.dirty);
    assert_eq!(error(report), EngineError::Aborted { started: true });
}

#[test]
fn an_abort_wakes_a_run_waiting_for_a_tool() {
    let options = Options {
        timeout_ms: 60_000,
        ..Options::default()
    };
    let engine = engine_with(host(), &options);
    let abort = RunAbort::new();
    let aborter = abort.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        aborter.abort();
    });
    let report = run_abortable(&engine, "await never()", &options, &abort);
    assert_eq!(error(report), EngineError::Aborted { started: true });
}

#[test]
fn a_run_aborted_before_it_starts_runs_nothing_and_stays_clean() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let abort = RunAbort::new();
    abort.abort();
    let report = run_abortable(&engine, "globalThis.ran = true", &options, &abort);
    assert!(!report.dirty);
    assert_eq!(error(report), EngineError::Aborted { started: false });
    assert_eq!(
        output(run_on(&engine, "typeof ran", &options)),
        Value::String("undefined".into())
    );
}

/// Regression (security suite, "a NUL character inside a string literal"): a raw NUL that
/// survived code generation (in a directive, a template, a regexp) failed every such run with
/// rquickjs's "internal null bytes" error.
#[test]
fn raw_nul_characters_in_directives_templates_and_regexps_run() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| output(run_on(&engine, code, &options()));
    assert_eq!(run("'a\0b'"), Value::String("a\0b".into()));
    assert_eq!(run("`x\0y${1}\0`"), Value::String("x\0y1\0".into()));
    assert_eq!(
        run("[/\0/.test('\0'), /\\\0/.test('\0')]"),
        Value::Array(vec![Some(Value::Bool(true)), Some(Value::Bool(true))])
    );
}

/// Sends a run without waiting for it.
fn start_run(engine: &Engine, code: &str, options: &Options) -> oneshot::Receiver<RunReport> {
    engine.run(RunRequest::new(code.into(), options, RunAbort::new()))
}

#[test]
fn runs_waiting_for_async_tools_hold_no_thread() {
    // Far more executors than pool threads, each awaiting a 200 ms tool: if a waiting run held
    // its thread they would take (executors / threads) × 200 ms; they take about 200 ms.
    let options = options();
    let host = || FakeHost::default().with("slow", after(200, |_| Ok(Value::Number(1.0))));
    let engines: Vec<Engine> = (0..40).map(|_| engine_with(host(), &options)).collect();
    let started = Instant::now();
    let replies: Vec<_> = engines
        .iter()
        .map(|engine| start_run(engine, "await slow()", &options))
        .collect();
    for reply in replies {
        assert_eq!(output(reply.blocking_recv().unwrap()), Value::Number(1.0));
    }
    assert!(
        started.elapsed() < Duration::from_millis(2_000),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_waiting_run_resumes_as_each_answer_arrives_and_keeps_its_order() {
    let options = options();
    let engine = engine_with(host(), &options);
    let code = "const out = []; for (let i = 0; i < 20; i++) { out.push(await slowAdd(i)); out.push(add(i, 0)) } out.join(',')";
    let expected: Vec<String> = (0..20)
        .flat_map(|i| [i + 1, i])
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        output(run_on(&engine, code, &options)),
        Value::String(expected.join(","))
    );
}

#[test]
fn spinning_guests_beyond_the_pool_size_are_each_stopped_at_their_deadline() {
    let options = Options {
        timeout_ms: 150,
        max_operations: u64::MAX,
        ..Options::default()
    };
    let engines: Vec<Engine> = (0..8).map(|_| engine_with(host(), &options)).collect();
    let replies: Vec<_> = engines
        .iter()
        .map(|engine| start_run(engine, "while (true) {}", &options))
        .collect();
    for reply in replies {
        let report = reply.blocking_recv().unwrap();
        assert!(report.dirty);
        assert_eq!(error(report), EngineError::Timeout { timeout_ms: 150 });
    }
    // Every thread is free again: a fresh executor runs at once.
    let fresh = engine_with(host(), &options);
    assert_eq!(
        output(run_on(&fresh, "1 + 1", &options)),
        Value::Number(2.0)
    );
}

#[test]
fn stopping_an_engine_interrupts_its_spinning_run_and_frees_the_runtime() {
    let options = Options {
        timeout_ms: 60_000,
        max_operations: u64::MAX,
        ..Options::default()
    };
    let engine = engine_with(host(), &options);
    let reply = start_run(&engine, "while (true) {}", &options);
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    let freed = engine.stop();
    assert_eq!(error(reply.blocking_recv().unwrap()), EngineError::Stopped);
    assert_eq!(freed.blocking_recv(), Ok(()));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn stopping_an_engine_ends_a_run_waiting_off_thread() {
    let options = Options {
        timeout_ms: 60_000,
        ..Options::default()
    };
    let engine = engine_with(host(), &options);
    let reply = start_run(&engine, "await never()", &options);
    std::thread::sleep(Duration::from_millis(50));
    let freed = engine.stop();
    assert_eq!(error(reply.blocking_recv().unwrap()), EngineError::Stopped);
    assert_eq!(freed.blocking_recv(), Ok(()));
}

#[test]
fn messages_sent_while_a_run_waits_are_served_after_it_in_order() {
    let options = Options {
        run_concurrency: crate::options::RunConcurrency::Queue,
        ..options()
    };
    let engine = engine_with(host(), &options);
    let first = start_run(
        &engine,
        "globalThis.order = [await slowAdd(0)]; 1",
        &options,
    );
    let variables = engine.set_variables(vec![("late".into(), Value::Number(5.0))]);
    let second = start_run(&engine, "order.push(late); order", &options);
    assert_eq!(output(first.blocking_recv().unwrap()), Value::Number(1.0));
    assert_eq!(variables.blocking_recv().unwrap(), Ok(()));
    assert_eq!(
        output(second.blocking_recv().unwrap()),
        Value::Array(vec![Some(Value::Number(1.0)), Some(Value::Number(5.0))])
    );
}

#[test]
fn the_deepest_stack_the_options_allow_throws_a_range_error_on_a_pool_thread() {
    let depth = |max_stack_bytes: usize| {
        let options = Options {
            max_stack_bytes,
            ..options()
        };
        let engine = engine_with(host(), &options);
        let code = "let depth = 0, seen; function down() { depth++; down() } try { down() } catch (e) { seen = e instanceof RangeError && depth } seen";
        match output(run_on(&engine, code, &options)) {
            Value::Number(depth) => depth,
            other => panic!("not a RangeError: {other:?}"),
        }
    };
    let default = depth(Options::default().max_stack_bytes);
    // 16 times the default budget goes about 16 times as deep, and stops cleanly.
    assert!(
        depth(crate::options::MAX_STACK_BYTES) > 8.0 * default,
        "{default}"
    );
}

/// Regression: messages that arrived while a run waited for a synchronous tool were set aside
/// and, when the run then finished without ever waiting off the thread, never served (a queued
/// run or a shutdown was lost).
#[test]
fn messages_sent_while_a_run_waits_for_a_sync_tool_are_served_after_it() {
    let options = Options {
        run_concurrency: crate::options::RunConcurrency::Queue,
        ..options()
    };
    let slow = || {
        FakeHost::default().with(
            "slowSync",
            FakeTool::SlowSync(
                Duration::from_millis(100),
                Arc::new(|_| Ok(Value::Number(1.0))),
            ),
        )
    };
    let engine = engine_with(slow(), &options);
    let first = start_run(&engine, "slowSync()", &options);
    std::thread::sleep(Duration::from_millis(20));
    let variables = engine.set_variables(vec![("late".into(), Value::Number(5.0))]);
    let second = start_run(&engine, "late", &options);
    assert_eq!(output(first.blocking_recv().unwrap()), Value::Number(1.0));
    assert_eq!(variables.blocking_recv().unwrap(), Ok(()));
    assert_eq!(output(second.blocking_recv().unwrap()), Value::Number(5.0));

    let engine = engine_with(slow(), &options);
    let waiting = start_run(&engine, "slowSync(); 2", &options);
    std::thread::sleep(Duration::from_millis(20));
    let freed = engine.stop();
    assert_eq!(
        error(waiting.blocking_recv().unwrap()),
        EngineError::Stopped
    );
    assert_eq!(freed.blocking_recv(), Ok(()));
}

/// A host error arrives without its stack; a copy made while sandbox code runs (a tool's
/// result, sync or awaited) must not take the stack of wherever that code was, which made the
/// same result differ from run to run (found by the `options_tools` fuzz target).
#[test]
fn an_error_without_a_stack_arrives_with_no_frames() {
    let stackless = || Value::Error {
        name: "TypeError".into(),
        message: "as a value".into(),
        stack: None,
    };
    let host = FakeHost::default()
        .with("now", sync(move |_| Ok(stackless())))
        .with("later", after(5, move |_| Ok(stackless())));
    let engine = engine_with(host, &options());
    let code = "const a = now();\nawait null;\nconst b = await later();\n[a.stack, b.stack, a instanceof TypeError, b.message]";
    assert_eq!(
        output(run_on(&engine, code, &options())),
        Value::Array(vec![
            Some(Value::String(String::new())),
            Some(Value::String(String::new())),
            Some(Value::Bool(true)),
            Some(Value::String("as a value".into())),
        ])
    );
}

#[test]
fn a_tool_with_inputs_receives_one_object_of_named_inputs_however_it_was_called() {
    let echo = FakeHost::default().with(
        "echo",
        sync(|args| Ok(Value::Array(args.into_iter().map(Some).collect()))),
    );
    let engine = engine_with(echo, &options());
    let spec = host::ToolSpec {
        name: "echo".into(),
        inputs: Some(vec!["a".into(), "b".into()]),
    };
    engine
        .define_tools(vec![spec])
        .blocking_recv()
        .unwrap()
        .unwrap();
    let named = |a: f64, b: f64| {
        Value::Array(vec![Some(Value::Object(vec![
            ("a".into(), Value::Number(a)),
            ("b".into(), Value::Number(b)),
        ]))])
    };
    assert_eq!(
        output(run_on(&engine, "echo(1, 2)", &options())),
        named(1.0, 2.0)
    );
    assert_eq!(
        output(run_on(&engine, "echo({ b: 4, a: 3 })", &options())),
        Value::Array(vec![Some(Value::Object(vec![
            ("b".into(), Value::Number(4.0)),
            ("a".into(), Value::Number(3.0)),
        ]))])
    );
    // Sent again as a plain function, it takes its arguments as they are.
    engine
        .define_tools(vec![String::from("echo").into()])
        .blocking_recv()
        .unwrap()
        .unwrap();
    assert_eq!(
        output(run_on(&engine, "echo(1, 2)", &options())),
        Value::Array(vec![Some(Value::Number(1.0)), Some(Value::Number(2.0))])
    );
}
