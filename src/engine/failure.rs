//! Turns a value thrown by user code into a runtime error that names the user's own line
//! (DESIGN.md "Errors"): the first stack frame in the transformed script is mapped back through
//! the program's position map.

use rquickjs::{Ctx, Value as JsValue};

use super::inspect;
use super::EngineError;
use crate::program::{PreparedProgram, SCRIPT_NAME};

/// Describes `thrown` for `ERR_RUNTIME_EXCEPTION`: `Name: message` for errors, Node's
/// `Uncaught <inspect>` for anything else, plus the user's location when the stack has one.
pub fn runtime_error<'js>(
    ctx: &Ctx<'js>,
    thrown: &JsValue<'js>,
    program: &PreparedProgram,
) -> EngineError {
    let (description, stack) = match thrown.as_exception() {
        Some(error) => {
            let name = error
                .get::<_, JsValue>("name")
                .ok()
                .and_then(|name| name.as_string().and_then(|s| s.to_string().ok()))
                .unwrap_or_else(|| "Error".into());
            let message = error.message().unwrap_or_default();
            let description = if message.is_empty() {
                name
            } else {
                format!("{name}: {message}")
            };
            (description, error.stack())
        }
        None => (format!("Uncaught {}", inspect::inspect(ctx, thrown)), None),
    };
    let location = stack
        .as_deref()
        .and_then(first_script_position)
        .and_then(|(line, column)| program.positions.original(line, column));
    let source_line = location
        .and_then(|location| program.source.line(location.line))
        .map(|line| line.trim().to_owned());
    let message = match (&location, &source_line) {
        (Some(location), Some(line)) => {
            format!("{description} (line {}: {line})", location.line)
        }
        _ => description,
    };
    EngineError::Runtime {
        message,
        location,
        source_line,
    }
}

/// The `line:column` of the first stack frame in the transformed script
/// (`    at f (agent.js:3:9)`).
fn first_script_position(stack: &str) -> Option<(u32, u32)> {
    let marker = format!("{SCRIPT_NAME}:");
    stack.lines().find_map(|frame| {
        let start = frame.find(&marker)? + marker.len();
        let mut numbers = frame[start..]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|part| !part.is_empty());
        let line = numbers.next()?.parse().ok()?;
        let column = numbers.next()?.parse().ok()?;
        Some((line, column))
    })
}

#[cfg(test)]
mod tests {
    use super::first_script_position;

    #[test]
    fn the_first_frame_in_the_script_gives_the_position() {
        let stack = "    at f (agent.js:3:9)\n    at <eval> (agent.js:10:1)\n";
        assert_eq!(first_script_position(stack), Some((3, 9)));
    }

    #[test]
    fn frames_of_native_functions_are_skipped() {
        let stack = "    at map (native)\n    at <eval> (agent.js:2:14)\n";
        assert_eq!(first_script_position(stack), Some((2, 14)));
    }

    #[test]
    fn a_stack_without_script_frames_gives_nothing() {
        assert_eq!(first_script_position("    at <anonymous> (native)\n"), None);
    }
}
