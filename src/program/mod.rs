//! The program layer (§2.2 VALIDATE → TRANSFORM, §6): agent code in, diagnostics or a rewritten
//! global script out. It uses oxc only and knows nothing of QuickJS; the engine installs the
//! internal bindings named here.

mod deep_stack;
mod function_names;
mod module;
mod nul;
mod parse;
pub mod positions;
mod regexp;
mod rewrite;
pub mod rules;
#[cfg(test)]
pub mod shape;
pub mod source;

use std::path::PathBuf;

use oxc_allocator::Allocator;
use oxc_ast::ast::{Program, Statement};
use oxc_ast::AstKind;
use oxc_ast_visit::Visit;
use oxc_codegen::{Codegen, CodegenOptions};

use crate::diagnostic::{Diagnostic, Location};
pub use module::prepare_module;
/// JS's own name rules, for code this crate writes outside `program` (the prompt's tool
/// signatures), which should not reach for oxc itself.
pub use oxc_syntax::{identifier::is_identifier_name, keyword::is_reserved_keyword};
use positions::PositionMap;
use rules::Code;
use source::SourceText;

/// The prefix of every binding the executor injects; user code may not use it (§6.4).
pub const INTERNAL_PREFIX: &str = "__smol_";
/// Marks the run's result: the last expression's value, or a top-level `return`'s (which the
/// rewrite returns through it).
pub const RESULT_FUNCTION: &str = "__smol_result";
/// The name user code calls to finish (§5.4); like a tool, user code may not replace it.
pub const FINAL_ANSWER: &str = "final_answer";
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
    /// Whether the sandbox has `setTimeout`, `setInterval` and their `clear*` (the executor's
    /// `timers` option): then they are not reported as missing host globals.
    pub timers: bool,
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
    /// Each top-level binding the code declares, and where (the user's position): a run whose
    /// declaration clashes with an earlier run's names the declaration's line.
    pub declarations: Vec<(String, Location)>,
}

impl PreparedProgram {
    /// Where the code declares `name` at its top level.
    pub fn declaration(&self, name: &str) -> Option<Location> {
        self.declarations
            .iter()
            .find(|(declared, _)| declared == name)
            .map(|&(_, location)| location)
    }
}

