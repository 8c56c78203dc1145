//! The reference side of the differential suite: a program run as plain global scripts in a
//! fresh QuickJS context, through rquickjs directly, with no validation and no rewrite. The
//! only thing installed is a `console` that formats exactly as the executor's does, so that
//! logs compare byte for byte.
//!
//! docs/contract.md "Script semantics first" (what a plain script means is the reference).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::function::Rest;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Object, Promise, Runtime, Value as JsValue};

use super::{describe_thrown, normalise, Observed, Outcome, SCRIPT};
use crate::engine::quickjs::reflect::{eval_script, ScriptFlags};
use crate::engine::values::convert::{to_value, Uncopyable};
use crate::engine::values::inspect;
use crate::options::{LogLevel, Options};
use crate::value::Value;

/// How long one script of the reference may run: generated programs are bounded, this only
/// keeps a mistake in the generator from hanging the suite.
const DEADLINE: Duration = Duration::from_secs(5);

/// One fresh context; each [`Reference::run`] evaluates one script in it.
pub struct Reference {
    // Dropped after the context.
    context: Context,
    _runtime: Runtime,
    logs: Rc<RefCell<Vec<String>>>,
    deadline: Rc<RefCell<Instant>>,
}

impl Reference {
    /// A context with the executor's limits and a console.
    pub fn new() -> Self {
        let options = Options::default();
        let runtime = Runtime::new().expect("runtime");
        runtime.set_memory_limit(options.memory_limit_bytes);
        runtime.set_max_stack_size(options.max_stack_bytes);
        let deadline = Rc::new(RefCell::new(Instant::now() + DEADLINE));
        let interrupt = Rc::clone(&deadline);
        runtime.set_interrupt_handler(Some(Box::new(move || Instant::now() > *interrupt.borrow())));
        let context = Context::full(&runtime).expect("context");
        let logs = Rc::new(RefCell::new(Vec::new()));
        context
            .with(|ctx| install_console(&ctx, &logs))
            .expect("console");
        Self {
            context,
            _runtime: runtime,
            logs,
            deadline,
        }
    }

    /// Runs `code` as the next global script of this context: as a plain script, or as an
    /// async global script (QuickJS's own REPL form) when it `awaits` at its top level or does
    /// not compile as a plain one. `captures_last` says whether the code's last statement is
    /// an expression statement (whose value is the completion value, which the executor
    /// reports as its output).
    pub fn run(&self, code: &str, captures_last: bool, awaits: bool) -> Observed {
        *self.deadline.borrow_mut() = Instant::now() + DEADLINE;
        self.logs.borrow_mut().clear();
        let outcome = self.context.with(|ctx| {
            let asynchronous = awaits || !compiles(&ctx, code, false);
            if asynchronous && !compiles(&ctx, code, true) {
                return Outcome::SyntaxError;
            }
            let mut options = EvalOptions::default();
            options.global = true;
            options.strict = false;
            options.promise = asynchronous;
            options.backtrace_barrier = true;
            options.filename = Some(SCRIPT.into());
            let outcome = match ctx.eval_with_options::<JsValue, _>(code, options) {
                Err(rquickjs::Error::Exception) => thrown(&ctx, &ctx.catch()),
                Err(other) => Outcome::Threw(other.to_string()),
                Ok(value) if asynchronous => match value.into_promise() {
                    // The async form resolves to `{ value: <completion value> }`.
                    Some(promise) => match settle(&ctx, &promise) {
                        Ok(completion) => {
                            let value = completion
                                .as_object()
                                .and_then(|object| object.get::<_, JsValue>("value").ok())
                                .unwrap_or_else(|| JsValue::new_undefined(ctx.clone()));
                            completed(&ctx, &value, captures_last)
                        }
                        Err(outcome) => outcome,
                    },
                    None => Outcome::Threw("async eval gave no promise".into()),
                },
                Ok(value) => completed(&ctx, &value, captures_last),
            };
            while ctx.execute_pending_job() {}
            outcome
        });
        Observed {
            logs: std::mem::take(&mut *self.logs.borrow_mut()),
            outcome,
            early_error: None,
        }
    }
}

impl Reference {
    /// Whether `code` compiles as a plain global script of this context (QuickJS finds its
    /// early errors, those of regular expression literals included).
    pub fn compiles(&self, code: &str) -> bool {
        // Its own deadline: the RegExp compiler asks the interrupt handler too (patch 0117), and
        // a corpus compiled one literal after another outlasts any one deadline.
        *self.deadline.borrow_mut() = Instant::now() + DEADLINE;
        self.context.with(|ctx| compiles(&ctx, code, false))
    }
}

/// The output the executor reports for a script that completed with `value`: a Promise is
/// awaited (the contract's difference `PromiseResultAwaited`).
fn completed<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>, captures_last: bool) -> Outcome {
    if !captures_last {
        return Outcome::Value(format!("{:?}", Value::Undefined));
    }
    let awaited;
    let value = match value.as_promise() {
        Some(promise) => match settle(ctx, promise) {
            Ok(settled) => {
                awaited = settled;
                &awaited
            }
            Err(outcome) => return outcome,
        },
        None => value,
    };
    let copied = to_value(
        ctx,
        value,
        Uncopyable::Describe,
        "output",
        crate::options::DEFAULT_MAX_VALUE_BYTES,
    )
    .unwrap_or_else(|error| Value::Uncloneable(error.to_string()));
    Outcome::Value(format!("{:?}", normalise(copied)))
}

fn thrown<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Outcome {
    Outcome::Threw(describe_thrown(ctx, value))
}

/// Runs jobs until the async script's promise settles; its value, or how it failed.
fn settle<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>) -> Result<JsValue<'js>, Outcome> {
    loop {
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<JsValue>() {
                    Some(Ok(value)) => Ok(value),
                    _ => Err(Outcome::Threw("unreadable result".into())),
                }
            }
            PromiseState::Rejected => {
                let _ = promise.result::<JsValue>();
                return Err(thrown(ctx, &ctx.catch()));
            }
            PromiseState::Pending => {
                if !ctx.execute_pending_job() {
                    return Err(Outcome::Stuck);
                }
            }
        }
    }
}

/// Whether `code` compiles as a global script: a plain one, or with top-level `await`.
fn compiles(ctx: &Ctx<'_>, code: &str, asynchronous: bool) -> bool {
    let flags = ScriptFlags {
        asynchronous,
        compile_only: true,
        ..ScriptFlags::default()
    };
    let compiled = eval_script(ctx, code, SCRIPT, flags).is_ok();
    if !compiled {
        ctx.catch();
    }
    compiled
}

/// `console.log/info/warn/error`, recording `level: message` with the executor's formatting.
fn install_console<'js>(ctx: &Ctx<'js>, logs: &Rc<RefCell<Vec<String>>>) -> rquickjs::Result<()> {
    let console = Object::new(ctx.clone())?;
    for level in LogLevel::ALL {
        let logs = Rc::clone(logs);
        let method = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| {
                let message = inspect::format_log_args(&ctx, &args.0);
                logs.borrow_mut()
                    .push(super::log_line(level.as_str(), &message));
            },
        )?;
        console.set(level.as_str(), method)?;
    }
    ctx.globals().set("console", console)
}
