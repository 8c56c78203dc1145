//! Parsing agent code (§2.2 VALIDATE, rule `syntax_valid`).
//!
//! The code is parsed as the body of an async function (`PREFIX` + code + `SUFFIX`): that is the
//! grammar docs/contract.md gives agent code — top-level `await` and `return` allowed, sloppy mode
//! unless a `"use strict"` directive says otherwise — and it is what oxc can parse exactly (a
//! script goal rejects top-level `await`, a module goal imposes strict mode). Code that parses as
//! JavaScript is taken as such; otherwise it is tried as TypeScript, whose annotations are then
//! stripped (docs/contract.md "Where we go beyond SES").

use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::{Class, Function, NewTarget, Program, Statement, VariableDeclarationKind};
use oxc_ast_visit::Visit;
use oxc_codegen::Codegen;
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::{ParseOptions, Parser};
use oxc_semantic::{Scoping, SemanticBuilder};
use oxc_span::SourceType;
use oxc_syntax::scope::ScopeFlags;
use oxc_transformer::{TransformOptions, Transformer};

use super::source::SourceText;
use super::MAIN_FUNCTION;
use crate::diagnostic::Diagnostic;

/// The line that opens the wrapper; it is a whole line so that wrapped line `n` (0-based) is the
/// user's line `n` (1-based) and columns need no shifting.
pub(super) const PREFIX: &str = "async function __smol_main() {\n";
/// Closes the wrapper on a line of its own, so a trailing `// comment` cannot swallow it.
pub(super) const SUFFIX: &str = "\n}";

/// At most this many syntax errors are reported.
const MAX_SYNTAX_ERRORS: usize = 20;

/// The rule id of every problem found here.
const RULE: &str = "syntax_valid";

/// Builds the text the parser sees. A hashbang line (`#!…`, allowed only at the very start of a
/// script) would no longer be at the start inside the wrapper: it becomes the `//` comment it
/// stands for, of the same length, so every position stays where it was.
pub(super) fn wrap(code: &str) -> String {
    let mut wrapped = String::with_capacity(PREFIX.len() + code.len() + SUFFIX.len());
    wrapped.push_str(PREFIX);
    match code.strip_prefix("#!") {
        Some(rest) => {
            wrapped.push_str("//");
            wrapped.push_str(rest);
        }
        None => wrapped.push_str(code),
    }
    wrapped.push_str(SUFFIX);
    wrapped
}

/// Parses `wrapped` (from [`wrap`]) and strips TypeScript. On success the program holds exactly
/// the wrapper function, whose body is the user's code, and the scoping describes that program
/// (its references carry their ids), as the rules need.
pub(super) fn parse<'a>(
    allocator: &'a Allocator,
    wrapped: &'a str,
    source: &SourceText,
) -> Result<(Program<'a>, Scoping), Vec<Diagnostic>> {
    let options = ParseOptions {
        preserve_parens: false,
        ..parse_options()
    };
    let (mut program, typescript) = parse_source(
        allocator,
        wrapped,
        Goal::Script,
        options,
        source,
        PREFIX.len(),
    )?;
    check_wrapper_intact(&program, source)?;
    check_script_only(&program, source)?;
    super::regexp::check(&program, wrapped, source, PREFIX.len())?;
    let scoping = analyse(allocator, &mut program, typescript, source, PREFIX.len())?;
    if typescript {
        check_lowered(&program)?;
    }
    Ok((program, scoping))
}

/// The parser's options for agent code and modules alike. Regular expression literals are
/// parsed, so that a pattern or flags QuickJS would refuse as the script compiles (an early
/// error) is a `syntax_valid` diagnostic here, with the line, rather than a `SyntaxError` at
/// run time (with `regexp.rs` for what oxc's parser lets through);
/// `engine/tests/conformance/regexp_syntax.rs` holds the verdicts against QuickJS's own
/// regexp compiler.
pub(super) fn parse_options() -> ParseOptions {
    ParseOptions {
        parse_regular_expression: true,
        ..ParseOptions::default()
    }
}

