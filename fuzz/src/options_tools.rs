//! Options and what a tool gives back (bad option values, hostile host values, nothing lost
//! silently), under fuzz.
//!
//! An input is a set of option values (every numeric option as any `f64`, edge values made
//! likely; arbitrary strings for the others), a set of changes sandbox code makes to the
//! built-ins' prototypes first, and a sequence of tool calls, each answered by the host with a
//! value (an arbitrary — also malformed — [`Value`]) or a failure (an arbitrary name and
//! message), synchronously or through a promise, and caught by sandbox code or not.
//!
//! What must hold:
//! - `Options::resolve` never panics, refuses exactly the values an independent model of the
//!   rules (docs/api.md "Options") refuses, and every value it accepts is within its documented range;
//! - an executor's engine built from accepted options starts or fails to start with a structured
//!   error, and every run ends with a structured result;
//! - a tool failure reaches the sandbox, and the run's `ERR_TOOL_PROXY_FAIL`, with exactly the
//!   host's name and message;
//! - what sandbox code did to `RegExp.prototype`, Map/Set iteration, `Error.prototype` and the
//!   constructors changes nothing the executor reads or builds: the run gives the same result
//!   with and without those changes (differential).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arbitrary::Arbitrary;
use ses_executor::engine::host::{Host, ToolCall, ToolFailure};
use ses_executor::engine::{Engine, EngineConfig, EngineError, RunAbort, RunRequest};
use ses_executor::options::{Options, RawOptions};
use ses_executor::value::Value;

use crate::values::ArbValue;

/// A number an option is given: random bits rarely land on the values that matter.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum ArbNumber {
    Any(f64),
    Whole(i64),
    Small(u16),
    Edge(Edge),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Edge {
    Zero,
    NegativeZero,
    One,
    MinusOne,
    Half,
    NaN,
    Infinity,
    NegativeInfinity,
    MaxSafe,
    TwoTo53,
    Kib,
    Kib64,
    Mib,
    JustBelowKib,
}

impl ArbNumber {
    fn value(self) -> f64 {
        match self {
            ArbNumber::Any(number) => number,
            ArbNumber::Whole(number) => number as f64,
            ArbNumber::Small(number) => f64::from(number),
            ArbNumber::Edge(edge) => match edge {
                Edge::Zero => 0.0,
                Edge::NegativeZero => -0.0,
                Edge::One => 1.0,
                Edge::MinusOne => -1.0,
                Edge::Half => 0.5,
                Edge::NaN => f64::NAN,
                Edge::Infinity => f64::INFINITY,
                Edge::NegativeInfinity => f64::NEG_INFINITY,
                Edge::MaxSafe => 9_007_199_254_740_991.0,
                Edge::TwoTo53 => 9_007_199_254_740_992.0,
                Edge::Kib => 1024.0,
                Edge::Kib64 => 65_536.0,
                Edge::Mib => 1_048_576.0,
                Edge::JustBelowKib => 1023.0,
            },
        }
    }
}

/// The options as a caller may pass them; the default leaves every option out.
#[derive(Arbitrary, Debug, Default)]
pub struct ArbOptions {
    max_operations: Option<ArbNumber>,
    timeout_ms: Option<ArbNumber>,
    max_queued_runs: Option<ArbNumber>,
    max_log_bytes: Option<ArbNumber>,
    memory_limit_bytes: Option<ArbNumber>,
    max_stack_bytes: Option<ArbNumber>,
    max_value_bytes: Option<ArbNumber>,
    max_canvas_size: Option<ArbNumber>,
    timers: Option<bool>,
    trace: Option<bool>,
    capture_tool_content: Option<bool>,
    max_trace_bytes: Option<ArbNumber>,
    run_concurrency: Option<String>,
    authorized_imports: Option<Vec<String>>,
    collect_console_levels: Option<Vec<String>>,
}

