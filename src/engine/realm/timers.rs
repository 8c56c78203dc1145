//! `setTimeout`, `clearTimeout`, `setInterval` and `clearInterval` for an executor created with
//! `timers: true` (§5.2 injects none by default; docs/tools.md "Timers").
//!
//! Timers run on the engine's own clock, not Node's event loop: the run's driver
//! (`run/worker.rs` `drive`) fires every timer that is due, one at a time with the promise jobs
//! each one queues run before the next (as Node and browsers order them), and when the only
//! thing left is a timer not yet due the run gives its thread up like a run awaiting a tool
//! does, asking the pool to wake it when the earliest timer is due (or at its deadline, which
//! always comes first if it is earlier). So a sleeping run holds no engine thread, and the
//! deadline, an abort or `cleanup()` stop it as they stop a run waiting for a tool.
//!
//! Timers belong to the run that set them: the run ends when its script's promise settles, and
//! the timers still pending then are cancelled and counted (`RunStats::timers_cancelled`). A
//! callback that throws ends the run with that error, as an uncaught exception in a Node timer
//! ends the process.
//!
//! Callbacks and their arguments stay in the QuickJS heap (under `memoryLimitBytes`); what this
//! module keeps per timer on the Rust side is bounded by [`MAX_PENDING`].

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::function::Rest;
use rquickjs::{Coerced, Ctx, Exception, FromJs, Function, Persistent, Value as JsValue};

use super::globals::{define_hardened, throw_stop};
use crate::engine::run::state::RunState;
use crate::engine::session::Tape;

/// The most timers pending at once; one more makes `setTimeout`/`setInterval` throw a
/// `RangeError`. Each costs about a hundred bytes outside the QuickJS heap.
pub const MAX_PENDING: usize = 10_000;

/// The longest delay; longer ones (and shorter than 1 ms, or not a number) become 1 ms, as in
/// Node (a 32-bit signed millisecond count).
const MAX_DELAY_MS: f64 = 2_147_483_647.0;

/// A pending timer.
struct Timer {
    /// When it is due, and its place among timers due at the same instant (creation order).
    key: (Instant, u64),
    callback: Persistent<Function<'static>>,
    args: Vec<Persistent<JsValue<'static>>>,
    /// The period of an interval.
    every: Option<Duration>,
}

/// The pending timers of the current run.
#[derive(Default)]
pub(crate) struct Timers {
    /// Due times (with a creation sequence number for ties) to timer ids, earliest first.
    due: RefCell<BTreeMap<(Instant, u64), u32>>,
    timers: RefCell<HashMap<u32, Timer>>,
    sequence: Cell<u64>,
    last_id: Cell<u32>,
}

/// What [`Timers::fire_due`] did.
pub(crate) enum Fired<'js> {
    /// No timer is due yet.
    NotYet,
    /// A callback ran.
    Ran,
    /// A callback threw this.
    Threw(JsValue<'js>),
}

impl Timers {
    /// Whether any timer is pending.
    pub(crate) fn is_pending(&self) -> bool {
        !self.due.borrow().is_empty()
    }

