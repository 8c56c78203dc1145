//! The engine's side of durable sessions (docs/sessions.md "How a session is kept"): the
//! [`Tape`] that records what a session's runs saw from outside the sandbox into its journal
//! (`crate::session`), and plays it back when a fresh runtime replays the session.
//!
//! Recording is always on and costs a push per event: an executor cannot know whether it will be
//! snapshotted. What the journal keeps is bounded ([`JOURNAL_BUDGET`]); past it the session can
//! no longer be snapshotted (until a checkpoint, which replaces the journal, succeeds).
//!
//! While a run is replayed, every point where the original run met the outside world asks the
//! tape instead: the clock, each tool call, and the event loop's choice of which promise to
//! settle or timer to fire next. A replay that asks for something other than what the record
//! holds has diverged: the run is stopped and the restore refused
//! (`SnapshotProblem::Diverged`). A replay that reaches the call where the run paused switches
//! to live: the call is answered with what `resume()` was given, and the run goes on with the
//! host's tools, the real clock and the real event loop, recording again.

pub(in crate::engine) mod builtins;
pub(in crate::engine) mod checkpoint;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::engine::host::{Host, ToolResult};
use crate::engine::quickjs::session::{Clock, ClockRead};
use crate::engine::{EngineConfig, EngineError, RunReport, RunRequest};
use crate::memory::{Charge, MemoryAccount};
use crate::session::{Event, Journal, Origin, PausedCall, RunEnd, RunRecord, Step};
use crate::value::Value;

/// The most bytes (an estimate: values by their content, events by a fixed cost) a journal holds
/// past its origin; a run that would pass it stops being recorded and the session stops being
/// durable.
pub const JOURNAL_BUDGET: usize = 64 << 20;

impl Clock for Tape {
    fn read(&self, read: ClockRead, value: f64) -> f64 {
        self.clock(read, value)
    }
}

/// A seed for a new session's `Math.random`, from the system's randomness (std's hasher keys,
/// drawn from the operating system once per thread) and the clock.
pub(in crate::engine) fn fresh_seed() -> u64 {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    std::collections::hash_map::RandomState::new().hash_one(now)
}

/// Where a restore takes its session from.
pub enum Source {
    /// A snapshot's bytes, opened (checked, with the key when one is given) on the engine
    /// thread.
    Bytes(Vec<u8>, Option<Arc<[u8]>>),
    /// A session this process holds (a paused executor's).
    Journal(Journal),
}

/// The limits a replay runs under: the restoring executor's (its heap limit is the runtime's).
#[derive(Debug, Clone, Copy)]
pub struct ReplayLimits {
    /// No replayed run may count more loop iterations (a run recorded with more is refused).
    pub max_operations: u64,
    /// Each replayed run's deadline.
    pub timeout_ms: u64,
}

/// What a restored engine holds.
#[derive(Debug)]
pub enum Restored {
    /// The session's state, ready for runs.
    Ready,
    /// The state before the run the session paused in, and that run, to be resumed: the call
    /// it paused at, and the tools the session has.
    Paused(crate::session::PausedCall, Vec<String>),
    /// The paused run was resumed (its report goes to the resume's sender).
    Resumed,
}

/// A restore, as the engine's first message.
pub(in crate::engine) struct Restore {
    pub config: EngineConfig,
    pub host: Arc<dyn Host>,
    pub shutdown: Arc<AtomicBool>,
    pub source: Source,
    pub limits: ReplayLimits,
    pub resume: Option<(RunRequest, ToolResult, oneshot::Sender<RunReport>)>,
    pub ready: oneshot::Sender<Result<Restored, EngineError>>,
}

/// What each event costs in the budget besides the values it holds.
const EVENT_COST: usize = 16;

