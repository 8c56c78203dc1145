//! Where sandbox code is: the first frame in the run's script (`agent.js:line:column`, in the
//! transformed code), read from QuickJS stack traces, and the position of the code calling now,
//! read from QuickJS's line tables (patch 0501). Used to name the user's line in errors
//! (`failure.rs`, and an awaited tool's failure in `bridge.rs`) and in a run's trace
//! (`recorder.rs`).

use rquickjs::Ctx;

use crate::engine::quickjs::reflect::Reflect;
use crate::program::SCRIPT_NAME;

/// Where in a script sandbox code is running: the innermost frame of that script, remembered
/// for an error made later.
pub struct CallSite {
    file: &'static str,
    line: u32,
    column: u32,
}

impl CallSite {
    /// Where the run's script (`agent.js`) is now: the frame a call from module code was
    /// reached from, as the first `agent.js` frame of an `Error`'s stack names it; `None` when
    /// the script is not running.
    pub fn here(ctx: &Ctx<'_>) -> Option<Self> {
        Self::in_script(ctx, SCRIPT_NAME)
    }

    /// [`CallSite::here`] for the script named `file`. A lookup in one function's line table
    /// (QuickJS patch 0501), not a stack trace (a stack costs thousands of instructions, and is
    /// made through the `Error` constructor and properties sandbox code can redefine).
    fn in_script(ctx: &Ctx<'_>, file: &'static str) -> Option<Self> {
        let (line, column) = Reflect::new(ctx).current_position(file)?;
        Some(Self { file, line, column })
    }

    /// The site's line and column in its script.
    pub fn position(&self) -> (u32, u32) {
        (self.line, self.column)
    }

    /// The site as a one-frame stack, as QuickJS writes a frame (`    at agent.js:3:9`).
    pub fn frame(&self) -> String {
        format!("    at {}:{}:{}\n", self.file, self.line, self.column)
    }
}

/// Where the calling code is, as a one-frame stack (see [`CallSite`]); only asked when a run's
/// result is a Promise, or for a traced run's calls.
pub fn call_site(ctx: &Ctx<'_>) -> Option<String> {
    CallSite::here(ctx).map(|site| site.frame())
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
    use std::cell::RefCell;
    use std::rc::Rc;

    use rquickjs::context::EvalOptions;
    use rquickjs::{Context, Ctx, Exception, Function, Runtime};

    use super::{first_script_position, CallSite};

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

    /// Each time `src` calls `here()`: the call site as [`CallSite::here`] finds it, and the
    /// first script frame of the stack of an `Error` made at the same moment (QuickJS's own
    /// account of the same position).
    fn sites_of(src: &str) -> Vec<(Option<String>, String)> {
        let runtime = Runtime::new().expect("runtime");
        let context = Context::full(&runtime).expect("context");
        context.with(|ctx| {
            assert!(
                CallSite::in_script(&ctx, "eval_script").is_none(),
                "no script code runs"
            );
            let sites = Rc::new(RefCell::new(Vec::new()));
            let seen = Rc::clone(&sites);
            let here = Function::new(ctx.clone(), move |ctx: Ctx<'_>| {
                let site = CallSite::in_script(&ctx, "eval_script").map(|site| site.frame());
                let stack = Exception::from_message(ctx.clone(), "")
                    .ok()
                    .and_then(|error| error.stack())
                    .unwrap_or_default();
                let frame = stack
                    .lines()
                    .find(|frame| frame.contains("eval_script:"))
                    .unwrap_or_default()
                    .to_owned();
                seen.borrow_mut().push((site, frame));
            })
            .expect("function");
            ctx.globals().set("here", here).expect("global");
            // A function of another script, which `here()` is called from in some tests.
            let mut options = EvalOptions::default();
            options.filename = Some("other.js".into());
            ctx.eval_with_options::<(), _>("function elsewhere() { return here(); }", options)
                .expect("the other script runs");
            ctx.eval::<(), _>(src).expect("the script runs");
            sites.take()
        })
    }

    /// QuickJS patch 0501: the position of the innermost script frame, native frames skipped,
    /// exactly as the stack of an `Error` made there names it.
    #[test]
    fn patch_0501_the_current_position_is_the_innermost_script_frame() {
        let sites = sites_of(
            "here();\nfunction f() {\n  return 1 + here();\n}\nf();\n[1].map(() =>\n    here());",
        );
        let found: Vec<_> = sites.iter().map(|(site, _)| site.clone()).collect();
        assert_eq!(
            found,
            [
                Some("    at eval_script:1:1\n".to_owned()),
                Some("    at eval_script:3:14\n".to_owned()),
                Some("    at eval_script:7:5\n".to_owned()),
            ]
        );
        for (site, frame) in &sites {
            let site = site.as_deref().unwrap_or_default().trim_end();
            let position = site.trim_start_matches("    at ");
            assert!(
                frame.ends_with(&format!("({position})")),
                "{site:?} is not where the Error's stack says: {frame:?}"
            );
        }
    }

    /// The position is the script's own innermost frame: a call from another script's function
    /// is placed where this script called into it, as the Error's first frame of this script.
    #[test]
    fn patch_0501_frames_of_other_scripts_are_skipped() {
        let sites = sites_of("1;\n  elsewhere();");
        assert_eq!(sites[0].0.as_deref(), Some("    at eval_script:2:3\n"));
        assert!(
            sites[0].1.ends_with("(eval_script:2:3)"),
            "{:?}",
            sites[0].1
        );
    }

    /// QuickJS patch 0502: a script's first line numbers its columns from 1, as later lines do
    /// (it counted from 0 there, so a call at column 3 was put at 2).
    #[test]
    fn patch_0502_first_line_columns_count_from_one() {
        let sites = sites_of("  here();\n  here();\n\nvar a = [1, here()];");
        let found: Vec<_> = sites.iter().map(|(site, _)| site.clone()).collect();
        assert_eq!(
            found,
            [
                Some("    at eval_script:1:3\n".to_owned()),
                Some("    at eval_script:2:3\n".to_owned()),
                Some("    at eval_script:4:13\n".to_owned()),
            ]
        );
        let first_line = sites_of("var a = [1, here()];");
        assert_eq!(
            first_line[0].0.as_deref(),
            Some("    at eval_script:1:13\n")
        );
        // A buffer that starts with a line terminator: its second line is unchanged.
        let second_line = sites_of("\nvar a = [1, here()];");
        assert_eq!(
            second_line[0].0.as_deref(),
            Some("    at eval_script:2:13\n")
        );
    }

    /// The one-frame stack an awaited tool's failure carries names the site as the run's error
    /// reader (`failure::first_script_position`) expects it.
    #[test]
    fn a_call_site_frame_reads_as_a_quickjs_stack_frame() {
        let site = CallSite {
            file: "agent.js",
            line: 3,
            column: 9,
        };
        assert_eq!(site.frame(), "    at agent.js:3:9\n");
    }
}
