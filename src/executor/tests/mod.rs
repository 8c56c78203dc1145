//! The state machine of §4.2, row by row, over a real engine thread.

mod deadline;

use super::*;
use crate::engine::testing::FakeHost;
use crate::error::ErrorCode;

fn executor() -> Executor {
    with_options(Options::default())
}

fn with_options(options: Options) -> Executor {
    Executor::new(options, Arc::new(FakeHost::default()))
}

fn code_of(result: Result<impl std::fmt::Debug, ExecutorError>) -> ErrorCode {
    result.expect_err("expected an error").code
}

#[tokio::test]
async fn new_init_is_ready_and_init_on_ready_is_a_no_op() {
    let executor = executor();
    assert_eq!(executor.state(), ExecutorState::New);
    let init = executor.init();
    assert_eq!(executor.state(), ExecutorState::Initializing);
    init.await.finish().unwrap();
    assert_eq!(executor.state(), ExecutorState::Ready);
    executor.init().await.finish().unwrap();
    assert_eq!(executor.state(), ExecutorState::Ready);
}

#[tokio::test]
async fn init_while_initializing_is_an_invalid_state() {
    let executor = executor();
    let first = executor.init();
    let error = executor.init().await.finish().unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidState);
    assert_eq!(error.details["state"], "INITIALIZING");
    first.await.finish().unwrap();
}

#[tokio::test]
async fn run_moves_ready_to_running_and_back() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let run = executor.run("1 + 1".into(), RunAbort::new(), None, Tracing::default());
    assert_eq!(executor.state(), ExecutorState::Running);
    let output = run.await.finish().unwrap();
    assert_eq!(output.output, Value::Number(2.0));
    assert_eq!(executor.state(), ExecutorState::Ready);
}

#[tokio::test]
async fn a_failed_run_returns_to_ready() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let error = executor
        .run(
            "throw new Error('x')".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::RuntimeException);
    assert_eq!(executor.state(), ExecutorState::Ready);
}

#[tokio::test]
async fn a_second_concurrent_run_is_refused_in_reject_mode() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let first = executor.run(
        "let s = 0; for (let i = 0; i < 1000; i++) s += i; s".into(),
        RunAbort::new(),
        None,
        Tracing::default(),
    );
    assert_eq!(
        code_of(
            executor
                .run("1".into(), RunAbort::new(), None, Tracing::default())
                .await
                .finish()
        ),
        ErrorCode::InvalidState
    );
    assert_eq!(
        first.await.finish().unwrap().output,
        Value::Number(499_500.0)
    );
}

#[tokio::test]
async fn a_timeout_leaves_the_executor_dirty_and_cleanup_then_init_recovers() {
    let executor = with_options(Options {
        timeout_ms: 50,
        max_operations: u64::MAX,
        ..Options::default()
    });
    executor.init().await.finish().unwrap();
    let error = executor
        .run(
            "while (true) {}".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecTimeout);
    assert_eq!(executor.state(), ExecutorState::Dirty);
    assert_eq!(
        code_of(
            executor
                .run("1".into(), RunAbort::new(), None, Tracing::default())
                .await
                .finish()
        ),
        ErrorCode::InvalidState
    );
    executor.cleanup().await.unwrap();
    assert_eq!(executor.state(), ExecutorState::Dead);
    executor.init().await.finish().unwrap();
    let output = executor
        .run(
            "final_answer('ok')".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    assert!(output.is_final_answer);
    assert_eq!(output.output, Value::String("ok".into()));
}

#[tokio::test]
async fn cleanup_from_ready_is_dead_and_repeated_cleanup_is_a_no_op() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    executor.cleanup().await.unwrap();
    assert_eq!(executor.state(), ExecutorState::Dead);
    executor.cleanup().await.unwrap();
    assert_eq!(executor.state(), ExecutorState::Dead);
}

