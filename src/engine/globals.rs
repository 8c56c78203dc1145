//! The bindings the executor installs in every context: `console` (§7.3), `final_answer` (§5.4),
//! the hook the rewritten program calls (`__smol_result`), and the loop guard (§6.3), which
//! QuickJS itself runs at every loop-body entry (patch 0600) rather than a binding code calls.
//!
//! Each is a native function over the engine's [`RunState`], installed as a non-writable,
//! non-configurable, non-enumerable global and frozen (§5.2 "harden or equivalent"), so user code
//! can neither replace nor re-wire them; the counters live in Rust, out of the sandbox's reach.

use std::rc::Rc;

use rquickjs::function::{Opt, Rest};
use rquickjs::object::Property;
use rquickjs::{Ctx, Exception, Function, Object, Result, Value as JsValue};

use super::convert::{to_value, Uncopyable};
use super::frames::call_site;
use super::inspect;
use super::reflect::{install_loop_guard, LoopTrip, Reflect};
use super::state::{RunResult, RunState, Stop};
use crate::options::LogLevel;
use crate::program::{FINAL_ANSWER, RESULT_FUNCTION};
use crate::trace::TraceKind;
use crate::value::Value;

/// Installs every binding in `ctx`'s global object.
pub fn install<'js>(ctx: &Ctx<'js>, state: &Rc<RunState>) -> Result<()> {
    let define = |name: &str, value: JsValue<'js>| define_hardened(ctx, name, value, false);

    install_loop_guard(ctx, state)?;

    // A Promise goes back to the script, whose `return` awaits it (its value becomes the
    // output); any other value is copied at once and not returned, so that `return` never
    // looks for a `then` on it (a getter or Proxy trap would run: only Promises are awaited).
    let result_state = Rc::clone(state);
    let result = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, value: Opt<JsValue<'js>>| -> Result<Option<JsValue<'js>>> {
            if result_state.stop.get().is_some() {
                return Err(throw_stop(&ctx));
            }
            match value.0 {
                Some(value) if value.is_promise() => {
                    let site = call_site(&ctx);
                    *result_state.result.borrow_mut() = RunResult::Promise { site };
                    Ok(Some(value))
                }
                value => {
                    let copied = value.map_or(Value::Undefined, |value| copy_out(&ctx, &value));
                    *result_state.result.borrow_mut() = RunResult::Value(copied);
                    Ok(None)
                }
            }
        },
    )?
    .with_name(RESULT_FUNCTION)?;
    define(RESULT_FUNCTION, result.into_value())?;

    let answer_state = Rc::clone(state);
    let final_answer = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, value: Opt<JsValue<'js>>| -> Result<()> {
            if answer_state.stop.get().is_none() {
                let copied = value
                    .0
                    .map_or(Value::Undefined, |value| copy_out(&ctx, &value));
                *answer_state.final_answer.borrow_mut() = Some(copied);
                answer_state.stop_with(Stop::FinalAnswer);
                answer_state.record_here(&ctx, |at| TraceKind::FinalAnswer { at });
            }
            Err(throw_stop(&ctx))
        },
    )?
    .with_name(FINAL_ANSWER)?;
    define(FINAL_ANSWER, final_answer.into_value())?;

    let console = Object::new(ctx.clone())?;
    for level in LogLevel::ALL {
        let log_state = Rc::clone(state);
        let method = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| -> Result<()> {
                if log_state.stop.get().is_some() {
                    return Err(throw_stop(&ctx));
                }
                if log_state.logs.borrow().collects(level) {
                    let message = inspect::format_log_args(&ctx, &args.0);
                    log_state.log(level, &message);
                }
                Ok(())
            },
        )?
        .with_name(level.as_str())?;
        harden(ctx, method.as_value())?;
        console.prop(level.as_str(), Property::from(method).enumerable())?;
    }
    define("console", console.into_value())
}

/// The loop guard (§6.3): QuickJS counts every loop-body entry of the runtime's code in the run
/// state's [`LoopGuard`](super::reflect::LoopGuard) and asks here once the count passes the
/// limit: past `maxOperations`, or at any entry after the run was stopped for another reason,
/// the body does not run and the uncatchable stop is thrown in its place.
impl LoopTrip for RunState {
    fn loop_guard(&self) -> &super::reflect::LoopGuard {
        &self.loop_guard
    }

    fn trip(&self) -> bool {
        if self.loop_guard.count() > self.max_operations.get() {
            self.stop_with(Stop::MaxOperations);
        }
        self.stop.get().is_some()
    }

    fn throw(&self, ctx: &Ctx<'_>) {
        throw_stop(ctx);
    }
}

/// Freezes `value` with QuickJS's own `Object.freeze`: the global one may have been replaced by
/// sandbox code by the time tools are installed.
pub(super) fn harden<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Result<()> {
    if !Reflect::new(ctx).freeze(value) {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

/// Installs `value`, hardened, as a non-writable, non-configurable global (§5.2, §9.2).
pub(super) fn define_hardened<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    value: JsValue<'js>,
    enumerable: bool,
) -> Result<()> {
    harden(ctx, &value)?;
    let property = Property::from(value);
    let property = if enumerable {
        property.enumerable()
    } else {
        property
    };
    ctx.globals().prop(name, property)
}

/// An `Error` named `name` (a sandbox-facing error of the executor's own).
pub(super) fn named_error<'js>(ctx: &Ctx<'js>, name: &str, message: &str) -> Result<Object<'js>> {
    let error = Exception::from_message(ctx.clone(), message)?.into_object();
    error.set("name", name)?;
    Ok(error)
}

/// Copies an output or a final answer; Describe mode never fails, but stays total if it did.
pub(super) fn copy_out<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Value {
    to_value(ctx, value, Uncopyable::Describe, "output")
        .unwrap_or_else(|error| Value::Uncloneable(error.to_string()))
}

/// Throws an error that no `catch` or `finally` in user code can intercept (quickjs-ng's
/// uncatchable flag, the same mechanism as its interrupt handler), so the run ends as the
/// engine decided: `final_answer` cannot be swallowed and a guard overflow cannot be caught.
pub(super) fn throw_stop(ctx: &Ctx<'_>) -> rquickjs::Error {
    match Exception::from_message(ctx.clone(), "execution stopped") {
        Ok(error) => {
            let value = error.into_value();
            Reflect::new(ctx).set_uncatchable(&value);
            ctx.throw(value)
        }
        Err(error) => error,
    }
}
