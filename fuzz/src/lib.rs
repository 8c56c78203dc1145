//! What the fuzz targets check, shared by them (docs/security.md "Fuzzing").
//!
//! - [`check_prepared`]: `program::prepare` never panics; when it lets code run, the rewritten
//!   script re-parses with oxc and keeps every loop of the code (§6.3: QuickJS compiles the
//!   guard into each loop body it runs, patch 0600, so a loop the rewrite kept is a loop guarded).
//! - [`grammar::Program`]: agent-shaped JavaScript built from fuzz bytes with `arbitrary`, so
//!   the rewriter sees deep, valid programs (loops in every position) rather than mostly syntax
//!   errors.
//! - [`values`]: arbitrary (also malformed) values copied into a sandbox and back.
//! - [`options_tools`]: option values against the rules, and what a tool returns or throws,
//!   with and without sandbox code rewiring the built-ins.
//! - [`first_use`]: built-ins made on first use and the patched fast paths, first used in a
//!   realm sandbox code tampered with, with an allocation or an interrupt check failed.
//! - [`snapshot`]: snapshots and session payloads from untrusted bytes, opened, decoded and
//!   restored.

pub mod first_use;
pub mod grammar;
pub mod options_tools;
pub mod snapshot;
pub mod values;

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_ast_visit::Visit;
use oxc_codegen::Codegen;
use oxc_parser::Parser;
use oxc_span::SourceType;
use ses_executor::program::{self, ProgramContext};

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
    check_rewritten(&prepared.transformed_code, loops_of(code));
}

/// How many loops `code` has, parsed as the body of an async function; `None` when oxc's
/// JavaScript parser refuses it (TypeScript, which `prepare` strips).
fn loops_of(code: &str) -> Option<usize> {
    let wrapped = format!("async function __fuzz_check() {{\n{code}\n}}");
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    if !parsed.diagnostics.is_empty() || parsed.panicked {
        return None;
    }
    let mut loops = Loops::default();
    loops.visit_program(&parsed.program);
    Some(loops.count)
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
/// top-level `await`, which is the grammar of an async function body) and checks that it has
/// `loops` loops, when known: the rewrite neither drops nor adds one.
pub fn check_rewritten(transformed: &str, loops: Option<usize>) {
    let wrapped = format!("async function __fuzz_check() {{\n{transformed}\n}}");
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script()).parse();
    assert!(
        parsed.diagnostics.is_empty() && !parsed.panicked,
        "the rewritten code does not parse: {:?}\n{transformed}",
        parsed.diagnostics
    );
    let mut found = Loops::default();
    found.visit_program(&parsed.program);
    if let Some(loops) = loops {
        assert_eq!(
            found.count, loops,
            "the rewrite changed the number of loops:\n{transformed}"
        );
    }
}

/// Counts loop statements of every kind.
#[derive(Default)]
struct Loops {
    count: usize,
}

impl<'a> Visit<'a> for Loops {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        if matches!(
            kind,
            AstKind::ForStatement(_)
                | AstKind::ForInStatement(_)
                | AstKind::ForOfStatement(_)
                | AstKind::WhileStatement(_)
                | AstKind::DoWhileStatement(_)
        ) {
            self.count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_loop_is_caught() {
        let caught = std::panic::catch_unwind(|| check_rewritten("b();", Some(1)));
        assert!(caught.is_err());
        check_rewritten("while (a) { b(); }", Some(1));
    }

    #[test]
    fn prepared_loops_of_every_kind_are_kept() {
        assert_eq!(
            loops_of("for (;;) break; while (0) {} function* g() { while (1) yield 1 }"),
            Some(3)
        );
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
