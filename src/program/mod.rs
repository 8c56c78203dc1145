//! The program layer (§2.2 VALIDATE → TRANSFORM, §6): agent code in, diagnostics or a rewritten
//! global script out. It uses oxc only and knows nothing of QuickJS; the engine installs the
//! internal bindings named here.

mod module;
mod parse;
pub mod positions;
mod rewrite;
pub mod rules;
pub mod source;

use std::path::PathBuf;

use oxc_allocator::Allocator;
use oxc_ast::ast::Statement;
use oxc_codegen::{Codegen, CodegenOptions};

use crate::diagnostic::Diagnostic;
pub use module::prepare_module;
use positions::PositionMap;
use source::SourceText;

/// The prefix of every binding the executor injects; user code may not use it (§6.4).
pub const INTERNAL_PREFIX: &str = "__smol_";
/// The loop guard called at the top of every loop body (§6.3).
pub const GUARD_FUNCTION: &str = "__smol_guard";
/// Receives the run's output: the last expression's value, or a top-level `return`'s.
pub const OUTPUT_FUNCTION: &str = "__smol_output";
/// The label of the block holding the user's statements; top-level `return` breaks out of it.
const MAIN_LABEL: &str = "__smol_main";
/// The name of the parse wrapper (see `parse.rs`).
const MAIN_FUNCTION: &str = "__smol_main";
/// The script name the engine evaluates the transformed code under; stack frames carrying it
/// are the user's code.
pub const SCRIPT_NAME: &str = "agent.js";

/// What validation knows besides the code itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramContext {
    /// `authorizedImports` (§5.3); `"*"` allows any module the host registered.
    pub authorized_imports: Vec<String>,
    /// The names of the tools sent so far, which user code may not declare or assign.
    pub tool_names: Vec<String>,
}

/// The result of preparing code (§3.1 `PreparedProgram`), plus what the engine needs to report
/// runtime errors at the user's own positions.
#[derive(Debug, Clone)]
pub struct PreparedProgram {
    pub original_code: String,
    /// The global script to evaluate; empty when a diagnostic blocks the run.
    pub transformed_code: String,
    pub diagnostics: Vec<Diagnostic>,
    pub positions: PositionMap,
    pub source: SourceText,
}

impl PreparedProgram {
    /// Whether an `ERROR` diagnostic blocks execution (§6.1).
    pub fn is_blocked(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Validates and rewrites `code`. Never fails: problems come back as diagnostics.
pub fn prepare(code: &str, context: &ProgramContext) -> PreparedProgram {
    // The context feeds the import and tool-name rules.
    let _ = context;
    let source = SourceText::new(code);
    let blocked = |diagnostics| PreparedProgram {
        original_code: code.to_owned(),
        transformed_code: String::new(),
        diagnostics,
        positions: PositionMap::default(),
        source: source.clone(),
    };
    if let Some(empty) = rules::code_non_empty::check(code) {
        return blocked(vec![empty]);
    }

    let allocator = Allocator::default();
    let wrapped = parse::wrap(code);
    let mut program = match parse::parse(&allocator, &wrapped, &source) {
        Ok(program) => program,
        Err(diagnostics) => return blocked(diagnostics),
    };
    let reserved = match program.body.first() {
        Some(Statement::FunctionDeclaration(wrapper)) => wrapper
            .body
            .as_ref()
            .map(|body| {
                rules::reserved_identifier::check(&body.statements, &source, parse::PREFIX.len())
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if !reserved.is_empty() {
        return blocked(reserved);
    }

    rewrite::rewrite(&allocator, &mut program);
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(PathBuf::from(SCRIPT_NAME)),
            ..CodegenOptions::default()
        })
        .build(&program);
    let positions = generated
        .map
        .as_ref()
        .map(PositionMap::from_source_map)
        .unwrap_or_default();
    PreparedProgram {
        original_code: code.to_owned(),
        transformed_code: generated.code,
        diagnostics: Vec::new(),
        positions,
        source,
    }
}

#[cfg(test)]
mod tests;
