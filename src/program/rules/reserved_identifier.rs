//! `reserved_identifier` (ERROR): user code may not name anything with the executor's internal
//! prefix, so it can neither shadow nor reach the injected guard and hooks by name (§6.4).

use oxc_ast::ast::{BindingIdentifier, IdentifierReference, LabelIdentifier, Statement};
use oxc_ast_visit::Visit;
use oxc_span::Span;

use crate::diagnostic::Diagnostic;
use crate::program::source::SourceText;
use crate::program::INTERNAL_PREFIX;

/// The rule id.
pub const RULE: &str = "reserved_identifier";

/// Reports every identifier, binding and label of `statements` that starts with the internal
/// prefix. `offset` is subtracted from spans to reach positions in `source`.
pub fn check(statements: &[Statement], source: &SourceText, offset: usize) -> Vec<Diagnostic> {
    let mut finder = Finder {
        source,
        offset,
        found: Vec::new(),
    };
    for statement in statements {
        finder.visit_statement(statement);
    }
    finder.found
}

struct Finder<'s> {
    source: &'s SourceText,
    offset: usize,
    found: Vec<Diagnostic>,
}

impl Finder<'_> {
    fn check(&mut self, name: &str, span: Span) {
        if name.starts_with(INTERNAL_PREFIX) {
            let location = self
                .source
                .location((span.start as usize).saturating_sub(self.offset));
            self.found.push(
                Diagnostic::error(
                    RULE,
                    format!("'{name}' uses the prefix '{INTERNAL_PREFIX}', which is reserved for the executor"),
                )
                .at(location)
                .with_fix(format!("Rename '{name}' to a name that does not start with '{INTERNAL_PREFIX}'.")),
            );
        }
    }
}

impl<'a> Visit<'a> for Finder<'_> {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        self.check(&it.name, it.span);
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.check(&it.name, it.span);
    }

    fn visit_label_identifier(&mut self, it: &LabelIdentifier<'a>) {
        self.check(&it.name, it.span);
    }
}
