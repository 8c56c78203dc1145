//! What a tool is and what it answers, as every layer sees it: the engine calls tools with
//! these, the napi layer answers them, and a session's journal records the answers.

use crate::value::Value;

/// A tool the host offers the sandbox: its name, and for a smolagents tool object the names of
/// its inputs, in order. Such a tool's `forward` takes one object of named inputs: the engine
/// names the sandbox's arguments (`crate::tool_args`), so that the host, and the run's trace,
/// get exactly what `forward` receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub inputs: Option<Vec<String>>,
}

impl From<String> for ToolSpec {
    /// A plain function: called with the sandbox's arguments as they are.
    fn from(name: String) -> Self {
        Self { name, inputs: None }
    }
}

impl From<&str> for ToolSpec {
    /// A plain function: called with the sandbox's arguments as they are.
    fn from(name: &str) -> Self {
        name.to_owned().into()
    }
}

/// A tool's failure as the sandbox sees it: the error's name and message only, never the host's
/// stack (docs/contract.md "Tool failures").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub name: String,
    pub message: String,
    /// Whether calling again can succeed (§8.2's "Depends" row of `ERR_TOOL_PROXY_FAIL`): the
    /// tool's own error says so with `retryable: false`; a result the host gave that cannot
    /// be copied is the host's fault, never the code's.
    pub retryable: bool,
}

impl ToolFailure {
    /// A plain `Error` with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            name: "Error".into(),
            message: message.into(),
            retryable: true,
        }
    }

    /// A failure of the host's side that calling again cannot fix.
    pub fn of_host(message: impl Into<String>) -> Self {
        Self {
            retryable: false,
            ..Self::new(message)
        }
    }
}

/// The outcome of a tool call.
pub type ToolResult = Result<Value, ToolFailure>;
