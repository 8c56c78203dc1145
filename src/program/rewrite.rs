//! The rewrite of §2.2 TRANSFORM: loop guards (§6.3), the value of the last expression as the
//! run's output, top-level `return`, and REPL persistence of top-level bindings (DESIGN.md
//! "Persistence").
//!
//! The parsed program is the wrapper function of `parse.rs`; its body becomes a *global script*,
//! which the engine evaluates with top-level await allowed:
//!
//! ```text
//! "use strict";                  // the user's directives, if any
//! function f() {}                // the user's top-level function declarations (hoisted anyway)
//! __smol_main: {                 // the rest of the user's statements
//!   var x = 1;                   // was `const x = 1`: a global, so the next run sees it and may
//!                                // declare `x` again
//!   while (c) { __smol_guard(); … }
//!   { __smol_output(v); break __smol_main; }   // was `return v`
//!   __smol_output(x + 1);        // was the last expression statement `x + 1`
//! }
//! ```
//!
//! A global script keeps what the code means at the top level of a script: `var` and function
//! declarations become globals, `this` is the global object, sloppy mode unless the code says
//! `"use strict"`. Top-level `let`/`const`/`class` become `var` bindings so that a later run may
//! declare them again (as Node's REPL does with top-level `await`); they lose their temporal
//! dead zone and `const` becomes assignable (README "Differences from a plain script").

#[cfg(feature = "bench-internals")]
use std::sync::atomic::{AtomicBool, Ordering};

use oxc_allocator::{Allocator, ArenaBox, ArenaVec, CloneIn, TakeIn};
use oxc_ast::ast::{
    Argument, BindingPattern, ClassType, Expression, LabelIdentifier, Program, Statement,
    VariableDeclarationKind, VariableDeclarator,
};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{walk_mut, VisitMut};
use oxc_span::{GetSpan, Span, SPAN};
use oxc_syntax::scope::ScopeFlags;

use super::{GUARD_FUNCTION, MAIN_LABEL, OUTPUT_FUNCTION};

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

    let mut hoisted = ArenaVec::new_in(&allocator);
    let mut rest = ArenaVec::new_in(&allocator);
    for statement in statements {
        match statement {
            Statement::FunctionDeclaration(_) => hoisted.push(statement),
            other => rest.push(persist_top_level(other, builder)),
        }
    }
    if rest.is_empty() {
        // Code made only of string literals is all directive prologue (`"ready"`); its value is
        // the last string, as a REPL shows it.
        if let Some(directive) = directives.last() {
            let value = Expression::StringLiteral(ArenaBox::new_in(
                directive.expression.clone_in(allocator),
                &allocator,
            ));
            rest.push(Statement::new_expression_statement(
                directive.span,
                value,
                builder,
            ));
        }
    }
    capture_last_expression(&mut rest, builder);

    let main = Statement::new_labeled_statement(
        SPAN,
        LabelIdentifier::new(SPAN, MAIN_LABEL, builder),
        Statement::new_block_statement(SPAN, rest, builder),
        builder,
    );
    hoisted.push(main);
    program.directives = directives;
    program.body = hoisted;
}

/// Makes a top-level declaration a `var` one, so that its binding lives on the global object
/// and a later run may declare it again.
fn persist_top_level<'a>(statement: Statement<'a>, builder: &AstBuilder<'a>) -> Statement<'a> {
    match statement {
        Statement::VariableDeclaration(mut declaration)
            if matches!(
                declaration.kind,
                VariableDeclarationKind::Let | VariableDeclarationKind::Const
            ) =>
        {
            // `let x;` must reset `x` like a fresh declaration would; `var x;` would keep the
            // previous run's value.
            for declarator in &mut declaration.declarations {
                if declarator.init.is_none() {
                    declarator.init = Some(Expression::new_void_0(declarator.span, builder));
                }
            }
            declaration.kind = VariableDeclarationKind::Var;
            Statement::VariableDeclaration(declaration)
        }
        Statement::ClassDeclaration(mut class) => {
            let span = class.span;
            let Some(id) = class.id.as_ref() else {
                return Statement::ClassDeclaration(class);
            };
            let binding = BindingPattern::new_binding_identifier(id.span, id.name, builder);
            class.r#type = ClassType::ClassExpression;
            let declarator = VariableDeclarator::new(
                span,
                binding,
                None,
                Some(Expression::ClassExpression(class)),
                false,
                builder,
            );
            Statement::new_variable_declaration(
                span,
                VariableDeclarationKind::Var,
                ArenaVec::from_iter_in([declarator], builder),
                false,
                builder,
            )
        }
        other => other,
    }
}

/// Turns the last statement, when it is an expression statement, into `__smol_output(expr)`.
fn capture_last_expression<'a>(
    statements: &mut ArenaVec<'a, Statement<'a>>,
    builder: &AstBuilder<'a>,
) {
    let last = statements
        .iter_mut()
        .rev()
        .find(|statement| !matches!(statement, Statement::EmptyStatement(_)));
    if let Some(Statement::ExpressionStatement(statement)) = last {
        let value = statement.expression.take_in(builder);
        statement.expression = output_call(statement.span, value, builder);
    }
}

/// `__smol_output(value)`.
fn output_call<'a>(span: Span, value: Expression<'a>, builder: &AstBuilder<'a>) -> Expression<'a> {
    call(span, OUTPUT_FUNCTION, Some(value), builder)
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

/// Adds the loop guard to every loop, and rewrites top-level `return`.
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
            // `return v` → `{ __smol_output(v); break __smol_main; }`: a labelled break leaves
            // the script through any enclosing `finally` blocks, exactly as `return` would.
            let span = ret.span;
            let value = ret
                .argument
                .take()
                .unwrap_or_else(|| Expression::new_void_0(span, &self.builder));
            let output = Statement::new_expression_statement(
                span,
                output_call(span, value, &self.builder),
                &self.builder,
            );
            let exit = Statement::new_break_statement(
                span,
                Some(LabelIdentifier::new(SPAN, MAIN_LABEL, &self.builder)),
                &self.builder,
            );
            *it = Statement::new_block_statement(
                span,
                ArenaVec::from_iter_in([output, exit], &self.builder),
                &self.builder,
            );
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