/// A session's record, and the run being recorded or replayed.
pub(in crate::engine) struct Tape {
    /// The session so far: its origin and its complete steps.
    journal: RefCell<Journal>,
    /// The run in progress.
    run: RefCell<Option<RunRecord>>,
    /// While the run is replayed, the index of its next event.
    cursor: Cell<Option<usize>>,
    /// What answers the paused call when the replay reaches it.
    resumption: RefCell<Option<ToolResult>>,
    /// Why the replay went another way than its record.
    diverged: RefCell<Option<String>>,
    /// Bytes held since the origin (see [`JOURNAL_BUDGET`]).
    held: Cell<usize>,
    /// The same bytes, counted against the runtime's `memoryLimitBytes` (once the engine gave
    /// the tape its account).
    charge: RefCell<Option<Charge>>,
    /// Why the session can no longer be snapshotted.
    broken: RefCell<Option<String>>,
    /// Set once the run in progress is to pause: its journal is what `resume()` replays, so
    /// nothing is dropped from it any more (the runtime goes with the pause).
    pausing: Cell<bool>,
    /// The calls the run has made so far (their numbers in [`Event::Settled`]).
    calls: Cell<u32>,
    /// The last value `performance.now()` gave, recorded or played back.
    performance_last: Cell<f64>,
    /// What live reads of `performance.now()` add to the clock: 0 in the process that made the
    /// session; after a restore, fixed by the first live read so that the clock continues from
    /// its last value (another process's monotonic clock has another origin).
    performance_offset: Cell<Option<f64>>,
}

/// What the replay of a tool call gives.
pub(in crate::engine) enum Replayed {
    /// The call returned this at once.
    Returned(ToolResult),
    /// The call returned a promise.
    Pending,
    /// The run paused at this call, and is resumed with this answer: the tape is live now.
    Resumed(ToolResult),
    /// The record holds something else here.
    Diverged,
}

/// The next thing a replayed run's event loop does when its jobs run dry.
pub(in crate::engine) enum External {
    /// Fire the timer with this sequence number.
    Timer(u64),
    /// Settle the promise of the run's call with this number.
    Settle(u32, ToolResult),
    /// The run paused while awaiting this call, and is resumed with this answer (live now).
    Resume(u32, ToolResult),
    /// The record holds nothing more: the run must settle by itself.
    Exhausted,
    /// The record holds something else here.
    Diverged,
}

impl Tape {
    /// A tape for a session that starts from `origin`.
    pub(in crate::engine) fn new(origin: Origin) -> Self {
        Self {
            journal: RefCell::new(Journal {
                origin,
                steps: Vec::new(),
            }),
            run: RefCell::new(None),
            cursor: Cell::new(None),
            resumption: RefCell::new(None),
            diverged: RefCell::new(None),
            held: Cell::new(0),
            charge: RefCell::new(None),
            broken: RefCell::new(None),
            pausing: Cell::new(false),
            calls: Cell::new(0),
            performance_last: Cell::new(0.0),
            performance_offset: Cell::new(Some(0.0)),
        }
    }

    /// A tape for a session being restored: its `performance.now()` continues from the last
    /// value the session read once it runs live.
    pub(in crate::engine) fn restored(origin: Origin) -> Self {
        let tape = Self::new(origin);
        tape.performance_offset.set(None);
        if let Origin::Checkpoint(image) = &tape.journal.borrow().origin {
            tape.performance_last.set(image.performance_now);
        }
        tape
    }

    /// `performance.timeOrigin` of the session's context.
    pub(in crate::engine) fn time_origin(&self) -> f64 {
        match &self.journal.borrow().origin {
            Origin::Fresh { time_origin, .. } => *time_origin,
            Origin::Checkpoint(image) => image.time_origin,
        }
    }

    /// The tools the session has, with the inputs last sent for each, in the order they came.
    pub(in crate::engine) fn tools(&self) -> Vec<crate::tools::ToolSpec> {
        tools_of(&self.journal.borrow())
    }

    /// The last value `performance.now()` gave (a checkpoint keeps it).
    pub(in crate::engine) fn performance_last(&self) -> f64 {
        self.performance_last.get()
    }

    /// The session so far, and the run in progress with the events recorded until now.
    pub(in crate::engine) fn journal(&self) -> Journal {
        let mut journal = self.journal.borrow().clone();
        if let Some(run) = self.run.borrow().as_ref() {
            journal.steps.push(Step::Run(run.clone()));
        }
        journal
    }

    /// Takes the session (the run in progress included) out of the tape, which is left empty:
    /// for an engine that goes away while its run is paused.
    pub(in crate::engine) fn take_journal(&self) -> Journal {
        let mut journal =
            std::mem::replace(&mut *self.journal.borrow_mut(), Journal::fresh(0, 0.0));
        if let Some(run) = self.run.borrow_mut().take() {
            journal.steps.push(Step::Run(run));
        }
        journal
    }

