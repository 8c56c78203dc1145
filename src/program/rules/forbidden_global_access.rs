//! `forbidden_global_access` (WARNING): code that reaches for a host global the sandbox does not
//! have (§5.2: no `process`, `require`, `module`, `global`, `fetch`, no timers). The run still
//! goes ahead — the code may only touch the name on a path it never takes — but the model learns
//! why it will see a `ReferenceError` and what to use instead. An executor created with
//! `timers: true` has `setTimeout`, `setInterval`, `clearTimeout` and `clearInterval`; those
//! four are reported only without it.

use oxc_ast::ast::{Expression, IdentifierReference, UnaryExpression, UnaryOperator};
use oxc_ast_visit::{walk, Visit};

use super::Code;
use crate::diagnostic::{Diagnostic, DiagnosticSeverity};
use crate::program::ProgramContext;

/// The rule id.
pub const RULE: &str = "forbidden_global_access";

/// Where a forbidden name comes from; it decides the advice.
#[derive(Clone, Copy)]
enum Host {
    Node,
    Network,
    Browser,
    Runtime,
    Timer,
}

/// The globals of Node, browsers, Deno and Bun that agent code commonly reaches for and that the
/// sandbox does not provide. Names the sandbox does have (`queueMicrotask`, `performance`,
/// `globalThis`) are absent on purpose.
const FORBIDDEN: &[(&str, Host)] = &[
    ("process", Host::Node),
    ("require", Host::Node),
    ("module", Host::Node),
    ("exports", Host::Node),
    ("global", Host::Node),
    ("Buffer", Host::Node),
    ("__dirname", Host::Node),
    ("__filename", Host::Node),
    ("fetch", Host::Network),
    ("XMLHttpRequest", Host::Network),
    ("WebSocket", Host::Network),
    ("EventSource", Host::Network),
    ("window", Host::Browser),
    ("document", Host::Browser),
    ("navigator", Host::Browser),
    ("location", Host::Browser),
    ("localStorage", Host::Browser),
    ("sessionStorage", Host::Browser),
    ("Deno", Host::Runtime),
    ("Bun", Host::Runtime),
    ("setTimeout", Host::Timer),
    ("setInterval", Host::Timer),
    ("setImmediate", Host::Timer),
    ("clearTimeout", Host::Timer),
    ("clearInterval", Host::Timer),
    ("clearImmediate", Host::Timer),
];

/// The timers an executor with `timers: true` provides.
const PROVIDED_TIMERS: [&str; 4] = ["setTimeout", "setInterval", "clearTimeout", "clearInterval"];

/// Reports every free reference to a name of [`FORBIDDEN`], except the names of tools, which
/// the sandbox does have.
pub fn check(code: &Code, context: &ProgramContext) -> Vec<Diagnostic> {
    let mut finder = Finder {
        code,
        context,
        found: Vec::new(),
    };
    code.visit(&mut finder);
    finder.found
}

struct Finder<'c, 'p, 'a> {
    code: &'c Code<'p, 'a>,
    context: &'c ProgramContext,
    found: Vec<Diagnostic>,
}

impl<'a> Visit<'a> for Finder<'_, '_, 'a> {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        let name = it.name.as_str();
        let Some(&(_, host)) = FORBIDDEN.iter().find(|(forbidden, _)| *forbidden == name) else {
            return;
        };
        if !self.code.is_free(it) || self.context.tool_names.iter().any(|tool| tool == name) {
            return;
        }
        if self.context.timers && PROVIDED_TIMERS.contains(&name) {
            return;
        }
        let (kind, fix) = if self.context.timers && matches!(host, Host::Timer) {
            (
                "timers are not provided",
                "Use setTimeout(callback, 0) instead.".to_owned(),
            )
        } else {
            advice(name, host)
        };
        self.found.push(
            Diagnostic::error(
                RULE,
                format!("'{name}' is not available in the sandbox ({kind})"),
            )
            .with_severity(DiagnosticSeverity::Warning)
            .at(self.code.location(it.span))
            .with_fix(fix),
        );
    }

    fn visit_unary_expression(&mut self, it: &UnaryExpression<'a>) {
        // `typeof x` never throws: it is how portable code asks whether it runs in Node or a
        // browser, and then takes the path that fits.
        if it.operator == UnaryOperator::Typeof && matches!(it.argument, Expression::Identifier(_))
        {
            return;
        }
        walk::walk_unary_expression(self, it);
    }
}

