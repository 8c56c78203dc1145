//! What the host puts into a context between runs (§4.3.2, §4.3.3, §5.2): tools, as frozen
//! non-writable, non-configurable globals that call the host; variables, as ordinary writable
//! globals holding copies.

use std::rc::Rc;

use rquickjs::object::Property;
use rquickjs::Ctx;

use super::bridge::Bridge;
use super::convert::from_value;
use super::globals::define_hardened;
use super::state::RunState;
use crate::value::Value;

/// Installs a global function for each tool name not installed yet. A name already installed
/// keeps its global: the host decides which function a name reaches, so re-sending a tool
/// replaces it without touching the sandbox.
pub(super) fn define_tools<'js>(
    ctx: &Ctx<'js>,
    names: &[String],
    installed: &mut Vec<String>,
    bridge: &Rc<Bridge>,
    state: &Rc<RunState>,
) -> Result<(), String> {
    for name in names {
        if installed.contains(name) {
            continue;
        }
        Bridge::tool_function(ctx, bridge, state, name.clone(), name)
            .and_then(|function| define_hardened(ctx, name, function.into_value(), true))
            .map_err(|_| {
                ctx.catch();
                format!("cannot install tool '{name}': the sandbox already has a global of that name that cannot be replaced")
            })?;
        installed.push(name.clone());
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
