//! Turns a value thrown by user code into a runtime error that names the user's own line
//! (docs/contract.md "Errors"): the first stack frame in the transformed script is mapped back
//! through the program's position map.

use rquickjs::{Ctx, Value as JsValue};

use super::frames::first_script_position;
use crate::diagnostic::Location;
use crate::engine::host::ToolFailure;
use crate::engine::quickjs::reflect::refused_allocations;
use crate::engine::values::convert::copy_failure_of;
use crate::engine::values::inspect;
use crate::engine::{EngineError, SourcePosition};
use crate::program::PreparedProgram;
use crate::value::CloneError;

/// The failure of an operation during which the heap refused an allocation (see
/// [`refused_allocations`]).
pub fn out_of_memory() -> EngineError {
    EngineError::Limit {
        limit: "memoryLimitBytes",
        message: "InternalError: out of memory (the executor's heap limit, memoryLimitBytes, was reached)".into(),
    }
}

/// The outcome of installing tools or variables: the memory limit if the heap refused memory
/// since `refused` (see [`refused_allocations`]; a part may then be missing even if nothing
/// failed), otherwise `installed`.
pub fn endowed(
    ctx: &Ctx<'_>,
    refused: u64,
    installed: Result<(), String>,
) -> Result<(), EngineError> {
    if refused_allocations(ctx) != refused {
        return Err(out_of_memory());
    }
    installed.map_err(EngineError::Endowment)
}

/// Describes `thrown` for `ERR_RUNTIME_EXCEPTION`: `Name: message` for errors, Node's
/// `Uncaught <inspect>` for anything else, plus the user's location: where the stack says, or
/// else `site` (where the run returned the Promise that rejected with `thrown`). An exhausted
/// stack is reported as the limit it hit (an exhausted heap is told by [`refused_allocations`],
/// not by what was thrown).
pub fn runtime_error<'js>(
    ctx: &Ctx<'js>,
    thrown: &JsValue<'js>,
    program: &PreparedProgram,
    site: Option<&str>,
) -> EngineError {
    let Described {
        description,
        stack,
        name,
    } = describe(ctx, thrown);
    if let Some(failure) = copy_failure_of(ctx, thrown) {
        if let Some(limit) = failure.limit {
            let at = locate(stack.as_deref(), site, program);
            return EngineError::TooLarge {
                message: at_line(description, &at),
                limit,
                at,
            };
        }
    }
    if description == "RangeError: Maximum call stack size exceeded" {
        return EngineError::Limit {
            limit: "maxStackBytes",
            message: format!(
                "{description} (the executor's stack limit, maxStackBytes, was reached)"
            ),
        };
    }
    let (description, at) = match redeclared(&description) {
        // Raised as the script starts, before any of it runs: the stack names its first line,
        // the declaration is what the caller must change.
        Some(name) => (
            format!("{description}{REDECLARATION_HINT}"),
            program
                .declaration(name)
                .and_then(|location| position(location, program))
                .or_else(|| locate(stack.as_deref(), site, program)),
        ),
        None => (description, locate(stack.as_deref(), site, program)),
    };
    if let Some(refusal) = description.strip_prefix(IMPORT_REFUSED) {
        return EngineError::ImportNotAllowed {
            message: refusal.to_owned(),
            at,
        };
    }
    let message = at_line(description, &at);
    if let Some(limit) = crate::engine::realm::canvas::limit_of(thrown) {
        return EngineError::CanvasLimit { limit, message, at };
    }
    EngineError::Runtime {
        message,
        at,
        error_name: name,
    }
}

/// `description (line N: source line)` when the position is known.
fn at_line(description: String, at: &Option<SourcePosition>) -> String {
    match at {
        Some(at) => format!(
            "{description} (line {}: {})",
            at.location.line, at.source_line
        ),
        None => description,
    }
}

