//! `tool_name_shadowing` (ERROR): top-level bindings persist as globals across runs
//! (docs/contract.md "Persistence"), so declaring a tool's name at the top level, or assigning to
//! it anywhere, would replace the tool — or `final_answer` — for this run and every later one.
//! smolagents refuses such code for the same reason. Names bound inside a function or block are the
//! code's own business and are left alone.

use oxc_ast::ast::{BindingIdentifier, IdentifierReference};
use oxc_ast_visit::Visit;
use oxc_span::Span;

use super::Code;
use crate::diagnostic::Diagnostic;
use crate::program::{ProgramContext, FINAL_ANSWER};

/// The rule id.
pub const RULE: &str = "tool_name_shadowing";

/// Reports every top-level declaration of, and every assignment to the global binding of, a
/// tool's name or `final_answer`.
pub fn check(code: &Code, context: &ProgramContext) -> Vec<Diagnostic> {
    let mut finder = Finder {
        code,
        tools: &context.tool_names,
        found: Vec::new(),
    };
    code.visit(&mut finder);
    finder.found
}

struct Finder<'c, 'p, 'a> {
    code: &'c Code<'p, 'a>,
    tools: &'c [String],
    found: Vec<Diagnostic>,
}

impl Finder<'_, '_, '_> {
    fn is_protected(&self, name: &str) -> bool {
        name == FINAL_ANSWER || self.tools.iter().any(|tool| tool == name)
    }

    fn report(&mut self, name: &str, span: Span) {
        self.found.push(
            Diagnostic::error(
                RULE,
                format!("'{name}' is a tool: declaring or assigning it would replace the tool"),
            )
            .at(self.code.location(span))
            .with_fix(format!(
                "Use another name for your variable (e.g. '{name}_result') and call {name}(…) only to use the tool."
            )),
        );
    }
}

impl<'a> Visit<'a> for Finder<'_, '_, 'a> {
    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        // The wrapper's scope holds the user's top-level declarations, `var`s hoisted out of
        // top-level blocks included; every other scope belongs to a function, block or class.
        let top_level = it
            .symbol_id
            .get()
            .is_some_and(|symbol| self.code.scoping.symbol_scope_id(symbol) == self.code.top_level);
        if top_level && self.is_protected(&it.name) {
            self.report(&it.name, it.span);
        }
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        let assigns_global = self.code.is_free(it)
            && self
                .code
                .reference(it)
                .is_some_and(|reference| reference.is_write());
        if assigns_global && self.is_protected(&it.name) {
            self.report(&it.name, it.span);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Location;
    use crate::program::rules::tests::check_with;
    use crate::program::ProgramContext;

    fn found(code: &str) -> Vec<(String, Location)> {
        let context = ProgramContext {
            tool_names: vec!["web_search".into(), "visit".into()],
            ..ProgramContext::default()
        };
        check_with(code, &context, super::check)
            .into_iter()
            .map(|d| {
                assert!(d.is_error());
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
    fn top_level_declarations_of_a_tool_are_reported() {
        assert_eq!(names("const web_search = 1"), ["web_search"]);
        assert_eq!(names("let visit; var web_search"), ["visit", "web_search"]);
        assert_eq!(names("function web_search() {}"), ["web_search"]);
        assert_eq!(names("class visit {}"), ["visit"]);
        assert_eq!(names("if (a) { var web_search = 1 }"), ["web_search"]);
    }

    #[test]
    fn every_name_of_a_destructuring_pattern_is_checked() {
        assert_eq!(
            names(
                "const { a: web_search, b = 1, ...visit } = o;\nlet [x, [final_answer] = []] = p"
            ),
            ["web_search", "visit", "final_answer"]
        );
    }

    #[test]
    fn assignments_to_the_global_are_reported_wherever_they_are() {
        assert_eq!(names("web_search = 1"), ["web_search"]);
        assert_eq!(
            names("visit += 'x'; web_search++; --visit"),
            ["visit", "web_search", "visit"]
        );
        assert_eq!(
            names("[web_search] = a; ({ b: visit } = o); for (final_answer of xs) {}"),
            ["web_search", "visit", "final_answer"]
        );
        assert_eq!(
            names("function f() { return () => { final_answer = null } }"),
            ["final_answer"]
        );
    }

    #[test]
    fn final_answer_is_protected_without_being_listed() {
        let found = check_with(
            "let final_answer = 1",
            &ProgramContext::default(),
            super::check,
        );
        assert_eq!(
            found[0].message,
            "'final_answer' is a tool: declaring or assigning it would replace the tool"
        );
    }

    #[test]
    fn the_location_is_the_binding_or_the_target() {
        assert_eq!(
            found("let a;\nconst { x: web_search } = o;\n  visit = 2"),
            [
                (
                    "'web_search' is a tool: declaring or assigning it would replace the tool"
                        .into(),
                    Location {
                        line: 2,
                        column: 12
                    }
                ),
                (
                    "'visit' is a tool: declaring or assigning it would replace the tool".into(),
                    Location { line: 3, column: 3 }
                ),
            ]
        );
    }

    #[test]
    fn using_a_tool_is_fine() {
        assert!(
            names("const r = await web_search({ query: 'x' }); visit(r); final_answer(r)")
                .is_empty()
        );
        assert!(names("const o = { web_search: 1 }; o.visit = 2; o.final_answer++").is_empty());
    }

    #[test]
    fn names_local_to_a_function_or_block_are_not_reported() {
        assert!(names("function f(web_search) { web_search = 2; return web_search }").is_empty());
        assert!(
            names("const g = ({ visit }) => visit; const h = function final_answer() {}")
                .is_empty()
        );
        assert!(names("function f() { let web_search = 1; var visit; }").is_empty());
        assert!(names("{ const web_search = 1 } try {} catch (visit) { visit = 1 }").is_empty());
        assert!(names("for (const web_search of xs) {} const k = class visit {}").is_empty());
    }

    #[test]
    fn sloppy_mode_block_functions_are_hoisted_and_strict_ones_are_not() {
        // Annex B: in sloppy mode a function declared in a block also binds the enclosing
        // function's scope, and so would replace the tool.
        assert_eq!(names("if (a) { function web_search() {} }"), ["web_search"]);
        assert!(names("'use strict';\nif (a) { function web_search() {} }").is_empty());
    }

    #[test]
    fn typescript_declarations_are_checked_after_stripping() {
        assert_eq!(
            found("let a: number = 1;\nenum web_search { A }"),
            [(
                "'web_search' is a tool: declaring or assigning it would replace the tool".into(),
                Location { line: 2, column: 6 }
            )]
        );
        assert_eq!(names("const visit: (u: string) => void = f"), ["visit"]);
    }

    #[test]
    fn other_names_are_fine() {
        assert!(names("const search = 1; x = 2; let webSearch").is_empty());
    }
}