    /// Why the session cannot be snapshotted, if it cannot.
    pub(in crate::engine) fn broken(&self) -> Option<String> {
        self.broken.borrow().clone()
    }

    /// The origin's values a fresh context is made with: the random generator's state and the
    /// clock origin (`None` for a checkpoint origin, whose image sets them).
    pub(in crate::engine) fn fresh_origin(&self) -> Option<(u64, f64)> {
        match &self.journal.borrow().origin {
            Origin::Fresh {
                random_seed,
                time_origin,
            } => Some((*random_seed, *time_origin)),
            Origin::Checkpoint(_) => None,
        }
    }

    /// Replaces the journal's origin (a checkpoint taken now): what the journal held before is
    /// no longer needed.
    pub(in crate::engine) fn rebase(&self, origin: Origin) {
        *self.journal.borrow_mut() = Journal {
            origin,
            steps: Vec::new(),
        };
        self.held_nothing();
        *self.broken.borrow_mut() = None;
    }

    /// Counts what the journal holds against `account` from now on. The journal gives way to
    /// what the sandbox needs: when a block or a charge would not fit beside it, and dropping it
    /// makes room, it is dropped and the session stops being durable (until a checkpoint).
    /// The engine sets [`Tape::give_way_for`] as the account's evict hook.
    pub(in crate::engine) fn charge_to(&self, account: &Rc<MemoryAccount>) {
        let mut charge = account.empty_charge();
        let refused = charge.resize(self.held.get()).is_err();
        *self.charge.borrow_mut() = Some(charge);
        if refused {
            self.give_way();
        }
    }

    /// The account's evict hook: drops the journal when that frees the `missing` bytes. While
    /// a run is replayed that is the journal being rebuilt (the run's record is counted when
    /// the run ends), so a restore under a smaller `memoryLimitBytes` than the session was made
    /// with fails no replayed run for it.
    pub(in crate::engine) fn give_way_for(&self, missing: usize) {
        if !self.pausing.get() && self.held.get() >= missing {
            self.give_way();
        }
    }

    /// Drops the journal to make room within `memoryLimitBytes`.
    fn give_way(&self) {
        self.unrepeatable(
            "its journal was dropped to make room within memoryLimitBytes for what the session held",
        );
    }

    /// The journal holds nothing past its origin any more: its budget and its charge are empty.
    fn held_nothing(&self) {
        self.held.set(0);
        // Never borrowed across a call that could come back here (the account's evict hook).
        if let Ok(mut charge) = self.charge.try_borrow_mut() {
            if let Some(charge) = charge.as_mut() {
                let _ = charge.resize(0);
            }
        }
    }

    /// Marks the session as one a replay cannot repeat exactly (until a checkpoint holds its
    /// state), for `why`, and releases the journal. Called from inside QuickJS's allocator too
    /// (the evict hook), so it takes no borrow that could fail.
    fn unrepeatable(&self, why: &str) {
        let Ok(mut broken) = self.broken.try_borrow_mut() else {
            return;
        };
        broken.get_or_insert_with(|| why.to_owned());
        drop(broken);
        self.release();
    }

    /// Frees what the journal holds once the session can no longer be snapshotted: nothing reads
    /// it again before a checkpoint replaces it. The tools sent are kept (a checkpoint names
    /// them). A run's own record is kept while it is replayed (the replay reads it) or held
    /// paused (its resume replays it); nothing is dropped once the run is to pause.
    fn release(&self) {
        if self.pausing.get() {
            return;
        }
        // Never a borrow that could fail: this runs inside QuickJS's allocator (the evict hook).
        // When one is taken nothing is freed, and the allocation is refused as without a hook.
        let (Ok(mut journal), Ok(mut run)) =
            (self.journal.try_borrow_mut(), self.run.try_borrow_mut())
        else {
            return;
        };
        let tools = tools_of(&journal);
        journal.steps = if tools.is_empty() {
            Vec::new()
        } else {
            vec![Step::Tools(tools)]
        };
        let replaying = self.replaying();
        if let Some(run) = run
            .as_mut()
            .filter(|run| !replaying && !matches!(run.events.last(), Some(Event::Paused(_))))
        {
            run.events = Vec::new();
        }
        drop((journal, run));
        self.held_nothing();
    }