#[tokio::test]
async fn dead_init_rebuilds_from_nothing() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    executor
        .run(
            "var kept = 41".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    executor.cleanup().await.unwrap();
    executor.init().await.finish().unwrap();
    let output = executor
        .run(
            "typeof kept".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    assert_eq!(output.output, Value::String("undefined".into()));
}

#[tokio::test]
async fn calls_in_the_wrong_state_name_the_state() {
    let executor = executor();
    let error = executor
        .run("1".into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidState);
    assert_eq!(
        error.message,
        "Invalid executor state: NEW (cannot call run() in this state)"
    );
    assert_eq!(code_of(executor.cleanup().await), ErrorCode::InvalidState);

    executor.init().await.finish().unwrap();
    let running = executor.run("1".into(), RunAbort::new(), None, Tracing::default());
    assert_eq!(code_of(executor.cleanup().await), ErrorCode::InvalidState);
    assert_eq!(
        code_of(executor.init().await.finish()),
        ErrorCode::InvalidState
    );
    running.await.finish().unwrap();

    executor.cleanup().await.unwrap();
    let error = executor
        .run("1".into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.details["state"], "DEAD");
}

#[tokio::test]
async fn init_failure_leaves_the_executor_dead() {
    // A heap too small to hold the context makes context creation fail (§4.2 INITIALIZING → DEAD).
    let executor = with_options(Options {
        memory_limit_bytes: 1024,
        ..Options::default()
    });
    let error = executor.init().await.finish().unwrap_err();
    assert_eq!(error.code, ErrorCode::SesInitFailed);
    assert_eq!(executor.state(), ExecutorState::Dead);
    executor.cleanup().await.unwrap();
}

#[tokio::test]
async fn validation_failure_lists_each_error_with_its_position() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let error = executor
        .run(
            "let a = 1;\nlet b = ;".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ValidationFailed);
    assert!(
        error
            .message
            .starts_with("Code validation failed:\n2:9 syntax_valid: "),
        "{}",
        error.message
    );
    assert_eq!(error.details["diagnostics"][0]["rule"], "syntax_valid");
    assert_eq!(executor.state(), ExecutorState::Ready);
}

#[tokio::test]
async fn stop_now_interrupts_a_spinning_run_and_leaves_the_executor_dead() {
    let executor = with_options(Options {
        max_operations: u64::MAX,
        timeout_ms: 60_000,
        ..Options::default()
    });
    executor.init().await.finish().unwrap();
    let run = executor.run(
        "while (true) {}".into(),
        RunAbort::new(),
        None,
        Tracing::default(),
    );
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    executor.stop_now();
    assert_eq!(executor.state(), ExecutorState::Dead);
    let error = tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("the run did not stop")
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::RuntimeException);
    assert!(error.message.contains("shut down"), "{}", error.message);
}