impl ArbOptions {
    fn raw(&self) -> RawOptions {
        let number = |field: &Option<ArbNumber>| field.map(ArbNumber::value);
        RawOptions {
            max_operations: number(&self.max_operations),
            timeout_ms: number(&self.timeout_ms),
            run_concurrency: self.run_concurrency.clone(),
            max_queued_runs: number(&self.max_queued_runs),
            authorized_imports: self.authorized_imports.clone(),
            max_log_bytes: number(&self.max_log_bytes),
            collect_console_levels: self.collect_console_levels.clone(),
            memory_limit_bytes: number(&self.memory_limit_bytes),
            max_stack_bytes: number(&self.max_stack_bytes),
            max_value_bytes: number(&self.max_value_bytes),
            max_canvas_size: number(&self.max_canvas_size),
            timers: self.timers,
            trace: self.trace,
            max_trace_bytes: number(&self.max_trace_bytes),
            capture_tool_content: self.capture_tool_content,
        }
    }
}

/// A change sandbox code makes to the built-ins before the tool calls.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Tamper {
    RegExpGetters,
    MapSetIteration,
    IteratorNext,
    DateTime,
    ErrorMessageAccessor,
    ErrorNameSetter,
    Constructors,
    CollectionMethods,
    ObjectPrototypeSetters,
}

/// What the tampering code reads before any of it runs (the first line's prefix when the run
/// tampers): each change then reaches the real built-in whatever changes came before it (a
/// `globalThis.Map` replaced by [`Tamper::Constructors`] must not make a later change throw,
/// which would be the tampering code failing, not the executor).
const TAMPER_PREFIX: &str = "const [M0, S0, R0] = [Map, Set, RegExp]; const MI0 = Object.getPrototypeOf(new M0().entries()), SI0 = Object.getPrototypeOf(new S0().values());";

impl Tamper {
    fn code(self) -> &'static str {
        match self {
            Tamper::RegExpGetters => "for (const k of ['source', 'flags', 'global', 'ignoreCase', 'unicode', 'sticky']) Object.defineProperty(R0.prototype, k, { get() { return 'x'; }, configurable: true });",
            Tamper::MapSetIteration => "M0.prototype.entries = S0.prototype.values = function* () { yield ['evil', 1]; }; M0.prototype[Symbol.iterator] = M0.prototype.entries; S0.prototype[Symbol.iterator] = S0.prototype.values;",
            Tamper::IteratorNext => "MI0.next = () => ({ done: true }); SI0.next = () => ({ done: true });",
            Tamper::DateTime => "Date.prototype.getTime = Date.prototype.valueOf = () => 1;",
            Tamper::ErrorMessageAccessor => "Object.defineProperty(Error.prototype, 'message', { get() { return 'lie'; }, set() { throw new Error('set message'); }, configurable: true });",
            Tamper::ErrorNameSetter => "Object.defineProperty(Error.prototype, 'name', { get() { return 'Lie'; }, set() { throw new Error('set name'); }, configurable: true });",
            Tamper::Constructors => "globalThis.Map = globalThis.Set = globalThis.RegExp = globalThis.EvalError = globalThis.URIError = function () { throw new Error('ctor'); };",
            Tamper::CollectionMethods => "M0.prototype.set = S0.prototype.add = function () { throw new Error('add'); };",
            Tamper::ObjectPrototypeSetters => "for (const k of ['0', 'a', 'message', 'name', 'length']) Object.defineProperty(Object.prototype, k, { set() { throw new Error('setter ' + k); }, configurable: true });",
        }
    }
}

/// How the host answers one call.
#[derive(Arbitrary, Debug)]
pub enum Answer {
    Returns(ArbValue),
    Throws(String, String),
    Resolves(ArbValue),
    Rejects(String, String),
}

/// One tool call of the run.
#[derive(Arbitrary, Debug)]
pub struct Call {
    answer: Answer,
    /// Whether sandbox code catches a failure (it then keeps `[name, message]`).
    caught: bool,
}

/// One fuzz input.
#[derive(Arbitrary, Debug)]
pub struct Case {
    options: ArbOptions,
    tampering: Vec<Tamper>,
    calls: Vec<Call>,
}

/// The largest whole number a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Whether the rules accept `value` for an option that takes whole numbers from `min` to `max`
/// (docs/api.md "Options"). The model the fuzzer holds `Options::resolve` to.
fn model_accepts(value: f64, min: f64, max: f64) -> bool {
    value.is_finite() && value.fract() == 0.0 && value >= min && value <= max
}