impl PreparedProgram {
    /// Whether an `ERROR` diagnostic blocks execution (§6.1).
    pub fn is_blocked(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// [`prepare`] from a thread whose stack is `stack_bytes`: code longer than that stack safely
/// holds is prepared on a thread with a deep stack (see `deep_stack`), so no input can
/// overflow the caller's.
pub fn prepare_safely(code: &str, context: &ProgramContext, stack_bytes: usize) -> PreparedProgram {
    deep_stack::run(
        code.len(),
        deep_stack::inline_limit(stack_bytes),
        || prepare(code, context),
        |why| PreparedProgram {
            original_code: code.to_owned(),
            transformed_code: String::new(),
            diagnostics: vec![Diagnostic::error(rules::code_size_valid::RULE, why)],
            positions: PositionMap::default(),
            source: SourceText::new(code),
            declarations: Vec::new(),
        },
    )
}

/// [`prepare_module`] from a thread whose stack is `stack_bytes` (see [`prepare_safely`]).
pub fn prepare_module_safely(source: &str, stack_bytes: usize) -> Result<String, Vec<Diagnostic>> {
    deep_stack::run(
        source.len(),
        deep_stack::inline_limit(stack_bytes),
        || prepare_module(source),
        |why| Err(vec![Diagnostic::error(rules::code_size_valid::RULE, why)]),
    )
}

/// Validates and rewrites `code`. Never fails: problems come back as diagnostics, all of them,
/// and only an `ERROR` among them leaves the program untransformed.
pub fn prepare(code: &str, context: &ProgramContext) -> PreparedProgram {
    let source = SourceText::new(code);
    let blocked = |diagnostics| PreparedProgram {
        original_code: code.to_owned(),
        transformed_code: String::new(),
        diagnostics,
        positions: PositionMap::default(),
        source: source.clone(),
        declarations: Vec::new(),
    };
    if let Some(refused) =
        rules::code_non_empty::check(code).or_else(|| rules::code_size_valid::check(code))
    {
        return blocked(vec![refused]);
    }

    let allocator = Allocator::default();
    let wrapped = parse::wrap(code);
    let (mut program, scoping) = match parse::parse(&allocator, &wrapped, &source) {
        Ok(parsed) => parsed,
        Err(syntax_errors) => {
            let diagnostics = rules::static_import_in_script_mode::check(code, &source, context)
                .unwrap_or(syntax_errors);
            return blocked(diagnostics);
        }
    };
    let diagnostics = match Code::of(&program, &scoping, &source, parse::PREFIX.len()) {
        Some(user) => {
            let mut diagnostics =
                rules::reserved_identifier::check(user.statements, user.source, user.offset);
            diagnostics.extend(rules::import_allowed::check(&user, context));
            diagnostics.extend(rules::tool_name_shadowing::check(&user, context));
            diagnostics.extend(rules::forbidden_global_access::check(&user, context));
            diagnostics.extend(rules::with_statement_forbidden::check(&user));
            // Code made of one repeated mistake would otherwise report without bound; errors
            // sort first so that truncation never hides what blocks the run.
            diagnostics.sort_by_key(|diagnostic| diagnostic.severity);
            diagnostics.truncate(MAX_DIAGNOSTICS);
            diagnostics
        }
        None => Vec::new(),
    };
    if diagnostics.iter().any(Diagnostic::is_error) {
        return blocked(diagnostics);
    }

    let declarations = top_level_declarations(&program, &source);
    rewrite::rewrite(&allocator, &mut program);
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(PathBuf::from(SCRIPT_NAME)),
            indent_width: indent_width(&program),
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
        transformed_code: nul::escape(generated.code),
        diagnostics,
        positions,
        source,
        declarations,
    }
}

/// The names the wrapper's body (the user's code) declares at its top level, with where.
fn top_level_declarations(program: &Program, source: &SourceText) -> Vec<(String, Location)> {
    let Some(Statement::FunctionDeclaration(wrapper)) = program.body.first() else {
        return Vec::new();
    };
    let Some(body) = wrapper.body.as_ref() else {
        return Vec::new();
    };
    let at = |span: oxc_span::Span| {
        source.location((span.start as usize).saturating_sub(parse::PREFIX.len()))
    };
    let mut declared = Vec::new();
    for statement in &body.statements {
        match statement {
            Statement::VariableDeclaration(declaration) => {
                for declarator in &declaration.declarations {
                    for ident in declarator.id.get_binding_identifiers() {
                        declared.push((ident.name.to_string(), at(ident.span)));
                    }
                }
            }
            Statement::FunctionDeclaration(function) => {
                if let Some(ident) = &function.id {
                    declared.push((ident.name.to_string(), at(ident.span)));
                }
            }
            Statement::ClassDeclaration(class) => {
                if let Some(ident) = &class.id {
                    declared.push((ident.name.to_string(), at(ident.span)));
                }
            }
            _ => {}
        }
    }
    declared
}

/// At most this many rule findings are reported for one program.
const MAX_DIAGNOSTICS: usize = 100;

/// Programs whose syntax tree is deeper than this print without indentation.
const MAX_INDENTED_DEPTH: usize = 256;

/// The indentation of the transformed code: one tab per level, which keeps it readable, except
/// for pathologically deep programs. Indenting each line by its depth makes the output grow
/// with the square of the depth (gigabytes, and seconds of codegen, for 65 000 nested blocks or
/// `if`s); without indentation it stays linear.
fn indent_width(program: &Program) -> usize {
    /// Measures the deepest nesting of the tree (runs on the same deep stack as the rest).
    struct Depth {
        current: usize,
        deepest: usize,
    }
    impl<'a> Visit<'a> for Depth {
        fn enter_node(&mut self, _kind: AstKind<'a>) {
            self.current += 1;
            self.deepest = self.deepest.max(self.current);
        }
        fn leave_node(&mut self, _kind: AstKind<'a>) {
            self.current -= 1;
        }
    }
    let mut depth = Depth {
        current: 0,
        deepest: 0,
    };
    depth.visit_program(program);
    usize::from(depth.deepest <= MAX_INDENTED_DEPTH)
}

#[cfg(test)]
mod tests;
