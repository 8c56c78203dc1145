//! The top-level shape of agent code, as the differential suite (`engine/tests/conformance`) needs
//! it to run the same program as plain scripts: where its statements start, whether it gives a
//! value, whether it awaits at the top level. Parsed in the executor's own grammar (the body of an
//! async function, `parse.rs`), JavaScript only.
//!
//! docs/contract.md "Script semantics first" and "Output" (which statement gives the run's value).

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    ArrowFunctionExpression, AwaitExpression, Class, ForOfStatement, Function, FunctionBody,
    Statement,
};
use oxc_ast_visit::{walk, Visit};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::scope::ScopeFlags;

use super::parse::{wrap, PREFIX};

/// Runs `with` on the body of `code`'s wrapper, if it parses; `checked` also requires it to
/// pass semantic analysis (early errors).
fn with_body<T>(code: &str, checked: bool, with: impl FnOnce(&FunctionBody) -> T) -> Option<T> {
    let wrapped = wrap(code);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    if checked {
        if !parsed.diagnostics.is_empty() || parsed.panicked {
            return None;
        }
        let semantic = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .build(&parsed.program);
        if !semantic.diagnostics.is_empty() {
            return None;
        }
    }
    let Some(Statement::FunctionDeclaration(function)) = parsed.program.body.first() else {
        return None;
    };
    function.body.as_deref().map(with)
}

/// Where each top-level statement (directives included) of a valid program starts, as byte
/// offsets of `code`; `None` when it is not a valid program.
pub fn split_points(code: &str) -> Option<Vec<usize>> {
    with_body(code, true, |body| {
        body.directives
            .iter()
            .map(|directive| directive.span.start)
            .chain(
                body.statements
                    .iter()
                    .map(|statement| statement.span().start),
            )
            .map(|start| start as usize - PREFIX.len())
            .collect()
    })
}

/// Whether the executor reports a value for `code`: its last statement (function declarations
/// aside) is an expression statement, or it is made only of directives, whose last string is
/// the value.
pub fn gives_value(code: &str) -> bool {
    with_body(code, false, |body| {
        match body.statements.iter().rev().find(|statement| {
            !matches!(
                statement,
                Statement::EmptyStatement(_) | Statement::FunctionDeclaration(_)
            )
        }) {
            Some(statement) => matches!(statement, Statement::ExpressionStatement(_)),
            None => !body.directives.is_empty(),
        }
    })
    .unwrap_or(false)
}

/// Whether `code` uses `await` as an operator at its top level (outside functions): then, as a
/// plain script, it is one with top-level await (elsewhere `await` would be an identifier).
pub fn awaits_at_top_level(code: &str) -> bool {
    struct Finder(bool);
    impl<'a> Visit<'a> for Finder {
        fn visit_await_expression(&mut self, _it: &AwaitExpression<'a>) {
            self.0 = true;
        }
        fn visit_for_of_statement(&mut self, it: &ForOfStatement<'a>) {
            self.0 |= it.r#await;
            walk::walk_for_of_statement(self, it);
        }
        fn visit_function(&mut self, _it: &Function<'a>, _flags: ScopeFlags) {}
        fn visit_arrow_function_expression(&mut self, _it: &ArrowFunctionExpression<'a>) {}
        fn visit_class(&mut self, _it: &Class<'a>) {}
    }
    with_body(code, false, |body| {
        let mut finder = Finder(false);
        finder.visit_statements(&body.statements);
        finder.0
    })
    .unwrap_or(false)
}