/// Checks `resolve` against the model; returns the options when they are accepted.
fn check_options(options: &ArbOptions) -> Option<Options> {
    let raw = options.raw();
    let resolved = Options::resolve(&raw);
    // Each numeric option with its range, as the README's options table states it.
    let numbers = [
        ("maxOperations", raw.max_operations, 1.0, MAX_SAFE),
        ("timeoutMs", raw.timeout_ms, 1.0, MAX_SAFE),
        ("maxQueuedRuns", raw.max_queued_runs, 0.0, MAX_SAFE),
        ("maxLogBytes", raw.max_log_bytes, 1024.0, MAX_SAFE),
        (
            "memoryLimitBytes",
            raw.memory_limit_bytes,
            65_536.0,
            MAX_SAFE,
        ),
        ("maxStackBytes", raw.max_stack_bytes, 16_384.0, 16_777_216.0),
        ("maxValueBytes", raw.max_value_bytes, 1024.0, MAX_SAFE),
        ("maxCanvasSize", raw.max_canvas_size, 1.0, 32_768.0),
        ("maxTraceBytes", raw.max_trace_bytes, 1024.0, MAX_SAFE),
    ];
    let diagnostics = match &resolved {
        Ok((_, notices)) => notices.clone(),
        Err(problems) => problems.clone(),
    };
    for (name, value, min, max) in numbers {
        let refused = diagnostics
            .iter()
            .any(|d| d.is_error() && d.message.starts_with(name));
        let accepted = value.is_none_or(|value| model_accepts(value, min, max));
        assert_eq!(
            refused, !accepted,
            "{name} = {value:?}: resolve and the model disagree ({diagnostics:?})"
        );
    }
    let strings_valid = raw
        .run_concurrency
        .as_deref()
        .is_none_or(|policy| policy == "reject" || policy == "queue")
        && raw
            .authorized_imports
            .as_ref()
            .is_none_or(|names| names.iter().all(|name| !name.trim().is_empty()))
        && raw.collect_console_levels.as_ref().is_none_or(|levels| {
            levels
                .iter()
                .all(|level| ["log", "info", "warn", "error"].contains(&level.as_str()))
        });
    let numbers_valid = numbers
        .iter()
        .all(|(_, value, min, max)| value.is_none_or(|value| model_accepts(value, *min, *max)));
    assert_eq!(
        resolved.is_ok(),
        strings_valid && numbers_valid,
        "{raw:?} gave {diagnostics:?}"
    );
    let (options, _) = resolved.ok()?;
    assert!(options.max_operations >= 1 && options.timeout_ms >= 1);
    assert!(options.max_log_bytes >= 1024 && options.max_value_bytes >= 1024);
    assert!(options.memory_limit_bytes >= 65_536);
    assert!((16_384..=16_777_216).contains(&options.max_stack_bytes));
    assert!((1..=32_768).contains(&options.max_canvas_size));
    Some(options)
}

/// A host that answers call number `n` with the `n`th answer (sync, or through a promise it
/// settles at once), and fails calls past the end.
struct Scripted {
    answers: Mutex<Vec<Option<Reply>>>,
    next: AtomicUsize,
}

#[derive(Clone)]
enum Reply {
    Now(Result<Value, ToolFailure>),
    Later(Result<Value, ToolFailure>),
}

fn failure(name: &str, message: &str) -> ToolFailure {
    let mut failure = ToolFailure::new(message);
    name.clone_into(&mut failure.name);
    failure
}

impl Scripted {
    fn new(calls: &[Call]) -> Self {
        let answers = calls
            .iter()
            .map(|call| {
                Some(match &call.answer {
                    Answer::Returns(value) => Reply::Now(Ok(value.to_value())),
                    Answer::Throws(name, message) => Reply::Now(Err(failure(name, message))),
                    Answer::Resolves(value) => Reply::Later(Ok(value.to_value())),
                    Answer::Rejects(name, message) => Reply::Later(Err(failure(name, message))),
                })
            })
            .collect();
        Self {
            answers: Mutex::new(answers),
            next: AtomicUsize::new(0),
        }
    }
}

