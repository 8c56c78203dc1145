//! The worker's part of durable sessions (`engine::session`): building an engine from a
//! snapshot (its checkpoint, then its journal replayed), replaying a recorded run (and resuming a
//! paused one), checking a replayed run's end against its record, and writing the snapshot.

use std::sync::{Arc, OnceLock, Weak};

use tokio::sync::oneshot;

use super::{EngineError, EngineInbox, RunAbort, RunReport, RunRequest, Worker};
use crate::engine::host::{Host, ToolCall, ToolResult};
use crate::engine::quickjs::reflect::refused_allocations;
use crate::engine::quickjs::session as quickjs_session;
use crate::engine::run::state::Stop;
use crate::engine::session::builtins::Builtins;
use crate::engine::session::checkpoint::{self, Outside};
use crate::engine::session::{self, Tape};
use crate::engine::{Completion, EngineConfig};
use crate::options::Options;
use crate::session::image::Image;
use crate::session::{
    seal, Event, Journal, Origin, Outcome, RunEnd, RunRecord, SnapshotError, SnapshotProblem, Step,
};

/// The built-ins of a fresh context made with `config`'s options, described once per process
/// for each value of the option that adds globals (`timers`).
fn builtins(config: &EngineConfig) -> Result<Arc<Builtins>, String> {
    static DESCRIBED: [OnceLock<Result<Arc<Builtins>, String>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    DESCRIBED[usize::from(config.options.timers)]
        .get_or_init(|| {
            let mut fresh = config.clone();
            // Enough memory for every built-in, whatever the session's limit.
            fresh.options.memory_limit_bytes = Options::default().memory_limit_bytes;
            let tape = Tape::new(Origin::Fresh {
                random_seed: 1,
                time_origin: 0.0,
            });
            let worker = Worker::build(fresh, Arc::new(NoHost), Arc::default(), Weak::new(), tape)
                .map_err(|error| error.to_string())?;
            worker.enter();
            Ok(Arc::new(
                worker.context.with(|ctx| Builtins::describe(&ctx)),
            ))
        })
        .clone()
}

/// The host of the context the built-ins are described in: it is never called.
struct NoHost;

impl Host for NoHost {
    fn call_tool(&self, call: ToolCall) {
        drop(call);
    }
}

/// Builds the engine from a session (`engine::session`): opens the snapshot, checks its terms,
/// replays its steps into a fresh runtime, and holds the run it paused in (or resumes it).
/// `None` if it could not be built (the inbox is closed then; `ready` says why).
pub(super) fn restore(inbox: &Arc<EngineInbox>, restore: session::Restore) -> Option<Box<Worker>> {
    let session::Restore {
        config,
        host,
        shutdown,
        source,
        limits,
        resume,
        ready,
    } = restore;
    let failed = |error: EngineError, ready: oneshot::Sender<_>| {
        let _ = ready.send(Err(error));
        inbox.close();
        None
    };
    let session = match source {
        session::Source::Bytes(bytes, key) => match seal::open(&bytes, key.as_deref()) {
            Ok(session) => session,
            Err(error) => return failed(EngineError::Snapshot(error), ready),
        },
        session::Source::Journal(journal) => crate::session::Session {
            terms: config.terms.clone(),
            journal,
        },
    };
    if let Some(option) = session.terms.first_difference(&config.terms) {
        return failed(EngineError::Snapshot(SnapshotError::options(option)), ready);
    }
    let Journal { origin, mut steps } = session.journal;
    let paused = match steps.last() {
        Some(Step::Run(run)) if run.end.is_none() => match steps.pop() {
            Some(Step::Run(run)) => Some(run),
            _ => None,
        },
        _ => None,
    };
    let log_levels = config.terms.log_levels.clone();
    let image = match &origin {
        Origin::Checkpoint(image) => Some(Arc::clone(image)),
        Origin::Fresh { .. } => None,
    };
    let mut worker = match Worker::build(
        config,
        host,
        shutdown,
        Arc::downgrade(inbox),
        Tape::restored(origin),
    ) {
        Ok(worker) => worker,
        Err(error) => return failed(error, ready),
    };
    worker.enter();
    if let Some(image) = image {
        if let Err(error) = worker.apply_checkpoint(&image) {
            drop(worker);
            return failed(error, ready);
        }
    }
    let request = |code: String| {
        let mut request = RunRequest::new(code, &Options::default(), RunAbort::new());
        request.timeout_ms = limits.timeout_ms;
        request.log_levels.clone_from(&log_levels);
        request.max_log_bytes = 0;
        request
    };
    for step in steps {
        let replayed = match step {
            // Their outcome is the original's: an endowment refused then is refused again.
            Step::Tools(tools) => {
                let _ = worker.define_tools(tools);
                Ok(())
            }
            Step::Variables(variables) => {
                let _ = worker.set_variables(variables);
                Ok(())
            }
            Step::Run(run) => worker.replay_recorded(inbox, request(String::new()), run, limits),
        };
        if let Err(error) = replayed {
            drop(worker);
            return failed(error, ready);
        }
    }
    match (paused, resume) {
        (None, _) => {
            let _ = ready.send(Ok(session::Restored::Ready));
        }
        (Some(run), None) => match run.events.last() {
            Some(Event::Paused(call)) => {
                let call = (**call).clone();
                worker.state.tape.hold_run(run);
                let tools = worker.program_context.tool_names.clone();
                let _ = ready.send(Ok(session::Restored::Paused(call, tools)));
            }
            _ => {
                drop(worker);
                return failed(
                    EngineError::Snapshot(SnapshotError::new(
                        SnapshotProblem::Malformed,
                        "the session's last run has no end and did not pause",
                    )),
                    ready,
                );
            }
        },
        (Some(run), Some((request, answer, reply))) => {
            let _ = ready.send(Ok(session::Restored::Resumed));
            worker.replay_run(inbox, request, run, Some(answer), reply);
        }
    }
    Some(worker)
}

impl Worker {
    /// The session as a snapshot: a checkpoint of its state when one can be taken (which then
    /// replaces the journal before it), else the journal since the last one. A session whose
    /// journal passed its budget cannot be written.
    pub(in crate::engine::run) fn snapshot(
        &self,
        key: Option<&[u8]>,
    ) -> Result<Vec<u8>, EngineError> {
        if self.state.tape.paused_call().is_none() {
            // A state no image can hold stays with its journal.
            if let Ok(image) = self.checkpoint() {
                self.state.tape.rebase(Origin::Checkpoint(Arc::new(image)));
            }
        }
        if let Some(why) = self.state.tape.broken() {
            return Err(EngineError::NotDurable(why));
        }
        let journal = self.state.tape.journal();
        Ok(crate::session::seal::seal(&self.terms, &journal, key))
    }

    /// A checkpoint of the session's state, or why there can be none now.
    pub(in crate::engine::run) fn checkpoint(&self) -> Result<Image, String> {
        let builtins = builtins(&self.config)?;
        let (timer_sequence, timer_last_id) = self
            .timers
            .as_ref()
            .map_or((0, 0), |timers| timers.counters());
        let tape = &self.state.tape;
        self.context.with(|ctx| {
            let outside = Outside {
                random_state: quickjs_session::random_state(&ctx),
                time_origin: tape.time_origin(),
                performance_now: tape.performance_last(),
                timer_sequence,
                timer_last_id,
            };
            checkpoint::capture(&ctx, &builtins, tape.tools(), outside)
        })
    }

    /// Brings the fresh context to the state of a checkpoint: its tools, counters and objects.
    pub(in crate::engine::run) fn apply_checkpoint(
        &mut self,
        image: &Image,
    ) -> Result<(), EngineError> {
        let malformed = |why: String| {
            EngineError::Snapshot(SnapshotError::new(
                SnapshotProblem::Malformed,
                format!("the snapshot's checkpoint cannot be restored: {why}"),
            ))
        };
        let builtins = builtins(&self.config).map_err(malformed)?;
        self.install_tools(&image.tools)?;
        if let Some(timers) = &self.timers {
            timers.set_counters(image.timer_sequence, image.timer_last_id);
        }
        self.context.with(|ctx| {
            quickjs_session::set_random_state(&ctx, image.random_state);
            let refused = refused_allocations(&ctx);
            let applied = checkpoint::apply(&ctx, &builtins, image);
            if refused_allocations(&ctx) != refused {
                return Err(EngineError::Snapshot(SnapshotError::limit(
                    "memoryLimitBytes",
                    "the snapshot's checkpoint does not fit in the restoring executor's memoryLimitBytes",
                )));
            }
            applied.map_err(malformed)
        })
    }

    /// Replays a complete run of the session (a restore's step): it must end as recorded.
    pub(in crate::engine::run) fn replay_recorded(
        &mut self,
        inbox: &Arc<EngineInbox>,
        request: RunRequest,
        record: RunRecord,
        limits: session::ReplayLimits,
    ) -> Result<(), EngineError> {
        // A run its own maxOperations stopped counted one entry past it: it needs that limit.
        let needed = record
            .end
            .map(|end| end.operations.min(record.max_operations));
        if let Some(needed) = needed.filter(|needed| *needed > limits.max_operations) {
            return Err(EngineError::Snapshot(SnapshotError::limit(
                "maxOperations",
                format!(
                    "a run of the session counted {needed} loop iterations, more than the restoring executor's maxOperations ({})",
                    limits.max_operations
                ),
            )));
        }
        let (reply, mut answer) = oneshot::channel();
        self.replay_run(inbox, request, record, None, reply);
        match answer.try_recv() {
            Ok(RunReport {
                result: Err(error @ EngineError::Snapshot(_)),
                ..
            }) => Err(error),
            Ok(_) => Ok(()),
            // A replay never waits: everything it needs is in its record.
            Err(_) => {
                self.in_flight = None;
                Err(EngineError::Snapshot(SnapshotError::new(
                    SnapshotProblem::Diverged,
                    "a replayed run waited for something its record does not hold",
                )))
            }
        }
    }

    /// Replays `record` (a run of the session) as a run, with the limits of `request`: the
    /// record's events answer everything from outside the sandbox, and with `resumption` the
    /// call the run paused at is answered and the run goes on live.
    pub(in crate::engine::run) fn replay_run(
        &mut self,
        inbox: &Arc<EngineInbox>,
        mut request: RunRequest,
        record: RunRecord,
        resumption: Option<ToolResult>,
        reply: oneshot::Sender<RunReport>,
    ) {
        request.code.clone_from(&record.code);
        request.input.clone_from(&record.input);
        request.max_operations = record.max_operations;
        self.run(inbox, request, reply, Some((record, resumption)));
    }

    /// Ends the run in the session's record: recorded as it ended, or, for a replayed run,
    /// checked against its record (a replay that went another way, or that a limit of the
    /// restoring executor stopped, fails the restore).
    pub(in crate::engine::run) fn end_recorded(
        &self,
        result: Result<Completion, EngineError>,
    ) -> Result<Completion, EngineError> {
        let tape = &self.state.tape;
        let replayed = tape.replaying();
        let limit = match (&result, self.state.stop.get()) {
            (_, Some(Stop::Timeout | Stop::Aborted)) => Some("timeoutMs"),
            (
                Err(EngineError::Limit {
                    limit: "memoryLimitBytes",
                    ..
                }),
                _,
            ) => Some("memoryLimitBytes"),
            _ => None,
        };
        let end = RunEnd {
            outcome: match &result {
                Ok(completion) if completion.is_final_answer => Outcome::FinalAnswer,
                Ok(_) => Outcome::Completed,
                Err(_) => Outcome::Failed,
            },
            operations: self.state.operations(),
            calls: tape.calls(),
        };
        if replayed {
            if let Some(limit) = limit {
                tape.take_run();
                return Err(EngineError::Snapshot(SnapshotError::limit(
                    limit,
                    format!("replaying the session's runs passed the restoring executor's {limit}"),
                )));
            }
        }
        match tape.end_run(end) {
            Ok(()) => result,
            Err(diverged) => Err(EngineError::Snapshot(SnapshotError::new(
                SnapshotProblem::Diverged,
                format!("replaying the session went another way than it went: {diverged}"),
            ))),
        }
    }
}
