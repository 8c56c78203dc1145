//! The rewrite of §2.2 TRANSFORM: loop guards (§6.3) and the run's result (the last
//! expression's value, or a top-level `return`'s). Nothing else changes: the user's statements
//! stay where they are, so that they mean what they mean in a global script (DESIGN.md "Script
//! semantics first").
//!
//! The parsed program is the wrapper function of `parse.rs`; its body becomes a global script,
//! which the engine evaluates as a REPL input with top-level `await` and `return` (see
//! `engine/script.rs`):
//!
//! ```text
//! "use strict";                        // the user's directives, if any
//! const x = 1;                         // declarations as written: global lexical bindings
//! while (c) { __smol_guard(); … }
//! if (done) return __smol_result(v);   // was `return v`
//! return __smol_result(x + 1);         // was the last expression statement `x + 1`
//! ```
//!
//! `__smol_result` hands its argument back; the script's promise settles with what `return`
//! gives it (a Promise awaited, as an async function awaits what it returns), and that value
//! is the run's output.

#[cfg(feature = "bench-internals")]
use std::sync::atomic::{AtomicBool, Ordering};

use oxc_allocator::{Allocator, ArenaBox, ArenaVec, CloneIn, TakeIn};
use oxc_ast::ast::{Argument, Expression, Program, Statement};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{walk_mut, VisitMut};
use oxc_span::{GetSpan, Span, SPAN};
use oxc_syntax::scope::ScopeFlags;

use super::{GUARD_FUNCTION, RESULT_FUNCTION};

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
        function_depth: 0,
    };
    instrument.visit_statements(&mut statements);

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

/// Whether [`Instrument`] adds loop guards; only `program::loop_guards_for_benchmarks` clears it.
#[cfg(feature = "bench-internals")]
pub(super) static LOOP_GUARDS: AtomicBool = AtomicBool::new(true);

/// Adds the loop guard to every loop, and marks the value of a top-level `return` as the
/// result.
struct Instrument<'a> {
    builder: AstBuilder<'a>,
    /// How many functions enclose the node being visited; `return` at depth 0 is the user's
    /// top-level return.
    function_depth: u32,
}

impl<'a> Instrument<'a> {
    /// Prepends `__smol_guard();` to a loop body, making the body a block if it is not one.
    /// The loop head is untouched, so `for (let …)` keeps its per-iteration bindings and labels
    /// keep pointing at the loop.
    fn guard(&self, body: &mut Statement<'a>) {
        #[cfg(feature = "bench-internals")]
        if !LOOP_GUARDS.load(Ordering::Relaxed) {
            return;
        }
        let guard = Statement::new_expression_statement(
            SPAN,
            call(SPAN, GUARD_FUNCTION, None, &self.builder),
            &self.builder,
        );
        if let Statement::BlockStatement(block) = body {
            block.body.insert(0, guard);
        } else {
            let inner = body.take_in(&self.builder);
            let span = inner.span();
            *body = Statement::new_block_statement(
                span,
                ArenaVec::from_iter_in([guard, inner], &self.builder),
                &self.builder,
            );
        }
    }
}

impl<'a> VisitMut<'a> for Instrument<'a> {
    fn visit_function(&mut self, it: &mut oxc_ast::ast::Function<'a>, flags: ScopeFlags) {
        self.function_depth += 1;
        walk_mut::walk_function(self, it, flags);
        self.function_depth -= 1;
    }

    fn visit_arrow_function_expression(
        &mut self,
        it: &mut oxc_ast::ast::ArrowFunctionExpression<'a>,
    ) {
        self.function_depth += 1;
        walk_mut::walk_arrow_function_expression(self, it);
        self.function_depth -= 1;
    }

    fn visit_statement(&mut self, it: &mut Statement<'a>) {
        walk_mut::walk_statement(self, it);
        if self.function_depth > 0 {
            return;
        }
        if let Statement::ReturnStatement(ret) = it {
            // `return v` → `return __smol_result(v)`: the value is the run's output.
            if let Some(value) = ret.argument.take() {
                ret.argument = Some(call(ret.span, RESULT_FUNCTION, Some(value), &self.builder));
            }
        }
    }

    fn visit_while_statement(&mut self, it: &mut oxc_ast::ast::WhileStatement<'a>) {
        walk_mut::walk_while_statement(self, it);
        self.guard(&mut it.body);
    }

    fn visit_do_while_statement(&mut self, it: &mut oxc_ast::ast::DoWhileStatement<'a>) {
        walk_mut::walk_do_while_statement(self, it);
        self.guard(&mut it.body);
    }

    fn visit_for_statement(&mut self, it: &mut oxc_ast::ast::ForStatement<'a>) {
        walk_mut::walk_for_statement(self, it);
        self.guard(&mut it.body);
    }

    fn visit_for_in_statement(&mut self, it: &mut oxc_ast::ast::ForInStatement<'a>) {
        walk_mut::walk_for_in_statement(self, it);
        self.guard(&mut it.body);
    }

    fn visit_for_of_statement(&mut self, it: &mut oxc_ast::ast::ForOfStatement<'a>) {
        walk_mut::walk_for_of_statement(self, it);
        self.guard(&mut it.body);
    }
}

/// Adds the loop guard to every loop of a registered module's source: the only rewrite modules
/// get (they are ES modules, with their own scope and no output).
pub(super) fn guard_module<'a>(allocator: &'a Allocator, program: &mut Program<'a>) {
    let mut instrument = Instrument {
        builder: AstBuilder::new(allocator),
        function_depth: 0,
    };
    instrument.visit_program(program);
}
