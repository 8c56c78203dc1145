//! What the fuzz targets check, shared by them (README "Fuzzing").
//!
//! - [`check_prepared`]: `program::prepare` never panics; when it lets code run, the rewritten
//!   script re-parses with oxc and every loop in it starts with the guard call (§6.3).
//! - [`grammar::Program`]: agent-shaped JavaScript built from fuzz bytes with `arbitrary`, so
//!   the rewriter sees deep, valid programs (loops in every position) rather than mostly syntax
//!   errors.
//! - [`values`]: arbitrary (also malformed) values copied into a sandbox and back.

pub mod grammar;
pub mod values;

use oxc_allocator::Allocator;
use oxc_ast::ast::{Expression, Statement};
use oxc_ast::AstKind;
use oxc_ast_visit::Visit;
use oxc_codegen::Codegen;
use oxc_parser::Parser;
use oxc_span::SourceType;
use ses_executor::program::{self, ProgramContext, GUARD_FUNCTION};

/// The stack the checks run on: oxc recurses as deep as the code nests (about 1 KiB of stack
/// per byte of code in the worst case, more under AddressSanitizer), and libFuzzer's own thread
/// has 8 MiB.
const STACK_BYTES: usize = 512 * 1024 * 1024;

/// Runs `work` on a thread with a stack deep enough for any input the targets get. A panic in
/// it aborts the process (cargo-fuzz's panic hook), which is what the fuzzer reports.
pub fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, work)
            .expect("spawn the checking thread")
            .join()
            .expect("the checked code panicked")
    })
}

/// Prepares `code` (as `run()` and `prepareProgram()` do, with a tool and an authorized module
/// in the context) and checks the result; panics on any violation.
pub fn check_prepared(code: &str) {
    let context = ProgramContext {
        authorized_imports: vec!["lodash".into()],
        tool_names: vec!["search".into()],
        timers: false,
    };
    let prepared = program::prepare(code, &context);
    assert_eq!(prepared.original_code, code);
    if prepared.is_blocked() {
        assert!(
            prepared.transformed_code.is_empty(),
            "blocked code must not be transformed"
        );
        return;
    }
    if parse_errors(&prepared.transformed_code).is_some() && !oxc_round_trips(code) {
        // oxc itself prints this code as text its parser refuses (`inner: (let--);` prints as
        // `inner: let--;`, valid JavaScript that QuickJS runs but oxc's parser rejects): a gap
        // between oxc's printer and parser, which the rewrite did not cause. Differential, so
        // any failure the rewrite adds to code oxc round-trips is still reported.
        return;
    }
    check_guarded(&prepared.transformed_code);
}

/// The diagnostics of parsing `code` as the body of an async function (the grammar of the
/// engine's global script with top-level `await`), if any.
fn parse_errors(code: &str) -> Option<String> {
    let wrapped = format!("async function __fuzz_check() {{\n{code}\n}}");
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    (!parsed.diagnostics.is_empty() || parsed.panicked).then(|| format!("{:?}", parsed.diagnostics))
}

/// Whether oxc's own printer gives back, for `code` untouched by the rewrite, text its parser
/// accepts.
fn oxc_round_trips(code: &str) -> bool {
    let wrapped = format!("async function __fuzz_check() {{\n{code}\n}}");
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    if !parsed.diagnostics.is_empty() || parsed.panicked {
        return true;
    }
    let printed = Codegen::new().build(&parsed.program).code;
    let reparsed = Parser::new(&allocator, &printed, SourceType::script()).parse();
    reparsed.diagnostics.is_empty() && !reparsed.panicked
}

/// Parses the rewritten script the way the engine will accept it (a global script with
/// top-level `await`, which is the grammar of an async function body) and checks each loop.
pub fn check_guarded(transformed: &str) {
    let wrapped = format!("async function __fuzz_check() {{\n{transformed}\n}}");
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    assert!(
        parsed.diagnostics.is_empty() && !parsed.panicked,
        "the rewritten code does not parse: {:?}\n{transformed}",
        parsed.diagnostics
    );
    let mut loops = Loops::default();
    loops.visit_program(&parsed.program);
    assert!(
        loops.unguarded.is_empty(),
        "loops without a guard at {:?}:\n{transformed}",
        loops.unguarded
    );
}

/// Finds loops whose body does not start with `__smol_guard()`.
#[derive(Default)]
struct Loops {
    unguarded: Vec<u32>,
}

impl<'a> Visit<'a> for Loops {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        let (body, start) = match kind {
            AstKind::ForStatement(s) => (&s.body, s.span.start),
            AstKind::ForInStatement(s) => (&s.body, s.span.start),
            AstKind::ForOfStatement(s) => (&s.body, s.span.start),
            AstKind::WhileStatement(s) => (&s.body, s.span.start),
            AstKind::DoWhileStatement(s) => (&s.body, s.span.start),
            _ => return,
        };
        if !starts_with_guard(body) {
            self.unguarded.push(start);
        }
    }
}

fn starts_with_guard(body: &Statement) -> bool {
    let Statement::BlockStatement(block) = body else {
        return false;
    };
    let Some(Statement::ExpressionStatement(first)) = block.body.first() else {
        return false;
    };
    let Expression::CallExpression(call) = &first.expression else {
        return false;
    };
    matches!(&call.callee, Expression::Identifier(callee) if callee.name == GUARD_FUNCTION)
        && call.arguments.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unguarded_loop_is_caught() {
        let caught = std::panic::catch_unwind(|| check_guarded("while (a) { b(); }"));
        assert!(caught.is_err());
        check_guarded("while (a) { __smol_guard(); b(); }");
    }

    #[test]
    fn prepared_loops_of_every_kind_pass() {
        check_prepared(
            "for (;;) break; for (const k in o) {} for (const v of o) {} while (0) {} \
             do {} while (0); for await (const x of y) {} function* g() { while (1) yield 1 }",
        );
    }

    /// Regression (`fuzz/regressions/prepare_grammar/`): oxc prints `inner: (let--);` as
    /// `inner: let--;`, which its own parser refuses; not a rewrite failure.
    #[test]
    fn an_oxc_print_parse_gap_is_not_reported_as_a_rewrite_failure() {
        assert!(!oxc_round_trips("inner: (let--);"));
        check_prepared("inner: (let--);");
    }

    #[test]
    fn code_oxc_round_trips_is_still_checked() {
        assert!(oxc_round_trips("for (const x of [1]) { x }"));
        check_prepared("for (const x of [1]) { x }");
    }
}
