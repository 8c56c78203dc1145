//! Registered module sources (`ExecutorOptions.modules`): parsed as ES modules (TypeScript
//! accepted) and checked for reserved names. Their loops are guarded like agent code's, so that
//! code a module runs cannot escape `maxOperations` either: QuickJS compiles the guard into every
//! loop body of the engine's runtime (patch 0600), modules included.
//!
//! Spec: §5.3 (import policy) and §6.3 (guards in module code too).

use oxc_allocator::Allocator;
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::VisitMut;
use oxc_codegen::Codegen;

use super::function_names::KeepAnonymous;
use super::parse::{analyse, parse_options, parse_source, Goal};
use super::rules::reserved_identifier;
use super::source::SourceText;
use crate::diagnostic::Diagnostic;

/// The source of a registered module as QuickJS runs it (TypeScript stripped), or why it
/// cannot be loaded.
pub fn prepare_module(source: &str) -> Result<String, Vec<Diagnostic>> {
    let text = SourceText::new(source);
    let allocator = Allocator::default();
    let (mut program, typescript) =
        parse_source(&allocator, source, Goal::Module, parse_options(), &text, 0)?;
    super::regexp::check(&program, source, &text, 0)?;
    analyse(&allocator, &mut program, typescript, &text, 0)?;
    let reserved = reserved_identifier::check(&program.body, &text, 0);
    if !reserved.is_empty() {
        return Err(reserved);
    }
    KeepAnonymous {
        builder: AstBuilder::new(&allocator),
    }
    .visit_program(&mut program);
    Ok(super::nul::escape(Codegen::new().build(&program).code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typescript_modules_are_stripped() {
        let code = prepare_module("export const n: number = 1;\nexport type T = string;").unwrap();
        assert!(code.contains("export const n = 1"), "{code}");
        assert!(!code.contains("type T"));
    }

    #[test]
    fn a_function_assigned_to_a_parenthesized_name_stays_anonymous() {
        let code = prepare_module("let f; (f) = function () {}; export const g = f;").unwrap();
        assert!(code.contains("f = (0, function() {})"), "{code}");
    }

    #[test]
    fn syntax_errors_and_reserved_names_are_refused() {
        assert_eq!(
            prepare_module("export const = 1").unwrap_err()[0].rule,
            "syntax_valid"
        );
        assert_eq!(
            prepare_module("export const __smol_guard = 1").unwrap_err()[0].rule,
            "reserved_identifier"
        );
    }
}
