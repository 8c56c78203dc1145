//! Closes the ways sandbox code could compile code the program layer never saw, and so run
//! loops without guards: `eval`, and the `Function` constructors (`Function`, and those of
//! async, generator and async generator functions, reachable as `f.constructor`).
//!
//! They are made unavailable rather than guarded: every such call throws an `EvalError` (the
//! realm's own, made by its intrinsic constructor, so `instanceof EvalError` holds whatever
//! sandbox code did to the global) that tells the model to write the code directly.
//! `instanceof Function` and `Function.prototype` keep working, because each constructor stub
//! keeps the real prototype; the `eval` stub is, like `eval`, no constructor.
//!
//! Spec: Appendix A (default lockdown policy) and §6.3 (every loop guarded).

use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Result, Value};

use crate::engine::quickjs::reflect::Reflect;

/// What the model sees when it tries.
pub const UNAVAILABLE: &str =
    "eval() and the Function constructors are not available in this sandbox: write the code directly instead of building it from strings";

/// Replaces `eval` and every function constructor in `ctx` with throwing stubs.
pub fn lock_down(ctx: &Ctx<'_>) -> Result<()> {
    let globals = ctx.globals();
    let eval = stub(ctx, "eval", false)?;
    globals.prop("eval", Property::from(eval).writable().configurable())?;

    // The constructors of the four kinds of functions, through instances of each kind: the
    // async and generator constructors have no global name.
    let kinds: Value =
        ctx.eval("[function () {}, async function () {}, function* () {}, async function* () {}]")?;
    let kinds = kinds
        .into_array()
        .ok_or_else(|| rquickjs::Error::new_from_js("value", "array"))?;
    for (index, instance) in kinds.iter::<Object>().enumerate() {
        let prototype = instance?
            .get_prototype()
            .ok_or_else(|| rquickjs::Error::new_from_js("function", "prototype"))?;
        let name = [
            "Function",
            "AsyncFunction",
            "GeneratorFunction",
            "AsyncGeneratorFunction",
        ][index];
        let constructor = stub(ctx, name, true)?;
        constructor.prop("prototype", Property::from(prototype.clone()))?;
        prototype.prop(
            "constructor",
            Property::from(constructor.clone())
                .writable()
                .configurable(),
        )?;
        if index == 0 {
            globals.prop(
                "Function",
                Property::from(constructor).writable().configurable(),
            )?;
        }
    }
    Ok(())
}

/// A function named `name` that throws an `EvalError` with [`UNAVAILABLE`] however it is
/// called; a constructor (as the function constructors it stands for are) when `constructor`.
fn stub<'js>(ctx: &Ctx<'js>, name: &str, constructor: bool) -> Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, _args: Rest<Value<'js>>| -> Result<()> {
            let error = Reflect::new(&ctx)
                .intrinsic_constructor("EvalError")
                .ok_or(rquickjs::Error::Exception)?
                .construct::<_, Value>((UNAVAILABLE,))?;
            Err(ctx.throw(error))
        },
    )?
    .with_name(name)
    .map(|function| function.with_constructor(constructor))
}
