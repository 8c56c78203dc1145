//! `static_import_in_script_mode` (ERROR): agent code runs as a script (§5.3), where `import … from`
//! and `export` are syntax errors. A bare syntax error would leave the model guessing, so code
//! that fails to parse as a script but parses as a module with import or export statements gets
//! one diagnostic per such statement instead, saying what to write. This holds even for an
//! authorized module (CF-05): only the dynamic form is checked against `authorizedImports` and
//! loaded.

use oxc_allocator::Allocator;
use oxc_ast::ast::{ImportDeclaration, ImportDeclarationSpecifier, ModuleDeclaration, Program};
use oxc_parser::ParseOptions;
use oxc_span::GetSpan;

use crate::diagnostic::Diagnostic;
use crate::modules::{allowed_list, is_authorized};
use crate::program::parse::{parse_source, Goal};
use crate::program::source::SourceText;
use crate::program::ProgramContext;

/// The rule id.
pub const RULE: &str = "static_import_in_script_mode";

/// Parses `code` (the user's original code, which failed to parse as a script) as a module, as
/// JavaScript and then as TypeScript. When that succeeds and the module has import or export
/// statements, returns their diagnostics, which replace the script's syntax errors; otherwise
/// `None`, and the syntax errors stand.
pub fn check(code: &str, source: &SourceText, context: &ProgramContext) -> Option<Vec<Diagnostic>> {
    let allocator = Allocator::default();
    let options = ParseOptions {
        allow_return_outside_function: true,
        ..ParseOptions::default()
    };
    let (module, _) = parse_source(&allocator, code, Goal::Module, options, source, 0).ok()?;
    let found = report(&module, source, context);
    (!found.is_empty()).then_some(found)
}

fn report(program: &Program, source: &SourceText, context: &ProgramContext) -> Vec<Diagnostic> {
    program
        .body
        .iter()
        .filter_map(|statement| statement.as_module_declaration())
        .map(|declaration| {
            let diagnostic = match declaration {
                ModuleDeclaration::ImportDeclaration(import) => {
                    let name = import.source.value.as_str();
                    Diagnostic::error(
                        RULE,
                        format!("Static import is not allowed: '{name}'. Use await import('{name}') if it is authorized"),
                    )
                    .with_fix(import_fix(import, context))
                }
                ModuleDeclaration::ExportDeclaration(_) => {
                    Diagnostic::error(RULE, "export is not allowed in agent code").with_fix(
                        "Remove the `export` keyword: a top-level declaration is kept for later runs as it is.",
                    )
                }
                _ => Diagnostic::error(RULE, "export is not allowed in agent code").with_fix(
                    "Remove this statement: agent code is not a module. The last expression is the run's output; call final_answer(value) to give the answer.",
                ),
            };
            diagnostic.at(source.location(declaration.span().start as usize))
        })
        .collect()
}

/// The dynamic import that replaces `import`, and whether it would pass `import_allowed`.
fn import_fix(import: &ImportDeclaration, context: &ProgramContext) -> String {
    let name = import.source.value.as_str();
    if import.import_kind.is_type() {
        return "Remove this type-only import: leave the annotation out or declare the type in the code.".into();
    }
    let replacement = dynamic_import(import);
    if is_authorized(&context.authorized_imports, name) {
        format!("Write `{replacement}` instead.")
    } else {
        format!(
            "'{name}' is not authorized either (allowed: {}): remove the import, or once it is authorized write `{replacement}`.",
            allowed_list(&context.authorized_imports)
        )
    }
}