impl Host for Scripted {
    fn call_tool(&self, call: ToolCall) {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let reply = self
            .answers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get_mut(index)
            .and_then(Option::take);
        match reply {
            Some(Reply::Now(result)) => call.reply.returned(result),
            Some(Reply::Later(result)) => call.reply.pending().settle(result),
            None => call
                .reply
                .returned(Err(ToolFailure::new("no answer scripted"))),
        }
    }
}

/// The run's code: the tampering, then every call (awaited; caught ones keep
/// `['caught', name, message]`).
fn code(case: &Case, tamper: bool) -> String {
    // The tampering shares the first line, so that later lines (and the positions errors name)
    // are the same with and without it.
    let mut code = String::from("const results = [];");
    if tamper {
        code.push(' ');
        code.push_str(TAMPER_PREFIX);
        for change in &case.tampering {
            code.push(' ');
            code.push_str(change.code());
        }
    }
    code.push('\n');
    for call in &case.calls {
        if call.caught {
            code.push_str(
                "try { results.push(await t()); } catch (e) { results.push(['caught', e.name, e.message]); }\n",
            );
        } else {
            code.push_str("results.push(await t());\n");
        }
    }
    code.push_str("results");
    code
}

/// The outcome of one run of `case`, as text that tells results apart exactly.
fn run(case: &Case, options: &Options, tamper: bool) -> Result<String, EngineError> {
    let config = EngineConfig::from(options);
    let host = Arc::new(Scripted::new(&case.calls));
    let (engine, ready) = Engine::start(config, host);
    ready.blocking_recv().map_err(|_| EngineError::Stopped)??;
    engine
        .define_tools(vec!["t".into()])
        .blocking_recv()
        .map_err(|_| EngineError::Stopped)??;
    let mut run_options = options.clone();
    // Runs of the same case must end the same way: no deadline or operation budget in the way.
    run_options.timeout_ms = 10_000;
    run_options.max_operations = 1_000_000;
    let report = engine
        .run(RunRequest::new(
            code(case, tamper),
            &run_options,
            RunAbort::new(),
        ))
        .blocking_recv()
        .expect("the engine answers every run");
    report
        .result
        .map(|completion| format!("{:?}", completion.output))
}

/// What a failure of the case's calls must look like, if one is not caught: the first uncaught
/// failure's tool error, with the host's own name and message.
fn first_uncaught_failure(case: &Case) -> Option<String> {
    case.calls.iter().find_map(|call| match &call.answer {
        Answer::Throws(name, message) | Answer::Rejects(name, message) if !call.caught => {
            Some(format!("{name}: {message}"))
        }
        _ => None,
    })
}

