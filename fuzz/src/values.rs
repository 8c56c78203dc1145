//! The value marshaller under fuzz: arbitrary [`Value`]s, malformed ones included (a `Ref` to
//! nothing or to a later object, a typed array over a non-buffer or past its end, BigInt text
//! that is not a number, regexp flags QuickJS refuses), copied into a real engine as a variable
//! and back out as a run's output and through a tool's arguments and result.
//!
//! What must hold: nothing panics or crashes; a value the engine refuses is refused with an
//! error, not a dirty context; and a copy is stable — copying the sandbox's copy again gives the
//! same value (structured clone is idempotent on what it produces).

use std::sync::{Arc, Mutex};

use arbitrary::Arbitrary;
use ses_executor::engine::host::{Host, ToolCall};
use ses_executor::engine::{Engine, EngineConfig, EngineError, RunAbort, RunRequest};
use ses_executor::options::Options;
use ses_executor::value::{TypedArrayKind, Value};

/// A [`Value`] as fuzz bytes describe it.
#[derive(Arbitrary, Debug)]
pub enum ArbValue {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Special(Special),
    BigInt(BigIntText),
    String(String),
    Array(Vec<Option<ArbValue>>),
    Object(Vec<(String, ArbValue)>),
    Date(f64),
    RegExp(String, String),
    Map(Vec<(ArbValue, ArbValue)>),
    Set(Vec<ArbValue>),
    Error(ErrorName, String, Option<String>),
    ArrayBuffer(Vec<u8>),
    TypedArray(u8, Box<ArbValue>, u16, u16),
    Ref(u8),
    Uncloneable(String),
}

/// Numbers random bits rarely produce.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Special {
    NaN,
    NegativeZero,
    Infinity,
    NegativeInfinity,
    MaxSafe,
    Tiny,
}

#[derive(Arbitrary, Debug)]
pub enum BigIntText {
    Exact(i128),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
pub enum ErrorName {
    Error,
    TypeError,
    RangeError,
    AggregateError,
    Other(String),
}

impl ArbValue {
    /// The value the engine is given.
    pub fn to_value(&self) -> Value {
        match self {
            ArbValue::Undefined => Value::Undefined,
            ArbValue::Null => Value::Null,
            ArbValue::Bool(b) => Value::Bool(*b),
            ArbValue::Number(n) => Value::Number(*n),
            ArbValue::Special(special) => Value::Number(match special {
                Special::NaN => f64::NAN,
                Special::NegativeZero => -0.0,
                Special::Infinity => f64::INFINITY,
                Special::NegativeInfinity => f64::NEG_INFINITY,
                Special::MaxSafe => 9_007_199_254_740_991.0,
                Special::Tiny => f64::MIN_POSITIVE,
            }),
            ArbValue::BigInt(BigIntText::Exact(n)) => Value::BigInt(n.to_string()),
            ArbValue::BigInt(BigIntText::Raw(text)) => Value::BigInt(text.clone()),
            ArbValue::String(s) => Value::String(s.clone()),
            ArbValue::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| item.as_ref().map(ArbValue::to_value))
                    .collect(),
            ),
            ArbValue::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_value()))
                    .collect(),
            ),
            ArbValue::Date(ms) => Value::Date(*ms),
            ArbValue::RegExp(source, flags) => Value::RegExp {
                source: source.clone(),
                flags: flags.clone(),
            },
            ArbValue::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(key, value)| (key.to_value(), value.to_value()))
                    .collect(),
            ),
            ArbValue::Set(items) => Value::Set(items.iter().map(ArbValue::to_value).collect()),
            ArbValue::Error(name, message, stack) => Value::Error {
                name: match name {
                    ErrorName::Error => "Error".into(),
                    ErrorName::TypeError => "TypeError".into(),
                    ErrorName::RangeError => "RangeError".into(),
                    ErrorName::AggregateError => "AggregateError".into(),
                    ErrorName::Other(name) => name.clone(),
                },
                message: message.clone(),
                stack: stack.clone(),
            },
            ArbValue::ArrayBuffer(bytes) => Value::ArrayBuffer(bytes.clone()),
            ArbValue::TypedArray(kind, buffer, offset, length) => Value::TypedArray {
                kind: TypedArrayKind::ALL[usize::from(*kind) % TypedArrayKind::ALL.len()],
                buffer: Box::new(buffer.to_value()),
                byte_offset: usize::from(*offset),
                length: usize::from(*length),
            },
            ArbValue::Ref(n) => Value::Ref(usize::from(*n)),
            ArbValue::Uncloneable(text) => Value::Uncloneable(text.clone()),
        }
    }
}