/// What to call the name, and what to do instead.
fn advice(name: &str, host: Host) -> (&'static str, String) {
    match host {
        Host::Node => (
            "a Node.js global",
            match name {
                "require" => "The sandbox is not Node.js: load an authorized module with `await import('name')`.".into(),
                "module" | "exports" => "The sandbox is not a CommonJS module: the last expression is the run's output; call final_answer(value) to give the answer.".into(),
                "global" => "Use globalThis.".into(),
                _ => format!("The sandbox is not Node.js and has no '{name}': use the tools and variables you were given."),
            },
        ),
        Host::Network => (
            "network access",
            "The sandbox has no network access: call a tool to fetch remote data.".into(),
        ),
        Host::Browser => (
            "a browser global",
            "The sandbox is not a browser (no DOM, storage or location): work with plain values and the tools you were given.".into(),
        ),
        Host::Runtime => (
            "another runtime's global",
            "The sandbox is neither Deno nor Bun: use standard JavaScript and the tools you were given.".into(),
        ),
        Host::Timer => (
            "timers are not provided",
            "Timers are not available in the sandbox: to wait, call a tool that waits (e.g. a sleep tool) and await it.".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::{DiagnosticSeverity, Location};
    use crate::program::rules::tests::check_with;
    use crate::program::ProgramContext;

    fn found(code: &str) -> Vec<(String, Location)> {
        check_with(code, &ProgramContext::default(), super::check)
            .into_iter()
            .map(|d| {
                assert_eq!(d.severity, DiagnosticSeverity::Warning);
                assert_eq!(d.rule, super::RULE);
                (d.message, d.location.expect("located"))
            })
            .collect()
    }

    fn names(code: &str) -> Vec<String> {
        found(code)
            .into_iter()
            .map(|(message, _)| message.split('\'').nth(1).unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn free_host_globals_are_reported_once_per_reference() {
        assert_eq!(
            names("process.env.HOME;\nconst fs = require('fs');\nprocess.exit(1)"),
            ["process", "require", "process"]
        );
        assert_eq!(
            names("fetch(url); new WebSocket(u); window.x; Buffer.from(s); Deno; Bun; global"),
            [
                "fetch",
                "WebSocket",
                "window",
                "Buffer",
                "Deno",
                "Bun",
                "global"
            ]
        );
        assert_eq!(
            names("module.exports = {}; exports.a = 1; __dirname + __filename"),
            ["module", "exports", "__dirname", "__filename"]
        );
    }

    #[test]
    fn timers_are_reported_with_advice_to_use_a_tool() {
        let code = check_with(
            "setTimeout(f, 10); setInterval(f); setImmediate(f); clearTimeout(t); clearInterval(t)",
            &ProgramContext::default(),
            super::check,
        );
        assert_eq!(code.len(), 5);
        assert!(code
            .iter()
            .all(|d| d.fix.as_deref().is_some_and(|fix| fix.contains("tool"))));
    }

    #[test]
    fn with_timers_on_only_the_timers_the_sandbox_lacks_are_reported() {
        let context = ProgramContext {
            timers: true,
            ..ProgramContext::default()
        };
        let found = check_with(
            "setTimeout(f, 10); setInterval(f); setImmediate(f); clearTimeout(t); clearInterval(t)",
            &context,
            super::check,
        );
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("'setImmediate'"));
        assert_eq!(
            found[0].fix.as_deref(),
            Some("Use setTimeout(callback, 0) instead.")
        );
    }

    #[test]
    fn the_location_is_the_reference() {
        let found = found("let a = 1;\n  a + process.pid");
        assert_eq!(found[0].1, Location { line: 2, column: 7 });
        assert_eq!(
            found[0].0,
            "'process' is not available in the sandbox (a Node.js global)"
        );
    }

    #[test]
    fn references_in_nested_functions_and_shorthand_properties_count() {
        assert_eq!(
            names("function f() { return () => ({ process }) }"),
            ["process"]
        );
    }

    #[test]
    fn object_keys_and_member_properties_are_not_references() {
        assert!(names("const o = { process: 1, fetch() {}, ['x']: 2 }; o.process; o?.require(1); class C { window = 1 }").is_empty());
    }

    #[test]
    fn local_bindings_are_not_host_globals() {
        assert!(names("const require = (m) => m;\nrequire('x')").is_empty());
        assert!(names("function get(fetch) { return fetch(1) }").is_empty());
        assert!(names("let process = { env: {} }; process.env").is_empty());
        assert!(names("function setTimeout() {} setTimeout()").is_empty());
        assert!(names("try {} catch (window) { window }").is_empty());
        // Only the use outside the parameter's function is free.
        assert_eq!(names("((document) => document)(1); document"), ["document"]);
    }

    #[test]
    fn typeof_probes_are_not_reported() {
        assert!(names("typeof process === 'undefined' && typeof window").is_empty());
        assert_eq!(names("typeof process.env"), ["process"]);
    }

    #[test]
    fn a_tool_with_a_host_name_is_not_a_host_global() {
        let context = ProgramContext {
            tool_names: vec!["fetch".into()],
            ..ProgramContext::default()
        };
        assert!(check_with("await fetch('u')", &context, super::check).is_empty());
    }

    #[test]
    fn globals_the_sandbox_has_are_fine() {
        assert!(
            names("globalThis.x; console.log(1); queueMicrotask(f); JSON.parse('1')").is_empty()
        );
    }
}