/// Runs one fuzz input; panics on any violation of the module's rules.
pub fn check_case(case: &Case) {
    let Some(options) = check_options(&case.options) else {
        return;
    };
    let plain = run(case, &options, false);
    if let Err(EngineError::Start(_)) = plain {
        // A heap too small for a context (`memoryLimitBytes` near its minimum) is refused at
        // start, as a structured error.
        return;
    }
    let tampered = run(case, &options, true);
    match (&plain, &tampered) {
        (Ok(plain), Ok(tampered)) => {
            assert_eq!(plain, tampered, "tampering changed what the run gave");
        }
        (Err(plain), Err(tampered)) => {
            assert_eq!(
                format!("{plain:?}"),
                format!("{tampered:?}"),
                "tampering changed how the run failed"
            );
        }
        _ => panic!("tampering changed the outcome:\n{plain:?}\n{tampered:?}"),
    }
    if let (Some(expected), Err(EngineError::Tool { tool, message, .. })) =
        (first_uncaught_failure(case), &plain)
    {
        // A result that could not be copied fails its call too, possibly before the first
        // scripted failure; a scripted failure's own text is delivered exactly.
        if !message.contains("cannot be copied") && !message.contains("maxValueBytes") {
            assert_eq!((tool.as_str(), message.as_str()), ("t", expected.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(value: f64) -> Option<ArbNumber> {
        Some(ArbNumber::Any(value))
    }

    #[test]
    fn the_model_agrees_with_resolve_on_the_edges() {
        for value in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1023.0,
            1024.0,
            f64::NAN,
            f64::INFINITY,
            9_007_199_254_740_992.0,
        ] {
            let options = ArbOptions {
                max_operations: number(value),
                timeout_ms: number(value),
                max_queued_runs: number(value),
                max_log_bytes: number(value),
                max_value_bytes: number(value),
                max_canvas_size: number(value),
                max_trace_bytes: number(value),
                ..ArbOptions::default()
            };
            check_options(&options);
        }
    }

    #[test]
    fn failures_and_values_cross_the_same_with_and_without_tampering() {
        let case = Case {
            options: ArbOptions::default(),
            tampering: vec![
                Tamper::ErrorMessageAccessor,
                Tamper::ErrorNameSetter,
                Tamper::MapSetIteration,
                Tamper::Constructors,
                Tamper::ObjectPrototypeSetters,
            ],
            calls: vec![
                Call {
                    answer: Answer::Resolves(ArbValue::Map(vec![(
                        ArbValue::Null,
                        ArbValue::Bool(true),
                    )])),
                    caught: false,
                },
                Call {
                    answer: Answer::Rejects(
                        "Weird\u{0}Name".into(),
                        "message with \u{1F600}".into(),
                    ),
                    caught: true,
                },
                Call {
                    answer: Answer::Throws(String::new(), "last".into()),
                    caught: false,
                },
            ],
        };
        check_case(&case);
        // The differential check above holds for any outcome; this case's own outcome is the
        // last call's failure, with the host's (empty) name and message, at that call's line.
        let options = check_options(&case.options).expect("the defaults are accepted");
        match run(&case, &options, true) {
            Err(EngineError::Tool {
                tool, message, at, ..
            }) => {
                assert_eq!((tool.as_str(), message.as_str()), ("t", ": last"));
                assert_eq!(at.map(|at| at.location.line), Some(4));
            }
            other => panic!("expected the last call's failure, got {other:?}"),
        }
    }

    #[test]
    fn an_awaited_failure_names_the_line_of_its_call_with_tampering_too() {
        let case = Case {
            options: ArbOptions::default(),
            tampering: vec![Tamper::ErrorMessageAccessor, Tamper::ErrorNameSetter],
            calls: vec![
                Call {
                    answer: Answer::Resolves(ArbValue::Null),
                    caught: false,
                },
                Call {
                    answer: Answer::Rejects("TypeError".into(), "no".into()),
                    caught: false,
                },
            ],
        };
        check_case(&case);
        let options = check_options(&case.options).expect("the defaults are accepted");
        for tamper in [false, true] {
            match run(&case, &options, tamper) {
                Err(EngineError::Tool {
                    tool, message, at, ..
                }) => {
                    assert_eq!((tool.as_str(), message.as_str()), ("t", "TypeError: no"));
                    assert_eq!(at.map(|at| at.location.line), Some(3));
                }
                other => panic!("expected the awaited call's failure, got {other:?}"),
            }
        }
    }

    /// Regression (`fuzz/regressions/options_tools/`): the tampering code replaced
    /// `globalThis.Map`, then its own next change called `new Map()` and threw: a failure of the
    /// tampering code that the checker took for the executor's. Changes now reach the built-ins
    /// through what was read before any of them ran.
    #[test]
    fn a_change_after_the_constructors_were_replaced_still_reaches_the_built_ins() {
        let case = Case {
            options: ArbOptions::default(),
            tampering: vec![
                Tamper::Constructors,
                Tamper::IteratorNext,
                Tamper::MapSetIteration,
                Tamper::CollectionMethods,
                Tamper::RegExpGetters,
            ],
            calls: vec![Call {
                answer: Answer::Returns(ArbValue::Map(vec![(ArbValue::Null, ArbValue::Null)])),
                caught: false,
            }],
        };
        check_case(&case);
        let options = check_options(&case.options).expect("the defaults are accepted");
        let tampered = run(&case, &options, true).expect("the tampered run succeeds");
        assert_eq!(
            tampered,
            run(&case, &options, false).expect("the plain run succeeds")
        );
        assert!(tampered.contains("Map"), "{tampered}");
    }
}
