//! The rewrite of §2.2 TRANSFORM: the run's result (the last expression's value, or a top-level
//! `return`'s). Nothing else changes: the user's statements stay where they are, so that they mean
//! what they mean in a global script (docs/contract.md "Script semantics first"); where the
//! parentheses the parse drops kept a function anonymous, it stays so (`function_names.rs`). The
//! loop guard (§6.3) is not a rewrite: QuickJS compiles it into every loop body itself (the
//! engine's `quickjs::loop_guard::install_loop_guard`, QuickJS patch 0600), so no name lookup or call per
//! iteration is needed and no code can bypass it.
//!
//! The parsed program is the wrapper function of `parse.rs`; its body becomes a global script,
//! which the engine evaluates as a REPL input with top-level `await` and `return` (see
//! `engine/run/script.rs`):
//!
//! ```text
//! "use strict";                        // the user's directives, if any
//! const x = 1;                         // declarations as written: global lexical bindings
//! while (c) { … }                      // as written: QuickJS guards loops (patch 0600)
//! if (done) return __smol_result(v);   // was `return v`
//! return __smol_result(x + 1);         // was the last expression statement `x + 1`
//! ```
//!
//! `__smol_result` hands its argument back; the script's promise settles with what `return`
//! gives it (a Promise awaited, as an async function awaits what it returns), and that value
//! is the run's output.

use oxc_allocator::{Allocator, ArenaBox, ArenaVec, CloneIn, TakeIn};
use oxc_ast::ast::{Argument, Expression, Program, Statement};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{walk_mut, VisitMut};
use oxc_span::{Span, SPAN};
use oxc_syntax::scope::ScopeFlags;

use super::function_names::KeepAnonymous;
use super::RESULT_FUNCTION;

/// Rewrites `program` (the intact wrapper of `parse.rs`) in place into the global script
/// described in the module documentation.
pub(super) fn rewrite<'a>(allocator: &'a Allocator, program: &mut Program<'a>) {
    let builder = &AstBuilder::new(allocator);
    let Some(Statement::FunctionDeclaration(wrapper)) = program.body.first_mut() else {
        return;
    };
    let Some(body) = wrapper.body.as_mut() else {
        return;
    };
    let directives = body.directives.take_in(&allocator);
    let mut statements = body.statements.take_in(&allocator);

    let mut instrument = Instrument {
        builder: AstBuilder::new(allocator),
    };
    instrument.visit_statements(&mut statements);
    KeepAnonymous {
        builder: AstBuilder::new(allocator),
    }
    .visit_statements(&mut statements);

    if !capture_last_expression(&mut statements, builder) {
        // Code whose only values are string literals is all directive prologue (`"ready"`, or
        // `"use strict"` and function declarations); its value is the last string, as a REPL
        // shows it.
        if let Some(directive) = directives.last() {
            let value = Expression::StringLiteral(ArenaBox::new_in(
                directive.expression.clone_in(allocator),
                &allocator,
            ));
            statements.push(result_statement(directive.span, value, builder));
        }
    }
    program.directives = directives;
    program.body = statements;
}

/// Turns the last statement, when it is an expression statement, into
/// `return __smol_result(expr)`. Function declarations after it do not count: they are hoisted,
/// and give the script no completion value. Returns false when there is no statement but
/// function declarations.
fn capture_last_expression<'a>(
    statements: &mut ArenaVec<'a, Statement<'a>>,
    builder: &AstBuilder<'a>,
) -> bool {
    let last = statements.iter_mut().rev().find(|statement| {
        !matches!(
            statement,
            Statement::EmptyStatement(_) | Statement::FunctionDeclaration(_)
        )
    });
    let Some(statement) = last else {
        return false;
    };
    if let Statement::ExpressionStatement(expression) = statement {
        let span = expression.span;
        let value = expression.expression.take_in(builder);
        *statement = result_statement(span, value, builder);
    }
    true
}

/// `return __smol_result(value);`.
fn result_statement<'a>(
    span: Span,
    value: Expression<'a>,
    builder: &AstBuilder<'a>,
) -> Statement<'a> {
    let argument = call(span, RESULT_FUNCTION, Some(value), builder);
    Statement::new_return_statement(span, Some(argument), builder)
}

/// `name()` or `name(argument)`.
fn call<'a>(
    span: Span,
    name: &'static str,
    argument: Option<Expression<'a>>,
    builder: &AstBuilder<'a>,
) -> Expression<'a> {
    let arguments = ArenaVec::from_iter_in(argument.map(Argument::from), builder);
    Expression::new_call_expression(
        span,
        Expression::new_identifier(SPAN, name, builder),
        None,
        arguments,
        false,
        builder,
    )
}

/// Marks the value of a top-level `return` as the result. Functions are not entered: a
/// `return` inside one is the function's own.
struct Instrument<'a> {
    builder: AstBuilder<'a>,
}

impl<'a> VisitMut<'a> for Instrument<'a> {
    fn visit_function(&mut self, _it: &mut oxc_ast::ast::Function<'a>, _flags: ScopeFlags) {}

    fn visit_arrow_function_expression(
        &mut self,
        _it: &mut oxc_ast::ast::ArrowFunctionExpression<'a>,
    ) {
    }

    fn visit_statement(&mut self, it: &mut Statement<'a>) {
        walk_mut::walk_statement(self, it);
        if let Statement::ReturnStatement(ret) = it {
            // `return v` → `return __smol_result(v)`: the value is the run's output.
            if let Some(value) = ret.argument.take() {
                ret.argument = Some(call(ret.span, RESULT_FUNCTION, Some(value), &self.builder));
            }
        }
    }
}