    /// When the earliest pending timer is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due.borrow().keys().next().map(|(at, _)| *at)
    }

    /// Runs the earliest timer if it is due (recording which one on `tape`); an interval is
    /// scheduled again, its next turn counted from now.
    pub(crate) fn fire_due<'js>(&self, ctx: &Ctx<'js>, tape: &Tape) -> Fired<'js> {
        let now = Instant::now();
        let (key, id) = match self.due.borrow().iter().next() {
            Some((key, id)) if key.0 <= now => (*key, *id),
            _ => return Fired::NotYet,
        };
        tape.timer(key.1);
        self.fire(ctx, key, id, now)
    }

    /// Runs the pending timer made (or last rescheduled) with sequence number `sequence`, due
    /// or not: a replayed run fires the timers its record names, in its order. `None` when no
    /// pending timer has that number.
    pub(in crate::engine) fn fire_sequence<'js>(
        &self,
        ctx: &Ctx<'js>,
        sequence: u64,
    ) -> Option<Fired<'js>> {
        let (key, id) = self
            .due
            .borrow()
            .iter()
            .find(|(key, _)| key.1 == sequence)
            .map(|(key, id)| (*key, *id))?;
        Some(self.fire(ctx, key, id, Instant::now()))
    }

    /// The counters a checkpoint keeps: the next sequence number, and the last id handed out.
    pub(in crate::engine) fn counters(&self) -> (u64, u32) {
        (self.sequence.get(), self.last_id.get())
    }

    /// Sets the counters (from a checkpoint).
    pub(in crate::engine) fn set_counters(&self, sequence: u64, last_id: u32) {
        self.sequence.set(sequence);
        self.last_id.set(last_id);
    }

    fn fire<'js>(&self, ctx: &Ctx<'js>, key: (Instant, u64), id: u32, now: Instant) -> Fired<'js> {
        self.due.borrow_mut().remove(&key);
        let (callback, args) = {
            let mut timers = self.timers.borrow_mut();
            let Some(timer) = timers.get_mut(&id) else {
                return Fired::Ran;
            };
            let call = (timer.callback.clone(), timer.args.clone());
            match timer.every {
                Some(every) => {
                    timer.key = (now + every, self.next_sequence());
                    self.due.borrow_mut().insert(timer.key, id);
                }
                None => {
                    timers.remove(&id);
                }
            }
            call
        };
        let called = callback.restore(ctx).and_then(|callback| {
            let args = args
                .into_iter()
                .map(|arg| arg.restore(ctx))
                .collect::<rquickjs::Result<Vec<_>>>()?;
            callback.call::<_, ()>((Rest(args),))
        });
        match called {
            Ok(()) => Fired::Ran,
            Err(rquickjs::Error::Exception) => Fired::Threw(ctx.catch()),
            Err(other) => Fired::Threw(
                rquickjs::String::from_str(ctx.clone(), &other.to_string())
                    .map(rquickjs::String::into_value)
                    .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone())),
            ),
        }
    }

    /// Cancels every pending timer (the run is over); returns how many there were.
    pub(crate) fn cancel_all(&self) -> u64 {
        self.due.borrow_mut().clear();
        let cancelled = std::mem::take(&mut *self.timers.borrow_mut());
        u64::try_from(cancelled.len()).unwrap_or(u64::MAX)
    }

    fn next_sequence(&self) -> u64 {
        let sequence = self.sequence.get();
        // Only a checkpoint can set the counter near its end (a session would need 2^64 timers):
        // a wrap then misorders ties between timers due at the same instant, and panics nowhere.
        self.sequence.set(sequence.wrapping_add(1));
        sequence
    }

    fn add<'js>(
        &self,
        ctx: &Ctx<'js>,
        what: &str,
        args: Vec<JsValue<'js>>,
        repeat: bool,
    ) -> rquickjs::Result<u32> {
        let mut args = args.into_iter();
        let callback = match args.next().and_then(JsValue::into_function) {
            Some(callback) => callback,
            None => {
                return Err(Exception::throw_type(
                    ctx,
                    &format!(
                        "{what}: the callback must be a function (strings of code are not run)"
                    ),
                ))
            }
        };
        let delay = match args.next() {
            None => 0.0,
            Some(delay) => Coerced::<f64>::from_js(ctx, delay)?.0,
        };
        if self.timers.borrow().len() >= MAX_PENDING {
            return Err(Exception::throw_range(
                ctx,
                &format!("{what}: too many pending timers (at most {MAX_PENDING})"),
            ));
        }
        let delay = if (1.0..=MAX_DELAY_MS).contains(&delay) {
            Duration::from_secs_f64(delay / 1000.0)
        } else {
            Duration::from_millis(1)
        };
        let id = self.free_id();
        let key = (Instant::now() + delay, self.next_sequence());
        let timer = Timer {
            key,
            callback: Persistent::save(ctx, callback),
            args: args.map(|arg| Persistent::save(ctx, arg)).collect(),
            every: repeat.then_some(delay),
        };
        self.due.borrow_mut().insert(key, id);
        self.timers.borrow_mut().insert(id, timer);
        Ok(id)
    }

    /// An id no pending timer has (ids count up from 1 and wrap; at most [`MAX_PENDING`] are
    /// taken, so the search is short).
    fn free_id(&self) -> u32 {
        let timers = self.timers.borrow();
        let mut id = self.last_id.get();
        loop {
            id = id.checked_add(1).unwrap_or(1);
            if !timers.contains_key(&id) {
                self.last_id.set(id);
                return id;
            }
        }
    }

    fn clear<'js>(&self, ctx: &Ctx<'js>, id: Option<JsValue<'js>>) -> rquickjs::Result<()> {
        // Like browsers and Node, an id that is no pending timer's is ignored.
        let Some(id) = id.filter(|id| id.is_number()) else {
            return Ok(());
        };
        let id = f64::from_js(ctx, id)?;
        if !(1.0..=f64::from(u32::MAX)).contains(&id) || id.fract() != 0.0 {
            return Ok(());
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a whole number in 1..=u32::MAX, checked above"
        )]
        let id = id as u32;
        if let Some(timer) = self.timers.borrow_mut().remove(&id) {
            self.due.borrow_mut().remove(&timer.key);
        }
        Ok(())
    }
}