    /// The run in progress is to pause (a tool asked it to): what the journal holds is what
    /// `resume()` will replay, so it no longer gives way or is released.
    pub(in crate::engine) fn pausing(&self) {
        self.pausing.set(true);
    }

    /// Adds a step (tools or variables sent).
    pub(in crate::engine) fn step(&self, step: Step) {
        let weight = match &step {
            Step::Tools(tools) => tools.len() * EVENT_COST,
            Step::Variables(variables) => variables
                .iter()
                .map(|(name, value)| name.len() + weight(value))
                .sum(),
            Step::Run(_) => 0,
        };
        // The tools sent are kept whatever the journal's state: a checkpoint names them.
        if self.charge(weight) || matches!(step, Step::Tools(_)) {
            self.journal.borrow_mut().steps.push(step);
        }
    }

    /// Counts `bytes` against the budget; false (and the session broken) past it.
    fn charge(&self, bytes: usize) -> bool {
        if self.broken.borrow().is_some() {
            return false;
        }
        let held = self.held.get().saturating_add(bytes);
        if held > JOURNAL_BUDGET {
            self.unrepeatable(&format!(
                "its journal passed {} MiB (the runs since the last checkpoint read the clock or received tool answers that much)",
                JOURNAL_BUDGET >> 20
            ));
            return false;
        }
        // What does not fit beside the sandbox's memory is not kept (nothing is evicted for it).
        let fits = match self.charge.try_borrow_mut() {
            Ok(mut charge) => charge
                .as_mut()
                .is_none_or(|charge| charge.grow_if_free(bytes)),
            Err(_) => true,
        };
        if !fits {
            self.give_way();
            return false;
        }
        self.held.set(held);
        true
    }

    /// A run starts: its events are recorded from now on.
    pub(in crate::engine) fn begin_run(
        &self,
        code: String,
        input: Option<Value>,
        max_operations: u64,
    ) {
        let weight = code.len() + input.as_ref().map_or(0, weight);
        self.charge(weight);
        *self.run.borrow_mut() = Some(RunRecord {
            code,
            input,
            max_operations,
            events: Vec::new(),
            end: None,
        });
        self.cursor.set(None);
        self.calls.set(0);
        self.pausing.set(false);
    }

    /// A recorded run starts again: its events are played back, and the paused call (if the
    /// run paused) is answered with `resumption`.
    pub(in crate::engine) fn begin_replay(&self, run: RunRecord, resumption: Option<ToolResult>) {
        *self.run.borrow_mut() = Some(run);
        *self.resumption.borrow_mut() = resumption;
        self.cursor.set(Some(0));
        self.calls.set(0);
    }

    /// Whether the run is being played back (not live).
    pub(in crate::engine) fn replaying(&self) -> bool {
        self.cursor.get().is_some()
    }

    /// Why the replay went another way, if it did.
    pub(in crate::engine) fn divergence(&self) -> Option<String> {
        self.diverged.borrow().clone()
    }

    /// Notes how the replay went another way (the first time only).
    pub(in crate::engine) fn diverge(&self, what: String) {
        let mut diverged = self.diverged.borrow_mut();
        if diverged.is_none() {
            *diverged = Some(what);
        }
    }

    /// Appends an event to the run being recorded (nothing while replaying, or past the budget).
    fn record(&self, event: Event, weight: usize) {
        if self.replaying() || !self.charge(weight + EVENT_COST) {
            return;
        }
        if let Some(run) = self.run.borrow_mut().as_mut() {
            run.events.push(event);
        }
    }

    /// The recorded event at the cursor, moving past it.
    fn next(&self) -> Option<Event> {
        let at = self.cursor.get()?;
        let event = self.run.borrow().as_ref()?.events.get(at).cloned();
        if event.is_some() {
            self.cursor.set(Some(at + 1));
        }
        event
    }

