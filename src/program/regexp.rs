//! Early errors of regular expression literals that oxc's regular expression parser lets
//! through, found on the patterns it parsed (`parse::parse_options`). QuickJS compiles every
//! literal as the script compiles and refuses these, as the standard does; without this check
//! such code passed validation and failed at run time with a `SyntaxError` and no line of the
//! user's. All are errors of unicode mode (`u` or `v` flag), where Annex B's leniency is off:
//!
//! - `\c` not followed by a control letter inside a class (`[\c]`): oxc keeps Annex B's
//!   literal backslash there in every mode;
//! - a back reference written with a leading zero (`\01`), which is no `DecimalEscape`;
//! - a back reference past the capturing groups: oxc counts a modifier group (`(?i:…)`) as a
//!   capturing one.
//!
//! `engine/tests/conformance/regexp_syntax.rs` holds validation's verdicts against QuickJS's own
//! regexp compiler over a corpus of literals.

use oxc_ast::ast::{Program, RegExpFlags, RegExpLiteral};
use oxc_ast_visit::Visit;
use oxc_regular_expression::ast::{
    CapturingGroup, CharacterClassContents, CharacterKind, IndexedReference,
};
use oxc_regular_expression::visit::{self as regexp_visit, Visit as RegExpVisit};

use super::source::SourceText;
use crate::diagnostic::Diagnostic;

/// The rule these findings belong to: they are syntax errors.
const RULE: &str = "syntax_valid";

/// Checks every regular expression literal of `program` for the early errors above; `text` is
/// the parsed text (the patterns' positions are in it), `offset` how far it starts before the
/// user's code.
pub(super) fn check(
    program: &Program<'_>,
    text: &str,
    source: &SourceText,
    offset: usize,
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = EarlyErrors {
        text,
        source,
        offset,
        found: Vec::new(),
    };
    errors.visit_program(program);
    if errors.found.is_empty() {
        Ok(())
    } else {
        Err(errors.found)
    }
}

struct EarlyErrors<'s> {
    text: &'s str,
    source: &'s SourceText,
    offset: usize,
    found: Vec<Diagnostic>,
}

impl EarlyErrors<'_> {
    fn refuse(&mut self, at: u32, message: &str) {
        let location = self
            .source
            .location((at as usize).saturating_sub(self.offset));
        let mut diagnostic =
            Diagnostic::error(RULE, format!("Invalid regular expression: {message}")).at(location);
        diagnostic.code_frame = self.source.code_frame(location);
        self.found.push(diagnostic);
    }
}

impl<'a> Visit<'a> for EarlyErrors<'_> {
    fn visit_reg_exp_literal(&mut self, it: &RegExpLiteral<'a>) {
        let Some(pattern) = &it.regex.pattern.pattern else {
            return;
        };
        if !it.regex.flags.intersects(RegExpFlags::U | RegExpFlags::V) {
            return;
        }
        let mut parts = Parts::default();
        parts.visit_pattern(pattern);
        for at in parts.class_control_escapes {
            self.refuse(
                at,
                "`\\c` in a character class needs a control letter (`\\cA`) with the u or v flag",
            );
        }
        for (index, start, end) in parts.references {
            let written = self
                .text
                .get(start as usize..end as usize)
                .unwrap_or_default();
            if written.starts_with("\\0") {
                self.refuse(
                    start,
                    "a back reference cannot start with 0 with the u or v flag",
                );
            } else if index > parts.groups {
                self.refuse(
                    start,
                    &format!(
                        "back reference \\{index} names no capturing group (the pattern has {})",
                        parts.groups
                    ),
                );
            }
        }
    }
}

/// What the checks need of one pattern.
#[derive(Default)]
struct Parts {
    groups: u32,
    /// Each back reference: its number, and where it is written.
    references: Vec<(u32, u32, u32)>,
    /// Where each `\c` without a control letter stands in a class.
    class_control_escapes: Vec<u32>,
}

impl<'a> RegExpVisit<'a> for Parts {
    fn visit_capturing_group(&mut self, it: &CapturingGroup<'a>) {
        self.groups += 1;
        regexp_visit::walk::walk_capturing_group(self, it);
    }

    fn visit_indexed_reference(&mut self, it: &IndexedReference) {
        self.references.push((it.index, it.span.start, it.span.end));
    }

    fn visit_character_class_contents(&mut self, it: &CharacterClassContents<'a>) {
        // The literal backslash of Annex B's `\c` (ClassAtomNoDash :: `\` [lookahead = c]).
        if let CharacterClassContents::Character(character) = it {
            if character.kind == CharacterKind::Symbol && character.value == u32::from('\\') {
                self.class_control_escapes.push(character.span.start);
            }
        }
        regexp_visit::walk::walk_character_class_contents(self, it);
    }
}
