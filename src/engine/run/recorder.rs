//! The engine's side of a run's trace (`crate::trace`): times events from the run's start,
//! locates calls at the user's own line, bounds what is kept, and streams each event to the
//! host's sink as it happens. A run that asked for no trace has no recorder, and the hooks in
//! the bridge, console and `final_answer` cost one `RefCell` check. The events a run keeps are
//! charged to the executor's memory account; one it has no room for is dropped (streamed, not
//! kept), as one past `maxTraceBytes` is.

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use rquickjs::Ctx;

use super::frames::{call_site, first_script_position};
use crate::diagnostic::Location;
use crate::memory::{vec_bytes, Charge, MemoryAccount};
use crate::program::positions::PositionMap;
use crate::trace::{
    approximate_bytes, value_bytes, EventSink, TraceBudget, TraceEvent, TraceKind, TraceRequest,
};
use crate::value::Value;

/// What a traced run hands back with its report.
#[derive(Debug, Default, PartialEq)]
pub struct TraceRecord {
    /// The kept events, when the run asked to record them.
    pub events: Option<Vec<TraceEvent>>,
    /// Events the budget had no room for.
    pub dropped_events: u64,
}

/// One run's recorder.
pub struct Recorder {
    started: Instant,
    budget: TraceBudget,
    events: Option<Vec<TraceEvent>>,
    sink: Option<Arc<dyn EventSink>>,
    /// Maps the transformed script's positions to the user's, once the program is prepared.
    positions: Option<PositionMap>,
    /// Tool calls traced so far.
    calls: u64,
    /// What the kept events hold.
    held: Charge,
    /// Events the memory account had no room for.
    refused: u64,
}

impl Recorder {
    /// A recorder for a run that started at `started`, which records its start; `None` when
    /// the run asked for no trace.
    pub fn start(
        request: &TraceRequest,
        started: Instant,
        code_bytes: usize,
        account: &Rc<MemoryAccount>,
    ) -> Option<Self> {
        if !request.is_on() {
            return None;
        }
        let mut recorder = Self {
            started,
            budget: TraceBudget::new(request.max_bytes),
            events: request.record.then(Vec::new),
            sink: request.sink.clone(),
            positions: None,
            calls: 0,
            held: account.empty_charge(),
            refused: 0,
        };
        recorder.push(TraceKind::RunStart {
            time: SystemTime::now()
                .checked_sub(started.elapsed())
                .unwrap_or_else(SystemTime::now),
            code_bytes,
        });
        Some(recorder)
    }

    /// Locates later events in the prepared program.
    pub fn set_positions(&mut self, positions: PositionMap) {
        self.positions = Some(positions);
    }

    /// Records `kind` now: kept if the budget allows, and streamed.
    pub fn push(&mut self, kind: TraceKind) {
        let event = TraceEvent {
            at: self.started.elapsed(),
            kind,
        };
        let Some(event) = self.budget.admit(event) else {
            return;
        };
        let mut events = self.events.as_mut();
        if events.is_some() {
            // What the event holds, and its slot in the list (which doubles as it grows).
            let bytes = approximate_bytes(&event) + 2 * vec_bytes::<TraceEvent>(1);
            if self.held.grow(bytes).is_err() {
                self.refused += 1;
                events = None;
            }
        }
        match (events, &self.sink) {
            (Some(events), Some(sink)) => {
                sink.event(event.clone());
                events.push(event);
            }
            (Some(events), None) => events.push(event),
            (None, Some(sink)) => sink.event(event),
            (None, None) => {}
        }
    }

    /// A copy of a call's arguments for the trace, or `None` when the budget has no room for
    /// them (so that a large argument is not copied a second time for nothing).
    pub fn copy_args(&self, args: &[Value]) -> Option<Vec<Value>> {
        let bytes = args.iter().map(value_bytes).sum();
        self.budget.has_room_for(bytes).then(|| args.to_vec())
    }

    /// The number of the next tool call.
    pub fn next_call(&mut self) -> u64 {
        self.calls += 1;
        self.calls - 1
    }

    /// The user's position of the sandbox code calling now (the first frame in the script).
    pub fn caller(&self, ctx: &Ctx<'_>) -> Option<Location> {
        let positions = self.positions.as_ref()?;
        let stack = call_site(ctx)?;
        let (line, column) = first_script_position(&stack)?;
        positions.original(line, column)
    }