/// Answers `echo(x)` with `x`: the argument is copied out of the sandbox, the result back in.
struct Echo;

impl Host for Echo {
    fn call_tool(&self, call: ToolCall) {
        let first = call.args.into_iter().next().unwrap_or(Value::Undefined);
        call.reply.returned(Ok(first));
    }
}

fn options() -> Options {
    Options {
        timeout_ms: 5_000,
        memory_limit_bytes: 64 * 1024 * 1024,
        ..Options::default()
    }
}

fn start() -> Engine {
    let (engine, ready) = Engine::start(EngineConfig::from(&options()), Arc::new(Echo));
    ready
        .blocking_recv()
        .expect("the engine answers")
        .expect("the engine starts");
    engine
        .define_tools(vec!["echo".into()])
        .blocking_recv()
        .expect("the engine answers")
        .expect("echo is installed");
    engine
}

/// One engine for the whole fuzzing session (starting one per input would dominate the time);
/// replaced if a run leaves it dirty.
static ENGINE: Mutex<Option<Engine>> = Mutex::new(None);

/// What a run gave back, or why it failed.
fn run(engine: &Engine, code: &str) -> (Result<Value, EngineError>, bool) {
    let report = engine
        .run(RunRequest::new(code.into(), &options(), RunAbort::new()))
        .blocking_recv()
        .expect("the engine answers every run");
    (
        report.result.map(|completion| completion.output),
        report.dirty,
    )
}

fn set(engine: &Engine, name: &str, value: Value) -> Result<(), EngineError> {
    engine
        .set_variables(vec![(name.into(), value)])
        .blocking_recv()
        .expect("the engine answers every sendVariables")
}

/// Whether `value` holds a part that only an output may hold (it describes an uncopyable part).
fn has_uncloneable(value: &Value) -> bool {
    match value {
        Value::Uncloneable(_) => true,
        Value::Array(items) => items.iter().flatten().any(has_uncloneable),
        Value::Object(entries) => entries.iter().any(|(_, v)| has_uncloneable(v)),
        Value::Map(entries) => entries
            .iter()
            .any(|(k, v)| has_uncloneable(k) || has_uncloneable(v)),
        Value::Set(items) => items.iter().any(has_uncloneable),
        Value::TypedArray { buffer, .. } => has_uncloneable(buffer),
        _ => false,
    }
}

/// `Value`'s `PartialEq` says `NaN != NaN`; its debug text tells values apart exactly (`-0.0`
/// and `0.0` too).
fn same(a: &Value, b: &Value) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// Copies `value` into the sandbox and back; panics on any violation of the module's rules.
pub fn check_round_trip(value: Value) {
    let mut slot = ENGINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let engine = slot.get_or_insert_with(start);
    if set(engine, "v", value).is_err() {
        // Refused (a malformed Ref, a bad typed array, BigInt text that is no number): the
        // engine must still work.
        let (result, dirty) = run(engine, "1 + 1");
        assert!(matches!(result, Ok(Value::Number(n)) if n == 2.0) && !dirty);
        return;
    }
    let (first, dirty) = run(engine, "v");
    if dirty {
        *slot = None;
        return;
    }
    let first = first.expect("reading a variable back cannot fail");
    let (echoed, dirty) = run(engine, "echo(v)");
    if dirty {
        *slot = None;
        return;
    }
    if has_uncloneable(&first) {
        return;
    }
    let echoed = echoed.expect("a value the sandbox holds crosses to a tool and back");
    assert!(
        same(&echoed, &first),
        "echo changed the value:\n{first:?}\n{echoed:?}"
    );
    set(engine, "w", first.clone()).expect("the sandbox's own copy is accepted");
    let (second, dirty) = run(engine, "w");
    if dirty {
        *slot = None;
        return;
    }
    let second = second.expect("reading a variable back cannot fail");
    assert!(
        same(&second, &first),
        "a copy of a copy differs:\n{first:?}\n{second:?}"
    );
}
