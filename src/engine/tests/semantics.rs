//! What a run means, through the whole engine (docs/contract.md "Script semantics first"): results
//! that are Promises, state across runs by REPL rules, and the errors both report.

use crate::engine::host::ToolFailure;
use crate::engine::testing::{after, engine_with, run_on, FakeHost, FakeTool};
use crate::engine::*;

fn options() -> Options {
    Options {
        timeout_ms: 2_000,
        ..Options::default()
    }
}

fn host() -> FakeHost {
    FakeHost::default()
        .with("later", after(20, |_| Ok(Value::String("later".into()))))
        .with(
            "laterBoom",
            after(10, |_| {
                Err(ToolFailure {
                    name: "RangeError".into(),
                    message: "late".into(),
                    retryable: false,
                })
            }),
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

fn string(text: &str) -> Value {
    Value::String(text.into())
}

/// The line a runtime error names, and its message without the location.
fn line_of(error: &EngineError) -> Option<u32> {
    match error {
        EngineError::Runtime { at, .. } | EngineError::Tool { at, .. } => {
            at.as_ref().map(|at| at.location.line)
        }
        _ => None,
    }
}

#[test]
fn a_returned_promise_is_awaited_and_its_value_is_the_output() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| output(run_on(&engine, code, &options()));
    assert_eq!(run("return new Promise((r) => r('done'))"), string("done"));
    assert_eq!(run("if (true) return later();\n1"), string("later"));
}

#[test]
fn a_promise_left_as_the_last_expression_is_awaited() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| output(run_on(&engine, code, &options()));
    assert_eq!(run("Promise.resolve(5)"), Value::Number(5.0));
    assert_eq!(run("later()"), string("later"));
    assert_eq!(
        run("(async () => { await later(); return [1, 2] })()"),
        Value::Array(vec![Some(Value::Number(1.0)), Some(Value::Number(2.0))])
    );
}

#[test]
fn a_rejected_result_is_a_runtime_error_at_the_return_or_expression() {
    let engine = engine_with(host(), &options());
    let failure = error(run_on(
        &engine,
        "const why = 'no';\nreturn Promise.reject(why)",
        &options(),
    ));
    assert!(
        matches!(&failure, EngineError::Runtime { message, .. } if message.starts_with("Uncaught 'no'")),
        "{failure:?}"
    );
    assert_eq!(line_of(&failure), Some(2));
    let failure = error(run_on(&engine, "1;\n\nPromise.reject(42)", &options()));
    assert_eq!(line_of(&failure), Some(3), "{failure:?}");
}

#[test]
fn a_rejection_that_carries_its_own_position_keeps_it() {
    let engine = engine_with(host(), &options());
    let code =
        "async function load() {\n  await null;\n  throw new TypeError('bad');\n}\nreturn load()";
    let failure = error(run_on(&engine, code, &options()));
    assert!(
        matches!(&failure, EngineError::Runtime { message, .. } if message.starts_with("TypeError: bad")),
        "{failure:?}"
    );
    assert_eq!(line_of(&failure), Some(3));
}

#[test]
fn a_rejected_tool_promise_as_the_result_is_a_tool_error() {
    let engine = engine_with(host(), &options());
    let failure = error(run_on(&engine, "const x = 1;\nlaterBoom()", &options()));
    assert!(
        matches!(&failure, EngineError::Tool { tool, message, .. } if tool == "laterBoom" && message == "RangeError: late"),
        "{failure:?}"
    );
    assert_eq!(line_of(&failure), Some(2));
}

#[test]
fn a_result_that_never_settles_ends_at_the_deadline() {
    let options = Options {
        timeout_ms: 100,
        ..options()
    };
    let engine = engine_with(host(), &options);
    let report = run_on(&engine, "never()", &options);
    assert_eq!(error(report), EngineError::Timeout { timeout_ms: 100 });
}

#[test]
fn a_returned_promise_that_nothing_can_settle_is_reported_at_the_return() {
    let engine = engine_with(host(), &options());
    let failure = error(run_on(
        &engine,
        "const pending = new Promise(() => {});\nreturn pending",
        &options(),
    ));
    assert!(
        matches!(&failure, EngineError::Runtime { message, .. } if message.contains("can never settle")),
        "{failure:?}"
    );
    assert_eq!(line_of(&failure), Some(2));
}