/// Checks that the JavaScript a TypeScript program was stripped to parses by itself. oxc's
/// TypeScript parser accepts some code its JavaScript parser refuses: `enum await {}` in the
/// async wrapper becomes `var await = …`, which QuickJS then refused at run time as a
/// `SyntaxError` (found by the `prepare_grammar` fuzz target). Only TypeScript pays for this.
fn check_lowered(program: &Program) -> Result<(), Vec<Diagnostic>> {
    let lowered = Codegen::new().build(program).code;
    let allocator = Allocator::default();
    let reparsed = Parser::new(&allocator, &lowered, SourceType::script()).parse();
    match reparsed.diagnostics.first() {
        None if !reparsed.panicked => Ok(()),
        found => Err(vec![Diagnostic::error(
            RULE,
            format!(
                "{} (in the JavaScript this TypeScript becomes)",
                found.map_or("Unexpected token", |error| error.message.as_ref())
            ),
        )]),
    }
}

/// The grammar code is parsed with.
#[derive(Debug, Clone, Copy)]
pub(super) enum Goal {
    Script,
    Module,
}

/// Parses `text` as JavaScript, else as TypeScript, in `goal`; the flag says which parsed. On
/// failure, the JavaScript parser's errors (the model writes JavaScript) at the user's
/// positions: `offset` is how far `text` starts before the user's code.
pub(super) fn parse_source<'a>(
    allocator: &'a Allocator,
    text: &'a str,
    goal: Goal,
    options: ParseOptions,
    source: &SourceText,
    offset: usize,
) -> Result<(Program<'a>, bool), Vec<Diagnostic>> {
    let (javascript, typescript) = match goal {
        Goal::Script => (SourceType::script(), SourceType::ts().with_script(true)),
        Goal::Module => (SourceType::mjs(), SourceType::ts()),
    };
    let parsed = Parser::new(allocator, text, javascript)
        .with_options(options)
        .parse();
    if parsed.diagnostics.is_empty() && !parsed.panicked {
        return Ok((parsed.program, false));
    }
    let as_typescript = Parser::new(allocator, text, typescript)
        .with_options(options)
        .parse();
    if as_typescript.diagnostics.is_empty() && !as_typescript.panicked {
        return Ok((as_typescript.program, true));
    }
    Err(syntax_errors(&parsed.diagnostics, source, offset))
}

/// Reports early errors (semantic analysis) and strips TypeScript; returns the scoping of the
/// program as it will run.
pub(super) fn analyse<'a>(
    allocator: &'a Allocator,
    program: &mut Program<'a>,
    typescript: bool,
    source: &SourceText,
    offset: usize,
) -> Result<Scoping, Vec<Diagnostic>> {
    // The transformer lowers `enum`s from member values that semantic analysis computes only
    // when asked; without them string members get wrong reverse mappings (oxc#21667).
    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_enum_eval(typescript)
        .build(program);
    if !semantic.diagnostics.is_empty() {
        return Err(syntax_errors(&semantic.diagnostics, source, offset));
    }
    let scoping = semantic.semantic.into_scoping();
    if !typescript {
        return Ok(scoping);
    }
    let stripped = Transformer::new(
        allocator,
        Path::new("agent.ts"),
        &TransformOptions::default(),
    )
    .build_with_scoping(scoping, program);
    if !stripped.diagnostics.is_empty() {
        return Err(syntax_errors(&stripped.diagnostics, source, offset));
    }
    // Analysed afresh rather than trusting the transformer's bookkeeping: the rules must see
    // exactly the references that will run, and none that lived only in type annotations.
    Ok(SemanticBuilder::new()
        .build(program)
        .semantic
        .into_scoping())
}

