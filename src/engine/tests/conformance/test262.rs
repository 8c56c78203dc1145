//! A measuring tool, not part of `cargo test`: runs a selection of the official ECMAScript
//! conformance tests (tc39/test262, which the repository does not carry) through raw QuickJS
//! and through the executor, and counts the tests raw QuickJS passes that the executor fails,
//! by cause. docs/semantics.md "Semantics" quotes its figures.
//!
//! docs/contract.md "Script semantics first" (every remaining difference is a documented one).
//!
//! ```sh
//! TEST262_DIR=/path/to/test262 TEST262_PATHS=test/language/statements,test/built-ins/Array \
//!   cargo test --release --lib conformance::test262 -- --ignored --nocapture
//! ```
//!
//! With `TEST262_VERDICTS=1` it also prints one line per test run, `raw pass <path>` or
//! `raw fail <path>`, so that two builds' pass sets can be compared (`sort | diff`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::reference::Reference;
use super::{observed, options, Outcome};
use crate::engine::testing::{engine_with, run_on, FakeHost};

/// What a test's front matter says about how to run it.
#[derive(Default)]
struct Meta {
    flags: Vec<String>,
    includes: Vec<String>,
    /// `(phase, error type)` of a negative test.
    negative: Option<(String, String)>,
}

fn list(value: &str) -> Vec<String> {
    value
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|item| item.trim().to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

fn meta(source: &str) -> Meta {
    let mut meta = Meta::default();
    let Some(start) = source.find("/*---") else {
        return meta;
    };
    let Some(length) = source[start..].find("---*/") else {
        return meta;
    };
    let yaml = &source[start + 5..start + length];
    let mut key = "";
    let mut phase = String::new();
    for line in yaml.lines() {
        let trimmed = line.trim();
        if let Some(item) = trimmed.strip_prefix("- ") {
            if key == "includes" {
                meta.includes.push(item.trim().to_owned());
            } else if key == "flags" {
                meta.flags.push(item.trim().to_owned());
            }
            continue;
        }
        if !line.starts_with(' ') {
            if let Some((name, value)) = line.split_once(':') {
                key = name.trim();
                match key {
                    "flags" => meta.flags.extend(list(value)),
                    "includes" => meta.includes.extend(list(value)),
                    _ => {}
                }
            }
        } else if key == "negative" {
            if let Some(value) = trimmed.strip_prefix("phase:") {
                phase = value.trim().to_owned();
            } else if let Some(value) = trimmed.strip_prefix("type:") {
                meta.negative = Some((phase.clone(), value.trim().to_owned()));
            }
        }
    }
    meta
}

/// Whether a run with this outcome and console output passes the test.
fn passes(meta: &Meta, outcome: &Outcome, logs: &[String]) -> bool {
    match &meta.negative {
        Some((phase, _)) if phase == "parse" || phase == "early" => {
            matches!(outcome, Outcome::SyntaxError)
        }
        Some((_, kind)) => {
            matches!(outcome, Outcome::Threw(description) if description.starts_with(kind.as_str()))
        }
        None if meta.flags.iter().any(|flag| flag == "async") => {
            !matches!(outcome, Outcome::Threw(_) | Outcome::SyntaxError)
                && logs
                    .iter()
                    .any(|line| line.ends_with("Test262:AsyncTestComplete"))
        }
        None => matches!(outcome, Outcome::Value(_)),
    }
}

/// Whether `code` builds code from strings: `eval`, the `Function` constructors by name, or
/// a function's `constructor` (how tests reach the generator and async ones).
fn builds_code(code: &str) -> bool {
    let word = |needle: &str| {
        code.match_indices(needle).any(|(at, _)| {
            !code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
        })
    };
    word("eval")
        || word("Function(")
        || word("GeneratorFunction")
        || word("AsyncFunction")
        || code.contains(").constructor")
        || code.contains("}.constructor")
}

/// Why the executor fails a test raw QuickJS passes, when a documented contract difference
/// explains it (docs/semantics.md "Differences from a plain script"); `"other"` for anything else.
/// `code` is the test and the harness files it includes (not the two every test gets).
fn cause(code: &str, outcome: &Outcome) -> &'static str {
    let text = format!("{outcome:?}");
    if text.contains("with_statement_forbidden") {
        "with refused"
    } else if text.contains("static_import_in_script_mode") {
        "static import/export refused"
    } else if text.contains("import_allowed") || text.contains("Cannot find module") {
        "import() refused (authorizedImports)"
    } else if text.contains("Function constructors are not available") || builds_code(code) {
        "eval/Function refused"
    } else if text.contains("reserved_identifier") {
        "__smol_ names reserved"
    } else if text.contains("MaxOperations") {
        "loop guard (maxOperations)"
    } else if code.contains("await") && matches!(outcome, Outcome::SyntaxError) {
        "await reserved at the top level"
    } else if code.contains("return")
        && (matches!(outcome, Outcome::Value(_)) || text.contains("should not be evaluated"))
    {
        // A negative test of `return` outside functions: agent code may return at the top.
        "top-level return allowed"
    } else if matches!(outcome, Outcome::Stuck) {
        "Promise result awaited"
    } else {
        "other"
    }
}

