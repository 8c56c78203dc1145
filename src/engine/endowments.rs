//! What the host puts into a context between runs (§4.3.2, §4.3.3, §5.2): tools, as frozen
//! non-writable, non-configurable globals that call the host; variables, as ordinary writable
//! globals holding copies.

use std::collections::HashSet;
use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Value as JsValue};

use super::bridge::Bridge;
use super::convert::from_value;
use super::state::RunState;
use crate::value::Value;

/// Installs a global function for each tool name not installed yet. A name already installed
/// keeps its global: the host decides which function a name reaches, so re-sending a tool
/// replaces it without touching the sandbox.
pub(super) fn define_tools<'js>(
    ctx: &Ctx<'js>,
    names: &[String],
    installed: &mut HashSet<String>,
    bridge: &Rc<Bridge>,
    state: &Rc<RunState>,
) -> Result<(), String> {
    let freeze: Function = ctx
        .globals()
        .get::<_, Object>("Object")
        .and_then(|object| object.get("freeze"))
        .map_err(|error| error.to_string())?;
    for name in names {
        if installed.contains(name) {
            continue;
        }
        let tool = name.clone();
        let tool_bridge = Rc::clone(bridge);
        let tool_state = Rc::clone(state);
        let function = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| -> rquickjs::Result<JsValue<'js>> {
                tool_bridge.call(&ctx, &tool_state, &tool, &args.0)
            },
        )
        .and_then(|function| function.with_name(name))
        .map_err(|error| error.to_string())?;
        freeze
            .call::<_, JsValue>((function.clone(),))
            .map_err(|error| error.to_string())?;
        ctx.globals()
            .prop(name.as_str(), Property::from(function).enumerable())
            .map_err(|_| {
                ctx.catch();
                format!("cannot install tool '{name}': the sandbox already has a global of that name that cannot be replaced")
            })?;
        installed.insert(name.clone());
    }
    Ok(())
}

/// Sets each variable as a writable global holding a copy of the host's value.
pub(super) fn set_variables(ctx: &Ctx<'_>, variables: &[(String, Value)]) -> Result<(), String> {
    let globals = ctx.globals();
    for (name, value) in variables {
        let copy = from_value(ctx, value).map_err(|error| {
            ctx.catch();
            format!("variable '{name}' cannot be copied into the sandbox: {error}")
        })?;
        globals
            .prop(
                name.as_str(),
                Property::from(copy).writable().configurable().enumerable(),
            )
            .map_err(|_| {
                ctx.catch();
                format!("variable '{name}' cannot be set: the sandbox has a global of that name that cannot be replaced")
            })?;
    }
    Ok(())
}