/// An unmatched `}` in the user's code closes the wrapper early and leaves the rest of the code
/// outside it; JS parsers report that as an unexpected `}`, and so do we.
fn check_wrapper_intact(program: &Program, source: &SourceText) -> Result<(), Vec<Diagnostic>> {
    match program.body.as_slice() {
        [Statement::FunctionDeclaration(function)]
            if function
                .id
                .as_ref()
                .is_some_and(|id| id.name == MAIN_FUNCTION) =>
        {
            Ok(())
        }
        [Statement::FunctionDeclaration(function), ..] => {
            let closing_brace = function.span.end.saturating_sub(1) as usize;
            let location = source.location(closing_brace.saturating_sub(PREFIX.len()));
            let mut diagnostic = Diagnostic::error(RULE, "Unexpected token '}'")
                .at(location)
                .with_fix("Remove the unmatched closing brace or add the missing opening one.");
            diagnostic.code_frame = source.code_frame(location);
            Err(vec![diagnostic])
        }
        _ => Err(vec![Diagnostic::error(RULE, "Unexpected end of input")]),
    }
}

/// Refuses what the wrapper function allows but the global script the code runs as does not
/// (QuickJS would refuse it only when the run starts): `new.target` outside any function, and
/// `using` declarations at the top level.
fn check_script_only(program: &Program, source: &SourceText) -> Result<(), Vec<Diagnostic>> {
    /// Finds `new.target` outside functions (arrow functions have none of their own; class
    /// bodies are functions or allow it).
    struct Finder(Option<u32>);
    impl<'a> Visit<'a> for Finder {
        fn visit_new_target(&mut self, it: &NewTarget) {
            self.0.get_or_insert(it.span.start);
        }
        fn visit_function(&mut self, _it: &Function<'a>, _flags: ScopeFlags) {}
        fn visit_class(&mut self, _it: &Class<'a>) {}
    }
    let Some(Statement::FunctionDeclaration(wrapper)) = program.body.first() else {
        return Ok(());
    };
    let Some(body) = &wrapper.body else {
        return Ok(());
    };
    let using = body
        .statements
        .iter()
        .find_map(|statement| match statement {
            Statement::VariableDeclaration(declaration)
                if matches!(
                    declaration.kind,
                    VariableDeclarationKind::Using | VariableDeclarationKind::AwaitUsing
                ) =>
            {
                Some(declaration.span.start)
            }
            _ => None,
        });
    let mut finder = Finder(None);
    finder.visit_statements(&body.statements);
    let refused = |offset: u32, message: &str| {
        let location = source.location((offset as usize).saturating_sub(PREFIX.len()));
        let mut diagnostic = Diagnostic::error(RULE, message).at(location);
        diagnostic.code_frame = source.code_frame(location);
        Err(vec![diagnostic])
    };
    match (finder.0, using) {
        (Some(offset), _) => refused(offset, "new.target is only allowed inside functions"),
        (None, Some(offset)) => refused(
            offset,
            "using declarations are not allowed at the top level of a script; declare them in a block",
        ),
        (None, None) => Ok(()),
    }
}

/// Converts oxc's findings into `syntax_valid` diagnostics at the user's positions: `offset` is
/// how far the parsed text starts before the user's code (the wrapper's prefix, or 0).
pub(super) fn syntax_errors(
    errors: &[OxcDiagnostic],
    source: &SourceText,
    offset: usize,
) -> Vec<Diagnostic> {
    // A pathological input can have a syntax error per character: the first ones are what the
    // model can act on, and building every frame would cost memory without bound.
    errors
        .iter()
        .take(MAX_SYNTAX_ERRORS)
        .map(|error| {
            let mut diagnostic = Diagnostic::error(RULE, error.message.to_string());
            let primary = error
                .labels
                .iter()
                .find(|label| label.primary())
                .or_else(|| error.labels.first());
            if let Some(label) = primary {
                let location = source.location((label.offset() as usize).saturating_sub(offset));
                diagnostic = diagnostic.at(location);
                diagnostic.code_frame = source.code_frame(location);
            }
            if let Some(help) = &error.help {
                diagnostic = diagnostic.with_fix(help.to_string());
            }
            diagnostic
        })
        .collect()
}