#[test]
fn only_promises_are_awaited_a_thenable_or_proxy_is_an_ordinary_output() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| output(run_on(&engine, code, &options()));
    // The result's `then` is never looked up: the getter runs once, for the copy.
    assert_eq!(
        run("let reads = 0;\nglobalThis.seen = () => reads;\n({ get then() { reads++; return undefined } })"),
        Value::Object(vec![("then".into(), Value::Undefined)])
    );
    assert_eq!(run("seen()"), Value::Number(1.0));
    // A Proxy is described, never read through its traps.
    assert_eq!(
        run("return new Proxy({}, { get() { throw new Error('trap ran') } })"),
        Value::Uncloneable("{}".into())
    );
}

#[test]
fn final_answer_in_the_result_still_ends_the_run_as_final() {
    let engine = engine_with(host(), &options());
    let report = run_on(&engine, "return final_answer(later())", &options());
    let completion = report.result.unwrap();
    assert!(completion.is_final_answer);
}

#[test]
fn top_level_return_runs_finally_blocks_and_ends_the_run() {
    let engine = engine_with(host(), &options());
    let report = run_on(
        &engine,
        "try { return 'early' } finally { console.log('finally') }\nconsole.log('after')",
        &options(),
    );
    assert_eq!(report.logs.text, "finally");
    assert_eq!(output(report), string("early"));
}

#[test]
fn state_persists_as_global_lexical_bindings_by_repl_rules() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| run_on(&engine, code, &options());
    output(run(
        "const c = 1; let l = 1; class K {}; var v = 1; function f() { return [c, l] }",
    ));
    // Declared again with the same kind: allowed, and closures of earlier runs see the new
    // binding.
    output(run("const c = 2; let l = 2; class K { static x = 1 }"));
    assert_eq!(
        output(run("[f(), K.x, 'c' in globalThis, 'v' in globalThis]")),
        Value::Array(vec![
            Some(Value::Array(vec![
                Some(Value::Number(2.0)),
                Some(Value::Number(2.0))
            ])),
            Some(Value::Number(1.0)),
            Some(Value::Bool(false)),
            Some(Value::Bool(true)),
        ])
    );
    // A const stays a const, in later runs too.
    let failure = error(run("c = 3"));
    assert!(
        matches!(&failure, EngineError::Runtime { message, .. } if message.starts_with("TypeError")),
        "{failure:?}"
    );
    // Another kind may not take the name over.
    for code in ["let c = 3", "const l = 3", "var l = 3", "function c() {}"] {
        let failure = error(run(code));
        assert!(
            matches!(&failure, EngineError::Runtime { message, .. } if message.contains("SyntaxError: redeclaration of")),
            "{code}: {failure:?}"
        );
    }
    assert_eq!(
        output(run("[c, l]")),
        Value::Array(vec![Some(Value::Number(2.0)), Some(Value::Number(2.0))])
    );
}

#[test]
fn the_temporal_dead_zone_holds_and_survives_a_failed_run() {
    let engine = engine_with(host(), &options());
    let run = |code: &str| run_on(&engine, code, &options());
    let failure = error(run("early;\nlet early = 1"));
    assert!(
        matches!(&failure, EngineError::Runtime { message, .. } if message.starts_with("ReferenceError")),
        "{failure:?}"
    );
    assert_eq!(line_of(&failure), Some(1));
    // The binding exists, uninitialized, until a later run declares it again.
    assert!(matches!(error(run("early")), EngineError::Runtime { .. }));
    assert_eq!(output(run("let early = 2; early")), Value::Number(2.0));
}

#[test]
fn a_declaration_that_clashes_with_an_earlier_run_is_reported_at_its_line() {
    let engine = engine_with(host(), &options());
    output(run_on(&engine, "const k = 1", &options()));
    let failure = error(run_on(
        &engine,
        "console.log(1);\nconst a = 2;\n\nlet k = 3;",
        &options(),
    ));
    let EngineError::Runtime { message, at, .. } = &failure else {
        panic!("{failure:?}");
    };
    assert!(
        message.starts_with("SyntaxError: redeclaration of 'k': an earlier run declared it"),
        "{message}"
    );
    let at = at.as_ref().unwrap();
    assert_eq!((at.location.line, at.location.column), (4, 5));
    assert_eq!(at.source_line, "let k = 3;");
}

/// oxc keeps no parentheses around an assignment target, and the rewrite keeps what they meant
/// (`program/function_names.rs`): `(f) = function () {}` leaves the function anonymous, as raw
/// QuickJS and V8 do, while `f = function () {}` names it.
#[test]
fn a_parenthesized_assignment_target_leaves_the_function_anonymous() {
    let engine = engine_with(host(), &options());
    assert_eq!(
        output(run_on(
            &engine,
            "var pn, un; (pn) = function () {}; un = function () {}; pn.name + '|' + un.name",
            &options()
        )),
        string("|un")
    );
}
