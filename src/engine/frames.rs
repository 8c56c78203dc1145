//! Where sandbox code is, read from QuickJS stack traces: the first frame in the run's script
//! (`agent.js:line:column`, in the transformed code) and the stack of the code calling now.
//! Used to name the user's line in errors (`failure.rs`) and in a run's trace (`trace.rs`).

use rquickjs::{Ctx, Exception};

use crate::program::SCRIPT_NAME;

/// The stack of the calling code, from an error made for the purpose; only asked when a run's
/// result is a Promise, or for a traced run's calls.
pub fn call_site(ctx: &Ctx<'_>) -> Option<String> {
    Exception::from_message(ctx.clone(), "").ok()?.stack()
}

/// The `line:column` of the first stack frame in the transformed script
/// (`    at f (agent.js:3:9)`).
pub fn first_script_position(stack: &str) -> Option<(u32, u32)> {
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