/// A run whose returned Promise resolved with a value too large to copy out (`error`, which
/// names the limit and the size); `site` is where the Promise was returned.
pub fn result_too_large(
    error: CloneError,
    program: &PreparedProgram,
    site: Option<&str>,
) -> EngineError {
    let at = locate(None, site, program);
    let message = at_line(format!("RangeError: {error}"), &at);
    match error.limit {
        Some(limit) => EngineError::TooLarge { message, limit, at },
        None => EngineError::Runtime {
            message,
            at,
            error_name: Some("RangeError".into()),
        },
    }
}

/// A run whose promise nothing can settle any more; `site` is where it returned a Promise,
/// which is then the one it waits for.
pub fn never_settles(program: &PreparedProgram, site: Option<&str>) -> EngineError {
    EngineError::Runtime {
        message: "the code awaits a promise that can never settle (nothing is left to run that could settle it)".into(),
        at: locate(None, site, program),
        error_name: None,
    }
}

/// What QuickJS says when a declaration clashes with a binding of an earlier run.
const REDECLARATION: &str = "SyntaxError: redeclaration of '";

/// What the REPL rules allow instead (docs/semantics.md "Semantics").
const REDECLARATION_HINT: &str = ": an earlier run declared it, and a later run may declare again only a let or class as let or class, or a const as const";

/// The name of a [`REDECLARATION`] error.
fn redeclared(description: &str) -> Option<&str> {
    description.strip_prefix(REDECLARATION)?.strip_suffix('\'')
}

/// How a refusal of the module loader reads once described (`Name: message`).
const IMPORT_REFUSED: &str = "ImportNotAllowedError: ";

/// Describes a tool failure that user code did not catch (`ERR_TOOL_PROXY_FAIL`), with the
/// line of the call (or `site`, as for [`runtime_error`]).
pub fn tool_error<'js>(
    ctx: &Ctx<'js>,
    thrown: &JsValue<'js>,
    tool: String,
    failure: &ToolFailure,
    program: &PreparedProgram,
    site: Option<&str>,
) -> EngineError {
    let stack = describe(ctx, thrown).stack;
    EngineError::Tool {
        tool,
        message: format!("{}: {}", failure.name, failure.message),
        at: locate(stack.as_deref(), site, program),
        retryable: failure.retryable,
    }
}

/// What a thrown value says of itself.
struct Described {
    /// `Name: message`, or `Uncaught <inspect>` for a value that is no error.
    description: String,
    stack: Option<String>,
    /// The error's `name`; `None` for a value that is no error.
    name: Option<String>,
}

/// Reads the `name`, `message` and `stack` of a thrown value, once each.
fn describe<'js>(ctx: &Ctx<'js>, thrown: &JsValue<'js>) -> Described {
    match thrown.as_exception() {
        Some(error) => {
            let name = error
                .get::<_, JsValue>("name")
                .ok()
                .and_then(|name| name.as_string().and_then(|s| s.to_string().ok()))
                .unwrap_or_else(|| "Error".into());
            let message = error.message().unwrap_or_default();
            let description = if message.is_empty() {
                name.clone()
            } else {
                format!("{name}: {message}")
            };
            Described {
                description,
                stack: error.stack(),
                name: Some(name),
            }
        }
        None => Described {
            description: format!("Uncaught {}", inspect::inspect(ctx, thrown)),
            stack: None,
            name: None,
        },
    }
}

/// The user's position of the first script frame of `stack`, else of `site` (the stack where
/// the run returned a Promise).
fn locate(
    stack: Option<&str>,
    site: Option<&str>,
    program: &PreparedProgram,
) -> Option<SourcePosition> {
    let location = stack
        .and_then(first_script_position)
        .or_else(|| site.and_then(first_script_position))
        .and_then(|(line, column)| program.positions.original(line, column))?;
    position(location, program)
}

/// `location` with its line of the user's code.
fn position(location: Location, program: &PreparedProgram) -> Option<SourcePosition> {
    let source_line = program.source.line(location.line)?.trim().to_owned();
    Some(SourcePosition {
        location,
        source_line,
    })
}
