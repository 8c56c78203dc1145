//! The JavaScript `CodeAgent` prompt (§14) for Node: the templates as exported strings, and
//! `renderToolsPrompt`, which reads smolagents tool objects (or plain functions) into
//! [`ToolSignature`]s.

use napi::bindgen_prelude::{JsObjectValue, Object, Unknown, ValueType};
use napi::{Env, Result};
use serde_json::Value as Json;

use super::{arguments, env_data, guarded};
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
/// Throws a `TypeError` when a name is not a JavaScript identifier, when `tools` or a tool has
/// the wrong shape, or when reading one of them threw.
#[napi(
    ts_args_type = "tools: Record<string, ((...args: any[]) => unknown) | SmolagentsTool> | Array<SmolagentsTool & { name: string }>"
)]
pub fn render_tools_prompt(env: Env, tools: Unknown) -> Result<String> {
    let signatures = Reader { env: &env }.tools(&tools)?;
    render_tools(&signatures).map_err(|error| arguments::type_error(&env, &error.to_string()))
}

/// Reads tool objects as `renderToolsPrompt` takes them, each property once and through
/// `guarded`: what a getter or Proxy trap throws becomes a `TypeError` naming the property.
struct Reader<'a> {
    env: &'a Env,
}

impl<'a> Reader<'a> {
    fn get(&self, object: &Unknown, key: &str, what: &str) -> Result<Unknown<'a>> {
        guarded::get(self.env, object, key)
            .map_err(|thrown| arguments::unreadable(self.env, &format!("{what}.{key}"), &thrown))
    }

    fn string(&self, object: &Unknown, key: &str, what: &str) -> Result<Option<String>> {
        Ok(guarded::string_value(&self.get(object, key, what)?))
    }

    fn tools(&self, tools: &Unknown) -> Result<Vec<ToolSignature>> {
        let env = self.env;
        if guarded::type_of(tools) != ValueType::Object {
            return Err(arguments::type_error(
                env,
                "tools must be an object of tools or an array of tool objects",
            ));
        }
        if guarded::is_array(tools) {
            // Reading an array's length runs no code.
            let length = guarded::view::<Object>(tools)
                .and_then(|array| array.get_array_length())
                .unwrap_or(0);
            (0..length)
                .map(|index| {
                    let what = format!("tools[{index}]");
                    let tool = guarded::get_element(env, tools, index)
                        .map_err(|thrown| arguments::unreadable(env, &what, &thrown))?;
                    self.tool(None, &tool, &what)
                })
                .collect()
        } else {
            let (keys, count) = guarded::own_keys(env, tools)
                .map_err(|thrown| arguments::unreadable(env, "tools", &thrown))?;
            (0..count)
                .filter_map(|index| {
                    let key = guarded::get_element(env, &keys, index).ok()?;
                    Some((guarded::string_value(&key)?, key))
                })
                .map(|(name, key)| {
                    let what = format!("tools.{name}");
                    let tool = guarded::get_key(env, tools, &key)
                        .map_err(|thrown| arguments::unreadable(env, &what, &thrown))?;
                    self.tool(Some(name), &tool, &what)
                })
                .collect()
        }
    }

    /// One tool: a function, or an object with `name`, `description`, `inputs`, `output_type`
    /// and `forward`.
    fn tool(&self, key: Option<String>, tool: &Unknown, what: &str) -> Result<ToolSignature> {
        let env = self.env;
        match guarded::type_of(tool) {
            ValueType::Function => {
                let name = match key {
                    Some(key) => key,
                    None => self.string(tool, "name", what)?.unwrap_or_default(),
                };
                Ok(ToolSignature {
                    name,
                    is_async: self.is_async_function(tool, what)?,
                    ..ToolSignature::default()
                })
            }
            ValueType::Object => {
                let name = match key {
                    Some(key) => key,
                    None => self.string(tool, "name", what)?.ok_or_else(|| {
                        arguments::type_error(env, "a tool in an array must have a string name")
                    })?,
                };
                let description = self.string(tool, "description", what)?;
                let inputs = self.inputs(&self.get(tool, "inputs", what)?, what)?;
                let output_types = self.type_names(
                    &self.get(tool, "output_type", what)?,
                    &format!("{what}.output_type"),
                )?;
                let forward = self.get(tool, "forward", what)?;
                let is_async = guarded::type_of(&forward) == ValueType::Function
                    && self.is_async_function(&forward, &format!("{what}.forward"))?;
                Ok(ToolSignature {
                    name,
                    description,
                    inputs,
                    output_types,
                    is_async,
                })
            }
            _ => Err(arguments::type_error(
                env,
                &format!("{what} must be a function or a tool object"),
            )),
        }
    }

    /// `inputs`, in their declared order (the order of the function's parameters).
    fn inputs(&self, inputs: &Unknown, what: &str) -> Result<Option<Vec<ToolInput>>> {
        let env = self.env;
        if guarded::type_of(inputs) != ValueType::Object {
            return Ok(None);
        }
        let what = format!("{what}.inputs");
        let (keys, count) = guarded::own_keys(env, inputs)
            .map_err(|thrown| arguments::unreadable(env, &what, &thrown))?;
        let mut read = Vec::new();
        for index in 0..count {
            let Some((name, key)) = guarded::get_element(env, &keys, index)
                .ok()
                .and_then(|key| Some((guarded::string_value(&key)?, key)))
            else {
                continue;
            };
            let spec_what = format!("{what}.{name}");
            let spec = guarded::get_key(env, inputs, &key)
                .map_err(|thrown| arguments::unreadable(env, &spec_what, &thrown))?;
            let mut input = ToolInput {
                name,
                ..ToolInput::default()
            };
            if guarded::type_of(&spec) == ValueType::Object {
                input.types = self.type_names(&self.get(&spec, "type", &spec_what)?, &spec_what)?;
                input.description = self.string(&spec, "description", &spec_what)?;
                input.nullable = guarded::boolean_value(&self.get(&spec, "nullable", &spec_what)?)
                    .unwrap_or(false);
                let has_default = guarded::has_own(env, &spec, "default").map_err(|thrown| {
                    arguments::unreadable(env, &format!("{spec_what}.default"), &thrown)
                })?;
                if has_default {
                    let default = self.get(&spec, "default", &spec_what)?;
                    // A default that is not JSON (a function, a cycle) is shown as `null`.
                    input.default = Some(
                        env_data::json_text(env, &default)
                            .and_then(|text| serde_json::from_str(&text).ok())
                            .unwrap_or(Json::Null),
                    );
                }
            }
            read.push(input);
        }
        Ok(Some(read))
    }

    /// A smolagents type: a name, or an array of names for a union.
    fn type_names(&self, value: &Unknown, what: &str) -> Result<Vec<String>> {
        if let Some(name) = guarded::string_value(value) {
            return Ok(vec![name]);
        }
        if !guarded::is_array(value) {
            return Ok(Vec::new());
        }
        // Reading an array's length runs no code.
        let length = guarded::view::<Object>(value)
            .and_then(|array| array.get_array_length())
            .unwrap_or(0);
        let mut names = Vec::new();
        for index in 0..length {
            let item = guarded::get_element(self.env, value, index).map_err(|thrown| {
                arguments::unreadable(self.env, &format!("{what}[{index}]"), &thrown)
            })?;
            names.extend(guarded::string_value(&item));
        }
        Ok(names)
    }

    /// Whether `function` is an `async function` (its constructor is `AsyncFunction`).
    fn is_async_function(&self, function: &Unknown, what: &str) -> Result<bool> {
        let constructor = self.get(function, "constructor", what)?;
        if guarded::type_of(&constructor) != ValueType::Function {
            return Ok(false);
        }
        Ok(self
            .string(&constructor, "name", &format!("{what}.constructor"))?
            .as_deref()
            == Some("AsyncFunction"))
    }
}