fn files(root: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "js")
            && !path.to_string_lossy().contains("_FIXTURE")
        {
            into.push(path);
        }
    }
}

#[test]
#[ignore = "measures against a local checkout of tc39/test262 (TEST262_DIR)"]
fn test262() {
    let Ok(dir) = std::env::var("TEST262_DIR") else {
        eprintln!("TEST262_DIR is not set");
        return;
    };
    let dir = PathBuf::from(dir);
    let paths = std::env::var("TEST262_PATHS").unwrap_or_else(|_| "test/language".into());
    let mut tests = Vec::new();
    for path in paths.split(',') {
        files(&dir.join(path), &mut tests);
    }
    tests.sort();
    let harness = |name: &str| std::fs::read_to_string(dir.join("harness").join(name)).unwrap();
    let (assert, sta, done) = (
        harness("assert.js"),
        harness("sta.js"),
        harness("doneprintHandle.js"),
    );
    let verdicts = std::env::var_os("TEST262_VERDICTS").is_some();
    let started = Instant::now();
    let options = options();
    let (mut ran, mut raw_passed, mut skipped) = (0, 0, 0);
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for test in &tests {
        let source = std::fs::read_to_string(test).unwrap_or_default();
        let meta = meta(&source);
        let skip = ["module", "CanBlockIsTrue", "CanBlockIsFalse"]
            .iter()
            .any(|flag| meta.flags.iter().any(|f| f == flag))
            || source.contains("$262");
        if skip {
            skipped += 1;
            continue;
        }
        let mut code = String::new();
        // What the test brings besides the two harness files every test gets.
        let mut own = String::new();
        if meta.flags.iter().any(|f| f == "onlyStrict") {
            code.push_str("\"use strict\";\n");
        }
        if !meta.flags.iter().any(|f| f == "raw") {
            code.push_str("function print(m) { console.log(m); }\n");
            code.push_str(&assert);
            code.push_str(&sta);
            if meta.flags.iter().any(|f| f == "async") {
                code.push_str(&done);
            }
            for include in &meta.includes {
                let text = std::fs::read_to_string(dir.join("harness").join(include));
                own.push_str(text.as_deref().unwrap_or_default());
                code.push_str(text.as_deref().unwrap_or_default());
                code.push('\n');
            }
        }
        code.push_str(&source);
        ran += 1;
        let raw = Reference::new().run(&code, false, false);
        let raw_passes = passes(&meta, &raw.outcome, &raw.logs);
        if verdicts {
            let verdict = if raw_passes { "pass" } else { "fail" };
            let name = test.strip_prefix(&dir).unwrap_or(test).display();
            eprintln!("raw {verdict} {name}");
        }
        if !raw_passes {
            continue;
        }
        raw_passed += 1;
        let engine = engine_with(FakeHost::default(), &options);
        let ours = observed(run_on(&engine, &code, &options));
        let _ = engine.stop().blocking_recv();
        if passes(&meta, &ours.outcome, &ours.logs) {
            continue;
        }
        own.push_str(&source);
        let cause = cause(&own, &ours.outcome);
        *causes.entry(cause).or_default() += 1;
        let name = test.strip_prefix(&dir).unwrap_or(test).display();
        failures.push(format!("{cause} | {name}: {:?}", ours.outcome));
    }
    failures.sort();
    for failure in &failures {
        eprintln!("  {failure}");
    }
    eprintln!(
        "test262 ({paths}): {} files, {skipped} skipped (module, $262), {ran} run, {raw_passed} pass on raw QuickJS; of those the executor fails {}: {causes:?} ({:.0} s)",
        tests.len(),
        causes.values().sum::<usize>(),
        started.elapsed().as_secs_f64()
    );
}