    /// A read of the clock: recorded, or played back. `value` is what the clock says now.
    pub(in crate::engine) fn clock(&self, read: ClockRead, value: f64) -> f64 {
        if read == ClockRead::GcObserver {
            self.unrepeatable(
                "it made a WeakRef or FinalizationRegistry since its last checkpoint, which tell code when the garbage collector ran, and a replay does not repeat that",
            );
            return value;
        }
        if read == ClockRead::TimeOrigin {
            let mut journal = self.journal.borrow_mut();
            return match &mut journal.origin {
                // A new session keeps the origin its context was made with.
                Origin::Fresh { time_origin, .. } if time_origin.is_nan() => {
                    *time_origin = value;
                    value
                }
                Origin::Fresh { time_origin, .. } => *time_origin,
                Origin::Checkpoint(image) => image.time_origin,
            };
        }
        let live = match read {
            ClockRead::PerformanceNow => {
                let offset = self.performance_offset.get().unwrap_or_else(|| {
                    let offset = self.performance_last.get() - value;
                    self.performance_offset.set(Some(offset));
                    offset
                });
                (value + offset).max(self.performance_last.get())
            }
            _ => value,
        };
        let given = if self.run.borrow().is_none() {
            live
        } else if !self.replaying() {
            self.record(Event::Clock(live), 0);
            live
        } else {
            match self.next() {
                Some(Event::Clock(recorded)) => recorded,
                other => {
                    self.diverge(format!(
                        "the run read the clock where its record has {}",
                        shown(other.as_ref())
                    ));
                    live
                }
            }
        };
        if read == ClockRead::PerformanceNow && given > self.performance_last.get() {
            self.performance_last.set(given);
        }
        given
    }

    /// The tool calls the run made so far.
    pub(in crate::engine) fn calls(&self) -> u32 {
        self.calls.get()
    }

    /// Records that tools or variables were sent. One that failed for lack of memory may have
    /// left part of itself in the state, which a replay (on another heap) may not leave: the
    /// session can no longer be snapshotted.
    pub(in crate::engine) fn endowed(&self, step: Step, outcome: &Result<(), EngineError>) {
        if let Err(EngineError::Limit {
            limit: "memoryLimitBytes",
            ..
        }) = outcome
        {
            if self.broken.borrow().is_none() {
                *self.broken.borrow_mut() = Some(
                    "a sendTools or sendVariables failed at memoryLimitBytes, which a replay cannot repeat exactly".into(),
                );
            }
        }
        self.step(step);
    }

    /// Numbers a tool call of the run (the number [`Event::Settled`] names it by).
    pub(in crate::engine) fn next_call(&self) -> u32 {
        let call = self.calls.get();
        self.calls.set(call.saturating_add(1));
        call
    }

    /// A tool call answered at once, recorded.
    pub(in crate::engine) fn returned(&self, result: &ToolResult) {
        if !self.replaying() {
            self.record(Event::Returned(result.clone()), result_weight(result));
        }
    }

    /// A tool call answered with a promise, recorded.
    pub(in crate::engine) fn pending(&self) {
        self.record(Event::Pending, 0);
    }

    /// The promise of call `call` settled and was delivered, recorded.
    pub(in crate::engine) fn settled(&self, call: u32, result: &ToolResult) {
        if !self.replaying() {
            self.record(Event::Settled(call, result.clone()), result_weight(result));
        }
    }

    /// The timer with sequence number `sequence` fired, recorded.
    pub(in crate::engine) fn timer(&self, sequence: u64) {
        self.record(Event::Timer(sequence), 0);
    }

    /// A charge against `memoryLimitBytes` (a canvas's pixels, a data URL, image data) was
    /// refused: whether one fits depends on what the heap holds, which a restore does not repeat.
    /// Replaying, that is a divergence (a session that saw a refusal is never replayed, so the
    /// original charge fitted); otherwise the session cannot be snapshotted or paused until a
    /// checkpoint holds its state.
    pub(in crate::engine) fn charge_refused(&self) {
        if self.replaying() {
            self.diverge(
                "a charge against memoryLimitBytes that fitted when the run was recorded does not fit now"
                    .into(),
            );
        } else {
            self.unrepeatable(
                "a charge against memoryLimitBytes was refused since its last checkpoint (a canvas, a data URL, image data), and whether one fits depends on what the heap holds, which a restore does not repeat",
            );
        }
    }

    /// The run paused at a call because a tool asked it to: recorded as its last event. Not
    /// charged (a charge that did not fit would drop the journal `resume()` replays): the
    /// runtime goes with the pause, and the journal leaves with it (see
    /// [`Tape::take_journal`]); a restore counts the run when it ends.
    pub(in crate::engine) fn paused(&self, paused: PausedCall) {
        if let Some(run) = self.run.borrow_mut().as_mut() {
            run.events.push(Event::Paused(Box::new(paused)));
        }
    }

