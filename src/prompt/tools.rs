//! `{{{tools_prompt}}}` for the JavaScript `CodeAgent` (§14.1): each tool as a JavaScript
//! function signature with JSDoc, the counterpart of the Python signatures smolagents renders.
//! Tools that return promises are `async`, so the model sees where `await` is needed.

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::program::{is_identifier_name, is_reserved_keyword};

/// What a tool tells the model about itself (smolagents's `name`, `description`, `inputs`,
/// `output_type`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSignature {
    pub name: String,
    pub description: Option<String>,
    /// `None` when the tool declares no inputs (a plain function): rendered as `...args`.
    pub inputs: Option<Vec<ToolInput>>,
    /// smolagents type names (`"string"`, `"integer"`, …); several for a union.
    pub output_types: Vec<String>,
    /// Whether the tool returns a promise.
    pub is_async: bool,
}

/// One named input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolInput {
    pub name: String,
    pub types: Vec<String>,
    pub description: Option<String>,
    pub nullable: bool,
    pub default: Option<Json>,
}

/// A signature that cannot be written as JavaScript.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("{what} {name:?} is not a JavaScript identifier")]
    NotAnIdentifier { what: String, name: String },
}

/// The signatures of `tools`, separated by blank lines.
pub fn render_tools(tools: &[ToolSignature]) -> Result<String, PromptError> {
    let mut rendered = Vec::with_capacity(tools.len());
    for tool in tools {
        rendered.push(render_tool(tool)?);
    }
    Ok(rendered.join("\n\n"))
}

fn render_tool(tool: &ToolSignature) -> Result<String, PromptError> {
    identifier("tool name", &tool.name)?;
    let mut doc = Vec::new();
    if let Some(description) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
        doc.extend(
            description
                .trim()
                .lines()
                .map(|line| line.trim_end().to_owned()),
        );
    }
    let parameters = match &tool.inputs {
        None => "...args".to_owned(),
        Some(inputs) => {
            if !inputs.is_empty() && !doc.is_empty() {
                doc.push(String::new());
            }
            let mut names = Vec::with_capacity(inputs.len());
            for input in inputs {
                identifier(&format!("input of {}", tool.name), &input.name)?;
                doc.push(param_line(input));
                names.push(input.name.as_str());
            }
            names.join(", ")
        }
    };
    let returns = js_type(&tool.output_types, false);
    doc.push(if tool.is_async {
        format!("@returns {{Promise<{returns}>}}")
    } else {
        format!("@returns {{{returns}}}")
    });
    let mut out = String::from("/**\n");
    for line in doc {
        // `*/` inside a description would end the comment early.
        let line = line.replace("*/", "*\\/");
        if line.is_empty() {
            out.push_str(" *\n");
        } else {
            let _ = writeln!(out, " * {line}");
        }
    }
    out.push_str(" */\n");
    let keyword = if tool.is_async {
        "async function"
    } else {
        "function"
    };
    let _ = write!(out, "{keyword} {}({parameters}) {{}}", tool.name);
    Ok(out)
}

/// `@param {type} name - description`, with `[name]` or `[name=default]` when it may be left out.
fn param_line(input: &ToolInput) -> String {
    let ty = js_type(&input.types, input.nullable);
    let name = match (&input.default, input.nullable) {
        (Some(default), _) => format!("[{}={}]", input.name, default),
        (None, true) => format!("[{}]", input.name),
        (None, false) => input.name.clone(),
    };
    match input.description.as_deref().map(str::trim) {
        Some(description) if !description.is_empty() => {
            // JSDoc tags are one line each.
            let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("@param {{{ty}}} {name} - {description}")
        }
        _ => format!("@param {{{ty}}} {name}"),
    }
}

/// The JSDoc type for smolagents type names.
fn js_type(types: &[String], nullable: bool) -> String {
    let mut names: Vec<&str> = types.iter().map(|ty| type_name(ty)).collect();
    if nullable && !names.contains(&"null") {
        names.push("null");
    }
    names.dedup();
    if names.is_empty() {
        "unknown".into()
    } else {
        names.join(" | ")
    }
}

