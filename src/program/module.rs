//! Registered module sources (`ExecutorOptions.modules`): parsed as ES modules (TypeScript
//! accepted), checked for reserved names, and given loop guards like agent code, so that code a
//! module runs cannot escape `maxOperations` either.
//!
//! Spec: §5.3 (import policy) and §6.3 (guards in module code too).

use oxc_allocator::Allocator;
use oxc_codegen::Codegen;
use oxc_parser::ParseOptions;

use super::parse::{analyse, parse_source, Goal};
use super::rewrite::guard_module;
use super::rules::reserved_identifier;
use super::source::SourceText;
use crate::diagnostic::Diagnostic;

/// The guarded source of a registered module, or why it cannot be loaded.
pub fn prepare_module(source: &str) -> Result<String, Vec<Diagnostic>> {
    let text = SourceText::new(source);
    let allocator = Allocator::default();
    let (mut program, typescript) = parse_source(
        &allocator,
        source,
        Goal::Module,
        ParseOptions::default(),
        &text,
        0,
    )?;
    analyse(&allocator, &mut program, typescript, &text, 0)?;
    let reserved = reserved_identifier::check(&program.body, &text, 0);
    if !reserved.is_empty() {
        return Err(reserved);
    }
    guard_module(&allocator, &mut program);
    Ok(super::nul::escape(Codegen::new().build(&program).code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loop_of_a_module_is_guarded() {
        let code =
            prepare_module("export function spin() { while (true) {} }\nfor (const x of []) {}")
                .unwrap();
        assert_eq!(code.matches("__smol_guard()").count(), 2, "{code}");
        assert!(code.contains("export function spin"));
    }

    #[test]
    fn typescript_modules_are_stripped() {
        let code = prepare_module("export const n: number = 1;\nexport type T = string;").unwrap();
        assert!(code.contains("export const n = 1"), "{code}");
        assert!(!code.contains("type T"));
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
