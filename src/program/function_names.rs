//! Keeps the names functions get as the source gives them. The parse drops parentheses (codegen
//! prints those that precedence needs), and in one place the language gives them meaning the
//! tree no longer shows: an anonymous function or class assigned to an identifier takes the
//! identifier's name (`f = function () {}` → `f.name === "f"`), but not when the identifier is
//! parenthesized (`(f) = function () {}` → `""`, for `=`, `&&=`, `||=` and `??=`; ECMA-262
//! IsIdentifierRef), as raw QuickJS and V8 have it. A destructuring default with a
//! parenthesized target (`[(f) = () => {}] = []`) is left as it is: QuickJS names that function
//! `f` (V8 and the standard do not), and the code means here what it means in QuickJS. Every
//! other parenthesized form keeps its meaning in the tree (a parenthesized optional chain is a
//! `ChainExpression`, a sequence a `SequenceExpression`, `("use strict")` no directive) and is
//! printed back with its parentheses; the differential suite holds each against raw QuickJS
//! (`__test__/conformance/programs/parentheses.js`).
//!
//! Where the parentheses were, the value becomes `(0, value)`: a sequence is no anonymous
//! function definition, so nothing names it, and it evaluates to the same function.

use oxc_allocator::{ArenaVec, TakeIn};
use oxc_ast::ast::{
    AssignmentExpression, AssignmentOperator, AssignmentTarget, Expression, NumberBase,
};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{walk_mut, VisitMut};
use oxc_span::{GetSpan, Span, SPAN};

/// Rewrites every anonymous function definition assigned (`=`, `&&=`, `||=`, `??=`) to a
/// parenthesized identifier in what it visits, so that it stays anonymous.
pub(super) struct KeepAnonymous<'a> {
    pub(super) builder: AstBuilder<'a>,
}

impl<'a> KeepAnonymous<'a> {
    /// `value` → `(0, value)`, over the same span.
    fn unnamed(&self, value: &mut Expression<'a>) {
        let span = value.span();
        let function = value.take_in(&self.builder);
        let zero =
            Expression::new_numeric_literal(SPAN, 0.0, None, NumberBase::Decimal, &self.builder);
        let expressions = ArenaVec::from_iter_in([zero, function], &self.builder);
        *value = Expression::new_sequence_expression(span, expressions, &self.builder);
    }
}

/// Whether `target`, the target of an assignment spanning `assignment`, is an identifier
/// written in parentheses: the parse keeps the identifier's own span, which then starts after
/// the assignment's.
fn parenthesized_identifier(target: &AssignmentTarget<'_>, assignment: Span) -> bool {
    matches!(target, AssignmentTarget::AssignmentTargetIdentifier(identifier)
        if identifier.span.start != assignment.start)
}

impl<'a> VisitMut<'a> for KeepAnonymous<'a> {
    fn visit_assignment_expression(&mut self, it: &mut AssignmentExpression<'a>) {
        walk_mut::walk_assignment_expression(self, it);
        let names = matches!(
            it.operator,
            AssignmentOperator::Assign
                | AssignmentOperator::LogicalAnd
                | AssignmentOperator::LogicalOr
                | AssignmentOperator::LogicalNullish
        );
        if names
            && parenthesized_identifier(&it.left, it.span)
            && it.right.is_anonymous_function_definition()
        {
            self.unnamed(&mut it.right);
        }
    }
}
