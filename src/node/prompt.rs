//! The JavaScript `CodeAgent` prompt (§14) for Node: the templates as exported strings, and
//! `renderToolsPrompt`, which reads smolagents tool objects (or plain functions) into
//! [`ToolSignature`]s.

use napi::bindgen_prelude::{Array, JsObjectValue, Object, Unknown, ValueType};

use super::guarded;
use napi::{Env, Error, JsValue, Result, Status};
use serde_json::Value as Json;

use crate::prompt::tools::{render_tools, ToolInput, ToolSignature};
use crate::prompt::{CODE_AGENT_EXAMPLES, CODE_AGENT_SYSTEM_PROMPT};

/// Exports `CODE_AGENT_SYSTEM_PROMPT` and `CODE_AGENT_EXAMPLES` (a frozen array).
pub fn export_templates(env: &Env, exports: &mut Object) -> Result<()> {
    exports.set_named_property("CODE_AGENT_SYSTEM_PROMPT", CODE_AGENT_SYSTEM_PROMPT)?;
    let mut examples = env.create_array(0)?;
    for example in CODE_AGENT_EXAMPLES {
        examples.insert(example)?;
    }
    let mut examples = examples.coerce_to_object()?;
    examples.freeze()?;
    exports.set_named_property("CODE_AGENT_EXAMPLES", examples)
}

/// Renders tools as JavaScript function signatures with JSDoc, for the `{{{tools_prompt}}}`
/// placeholder of `CODE_AGENT_SYSTEM_PROMPT` (§14.2). `tools` is what `sendTools` takes (a record
/// of functions or smolagents tool objects, named by key) or an array of tool objects (named by
/// their `name`). A tool is `async` when its function (or `forward`) is an async function.
/// Throws a `TypeError` when a name is not a JavaScript identifier.
#[napi(
    ts_args_type = "tools: Record<string, ((...args: any[]) => unknown) | SmolagentsTool> | Array<SmolagentsTool & { name: string }>"
)]
pub fn render_tools_prompt(tools: Unknown) -> Result<String> {
    let signatures = read_tools(tools)?;
    render_tools(&signatures).map_err(|error| Error::new(Status::InvalidArg, error.to_string()))
}

fn read_tools(tools: Unknown) -> Result<Vec<ToolSignature>> {
    let invalid = || {
        Error::new(
            Status::InvalidArg,
            "tools must be an object of tools or an array of tool objects",
        )
    };
    if tools.get_type()? != ValueType::Object {
        return Err(invalid());
    }
    if tools.is_array()? {
        let array = guarded::view::<Array>(&tools)?;
        (0..array.len())
            .map(|index| {
                let tool: Unknown = array.get(index)?.ok_or_else(invalid)?;
                read_tool(None, tool)
            })
            .collect()
    } else {
        let record = guarded::view::<Object>(&tools)?;
        Object::keys(&record)?
            .into_iter()
            .map(|name| {
                let tool: Unknown = record.get_named_property(&name)?;
                read_tool(Some(name), tool)
            })
            .collect()
    }
}

/// One tool: a function, or an object with `name`, `description`, `inputs`, `output_type` and
/// `forward`.
fn read_tool(key: Option<String>, tool: Unknown) -> Result<ToolSignature> {
    let what = key.clone().unwrap_or_else(|| "a tool".into());
    let object = guarded::view::<Object>(&tool)
        .ok()
        .filter(|_| matches!(tool.get_type(), Ok(ValueType::Object | ValueType::Function)))
        .ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("{what} must be a function or a tool object"),
            )
        })?;
    if tool.get_type()? == ValueType::Function {
        let name = match key {
            Some(key) => key,
            None => string_property(&object, "name")?.unwrap_or_default(),
        };
        return Ok(ToolSignature {
            name,
            is_async: is_async_function(&object)?,
            ..ToolSignature::default()
        });
    }
    let name = match key {
        Some(key) => key,
        None => string_property(&object, "name")?.ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                "a tool in an array must have a string name",
            )
        })?,
    };
    let forward: Unknown = object.get_named_property("forward")?;
    let is_async = if forward.get_type()? == ValueType::Function {
        is_async_function(&guarded::view::<Object>(&forward)?)?
    } else {
        false
    };
    Ok(ToolSignature {
        name,
        description: string_property(&object, "description")?,
        inputs: read_inputs(&object)?,
        output_types: type_names(object.get_named_property("output_type")?)?,
        is_async,
    })
}

/// `inputs`, in their declared order (the order of the function's parameters).
fn read_inputs(tool: &Object) -> Result<Option<Vec<ToolInput>>> {
    let inputs: Unknown = tool.get_named_property("inputs")?;
    if inputs.get_type()? != ValueType::Object {
        return Ok(None);
    }
    let inputs = guarded::view::<Object>(&inputs)?;
    let mut read = Vec::new();
    for name in Object::keys(&inputs)? {
        let spec: Unknown = inputs.get_named_property(&name)?;
        let mut input = ToolInput {
            name,
            ..ToolInput::default()
        };
        if spec.get_type()? == ValueType::Object {
            let spec = guarded::view::<Object>(&spec)?;
            input.types = type_names(spec.get_named_property("type")?)?;
            input.description = string_property(&spec, "description")?;
            let nullable: Unknown = spec.get_named_property("nullable")?;
            input.nullable =
                nullable.get_type()? == ValueType::Boolean && nullable.coerce_to_bool()?;
            if spec.has_own_property("default")? {
                let default: Unknown = spec.get_named_property("default")?;
                // A default that is not JSON (a function, a cycle) is shown as `null`.
                input.default = Some(guarded::view::<Json>(&default).unwrap_or(Json::Null));
            }
        }
        read.push(input);
    }
    Ok(Some(read))
}

/// A smolagents type: a name, or an array of names for a union.
fn type_names(value: Unknown) -> Result<Vec<String>> {
    let text =
        |value: Unknown| -> Result<String> { value.coerce_to_string()?.into_utf8()?.into_owned() };
    match value.get_type()? {
        ValueType::String => Ok(vec![text(value)?]),
        ValueType::Object if value.is_array()? => {
            let array = guarded::view::<Array>(&value)?;
            let mut names = Vec::new();
            for index in 0..array.len() {
                if let Some(item) = array.get::<Unknown>(index)? {
                    if item.get_type()? == ValueType::String {
                        names.push(text(item)?);
                    }
                }
            }
            Ok(names)
        }
        _ => Ok(Vec::new()),
    }
}

fn string_property(object: &Object, name: &str) -> Result<Option<String>> {
    let value: Unknown = object.get_named_property(name)?;
    if value.get_type()? != ValueType::String {
        return Ok(None);
    }
    Ok(Some(value.coerce_to_string()?.into_utf8()?.into_owned()?))
}

/// Whether `function` is an `async function` (its constructor is `AsyncFunction`).
fn is_async_function(function: &Object) -> Result<bool> {
    let constructor: Unknown = function.get_named_property("constructor")?;
    if constructor.get_type()? != ValueType::Function {
        return Ok(false);
    }
    let constructor = guarded::view::<Object>(&constructor)?;
    Ok(string_property(&constructor, "name")?.as_deref() == Some("AsyncFunction"))
}
