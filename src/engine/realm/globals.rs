//! The bindings the executor installs in every context: `console` (§7.3), `final_answer` (§5.4),
//! the hook the rewritten program calls (`__smol_result`), and the loop guard (§6.3), which
//! QuickJS itself runs at every loop-body entry (patch 0600) rather than a binding code calls.
//!
//! Each is a native function over the engine's [`RunState`], installed as a non-writable,
//! non-configurable, non-enumerable global and frozen (§5.2 "harden or equivalent"), so user code
//! can neither replace nor re-wire them; the counters live in Rust, out of the sandbox's reach.

use std::rc::Rc;

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::{Opt, Rest};
use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Result, Value as JsValue};

use crate::engine::quickjs::loop_guard::{install_loop_guard, LoopTrip};
use crate::engine::quickjs::reflect::{NativeError, Reflect};
use crate::engine::run::frames::{call_site, CallSite};
use crate::engine::run::state::{RunResult, RunState, Stop};
use crate::engine::values::convert::{throw_copy_failure, to_value, Uncopyable};
use crate::engine::values::inspect;
use crate::options::LogLevel;
use crate::program::{FINAL_ANSWER, RESULT_FUNCTION};
use crate::trace::TraceKind;
use crate::value::{CloneError, Value};

/// Takes the realm's intrinsics (see `reflect::Intrinsics`), then installs every binding in
/// `ctx`'s global object.
pub fn install<'js>(ctx: &Ctx<'js>, state: &Rc<RunState>) -> Result<()> {
    // First, before any sandbox code can run: what the executor calls on sandbox values from
    // now on is the realm's own built-ins as they are now.
    Reflect::new(ctx).capture_intrinsics()?;
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
                    let copied = match value {
                        Some(value) => copy_out(&ctx, &value, &result_state, "output")?,
                        None => Value::Undefined,
                    };
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
                let copied = match value.0 {
                    Some(value) => copy_out(&ctx, &value, &answer_state, "final_answer(value)")?,
                    None => Value::Undefined,
                };
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
/// state's [`LoopGuard`](crate::engine::quickjs::loop_guard::LoopGuard) and asks here once the count
/// passes the limit: past `maxOperations`, or at any entry after the run was stopped for another
/// reason, the body does not run and the uncatchable stop is thrown in its place.
impl LoopTrip for RunState {
    fn loop_guard(&self) -> &crate::engine::quickjs::loop_guard::LoopGuard {
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
pub(crate) fn harden<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Result<()> {
    if !Reflect::new(ctx).freeze(value) {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

/// Installs `value`, hardened, as a non-writable, non-configurable global (§5.2, §9.2).
pub(crate) fn define_hardened<'js>(
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

/// An `Error` named `name` (a sandbox-facing error of the executor's own). Made by the engine
/// with `message` and `name` defined as its own data properties, as `new Error(message)` has
/// them: not assigned, so that setters sandbox code put on `Error.prototype` neither run nor
/// keep the error from being made.
pub(crate) fn named_error<'js>(ctx: &Ctx<'js>, name: &str, message: &str) -> Result<Object<'js>> {
    let error = engine_error(ctx, message)?;
    error.prop(PredefinedAtom::Name, hidden(name))?;
    Ok(error)
}

/// [`named_error`] for a failure that arrives when no sandbox code runs (an awaited tool's),
/// with a `stack` naming `site`, where the call was made, as the error of a synchronous call
/// would: the run's error then names that line (docs/contract.md "Errors").
pub(crate) fn named_error_at<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    message: &str,
    site: &CallSite,
) -> Result<Object<'js>> {
    let error = named_error(ctx, name, message)?;
    error.prop(PredefinedAtom::Stack, hidden(&site.frame()))?;
    Ok(error)
}

/// A plain `Error` with `message`, made as [`named_error`] makes one.
fn engine_error<'js>(ctx: &Ctx<'js>, message: &str) -> Result<Object<'js>> {
    let error = Reflect::new(ctx)
        .new_error(NativeError::Error)
        .and_then(|error| error.into_object())
        .ok_or(rquickjs::Error::Exception)?;
    error.prop(PredefinedAtom::Message, hidden(message))?;
    Ok(error)
}

/// A data property as the engine makes an error's `message`: not enumerable.
fn hidden(text: &str) -> Property<&str> {
    Property::from(text).writable().configurable()
}

/// Copies an output or a final answer (`root` names it). Uncopyable parts are described, so
/// only a size limit (`maxValueBytes`, or a fixed one) can fail the copy: that throws a
/// `RangeError` naming the limit and the size where the copy was asked for (user code may catch
/// it and send something smaller; uncaught, it fails the run with the limit in its details).
fn copy_out<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    state: &RunState,
    root: &str,
) -> Result<Value> {
    to_value(
        ctx,
        value,
        Uncopyable::Describe,
        root,
        state.max_value_bytes.get(),
    )
    .map_err(|error| throw_copy_failure(ctx, error))
}

/// Copies the value a run's returned Promise resolved with, when no sandbox code is left to
/// throw into: past a size limit the copy fails, and the run with it
/// (`failure::result_too_large`).
pub(crate) fn copy_promised<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    state: &RunState,
) -> std::result::Result<Value, CloneError> {
    to_value(
        ctx,
        value,
        Uncopyable::Describe,
        "output",
        state.max_value_bytes.get(),
    )
}

/// Throws an error that no `catch` or `finally` in user code can intercept (quickjs-ng's
/// uncatchable flag, the same mechanism as its interrupt handler), so the run ends as the
/// engine decided: `final_answer` cannot be swallowed and a guard overflow cannot be caught.
pub(crate) fn throw_stop(ctx: &Ctx<'_>) -> rquickjs::Error {
    match engine_error(ctx, "execution stopped") {
        Ok(error) => {
            let value = error.into_value();
            Reflect::new(ctx).set_uncatchable(&value);
            ctx.throw(value)
        }
        Err(error) => error,
    }
}