/// `import d, { a, b as c } from 'm'` as `const { default: d, a, b: c } = await import('m')`.
fn dynamic_import(import: &ImportDeclaration) -> String {
    let call = format!("await import('{}')", import.source.value);
    let specifiers = import
        .specifiers
        .as_ref()
        .map_or(&[][..], |specifiers| specifiers.as_slice());
    let mut default = None;
    let mut namespace = None;
    let mut named = Vec::new();
    for specifier in specifiers {
        match specifier {
            ImportDeclarationSpecifier::ImportDefaultSpecifier(it) => {
                default = Some(&it.local.name)
            }
            ImportDeclarationSpecifier::ImportNamespaceSpecifier(it) => {
                namespace = Some(&it.local.name);
            }
            ImportDeclarationSpecifier::ImportSpecifier(it) => {
                let local = it.local.name.as_str();
                named.push(match it.imported.identifier_name() {
                    Some(imported) if imported == local => local.to_owned(),
                    Some(imported) => format!("{imported}: {local}"),
                    None => {
                        let quoted =
                            serde_json::to_string(it.imported.name().as_str()).unwrap_or_default();
                        format!("{quoted}: {local}")
                    }
                });
            }
        }
    }
    match (namespace, default) {
        (Some(namespace), Some(default)) => {
            format!("const {namespace} = {call}; const {default} = {namespace}.default;")
        }
        (Some(namespace), None) => format!("const {namespace} = {call};"),
        (None, _) if default.is_none() && named.is_empty() => format!("{call};"),
        (None, default) => {
            let fields: Vec<String> = default
                .map(|default| format!("default: {default}"))
                .into_iter()
                .chain(named)
                .collect();
            format!("const {{ {} }} = {call};", fields.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Location;

    fn check_code(code: &str, authorized: &[&str]) -> Option<Vec<Diagnostic>> {
        let context = ProgramContext {
            authorized_imports: authorized.iter().map(|name| (*name).to_owned()).collect(),
            ..ProgramContext::default()
        };
        check(code, &SourceText::new(code), &context)
    }

    fn fixes(code: &str, authorized: &[&str]) -> Vec<String> {
        check_code(code, authorized)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|d| d.fix)
            .collect()
    }

    #[test]
    fn every_import_and_export_statement_is_reported_where_it_is() {
        let found = check_code(
            "import fs from 'node:fs';\nimport './side';\nexport const a = 1;\nexport default a;\nexport { a as b };\nexport * from 'm';",
            &[],
        )
        .expect("reported");
        let summary: Vec<_> = found
            .iter()
            .map(|d| (d.message.as_str(), d.location.map(|l| l.line)))
            .collect();
        assert_eq!(
            summary,
            [
                ("Static import is not allowed: 'node:fs'. Use await import('node:fs') if it is authorized", Some(1)),
                ("Static import is not allowed: './side'. Use await import('./side') if it is authorized", Some(2)),
                ("export is not allowed in agent code", Some(3)),
                ("export is not allowed in agent code", Some(4)),
                ("export is not allowed in agent code", Some(5)),
                ("export is not allowed in agent code", Some(6)),
            ]
        );
        assert!(found
            .iter()
            .all(|d| d.is_error() && d.rule == RULE && d.fix.is_some()));
    }

    #[test]
    fn an_authorized_module_is_still_refused_statically() {
        let found = check_code("import { a } from 'x-ok';\na()", &["x-ok"]).expect("reported");
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].fix.as_deref(),
            Some("Write `const { a } = await import('x-ok');` instead.")
        );
        assert!(check_code("import x from 'any'", &["*"]).is_some());
    }

    #[test]
    fn the_fix_spells_out_the_dynamic_import() {
        assert_eq!(
            fixes("import d, { a, b as c, 'x-y' as z } from 'm'", &["m"]),
            ["Write `const { default: d, a, b: c, \"x-y\": z } = await import('m');` instead."]
        );
        assert_eq!(
            fixes("import * as ns from 'm'", &["m"]),
            ["Write `const ns = await import('m');` instead."]
        );
        assert_eq!(
            fixes("import d, * as ns from 'm'", &["m"]),
            ["Write `const ns = await import('m'); const d = ns.default;` instead."]
        );
        assert_eq!(
            fixes("import 'm'", &["m"]),
            ["Write `await import('m');` instead."]
        );
        assert_eq!(
            fixes("import fs from 'fs'", &["a"]),
            ["'fs' is not authorized either (allowed: a): remove the import, or once it is authorized write `const { default: fs } = await import('fs');`."]
        );
    }

    #[test]
    fn module_code_with_top_level_await_and_return_is_understood() {
        let found = check_code("import x from 'm';\nconst v = await x();\nreturn v", &[]);
        assert_eq!(found.map(|found| found.len()), Some(1));
    }

    #[test]
    fn typescript_modules_are_understood() {
        let found =
            check_code("import type { T } from 'm';\nconst v: T = 1", &[]).expect("reported");
        assert_eq!(found.len(), 1);
        assert!(found[0]
            .fix
            .as_deref()
            .is_some_and(|fix| fix.contains("type-only")));
    }

    #[test]
    fn locations_count_utf16_columns_and_crlf_lines() {
        let found = check_code("const s = 'é😀';\r\n  import a from 'm'", &[]).expect("reported");
        assert_eq!(found[0].location, Some(Location { line: 2, column: 3 }));
        let found = check_code("'é😀'; export const a = 1", &[]).expect("reported");
        assert_eq!(found[0].location, Some(Location { line: 1, column: 8 }));
    }

    #[test]
    fn other_syntax_errors_are_left_to_syntax_valid() {
        assert!(check_code("import x from 'm';\nconst = 1", &[]).is_none());
        assert!(check_code("const = 1", &[]).is_none());
        // Parses as a module, but without a module declaration: not this rule's finding.
        assert!(check_code("import.meta.url", &[]).is_none());
    }
}
