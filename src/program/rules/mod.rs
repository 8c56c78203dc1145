//! Validation rules over code (§6.2, Appendix B), one module per rule. `syntax_valid` is the
//! parse itself (`super::parse`); the option rules live with the options (`crate::options::rules`).

pub mod code_non_empty;
pub mod code_size_valid;
pub mod forbidden_global_access;
pub mod import_allowed;
pub mod reserved_identifier;
pub mod static_import_in_script_mode;
pub mod tool_name_shadowing;
pub mod with_statement_forbidden;

use oxc_ast::ast::{IdentifierReference, Program, Statement};
use oxc_ast_visit::Visit;
use oxc_semantic::{Reference, ScopeId, Scoping};
use oxc_span::Span;

use super::source::SourceText;
use crate::diagnostic::Location;

/// The user's code as the rules over a successfully parsed program see it.
pub struct Code<'p, 'a> {
    /// The user's statements: the body of the parse wrapper.
    pub statements: &'p [Statement<'a>],
    /// The scoping of the wrapped program; every reference of `statements` carries its id.
    pub scoping: &'p Scoping,
    /// The wrapper function's scope: the user's top-level bindings live there, not in the
    /// program's root scope.
    pub top_level: ScopeId,
    /// The user's original code.
    pub source: &'p SourceText,
    /// How far spans are shifted from positions in `source` (the wrapper's opening line).
    pub offset: usize,
}

impl<'p, 'a> Code<'p, 'a> {
    /// The user's code inside `program`, the intact wrapper of `super::parse`.
    pub fn of(
        program: &'p Program<'a>,
        scoping: &'p Scoping,
        source: &'p SourceText,
        offset: usize,
    ) -> Option<Self> {
        let Some(Statement::FunctionDeclaration(wrapper)) = program.body.first() else {
            return None;
        };
        Some(Self {
            statements: &wrapper.body.as_ref()?.statements,
            scoping,
            top_level: wrapper.scope_id.get()?,
            source,
            offset,
        })
    }

    /// Walks every statement of the user's code with `visitor`.
    pub fn visit(&self, visitor: &mut impl Visit<'a>) {
        for statement in self.statements {
            visitor.visit_statement(statement);
        }
    }

    /// Where `span` starts in the user's code.
    pub fn location(&self, span: Span) -> Location {
        self.source
            .location((span.start as usize).saturating_sub(self.offset))
    }

    /// The user's text under `span`, if the span lies in it.
    pub fn text(&self, span: Span) -> Option<&str> {
        let start = (span.start as usize).checked_sub(self.offset)?;
        let end = (span.end as usize).checked_sub(self.offset)?;
        self.source.as_str().get(start..end)
    }

    /// What semantic analysis recorded for `identifier`; `None` only for an identifier it never
    /// saw, which the rules then leave alone.
    pub fn reference(&self, identifier: &IdentifierReference) -> Option<&Reference> {
        identifier
            .reference_id
            .get()
            .map(|id| self.scoping.get_reference(id))
    }

    /// Whether `identifier` names no binding of the code, i.e. reaches the global object.
    pub fn is_free(&self, identifier: &IdentifierReference) -> bool {
        self.reference(identifier)
            .is_some_and(|reference| reference.symbol_id().is_none())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use oxc_allocator::Allocator;

    use super::Code;
    use crate::diagnostic::Diagnostic;
    use crate::program::source::SourceText;
    use crate::program::{parse, ProgramContext};

    /// Parses `code` as `prepare` does and runs one rule over it.
    pub(crate) fn check_with(
        code: &str,
        context: &ProgramContext,
        rule: impl Fn(&Code, &ProgramContext) -> Vec<Diagnostic>,
    ) -> Vec<Diagnostic> {
        let source = SourceText::new(code);
        let allocator = Allocator::default();
        let wrapped = parse::wrap(code);
        let (program, scoping) = parse::parse(&allocator, &wrapped, &source)
            .unwrap_or_else(|errors| panic!("{code:?} does not parse: {errors:?}"));
        let code = Code::of(&program, &scoping, &source, parse::PREFIX.len()).expect("wrapper");
        rule(&code, context)
    }
}