    /// The call the run in progress paused at, if it is paused.
    pub(in crate::engine) fn paused_call(&self) -> Option<PausedCall> {
        match self.run.borrow().as_ref()?.events.last()? {
            Event::Paused(paused) => Some((**paused).clone()),
            _ => None,
        }
    }

    /// Takes the run in progress out of the tape (a paused run, to be replayed and resumed).
    pub(in crate::engine) fn take_run(&self) -> Option<RunRecord> {
        self.cursor.set(None);
        self.run.borrow_mut().take()
    }

    /// Puts a paused run in (a restored session paused in it), to be resumed later.
    pub(in crate::engine) fn hold_run(&self, run: RunRecord) {
        self.cursor.set(None);
        *self.run.borrow_mut() = Some(run);
    }

    /// The replay of a synchronous tool call: what the record says the call gave.
    pub(in crate::engine) fn replay_call(&self, call: u32) -> Replayed {
        match self.next() {
            Some(Event::Returned(result)) => Replayed::Returned(result),
            Some(Event::Pending) => Replayed::Pending,
            Some(Event::Paused(paused)) if paused.call == call => match self.go_live() {
                Some(answer) => {
                    self.record(Event::Returned(answer.clone()), result_weight(&answer));
                    Replayed::Resumed(answer)
                }
                None => {
                    self.diverge(
                        "the run reached the call it paused at with no answer to resume it".into(),
                    );
                    Replayed::Diverged
                }
            },
            other => {
                self.diverge(format!(
                    "the run called a tool where its record has {}",
                    shown(other.as_ref())
                ));
                Replayed::Diverged
            }
        }
    }

    /// The replay of the event loop's next choice, once the run's jobs ran dry.
    pub(in crate::engine) fn replay_external(&self) -> External {
        let at = self.cursor.get().unwrap_or(0);
        if self
            .run
            .borrow()
            .as_ref()
            .is_some_and(|run| at >= run.events.len())
        {
            return External::Exhausted;
        }
        match self.next() {
            Some(Event::Timer(sequence)) => External::Timer(sequence),
            Some(Event::Settled(call, result)) => External::Settle(call, result),
            Some(Event::Paused(paused)) => match self.go_live() {
                Some(answer) => {
                    let call = paused.call;
                    self.record(Event::Settled(call, answer.clone()), result_weight(&answer));
                    External::Resume(call, answer)
                }
                None => {
                    self.diverge(
                        "the run reached the call it paused at with no answer to resume it".into(),
                    );
                    External::Diverged
                }
            },
            other => {
                self.diverge(format!(
                    "the run's event loop ran dry where its record has {}",
                    shown(other.as_ref())
                ));
                External::Diverged
            }
        }
    }

    /// The replay reached the paused call: the record ends here (the pause itself is dropped),
    /// and what follows is recorded live. Returns the answer to give the call, or `None` when
    /// there is none (a paused run must be replayed with its answer), or when the pause is not
    /// the record's last event.
    fn go_live(&self) -> Option<ToolResult> {
        let at = self.cursor.get()?;
        let mut run = self.run.borrow_mut();
        let run = run.as_mut()?;
        if at != run.events.len() || run.end.is_some() {
            return None;
        }
        let answer = self.resumption.borrow_mut().take()?;
        run.events.truncate(at - 1);
        self.cursor.set(None);
        Some(answer)
    }

    /// The run ended: its end is recorded and the run joins the journal; for a replayed run the
    /// end must be the recorded one. `Err` says how the replay diverged.
    pub(in crate::engine) fn end_run(&self, end: RunEnd) -> Result<(), String> {
        let Some(mut run) = self.run.borrow_mut().take() else {
            return Ok(());
        };
        let cursor = self.cursor.take();
        self.resumption.borrow_mut().take();
        if let Some(diverged) = self.divergence() {
            return Err(diverged);
        }
        if let Some(at) = cursor {
            if at != run.events.len() {
                return Err(format!(
                    "the run ended having used {at} of the {} events its record holds",
                    run.events.len()
                ));
            }
            if run.end != Some(end) {
                return Err(match run.end {
                    Some(recorded) => format!(
                        "the run ended {} after {} loop iterations and {} tool calls; its record says {} after {} and {}",
                        outcome(end.outcome), end.operations, end.calls,
                        outcome(recorded.outcome), recorded.operations, recorded.calls
                    ),
                    None => "the paused run ended before reaching the call it paused at".into(),
                });
            }
        } else {
            run.end = Some(end);
        }
        // A replayed run was not charged as it went (a restore's journal counts as it is
        // rebuilt). A journal that can no longer be written keeps nothing more.
        let weight = if cursor.is_some() {
            run.code.len()
                + run.input.as_ref().map_or(0, weight)
                + run.events.iter().map(event_weight).sum::<usize>()
        } else {
            0
        };
        if self.charge(weight + EVENT_COST) {
            self.journal.borrow_mut().steps.push(Step::Run(run));
        }
        Ok(())
    }
}