#[tokio::test]
async fn warnings_and_infos_of_a_run_reach_the_caller() {
    // §8.3: a WARNING (the code) and an INFO (the options: a valid log budget below the
    // recommended 16 KiB) do not block the run and come back.
    let executor = with_options(Options {
        max_log_bytes: 4096,
        ..Options::default()
    });
    executor.init().await.finish().unwrap();
    let output = executor
        .run(
            "try { process.env } catch { 1 }".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    let rules: Vec<_> = output.diagnostics.iter().map(|d| d.rule).collect();
    assert_eq!(rules, ["forbidden_global_access", "log_budget_too_small"]);
    let quiet = executor
        .run("1".into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap();
    assert_eq!(quiet.diagnostics.len(), 1, "{:?}", quiet.diagnostics);
}

#[tokio::test]
async fn a_run_that_fails_carries_its_warnings_in_details() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let error = executor
        .run(
            "process.exit(1)".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::RuntimeException);
    assert_eq!(
        error.details["diagnostics"][0]["rule"],
        "forbidden_global_access"
    );
}

#[tokio::test]
async fn retryable_follows_the_depends_rows_of_section_8_2() {
    use crate::engine::host::ToolFailure;
    use crate::engine::testing::sync;
    let host = FakeHost::default()
        .with("flaky", sync(|_| Err(ToolFailure::new("try again later"))))
        .with(
            "forbidden",
            sync(|_| {
                Err(ToolFailure {
                    name: "PermissionError".into(),
                    message: "not allowed".into(),
                    retryable: false,
                })
            }),
        );
    let executor = Executor::new(Options::default(), Arc::new(host));
    executor.init().await.finish().unwrap();
    executor
        .send_tools(
            vec![
                String::from("flaky").into(),
                String::from("forbidden").into(),
            ],
            || {},
        )
        .await
        .unwrap();
    let failure = |code: &str| {
        let run = executor.run(code.into(), RunAbort::new(), None, Tracing::default());
        async move { run.await.finish().unwrap_err() }
    };
    let runtime = failure("null.x").await;
    assert_eq!(
        (runtime.code, runtime.retryable),
        (ErrorCode::RuntimeException, true)
    );
    let flaky = failure("flaky()").await;
    assert_eq!(
        (flaky.code, flaky.retryable),
        (ErrorCode::ToolProxyFail, true)
    );
    let forbidden = failure("forbidden()").await;
    assert_eq!(
        (forbidden.code, forbidden.retryable),
        (ErrorCode::ToolProxyFail, false)
    );
}

fn run_end(trace: &[TraceEvent]) -> &RunEnd {
    match trace.last().map(|event| &event.kind) {
        Some(TraceKind::RunEnd(end)) => end,
        other => panic!("the trace does not end with run_end: {other:?}"),
    }
}

#[tokio::test]
async fn a_traced_run_ends_its_trace_with_the_outcome_and_figures() {
    let executor = with_options(Options {
        trace: true,
        ..Options::default()
    });
    executor.init().await.finish().unwrap();
    let output = executor
        .run(
            "let s = 0; for (let i = 0; i < 10; i++) s += i; final_answer(s)".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    let trace = output.trace.expect("traced");
    let end = run_end(&trace);
    assert_eq!(end.outcome, RunOutcome::FinalAnswer);
    assert_eq!(end.error, None);
    assert_eq!(end.operations, 10);
    assert_eq!(
        trace.last().map(|event| event.at),
        Some(output.stats.wall_time)
    );
}

#[tokio::test]
async fn a_failed_traced_run_carries_its_trace_on_the_error_with_the_code() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let error = executor
        .run(
            "undefinedName".into(),
            RunAbort::new(),
            None,
            Tracing {
                record: Some(true),
                sink: None,
            },
        )
        .await
        .finish()
        .unwrap_err();
    let trace = error.trace.as_deref().expect("traced");
    let end = run_end(trace);
    assert_eq!(end.outcome, RunOutcome::Failed);
    assert_eq!(
        end.error,
        Some(("ERR_RUNTIME_EXCEPTION", error.message.clone()))
    );
}

#[tokio::test]
async fn a_run_that_asks_for_no_trace_has_none() {
    let executor = executor();
    executor.init().await.finish().unwrap();
    let output = executor
        .run("1".into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap();
    assert_eq!(output.trace, None);
}

#[tokio::test]
async fn a_variable_may_not_take_a_tools_name_and_a_fresh_engine_forgets_the_tools() {
    // §4.3.2: the engine's list of installed tools is the one record of tool names.
    let executor = executor();
    executor.init().await.finish().unwrap();
    executor
        .send_tools(vec![String::from("lookup").into()], || {})
        .await
        .unwrap();
    let refused = executor
        .send_variables(vec![("lookup".into(), Value::Number(1.0))])
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::ValidationFailed);
    assert_eq!(refused.details["name"], "lookup");
    assert!(
        refused.message.contains("is a tool's name"),
        "{}",
        refused.message
    );
    // After cleanup() and init() the engine is new and has no tools: the name is free.
    executor.cleanup().await.unwrap();
    executor.init().await.finish().unwrap();
    executor
        .send_variables(vec![("lookup".into(), Value::Number(1.0))])
        .await
        .unwrap();
}
