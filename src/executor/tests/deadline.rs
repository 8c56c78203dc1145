//! A run is answered by its deadline plus [`DEADLINE_GRACE`] even when its engine thread cannot
//! be stopped: here the thread is held by a host that blocks inside a
//! synchronous tool call, which no interrupt reaches.

use std::time::{Duration, Instant};

use crate::engine::testing::{sync, FakeHost};
use crate::error::ErrorCode;
use crate::executor::*;

/// How long the blocking tool holds the engine thread.
const HELD: Duration = Duration::from_secs(3);

fn stuck_executor(timeout_ms: u64) -> Executor {
    let host = FakeHost::default().with(
        "hold",
        sync(|_| {
            std::thread::sleep(HELD);
            Ok(Value::Null)
        }),
    );
    Executor::new(
        Options {
            timeout_ms,
            ..Options::default()
        },
        Arc::new(host),
    )
}

#[tokio::test]
async fn a_run_whose_engine_thread_is_stuck_is_answered_at_the_deadline_plus_the_grace() {
    let executor = stuck_executor(100);
    executor.init().await.finish().unwrap();
    executor
        .send_tools(vec!["hold".into()], || {})
        .await
        .unwrap();
    let started = Instant::now();
    let error = executor
        .run("hold()".into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap_err();
    let answered = started.elapsed();
    assert_eq!(error.code, ErrorCode::ExecTimeout);
    assert_eq!(error.details["timeoutMs"], 100);
    assert_eq!(error.details["stillRunning"], true);
    assert_eq!(error.details["graceMs"], 500);
    assert_eq!(executor.state(), ExecutorState::Dirty);
    assert!(
        answered >= Duration::from_millis(100) + DEADLINE_GRACE,
        "{answered:?}"
    );
    assert!(answered < HELD, "{answered:?}");
    // cleanup() joins the thread: once it resolves, nothing of the executor runs any more.
    executor.cleanup().await.unwrap();
    assert!(started.elapsed() >= HELD);
    assert_eq!(executor.state(), ExecutorState::Dead);
    executor.init().await.finish().unwrap();
    assert_eq!(executor.state(), ExecutorState::Ready);
}

#[tokio::test]
async fn a_queued_run_is_not_answered_before_its_own_deadline() {
    // The first run holds the thread past its deadline and is answered by the grace timer; the
    // second waits in the queue meanwhile. Its deadline counts from when it starts, so it is
    // answered by the engine (which refuses it: the first run left the context dirty), not
    // timed out together with the first.
    let executor = Executor::new(
        Options {
            timeout_ms: 2_000,
            run_concurrency: RunConcurrency::Queue,
            max_queued_runs: 1,
            ..Options::default()
        },
        Arc::new(FakeHost::default().with(
            "hold",
            sync(|_| {
                std::thread::sleep(HELD);
                Ok(Value::Null)
            }),
        )),
    );
    executor.init().await.finish().unwrap();
    executor
        .send_tools(vec!["hold".into()], || {})
        .await
        .unwrap();
    let first = executor.run("hold()".into(), RunAbort::new(), None, Tracing::default());
    let second = executor.run("2".into(), RunAbort::new(), None, Tracing::default());
    let (first, second) = tokio::join!(first, second);
    let first = first.finish().unwrap_err();
    assert_eq!(
        (first.code, &first.details["stillRunning"]),
        (ErrorCode::ExecTimeout, &serde_json::Value::Bool(true))
    );
    let second = second.finish().unwrap_err();
    assert_eq!(second.code, ErrorCode::InvalidState, "{}", second.message);
    assert_eq!(executor.state(), ExecutorState::Dirty);
    executor.cleanup().await.unwrap();
}

#[tokio::test]
async fn runs_that_end_in_time_are_answered_by_the_engine() {
    let executor = stuck_executor(10_000);
    executor.init().await.finish().unwrap();
    let output = executor
        .run(
            "[1, 2].map((n) => n * 3)".into(),
            RunAbort::new(),
            None,
            Tracing::default(),
        )
        .await
        .finish()
        .unwrap();
    assert_eq!(
        output.output,
        Value::Array(vec![Some(Value::Number(3.0)), Some(Value::Number(6.0))])
    );
    assert_eq!(executor.state(), ExecutorState::Ready);
    executor.cleanup().await.unwrap();
}

#[derive(Default)]
struct Collected(std::sync::Mutex<Vec<TraceEvent>>);

impl EventSink for Collected {
    fn event(&self, event: TraceEvent) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(event);
    }
}

#[tokio::test]
async fn a_traced_run_answered_without_its_engine_ends_its_trace_and_stream_there() {
    let executor = stuck_executor(100);
    executor.init().await.finish().unwrap();
    executor
        .send_tools(vec!["hold".into()], || {})
        .await
        .unwrap();
    let streamed = Arc::new(Collected::default());
    let tracing = Tracing {
        record: Some(true),
        sink: Some(Arc::clone(&streamed) as Arc<dyn EventSink>),
    };
    let error = executor
        .run("hold()".into(), RunAbort::new(), None, tracing)
        .await
        .finish()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecTimeout);
    let trace = error.trace.expect("traced");
    assert!(matches!(
        trace.as_slice(),
        [TraceEvent {
            kind: TraceKind::RunEnd(RunEnd {
                error: Some(("ERR_EXEC_TIMEOUT", _)),
                ..
            }),
            ..
        }]
    ));
    // The engine thread records the call's result once the tool lets go of it: the stream,
    // ended, does not pass it on.
    executor.cleanup().await.unwrap();
    let kinds: Vec<bool> = streamed
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|event| matches!(event.kind, TraceKind::RunEnd(_)))
        .collect();
    assert_eq!(kinds, [false, false, true], "run_start, tool_call, run_end");
}

/// A run whose code ends in time is answered with its images however long they take to encode:
/// encoding comes after the run, outside its deadline
/// (docs/canvas.md "Canvas: agents that draw"). Three large canvases take this suite's
/// unoptimised PNG encoder seconds, far past the deadline and its grace; the answer was
/// `ERR_EXEC_TIMEOUT` with `stillRunning` when encoding came first.
#[tokio::test]
async fn images_are_encoded_after_the_run_outside_its_deadline() {
    let executor = Executor::new(
        Options {
            timeout_ms: 200,
            memory_limit_bytes: 512 << 20,
            ..Options::default()
        },
        Arc::new(FakeHost::default()),
    );
    executor.init().await.finish().unwrap();
    let code =
        "for (let i = 0; i < 3; i++) getCanvas(1024, 1024).getContext('2d').fillRect(i, i, 1, 1)
                'drawn'";
    let started = Instant::now();
    let output = executor
        .run(code.into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
        .unwrap();
    assert_eq!(output.output, Value::String("drawn".into()));
    assert_eq!(output.images.len(), 3);
    assert!(
        started.elapsed() > Duration::from_millis(200) + DEADLINE_GRACE,
        "encoding was quick enough that the deadline was never at stake: {:?}",
        started.elapsed()
    );
    assert_eq!(executor.state(), ExecutorState::Ready);
    executor.cleanup().await.unwrap();
}