/// The tools a journal's session has, with the inputs last sent for each, in the order they
/// came.
fn tools_of(journal: &Journal) -> Vec<crate::tools::ToolSpec> {
    let mut tools: Vec<crate::tools::ToolSpec> = match &journal.origin {
        Origin::Checkpoint(image) => image.tools.clone(),
        Origin::Fresh { .. } => Vec::new(),
    };
    for step in &journal.steps {
        if let Step::Tools(sent) = step {
            for tool in sent {
                match tools.iter_mut().find(|known| known.name == tool.name) {
                    Some(known) => known.inputs.clone_from(&tool.inputs),
                    None => tools.push(tool.clone()),
                }
            }
        }
    }
    tools
}

fn outcome(outcome: crate::session::Outcome) -> &'static str {
    match outcome {
        crate::session::Outcome::Completed => "with an output",
        crate::session::Outcome::FinalAnswer => "with a final answer",
        crate::session::Outcome::Failed => "with an error",
    }
}

/// An event as a divergence message names it.
fn shown(event: Option<&Event>) -> &'static str {
    match event {
        None => "nothing more",
        Some(Event::Clock(_)) => "a clock read",
        Some(Event::Returned(_)) => "a tool's answer",
        Some(Event::Pending) => "a tool's promise",
        Some(Event::Settled(..)) => "a settled promise",
        Some(Event::Timer(_)) => "a timer",
        Some(Event::Paused(..)) => "the pause",
    }
}

/// What a recorded event costs in the journal's budget, as [`Tape::record`] charged it.
fn event_weight(event: &Event) -> usize {
    EVENT_COST
        + match event {
            Event::Returned(result) | Event::Settled(_, result) => result_weight(result),
            Event::Paused(paused) => {
                weight(&paused.reason) + paused.args.iter().map(weight).sum::<usize>()
            }
            Event::Clock(_) | Event::Pending | Event::Timer(_) => 0,
        }
}

fn result_weight(result: &ToolResult) -> usize {
    match result {
        Ok(value) => weight(value),
        Err(failure) => failure.name.len() + failure.message.len(),
    }
}

/// What a value costs in the journal's budget: its text and bytes, and a few bytes a part.
pub(in crate::engine) fn weight(value: &Value) -> usize {
    let mut total = 0usize;
    let mut parts = vec![value];
    while let Some(part) = parts.pop() {
        total = total.saturating_add(8);
        match part {
            Value::BigInt(text) | Value::String(text) | Value::Uncloneable(text) => {
                total = total.saturating_add(text.len());
            }
            Value::Array(items) => parts.extend(items.iter().flatten()),
            Value::Object(entries) => {
                for (key, value) in entries {
                    total = total.saturating_add(key.len());
                    parts.push(value);
                }
            }
            Value::RegExp { source, flags } => {
                total = total.saturating_add(source.len() + flags.len());
            }
            Value::Map(entries) => {
                for (key, value) in entries {
                    parts.push(key);
                    parts.push(value);
                }
            }
            Value::Set(items) => parts.extend(items),
            Value::Error {
                name,
                message,
                stack,
            } => {
                total = total.saturating_add(
                    name.len() + message.len() + stack.as_ref().map_or(0, String::len),
                );
            }
            Value::ArrayBuffer(bytes) => total = total.saturating_add(bytes.len()),
            Value::TypedArray { buffer, .. } => parts.push(buffer),
            Value::Undefined
            | Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::Date(_)
            | Value::Ref(_) => {}
        }
    }
    total
}

#[cfg(test)]
mod tests;