    /// What the run keeps.
    pub fn finish(self) -> TraceRecord {
        TraceRecord {
            events: self.events,
            dropped_events: self.budget.dropped() + self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::engine::host::ToolFailure;
    use crate::engine::testing::{after, engine_with, sync, FakeHost};
    use crate::engine::{RunAbort, RunReport, RunRequest};
    use crate::options::{LogLevel, Options};
    use crate::trace::ToolOutcome;

    #[derive(Default)]
    struct Collected(Mutex<Vec<TraceEvent>>);

    impl EventSink for Collected {
        fn event(&self, event: TraceEvent) {
            self.0.lock().unwrap().push(event);
        }
    }

    fn host() -> FakeHost {
        FakeHost::default()
            .with(
                "twice",
                sync(|args| match args.first() {
                    Some(Value::Number(n)) => Ok(Value::Number(n * 2.0)),
                    _ => Err(ToolFailure::new("not a number")),
                }),
            )
            .with("later", after(20, |_| Ok(Value::String("done".into()))))
    }

    fn traced_run(code: &str, record: bool, sink: Option<Arc<dyn EventSink>>) -> RunReport {
        let options = Options::default();
        let engine = engine_with(host(), &options);
        let mut request = RunRequest::new(code.into(), &options, RunAbort::new());
        request.trace.record = record;
        request.trace.sink = sink;
        engine.run(request).blocking_recv().unwrap()
    }

    fn kinds(events: &[TraceEvent]) -> Vec<&'static str> {
        events
            .iter()
            .map(|event| match event.kind {
                TraceKind::RunStart { .. } => "start",
                TraceKind::ToolCall { .. } => "call",
                TraceKind::ToolResult { .. } => "result",
                TraceKind::Console { .. } => "console",
                TraceKind::FinalAnswer { .. } => "final",
                TraceKind::RunEnd(_) => "end",
            })
            .collect()
    }

    #[test]
    fn a_traced_run_records_its_calls_results_console_and_final_answer_in_order() {
        let report = traced_run(
            "console.info('go')\nconst a = twice(21)\nconst b = await later()\ntry { twice('x') } catch {}\nfinal_answer([a, b])",
            true,
            None,
        );
        let events = report.trace.unwrap().events.unwrap();
        assert_eq!(
            kinds(&events),
            ["start", "console", "call", "result", "call", "result", "call", "result", "final"]
        );
        assert!(matches!(
            events[1].kind,
            TraceKind::Console {
                level: LogLevel::Info,
                entry: 0
            }
        ));
        let TraceKind::ToolCall {
            call,
            tool,
            args,
            at,
        } = &events[2].kind
        else {
            unreachable!()
        };
        assert_eq!((*call, tool.as_str()), (0, "twice"));
        assert_eq!(args.as_deref(), Some(&[Value::Number(21.0)][..]));
        assert_eq!(at.map(|at| at.line), Some(2));
        let TraceKind::ToolResult {
            outcome,
            asynchronous,
            duration,
            ..
        } = &events[5].kind
        else {
            unreachable!()
        };
        assert_eq!(
            outcome,
            &ToolOutcome::Returned(Some(Value::String("done".into())))
        );
        assert!(*asynchronous);
        assert!(*duration >= std::time::Duration::from_millis(15));
        assert!(matches!(
            &events[7].kind,
            TraceKind::ToolResult { call: 2, outcome: ToolOutcome::Failed { message, .. }, asynchronous: false, .. }
                if message == "not a number"
        ));
        assert!(matches!(events[8].kind, TraceKind::FinalAnswer { at: Some(at) } if at.line == 5));
        assert!(events.windows(2).all(|pair| pair[0].at <= pair[1].at));
    }

    #[test]
    fn the_sink_receives_exactly_the_recorded_events() {
        let sink = Arc::new(Collected::default());
        let report = traced_run(
            "console.log(twice(2)); await later()",
            true,
            Some(Arc::clone(&sink) as Arc<dyn EventSink>),
        );
        let recorded = report.trace.unwrap().events.unwrap();
        assert_eq!(*sink.0.lock().unwrap(), recorded);
    }

    #[test]
    fn streaming_alone_keeps_no_events() {
        let sink = Arc::new(Collected::default());
        let report = traced_run(
            "twice(1)",
            false,
            Some(Arc::clone(&sink) as Arc<dyn EventSink>),
        );
        let record = report.trace.unwrap();
        assert_eq!(record.events, None);
        assert_eq!(kinds(&sink.0.lock().unwrap()), ["start", "call", "result"]);
    }

    #[test]
    fn an_untraced_run_has_no_trace() {
        assert_eq!(
            traced_run("twice(1); console.log(1)", false, None).trace,
            None
        );
    }

    #[test]
    fn a_small_budget_keeps_events_without_their_values_and_counts_what_it_drops() {
        let options = Options::default();
        let engine = engine_with(host(), &options);
        let mut request = RunRequest::new(
            "for (let i = 0; i < 50; i++) twice(i)".into(),
            &options,
            RunAbort::new(),
        );
        request.trace.record = true;
        request.trace.max_bytes = crate::options::MIN_MAX_TRACE_BYTES;
        let record = engine.run(request).blocking_recv().unwrap().trace.unwrap();
        let kept = record.events.unwrap();
        assert!(kept.len() < 101);
        assert_eq!(kept.len() as u64 + record.dropped_events, 101);
    }
}
