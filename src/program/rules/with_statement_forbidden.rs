//! `with_statement_forbidden` (ERROR): `with (obj) { … }` makes every name inside it resolve
//! through `obj` first, so an object (or a Proxy whose `has` trap says yes to every name) could
//! answer for a name the executor's rewrite injects (§6.4): `__smol_result`, which a top-level
//! `return` inside the `with` body calls. `reserved_identifier` cannot see that: the name never
//! appears in the code. The loop guard (§6.3) no longer depends on the rule: QuickJS counts loop
//! bodies itself (patch 0600), with no name to look up. Strict mode forbids `with` outright;
//! agent code runs sloppy, so the rule does it.

use oxc_ast::ast::WithStatement;
use oxc_ast_visit::{walk, Visit};

use super::Code;
use crate::diagnostic::Diagnostic;

/// The rule id.
pub const RULE: &str = "with_statement_forbidden";

/// Reports every `with` statement of the user's code.
pub fn check(code: &Code) -> Vec<Diagnostic> {
    let mut finder = Finder {
        code,
        found: Vec::new(),
    };
    code.visit(&mut finder);
    finder.found
}

struct Finder<'c, 'p, 'a> {
    code: &'c Code<'p, 'a>,
    found: Vec<Diagnostic>,
}

impl<'a> Visit<'a> for Finder<'_, '_, 'a> {
    fn visit_with_statement(&mut self, it: &WithStatement<'a>) {
        self.found.push(
            Diagnostic::error(
                RULE,
                "`with` statements are not allowed: they let an object stand in for the executor's own bindings",
            )
            .at(self.code.location(it.span))
            .with_fix("Read the properties from a variable instead: `const o = obj; o.x`."),
        );
        walk::walk_with_statement(self, it);
    }
}

#[cfg(test)]
mod tests {
    use crate::program::{prepare, ProgramContext};

    fn rules_of(code: &str) -> Vec<&'static str> {
        prepare(code, &ProgramContext::default())
            .diagnostics
            .iter()
            .map(|diagnostic| diagnostic.rule)
            .collect()
    }

    #[test]
    fn a_with_statement_is_refused_wherever_it_is() {
        assert_eq!(rules_of("with (Math) { max(1, 2) }"), [super::RULE]);
        assert_eq!(
            rules_of("function f(o) { if (o) { with (o) { return x } } }"),
            [super::RULE]
        );
    }

    #[test]
    fn regression_a_proxy_in_with_cannot_stand_in_for_the_loop_guard() {
        let code = "with (new Proxy({}, { has: (t, k) => k === '__smol' + '_guard', get: () => () => {} })) { var n = 0; while (n < 100000) n++ }";
        let prepared = prepare(code, &ProgramContext::default());
        assert!(prepared.is_blocked());
        assert_eq!(prepared.diagnostics[0].rule, super::RULE);
        assert_eq!(prepared.diagnostics[0].location.map(|l| l.line), Some(1));
    }

    #[test]
    fn the_word_with_elsewhere_is_fine() {
        assert!(rules_of("const with_ = 1; const o = { with: 2 }; o.with + with_").is_empty());
    }
}
