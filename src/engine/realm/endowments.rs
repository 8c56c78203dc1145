//! What the host puts into a context between runs (§4.3.2, §4.3.3, §5.2): tools, as frozen
//! non-writable, non-configurable globals that call the host; variables, as ordinary writable
//! globals holding copies. Neither may take a name that a top-level `let`, `const` or `class`
//! of an earlier run holds: that binding would hide it from every later run.

use std::rc::Rc;

use rquickjs::object::Property;
use rquickjs::Ctx;

use super::globals::define_hardened;
use crate::engine::host::ToolSpec;
use crate::engine::quickjs::reflect::has_global_lexical;
use crate::engine::run::bridge::Bridge;
use crate::engine::run::state::RunState;
use crate::engine::values::convert::from_value;
use crate::value::Value;

/// Installs a global function for each tool name not installed yet. A name already installed
/// keeps its global: the host decides which function a name reaches, so re-sending a tool
/// replaces it without touching the sandbox (the bridge takes its new inputs, if any).
pub(crate) fn define_tools<'js>(
    ctx: &Ctx<'js>,
    tools: &[ToolSpec],
    installed: &mut Vec<String>,
    bridge: &Rc<Bridge>,
    state: &Rc<RunState>,
) -> Result<(), String> {
    for ToolSpec { name, inputs } in tools {
        bridge.set_inputs(name, inputs.as_deref());
        if installed.contains(name) {
            continue;
        }
        if has_global_lexical(ctx, name) {
            return Err(format!(
                "cannot install tool '{name}': the sandbox's code declared '{name}' with let, const or class, which would hide the tool"
            ));
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
pub(crate) fn set_variables(ctx: &Ctx<'_>, variables: &[(String, Value)]) -> Result<(), String> {
    let globals = ctx.globals();
    if let Some((name, _)) = variables
        .iter()
        .find(|(name, _)| has_global_lexical(ctx, name))
    {
        return Err(format!(
            "variable '{name}' cannot be set: the sandbox's code declared '{name}' with let, const or class, which would hide the variable"
        ));
    }
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

#[cfg(test)]
mod tests {
    use crate::engine::testing::{engine_with, run_on, FakeHost};
    use crate::engine::EngineError;
    use crate::options::Options;
    use crate::value::Value;

    #[test]
    fn patch_0203_a_tool_or_variable_a_lexical_binding_would_hide_is_refused() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        run_on(
            &engine,
            "let search = 1; const answer = 2; var plain = 3",
            &options,
        )
        .result
        .unwrap();
        let refused = |result: Result<(), EngineError>| match result {
            Err(EngineError::Endowment(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        };
        let tool = refused(
            engine
                .define_tools(vec![String::from("search").into()])
                .blocking_recv()
                .unwrap(),
        );
        assert!(
            tool.contains("declared 'search' with let, const or class"),
            "{tool}"
        );
        let variable = refused(
            engine
                .set_variables(vec![("answer".into(), Value::Number(1.0))])
                .blocking_recv()
                .unwrap(),
        );
        assert!(variable.contains("'answer'"), "{variable}");
        // Names the code did not declare lexically are free.
        engine
            .set_variables(vec![("fresh".into(), Value::Number(4.0))])
            .blocking_recv()
            .unwrap()
            .unwrap();
        assert_eq!(
            run_on(&engine, "[fresh, search, answer]", &options)
                .result
                .unwrap()
                .output,
            Value::Array(vec![
                Some(Value::Number(4.0)),
                Some(Value::Number(1.0)),
                Some(Value::Number(2.0))
            ])
        );
    }
}