/// Installs the four timer functions as hardened globals served by `timers`.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    timers: &Rc<Timers>,
    state: &Rc<RunState>,
) -> rquickjs::Result<()> {
    for (name, repeat) in [("setTimeout", false), ("setInterval", true)] {
        let (timers, state) = (Rc::clone(timers), Rc::clone(state));
        let set = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| -> rquickjs::Result<u32> {
                if state.stop.get().is_some() {
                    return Err(throw_stop(&ctx));
                }
                timers.add(&ctx, name, args.0, repeat)
            },
        )?
        .with_name(name)?;
        define_hardened(ctx, name, set.into_value(), false)?;
    }
    for name in ["clearTimeout", "clearInterval"] {
        let timers = Rc::clone(timers);
        let clear = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| -> rquickjs::Result<()> {
                timers.clear(&ctx, args.0.into_iter().next())
            },
        )?
        .with_name(name)?;
        define_hardened(ctx, name, clear.into_value(), false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::engine::testing::{engine_with, run_abortable, run_on, FakeHost};
    use crate::engine::{Engine, EngineError, RunAbort, RunReport};
    use crate::options::Options;
    use crate::value::Value;

    fn with_timers() -> Options {
        Options {
            timers: true,
            timeout_ms: 5_000,
            ..Options::default()
        }
    }

    fn engine(options: &Options) -> Engine {
        engine_with(FakeHost::default(), options)
    }

    fn output(report: RunReport) -> Value {
        report.result.expect("the run succeeds").output
    }

    fn texts(items: &[&str]) -> Value {
        Value::Array(
            items
                .iter()
                .map(|item| Some(Value::String((*item).into())))
                .collect(),
        )
    }

    #[test]
    fn section_5_2_no_timers_unless_the_executor_asks_for_them() {
        let options = Options::default();
        let report = run_on(&engine(&options), "typeof setTimeout", &options);
        assert_eq!(report.stats.timers_cancelled, None);
        assert_eq!(output(report), Value::String("undefined".into()));
    }

    #[test]
    fn timers_fire_in_due_order_with_their_promise_jobs_between_and_the_run_awaits_its_promise() {
        let options = with_timers();
        let report = run_on(
            &engine(&options),
            "const log = []
             setTimeout(() => log.push('b'), 20)
             setTimeout(() => { log.push('a'); Promise.resolve().then(() => log.push('a-job')) }, 5)
             setTimeout((x, y) => log.push(x + y), 20, 'c', '!')
             const gone = setTimeout(() => log.push('cleared'), 10)
             clearTimeout(gone)
             await new Promise((resolve) => setTimeout(resolve, 40))
             log",
            &options,
        );
        assert_eq!(report.stats.timers_cancelled, Some(0));
        assert_eq!(output(report), texts(&["a", "a-job", "b", "c!"]));
    }

    #[test]
    fn an_interval_repeats_until_cleared() {
        let options = with_timers();
        let report = run_on(
            &engine(&options),
            "let n = 0
             await new Promise((resolve) => {
               const every = setInterval(() => { if (++n === 3) { clearInterval(every); resolve() } }, 2)
             })
             n",
            &options,
        );
        assert_eq!(output(report), Value::Number(3.0));
    }

    #[test]
    fn timers_pending_when_the_run_ends_are_cancelled_and_counted() {
        let options = with_timers();
        let engine = engine(&options);
        let report = run_on(
            &engine,
            "setTimeout(() => { globalThis.late = 1 }, 30); setInterval(() => {}, 1000); 'done'",
            &options,
        );
        assert_eq!(report.stats.timers_cancelled, Some(2));
        assert_eq!(output(report), Value::String("done".into()));
        std::thread::sleep(Duration::from_millis(80));
        let report = run_on(&engine, "typeof late", &options);
        assert_eq!(report.stats.timers_cancelled, Some(0));
        assert_eq!(output(report), Value::String("undefined".into()));
    }

    #[test]
    fn a_run_sleeping_on_a_timer_ends_at_its_deadline() {
        let options = Options {
            timeout_ms: 200,
            ..with_timers()
        };
        let started = Instant::now();
        let report = run_on(
            &engine(&options),
            "await new Promise((resolve) => setTimeout(resolve, 60000))",
            &options,
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(report.dirty);
        assert_eq!(report.stats.timers_cancelled, Some(1));
        assert_eq!(
            report.result.unwrap_err(),
            EngineError::Timeout { timeout_ms: 200 }
        );
    }

    #[test]
    fn a_zero_delay_interval_is_bounded_by_the_deadline() {
        let options = Options {
            timeout_ms: 200,
            ..with_timers()
        };
        let engine = engine(&options);
        let report = run_on(
            &engine,
            "globalThis.ticks = 0; setInterval(() => { ticks++ }, 0); await new Promise(() => {})",
            &options,
        );
        assert_eq!(
            report.result.unwrap_err(),
            EngineError::Timeout { timeout_ms: 200 }
        );
    }

    #[test]
    fn an_abort_wakes_a_run_sleeping_on_a_timer() {
        let options = with_timers();
        let abort = RunAbort::new();
        let aborter = abort.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            aborter.abort();
        });
        let report = run_abortable(
            &engine(&options),
            "await new Promise((resolve) => setTimeout(resolve, 60000))",
            &options,
            &abort,
        );
        assert_eq!(
            report.result.unwrap_err(),
            EngineError::Aborted { started: true }
        );
    }

    #[test]
    fn stopping_the_engine_ends_a_run_sleeping_on_a_timer_and_frees_the_engine() {
        let options = Options {
            timeout_ms: 60_000,
            ..with_timers()
        };
        let engine = engine(&options);
        let sleeping = engine.run(crate::engine::RunRequest::new(
            "await new Promise((resolve) => setTimeout(resolve, 60000))".into(),
            &options,
            RunAbort::new(),
        ));
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let freed = engine.stop();
        let report = sleeping.blocking_recv().unwrap();
        assert_eq!(report.result.unwrap_err(), EngineError::Stopped);
        assert_eq!(report.stats.timers_cancelled, Some(1));
        freed.blocking_recv().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_callback_that_throws_ends_the_run_with_its_error() {
        let options = with_timers();
        let engine = engine(&options);
        let report = run_on(
            &engine,
            "setTimeout(() => { throw new TypeError('late failure') }, 1)\nawait new Promise(() => {})",
            &options,
        );
        match report.result {
            Err(EngineError::Runtime { message, .. }) => {
                assert!(message.contains("late failure"), "{message}");
            }
            other => panic!("expected a runtime error, got {other:?}"),
        }
        // The context is still usable.
        assert_eq!(output(run_on(&engine, "1", &options)), Value::Number(1.0));
    }

    #[test]
    fn final_answer_in_a_callback_ends_the_run() {
        let options = with_timers();
        let report = run_on(
            &engine(&options),
            "setTimeout(() => final_answer('from a timer'), 1); await new Promise(() => {})",
            &options,
        );
        let completion = report.result.unwrap();
        assert!(completion.is_final_answer);
        assert_eq!(completion.output, Value::String("from a timer".into()));
    }

    #[test]
    fn bad_callbacks_and_too_many_timers_throw_catchable_errors() {
        let options = Options {
            max_operations: 1_000_000,
            ..with_timers()
        };
        let report = run_on(
            &engine(&options),
            "const caught = []
             try { setTimeout('globalThis.x = 1', 1) } catch (e) { caught.push(e.name) }
             try { for (let i = 0; i <= 10000; i++) setTimeout(() => {}, 100000) } catch (e) { caught.push(e.name + ': ' + e.message) }
             clearTimeout('nonsense'); clearTimeout(-1); clearInterval(1.5)
             caught",
            &options,
        );
        assert_eq!(report.stats.timers_cancelled, Some(10_000));
        assert_eq!(
            output(report),
            texts(&[
                "TypeError",
                "RangeError: setTimeout: too many pending timers (at most 10000)"
            ])
        );
    }

    #[test]
    fn what_timers_hold_counts_against_the_memory_limit() {
        let options = Options {
            memory_limit_bytes: 16 * 1024 * 1024,
            max_operations: u64::MAX,
            ..with_timers()
        };
        let report = run_on(
            &engine(&options),
            "for (let i = 0; i < 5000; i++) setTimeout(() => {}, 100000, new Array(20000).fill(i))",
            &options,
        );
        assert!(matches!(
            report.result,
            Err(EngineError::Limit {
                limit: "memoryLimitBytes",
                ..
            })
        ));
    }
}
