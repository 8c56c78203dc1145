//! `import_allowed` (ERROR): every dynamic `import(…)`, at any depth, must name a module of
//! `authorizedImports` exactly (§5.3), unless that list holds `"*"`. A specifier computed at run
//! time cannot be checked here, so it is refused unless any module is allowed.

use oxc_ast::ast::{Expression, ImportExpression};
use oxc_ast_visit::{walk, Visit};
use oxc_span::GetSpan;

use super::Code;
use crate::diagnostic::Diagnostic;
use crate::modules::{allowed_list, allows_any, is_authorized, not_allowed_message};
use crate::program::ProgramContext;

/// The rule id.
pub const RULE: &str = "import_allowed";

/// Longest specifier text quoted in a message; model-written expressions can be long.
const MAX_QUOTED_CHARS: usize = 40;

/// Reports every `import(…)` of `code` that `context.authorized_imports` does not allow.
pub fn check(code: &Code, context: &ProgramContext) -> Vec<Diagnostic> {
    let mut finder = Finder {
        code,
        authorized: &context.authorized_imports,
        found: Vec::new(),
    };
    code.visit(&mut finder);
    finder.found
}

struct Finder<'c, 'p, 'a> {
    code: &'c Code<'p, 'a>,
    authorized: &'c [String],
    found: Vec<Diagnostic>,
}

impl<'a> Visit<'a> for Finder<'_, '_, 'a> {
    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        // The specifier itself may hold another `import(…)`.
        walk::walk_import_expression(self, it);
        let allowed = allowed_list(self.authorized);
        let diagnostic = match literal(&it.source) {
            Some(name) if is_authorized(self.authorized, name) => return,
            Some(name) => {
                let fix = if self.authorized.is_empty() {
                    format!("No module is authorized: remove the import of '{name}' and use the tools you were given.")
                } else {
                    format!("Import one of the authorized modules ({allowed}) instead of '{name}'.")
                };
                Diagnostic::error(RULE, not_allowed_message(self.authorized, name)).with_fix(fix)
            }
            None if allows_any(self.authorized) => return,
            None => {
                let specifier = self
                    .code
                    .text(it.source.span())
                    .map_or_else(|| "…".to_owned(), shorten);
                let example = self.authorized.first().map_or("name", String::as_str);
                Diagnostic::error(
                    RULE,
                    format!("Import specifier must be a string literal: import({specifier}). Allowed: {allowed}"),
                )
                .with_fix(format!(
                    "Write the module name literally, e.g. await import('{example}'), so it can be checked against authorizedImports."
                ))
            }
        };
        self.found.push(diagnostic.at(self.code.location(it.span)));
    }
}

/// The module name of a specifier written as a literal: `'x'`, `"x"` or `` `x` ``.
fn literal<'s>(specifier: &'s Expression) -> Option<&'s str> {
    match specifier {
        Expression::StringLiteral(string) => Some(string.value.as_str()),
        Expression::TemplateLiteral(template) if template.expressions.is_empty() => template
            .quasis
            .first()?
            .value
            .cooked
            .as_ref()
            .map(|cooked| cooked.as_str()),
        _ => None,
    }
}

/// `text`, cut to [`MAX_QUOTED_CHARS`] characters.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::{Diagnostic, Location};
    use crate::program::rules::tests::check_with;
    use crate::program::ProgramContext;

    fn check(code: &str, authorized: &[&str]) -> Vec<Diagnostic> {
        let context = ProgramContext {
            authorized_imports: authorized.iter().map(|name| (*name).to_owned()).collect(),
            ..ProgramContext::default()
        };
        check_with(code, &context, super::check)
    }

    fn messages(code: &str, authorized: &[&str]) -> Vec<String> {
        check(code, authorized)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn an_authorized_module_passes() {
        assert!(messages("const m = await import('x-ok')", &["x-ok"]).is_empty());
        assert!(messages("await import(\"x-ok\")", &["y", "x-ok"]).is_empty());
    }

    #[test]
    fn an_unauthorized_module_is_refused_with_the_allowed_list() {
        assert_eq!(
            messages("await import('fs')", &["x-ok"]),
            ["Import not allowed: 'fs'. Allowed: x-ok"]
        );
        assert_eq!(
            messages("await import('fs')", &["a", "b"]),
            ["Import not allowed: 'fs'. Allowed: a, b"]
        );
        assert_eq!(
            messages("await import('fs')", &[]),
            ["Import not allowed: 'fs'. Allowed: none"]
        );
    }

    #[test]
    fn names_must_match_exactly() {
        assert_eq!(messages("import('node:fs')", &["fs"]).len(), 1);
        assert_eq!(messages("import('x-ok/sub')", &["x-ok"]).len(), 1);
        assert_eq!(messages("import('X-OK')", &["x-ok"]).len(), 1);
    }

    #[test]
    fn a_template_without_substitutions_is_a_literal() {
        assert!(messages("await import(`x`)", &["x"]).is_empty());
        assert_eq!(
            messages("await import(`y`)", &["x"]),
            ["Import not allowed: 'y'. Allowed: x"]
        );
    }

    #[test]
    fn a_computed_specifier_is_refused() {
        assert_eq!(
            messages("const name = 'x';\nawait import(name)", &["x"]),
            ["Import specifier must be a string literal: import(name). Allowed: x"]
        );
        assert_eq!(
            messages("import(`${a}`); import('a' + b)", &[]),
            [
                "Import specifier must be a string literal: import(`${a}`). Allowed: none",
                "Import specifier must be a string literal: import('a' + b). Allowed: none"
            ]
        );
        let long = format!("import(f({}))", "a".repeat(60));
        let message = &messages(&long, &[])[0];
        assert!(
            message.contains(&format!("import(f({}…)", "a".repeat(38))),
            "{message}"
        );
    }

    #[test]
    fn the_wildcard_allows_anything() {
        assert!(messages("import('fs'); import(name); import(`${a}`)", &["*"]).is_empty());
    }

    #[test]
    fn imports_are_found_at_any_depth() {
        let code = "function f() { return () => import('a') }\nclass C { async m() { await import('b') } }\nif (x) { import(import('c')) }";
        assert_eq!(
            messages(code, &["c"]),
            [
                "Import not allowed: 'a'. Allowed: c",
                "Import not allowed: 'b'. Allowed: c",
                "Import specifier must be a string literal: import(import('c')). Allowed: c"
            ]
        );
    }

    #[test]
    fn the_location_is_the_import_and_there_is_a_fix() {
        let found = check("const a = 1;\nconst m = await import('fs')", &[]);
        assert_eq!(
            found[0].location,
            Some(Location {
                line: 2,
                column: 17
            })
        );
        assert!(found[0].fix.is_some());
        assert!(found[0].is_error());
    }
}