fn type_name(smolagents: &str) -> &str {
    match smolagents {
        "string" => "string",
        "boolean" => "boolean",
        "integer" | "number" => "number",
        "array" => "Array<unknown>",
        "object" => "object",
        "any" => "any",
        "null" => "null",
        // `image`, `audio` and other domain types name what the value is; keep the name.
        other => other,
    }
}

fn identifier(what: &str, name: &str) -> Result<(), PromptError> {
    if is_identifier_name(name) && !is_reserved_keyword(name) {
        Ok(())
    } else {
        Err(PromptError::NotAnIdentifier {
            what: what.to_owned(),
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, ty: &str, description: &str) -> ToolInput {
        ToolInput {
            name: name.into(),
            types: vec![ty.into()],
            description: Some(description.into()),
            ..ToolInput::default()
        }
    }

    #[test]
    fn an_async_tool_renders_as_an_async_function_with_jsdoc() {
        let tool = ToolSignature {
            name: "web_search".into(),
            description: Some("Searches the web.\nReturns the top results.".into()),
            inputs: Some(vec![
                input("query", "string", "What to search for."),
                ToolInput {
                    default: Some(Json::from(5)),
                    ..input("max_results", "integer", "How many results.")
                },
                ToolInput {
                    nullable: true,
                    ..input("site", "string", "Only this site.")
                },
            ]),
            output_types: vec!["string".into()],
            is_async: true,
        };
        assert_eq!(
            render_tools(&[tool]).unwrap(),
            "/**\n * Searches the web.\n * Returns the top results.\n *\n \
             * @param {string} query - What to search for.\n \
             * @param {number} [max_results=5] - How many results.\n \
             * @param {string | null} [site] - Only this site.\n \
             * @returns {Promise<string>}\n */\n\
             async function web_search(query, max_results, site) {}"
        );
    }

    #[test]
    fn a_plain_function_without_inputs_takes_rest_arguments() {
        let tool = ToolSignature {
            name: "now".into(),
            ..ToolSignature::default()
        };
        assert_eq!(
            render_tools(&[tool]).unwrap(),
            "/**\n * @returns {unknown}\n */\nfunction now(...args) {}"
        );
    }

    #[test]
    fn tools_are_separated_by_a_blank_line_and_unions_are_kept() {
        let one = ToolSignature {
            name: "a".into(),
            inputs: Some(vec![]),
            output_types: vec!["string".into(), "null".into()],
            ..ToolSignature::default()
        };
        let two = ToolSignature {
            name: "b".into(),
            inputs: Some(vec![]),
            output_types: vec!["image".into()],
            ..ToolSignature::default()
        };
        assert_eq!(
            render_tools(&[one, two]).unwrap(),
            "/**\n * @returns {string | null}\n */\nfunction a() {}\n\n\
             /**\n * @returns {image}\n */\nfunction b() {}"
        );
    }

    #[test]
    fn a_comment_terminator_in_a_description_cannot_close_the_jsdoc() {
        let tool = ToolSignature {
            name: "t".into(),
            description: Some("ends */ here".into()),
            inputs: Some(vec![]),
            ..ToolSignature::default()
        };
        let rendered = render_tools(&[tool]).unwrap();
        assert_eq!(rendered.matches("*/").count(), 1);
        assert!(rendered.contains("ends *\\/ here"));
    }

    #[test]
    fn names_that_are_not_identifiers_are_refused() {
        for (name, input) in [("my-tool", "x"), ("class", "x"), ("ok", "two words")] {
            let tool = ToolSignature {
                name: name.into(),
                inputs: Some(vec![input_named(input)]),
                ..ToolSignature::default()
            };
            assert!(matches!(
                render_tools(&[tool]),
                Err(PromptError::NotAnIdentifier { .. })
            ));
        }
    }

    fn input_named(name: &str) -> ToolInput {
        ToolInput {
            name: name.into(),
            ..ToolInput::default()
        }
    }
}
